// Prompts and instructions as FoundationModels writes them: values that represent themselves as a prompt or as
// instructions, and result builders that put several of them together.
//
// The requirements carry the builder attributes, so a conformance's getter is a builder body unless it says
// `return`: each getter here does, because the builder asks every part for its representation, and a getter that
// went through the builder would ask itself again without end.

/// What a model is asked: text and structured values, in order (FoundationModels' `Prompt`).
///
/// Strings, ``GeneratedContent``, every `@Generable` value and arrays of them are prompt parts, and
/// ``PromptBuilder`` puts them together:
///
/// ```swift
/// let prompt = Prompt {
///   "Plan a day in Lisbon."
///   if rainy { "It will rain; prefer indoor places." }
///   preferences            // a @Generable value, sent as JSON
/// }
/// let answer = try await session.respond(to: prompt)
/// ```
public struct Prompt: Sendable, Equatable {
  /// A part of a prompt.
  public enum Part: Sendable, Equatable {
    /// Text, as written.
    case text(String)
    /// A structured value, sent to the model as JSON.
    case structure(GeneratedContent)
  }

  /// The parts, in order.
  public var parts: [Part]

  /// A prompt of these parts.
  public init(parts: [Part]) { self.parts = parts }

  /// The prompt a value represents.
  public init(_ content: some PromptRepresentable) { self = content.promptRepresentation }

  /// A prompt put together by ``PromptBuilder``.
  public init(@PromptBuilder _ content: () throws -> Prompt) rethrows { self = try content() }

  /// The prompt as the model reads it: each part on its own line, structured values as compact JSON.
  public var text: String {
    parts.map { part in
      switch part {
      case .text(let text): text
      case .structure(let content): content.jsonString
      }
    }.joined(separator: "\n")
  }
}

/// What a model is told to do throughout a session (FoundationModels' `Instructions`).
///
/// Strings and `@Generable` values are parts of instructions, and ``InstructionsBuilder`` puts them together:
///
/// ```swift
/// let session = LanguageModelSession(tools: [GetWeather()]) {
///   "Answer from the tools' results."
///   if brief { "Answer in one sentence." }
/// }
/// ```
public struct Instructions: Sendable, Equatable {
  /// The instructions as the model reads them: each part on its own line, structured values as compact JSON.
  public var text: String

  /// Instructions of this text.
  public init(_ text: String) { self.text = text }

  /// The instructions a value represents.
  public init(_ content: some InstructionsRepresentable) { self = content.instructionsRepresentation }

  /// Instructions put together by ``InstructionsBuilder``.
  public init(@InstructionsBuilder _ content: () throws -> Instructions) rethrows { self = try content() }

  /// Instructions of several parts, one line each; empty parts are left out.
  init(joining parts: [Instructions]) {
    text = parts.map(\.text).filter { !$0.isEmpty }.joined(separator: "\n")
  }
}

/// A value that can be a prompt or a part of one (FoundationModels' protocol).
public protocol PromptRepresentable {
  /// The value as a prompt.
  @PromptBuilder var promptRepresentation: Prompt { get }
}

/// A value that can be instructions or a part of them (FoundationModels' protocol).
public protocol InstructionsRepresentable {
  /// The value as instructions.
  @InstructionsBuilder var instructionsRepresentation: Instructions { get }
}

extension Prompt: PromptRepresentable {
  /// Itself.
  public var promptRepresentation: Prompt { return self }
}

extension Instructions: InstructionsRepresentable {
  /// Itself.
  public var instructionsRepresentation: Instructions { return self }
}

extension String: PromptRepresentable, InstructionsRepresentable {
  /// The text.
  public var promptRepresentation: Prompt { return Prompt(parts: [.text(self)]) }
  /// The text.
  public var instructionsRepresentation: Instructions { return Instructions(self) }
}

extension ConvertibleToGeneratedContent {
  /// The value as a structured part (a string's content as text).
  public var promptRepresentation: Prompt { return Prompt(parts: [GeneratedContent.part(of: generatedContent)]) }

  /// The value's content as JSON (a string's content as text).
  public var instructionsRepresentation: Instructions {
    let content = generatedContent
    if case .string(let text) = content.kind { return Instructions(text) }
    return Instructions(content.jsonString)
  }
}

extension GeneratedContent {
  /// The content as a structured part (a string as text).
  public var promptRepresentation: Prompt { return Prompt(parts: [Self.part(of: self)]) }

  /// The prompt part of content: a string as text, anything else as a structure.
  static func part(of content: GeneratedContent) -> Prompt.Part {
    if case .string(let text) = content.kind { return .text(text) }
    return .structure(content)
  }
}

extension Array: PromptRepresentable where Element: PromptRepresentable {
  /// The elements' parts, in order.
  public var promptRepresentation: Prompt { return Prompt(parts: flatMap(\.promptRepresentation.parts)) }
}

extension Array: InstructionsRepresentable where Element: InstructionsRepresentable {
  /// The elements, one line each.
  public var instructionsRepresentation: Instructions {
    return Instructions(joining: map(\.instructionsRepresentation))
  }
}

extension Optional: PromptRepresentable, InstructionsRepresentable where Wrapped: ConvertibleToGeneratedContent {}

/// A `Result` as a prompt, so a tool may return one (toolhost's: FoundationModels 26.4 and the first 27 beta had the
/// conformance, the 27 release does not).
extension Result: PromptRepresentable where Success: PromptRepresentable {
  /// The success's prompt; a failure is the structured value `{"error": "…"}`, so that a tool returning a `Result`
  /// reports its failure to the model instead of throwing.
  public var promptRepresentation: Prompt {
    switch self {
    case .success(let success): return success.promptRepresentation
    case .failure(let error):
      return Prompt(parts: [.structure(GeneratedContent(properties: ["error": String(describing: error)]))])
    }
  }
}

/// Puts prompt parts together: strings, ``Prompt``s, `@Generable` values and arrays of them, with `if`, `if`/`else`
/// and `for` (FoundationModels' builder).
@resultBuilder
public struct PromptBuilder {
  /// The parts, in order.
  public static func buildBlock<each P: PromptRepresentable>(_ components: repeat each P) -> Prompt {
    var parts: [Prompt.Part] = []
    for component in repeat each components { parts += component.promptRepresentation.parts }
    return Prompt(parts: parts)
  }

  /// The parts of every pass of a `for` loop.
  public static func buildArray(_ prompts: [some PromptRepresentable]) -> Prompt { prompts.promptRepresentation }

  /// The `if` branch.
  public static func buildEither(first component: some PromptRepresentable) -> Prompt {
    component.promptRepresentation
  }

  /// The `else` branch.
  public static func buildEither(second component: some PromptRepresentable) -> Prompt {
    component.promptRepresentation
  }

  /// An `if` without `else`: nothing when it was not taken.
  public static func buildOptional(_ component: Prompt?) -> Prompt { component ?? Prompt(parts: []) }

  /// An `if #available` branch.
  public static func buildLimitedAvailability(_ prompt: some PromptRepresentable) -> Prompt {
    prompt.promptRepresentation
  }

  /// A part as it is.
  @_disfavoredOverload
  public static func buildExpression<P: PromptRepresentable>(_ expression: P) -> P { expression }

  /// A prompt as it is.
  public static func buildExpression(_ expression: Prompt) -> Prompt { expression }
}

/// Puts instructions together: strings, ``Instructions``, `@Generable` values and arrays of them, with `if`,
/// `if`/`else` and `for` (FoundationModels' builder).
@resultBuilder
public struct InstructionsBuilder {
  /// The parts, one line each.
  public static func buildBlock<each I: InstructionsRepresentable>(_ components: repeat each I) -> Instructions {
    var parts: [Instructions] = []
    for component in repeat each components { parts.append(component.instructionsRepresentation) }
    return Instructions(joining: parts)
  }

  /// The parts of every pass of a `for` loop.
  public static func buildArray(_ instructions: [some InstructionsRepresentable]) -> Instructions {
    instructions.instructionsRepresentation
  }

  /// The `if` branch.
  public static func buildEither(first component: some InstructionsRepresentable) -> Instructions {
    component.instructionsRepresentation
  }

  /// The `else` branch.
  public static func buildEither(second component: some InstructionsRepresentable) -> Instructions {
    component.instructionsRepresentation
  }

  /// An `if` without `else`: nothing when it was not taken.
  public static func buildOptional(_ instructions: Instructions?) -> Instructions { instructions ?? Instructions("") }

  /// An `if #available` branch.
  public static func buildLimitedAvailability(_ instructions: some InstructionsRepresentable) -> Instructions {
    instructions.instructionsRepresentation
  }

  /// A part as it is.
  @_disfavoredOverload
  public static func buildExpression<I: InstructionsRepresentable>(_ expression: I) -> I { expression }

  /// Instructions as they are.
  public static func buildExpression(_ expression: Instructions) -> Instructions { expression }
}
