public import ToolhostGeneration
public import ToolhostJSON
public import ToolhostSchema

/// A tool a language model can call, shaped after FoundationModels' `Tool`.
///
/// Subprocess plugins (``PluginTool``) and Swift types implemented in-process conform alike, so one
/// ``ToolRegistry`` and one ``LanguageModelSession`` serve both. Arguments arrive validated against
/// ``parameters`` and converted into ``Arguments``:
/// - a `@Generable` type (FoundationModels' way): ``parameters`` is derived from it, nothing to write by hand;
/// - a `Decodable` type, with ``parameters`` written as JSON Schema;
/// - `JSONValue` (the default), to receive the argument object as it is.
///
/// ```swift
/// struct Dice: Tool {
///   @Generable
///   struct Arguments {
///     @Guide(description: "How many sides the die has", .range(2...100))
///     var sides: Int
///   }
///   let name = "rollDice"
///   let description = "Rolls a die with the given number of sides."
///   func call(arguments: Arguments) async throws -> String { "\(Int.random(in: 1...arguments.sides))" }
/// }
/// ```
public protocol Tool<Arguments, Output>: Sendable {
  /// The arguments: a `@Generable` type, a `Decodable` one, or `JSONValue` for the argument object as it is.
  associatedtype Arguments = JSONValue
  /// What the tool returns: a `String`, `[String]`, ``GeneratedContent``, a `@Generable` value, a ``Prompt``, an
  /// array of them, a `JSONValue`, a ``ToolOutput`` or another ``ToolOutputConvertible`` (FoundationModels' constraint,
  /// ``PromptRepresentable``, with toolhost's outputs besides).
  associatedtype Output: PromptRepresentable = ToolOutput

  /// The tool's name: 1–64 characters of `[A-Za-z0-9_.-]`. Default: the type's name.
  var name: String { get }
  /// What the tool does and when to use it, written for a language model.
  var description: String { get }
  /// The JSON Schema of the argument object (an object schema, as in OpenAI function parameters and MCP); derived
  /// from ``Arguments`` when it is `@Generable`.
  var parameters: JSONValue { get }
  /// The JSON Schema the structured result matches, if the tool declares one.
  var outputSchema: JSONValue? { get }
  /// Hints about the tool's behaviour (read-only, destructive, idempotent, open world).
  var annotations: ToolAnnotations { get }
  /// Whether the schema is also written into the model's instructions (FoundationModels' flag); default `true`.
  var includesSchemaInInstructions: Bool { get }
  /// Requests the tool serves and the arguments it takes for them (toolhost's, not FoundationModels'): a small
  /// model is shown the ones nearest the question. Default: the argument objects of the schema's JSON Schema
  /// `examples` keyword (``ToolExample/examples(inSchema:)``), as an MCP server may give them.
  var examples: [ToolExample] { get }

  /// Runs the tool.
  ///
  /// - Throws: whatever the tool fails with; hosts wrap it in a ``ToolCallError``. Plugins throw ``ToolFailure``.
  func call(arguments: Arguments) async throws -> Output

  /// Converts a call's arguments, runs ``call(arguments:)`` and converts its output; what a ``ToolRegistry`` runs.
  /// The default is the one to keep: a wrapper such as ``AnyTool`` forwards it to the tool it wraps.
  func invoke(_ arguments: JSONValue) async throws -> ToolOutput
}

extension Tool {
  /// The type's name, as FoundationModels names a tool that does not name itself.
  public var name: String { String(describing: Self.self) }
  /// No output schema.
  public var outputSchema: JSONValue? { nil }
  /// No hints.
  public var annotations: ToolAnnotations { ToolAnnotations() }
  /// `true`.
  public var includesSchemaInInstructions: Bool { true }
  /// The examples of ``parameters`` (its JSON Schema `examples` keyword).
  public var examples: [ToolExample] { ToolExample.examples(inSchema: parameters) }

  /// Converts `arguments` into ``Arguments``, calls the tool and converts its output.
  ///
  /// A `@Generable` (``ConvertibleFromGeneratedContent``) type is made from the arguments as ``GeneratedContent``, a
  /// `Decodable` one is decoded. Arguments are not validated here; ``ToolRegistry`` validates before calling.
  /// - Throws: ``ToolFailure/invalidArguments(_:)`` when the arguments do not convert (naming where and why), or what
  ///   ``call(arguments:)`` throws.
  public func invoke(_ arguments: JSONValue) async throws -> ToolOutput {
    ToolOutput(of: try await call(arguments: try Self.convert(arguments)))
  }

  /// Whether ``Arguments`` can be made from a call's arguments: `JSONValue`, a `@Generable` type or a `Decodable` one.
  static var argumentsAreConvertible: Bool {
    Arguments.self == JSONValue.self || Arguments.self is any ConvertibleFromGeneratedContent.Type
      || Arguments.self is any Decodable.Type
  }

  /// The arguments as ``Arguments``.
  static func convert(_ arguments: JSONValue) throws -> Arguments {
    if let direct = arguments as? Arguments { return direct }
    do {
      // The casts back cannot fail: the metatype is Arguments' own.
      if let generable = Arguments.self as? any ConvertibleFromGeneratedContent.Type {
        return try generable.init(GeneratedContent(json: arguments)) as! Arguments
      }
      if let decodable = Arguments.self as? any Decodable.Type {
        return try JSONValueDecoder().decode(decodable, from: arguments) as! Arguments
      }
    } catch let error as GeneratedContentError {
      throw ToolFailure.invalidArguments([
        ValidationIssue(instanceLocation: error.path, keywordLocation: "", keyword: "type", message: error.message)
      ])
    } catch {
      throw ToolFailure.invalidArguments([
        ValidationIssue(instanceLocation: "", keywordLocation: "", keyword: "decode", message: "\(error)")
      ])
    }
    throw ToolFailure.invalidArguments([
      ValidationIssue(
        instanceLocation: "", keywordLocation: "", keyword: "decode",
        message: "\(Arguments.self) is neither @Generable nor Decodable, so the arguments cannot be converted into it")
    ])
  }
}

extension Tool where Arguments: Generable {
  /// The JSON Schema of the `@Generable` arguments.
  public var parameters: JSONValue { Arguments.generationSchema.jsonSchema }
}

/// A tool whose schemas are compiled already, so registries need not compile them again.
public protocol PrecompiledTool: Tool {
  /// The compiled ``Tool/parameters``.
  var compiledParameters: JSONSchema { get }
}

/// Hints about a tool's behaviour, as MCP names them. Hints, not guarantees.
public struct ToolAnnotations: Sendable, Hashable, Codable {
  /// A title for people.
  public var title: String?
  /// The tool does not change its environment.
  public var readOnlyHint: Bool?
  /// The tool may destroy or overwrite data; hosts ask before running it.
  public var destructiveHint: Bool?
  /// Calling it again with the same arguments has no further effect.
  public var idempotentHint: Bool?
  /// The tool reaches outside the machine.
  public var openWorldHint: Bool?

  /// Makes annotations; all hints default to unknown.
  public init(
    title: String? = nil, readOnlyHint: Bool? = nil, destructiveHint: Bool? = nil, idempotentHint: Bool? = nil,
    openWorldHint: Bool? = nil
  ) {
    self.title = title
    self.readOnlyHint = readOnlyHint
    self.destructiveHint = destructiveHint
    self.idempotentHint = idempotentHint
    self.openWorldHint = openWorldHint
  }

  /// Whether a host should ask before running the tool: only an explicit `destructiveHint: true` counts (MCP's
  /// default for an unmarked tool is "may be destructive", which would make every plain plugin ask).
  public var isDestructive: Bool { destructiveHint == true }
}

/// What a tool call produced: a structured value, a text rendering, or both.
public struct ToolOutput: Sendable, Hashable, Codable {
  /// The structured result.
  public var value: JSONValue?
  /// A rendering for people (and models).
  public var text: String?

  /// Makes an output.
  public init(value: JSONValue? = nil, text: String? = nil) {
    self.value = value
    self.text = text
  }

  /// What a model is shown: the structured value as compact JSON when there is one, else the text.
  public var modelText: String {
    if let value { return value.serialized() }
    return text ?? ""
  }

  /// What a person is shown: the text when there is one, else the value as indented JSON.
  public var displayText: String {
    if let text { return text }
    guard let value else { return "" }
    if case .string(let s) = value { return s }
    return (try? value.serialized(.pretty)) ?? value.serialized()
  }
}

/// A type a tool can return that says itself what a model and a person are shown (a ``ToolOutput``'s value and text).
/// Any other ``PromptRepresentable`` is converted by ``ToolOutput/init(_:)``.
public protocol ToolOutputConvertible: PromptRepresentable, Sendable {
  /// The value as a ``ToolOutput``.
  var toolOutput: ToolOutput { get }
}

extension ToolOutputConvertible {
  /// The output as a prompt part: the structured value when there is one, else the text.
  public var promptRepresentation: Prompt {
    let output = toolOutput
    if let value = output.value { return GeneratedContent(json: value).promptRepresentation }
    return Prompt(parts: [.text(output.text ?? "")])
  }
}

extension ToolOutput {
  /// The output of a tool's returned value: its own ``ToolOutputConvertible/toolOutput`` when it has one; for a
  /// `@Generable` value (or an array of them) its content, structured (a string as text); else the output of its
  /// prompt (see ``init(_:)``).
  public init(of value: some PromptRepresentable) {
    if let convertible = value as? any ToolOutputConvertible {
      self = convertible.toolOutput
    } else if let content = value as? any ConvertibleToGeneratedContent {
      self = content.generatedContent.toolOutput
    } else {
      self.init(value.promptRepresentation)
    }
  }

  /// The output of a prompt: one structured part is the value; several structured parts are an array; text alone
  /// is the text; text and structures together are text, the structures written as JSON.
  public init(_ prompt: Prompt) {
    var structures: [JSONValue] = []
    var hasText = false
    for part in prompt.parts {
      switch part {
      case .structure(let content): structures.append(content.jsonValue)
      case .text: hasText = true
      }
    }
    switch (hasText, structures.count) {
    case (false, 1): self.init(value: structures[0])
    case (false, 2...): self.init(value: .array(structures))
    default: self.init(text: prompt.text)
    }
  }
}

extension ToolOutput: ToolOutputConvertible {
  /// Itself.
  public var toolOutput: ToolOutput { self }
}

extension String: ToolOutputConvertible {
  /// A text output.
  public var toolOutput: ToolOutput { ToolOutput(text: self) }
}

extension JSONValue: ToolOutputConvertible {
  /// A structured output.
  public var toolOutput: ToolOutput { ToolOutput(value: self) }
}

extension GeneratedContent: ToolOutputConvertible {
  /// A structured output (a string's content is text).
  public var toolOutput: ToolOutput {
    if case .string(let text) = kind { return ToolOutput(text: text) }
    return ToolOutput(value: jsonValue)
  }
}

extension Result: ToolOutputConvertible where Success: ToolOutputConvertible {
  /// The success's output. A failure is returned to the model as the tool's output (`{"error": "…"}`) instead of
  /// thrown, so the request goes on and the model can say what went wrong or try otherwise (FoundationModels' `Result`
  /// output).
  public var toolOutput: ToolOutput {
    switch self {
    case .success(let success): return success.toolOutput
    case .failure(let error):
      let message = String(describing: error)
      return ToolOutput(value: ["error": .string(message)], text: "error: \(message)")
    }
  }
}

extension Array: ToolOutputConvertible where Element == String {
  /// A list of strings: the array as the structured value, one line each as text.
  public var toolOutput: ToolOutput {
    ToolOutput(value: .array(map { .string($0) }), text: joined(separator: "\n"))
  }
}
