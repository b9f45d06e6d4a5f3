public import ToolhostGeneration
public import ToolhostTools

// Dynamic instructions (FoundationModels 27): the instructions and tools of a ``LanguageModelSession/Profile``,
// written with a result builder and worked out again before every model turn.

/// Instructions and tools, written with a result builder, that a ``LanguageModelSession/Profile`` offers:
/// ``Instructions``, tools, lists of tools, `if`/`else` and ``ForEach`` over them (FoundationModels' protocol). A type
/// of your own conforms with a `body`; its ``SessionProperty`` fields read the session's properties.
///
/// ```swift
/// struct Helpers: DynamicInstructions {
///   @SessionProperty(\.expertise) var expertise
///   var body: some DynamicInstructions {
///     Instructions("Answer for a reader whose expertise is \(expertise).")
///     GetWeather()
///   }
/// }
/// ```
public protocol DynamicInstructions {
  /// What this is made of.
  associatedtype Body: DynamicInstructions
  /// The parts.
  @DynamicInstructionsBuilder var body: Body { get }
}

extension DynamicInstructions {
  /// One of the session's properties, read from a ``DynamicInstructions`` type (FoundationModels' name).
  public typealias SessionProperty = LanguageModelSession.SessionProperty
  /// Instructions for each element of a collection (FoundationModels' name).
  public typealias ForEach = DynamicInstructionsForEach
}

extension Instructions: DynamicInstructions {
  /// No further parts: instructions are a leaf of ``DynamicInstructions``.
  public var body: Never { fatalError("Instructions is a leaf") }
}

extension Never: DynamicInstructions {
  /// No parts.
  public var body: Never { fatalError("Never has no body") }
}

/// What instructions resolve to: their text parts and their tools, in order.
struct ResolvedInstructions {
  var texts: [String] = []
  var tools: [any Tool] = []

  mutating func add(_ other: ResolvedInstructions) {
    texts += other.texts
    tools += other.tools
  }
}

/// A part that knows what it resolves to (the builder's own parts and the leaves).
protocol PrimitiveDynamicInstructions {
  func resolved() -> ResolvedInstructions
}

extension Instructions: PrimitiveDynamicInstructions {
  func resolved() -> ResolvedInstructions {
    ResolvedInstructions(texts: [text])
  }
}

/// Tools as a part of ``DynamicInstructions`` (toolhost's: the type of a tool or a list of tools in the builder).
public struct ToolsDynamicInstructions: DynamicInstructions, PrimitiveDynamicInstructions {
  let tools: [any Tool]
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  func resolved() -> ResolvedInstructions {
    ResolvedInstructions(tools: tools)
  }
}

/// Several parts in a row.
public struct TupleDynamicInstructions: DynamicInstructions, PrimitiveDynamicInstructions {
  let parts: [any DynamicInstructions]
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  func resolved() -> ResolvedInstructions {
    var all = ResolvedInstructions()
    for part in parts { all.add(resolve(part)) }
    return all
  }
}

/// Nothing.
public struct EmptyDynamicInstructions: DynamicInstructions, PrimitiveDynamicInstructions, Sendable {
  /// Nothing.
  public init() {}
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  func resolved() -> ResolvedInstructions { ResolvedInstructions() }
}

/// What `if`/`else` gives.
public struct ConditionalDynamicInstructions<TrueContent: DynamicInstructions, FalseContent: DynamicInstructions>:
  DynamicInstructions, PrimitiveDynamicInstructions
{
  /// Which branch was taken.
  public enum Branch {
    /// The `if` branch.
    case trueContent(TrueContent)
    /// The `else` branch.
    case falseContent(FalseContent)
  }

  let branch: Branch

  /// The branch taken.
  public init(_ branch: Branch) { self.branch = branch }
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  func resolved() -> ResolvedInstructions {
    switch branch {
    case .trueContent(let c): resolve(c)
    case .falseContent(let c): resolve(c)
    }
  }
}

extension Optional: DynamicInstructions where Wrapped: DynamicInstructions {
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
}

extension Optional: PrimitiveDynamicInstructions where Wrapped: DynamicInstructions {
  func resolved() -> ResolvedInstructions {
    map { resolve($0) } ?? ResolvedInstructions()
  }
}

/// Any instructions, their type erased (FoundationModels' type): what an `if #available` branch gives.
public struct AnyDynamicInstructions: DynamicInstructions, PrimitiveDynamicInstructions {
  let base: any DynamicInstructions

  /// `dynamicInstructions`, their type erased.
  public init(_ dynamicInstructions: any DynamicInstructions) { base = dynamicInstructions }

  /// `dynamicInstructions`, their type erased.
  public init(erasing dynamicInstructions: some DynamicInstructions) { base = dynamicInstructions }

  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  func resolved() -> ResolvedInstructions {
    resolve(base)
  }
}

/// Instructions for each element of a collection, in order (FoundationModels' `DynamicInstructions.ForEach`).
///
/// ```swift
/// Profile {
///   Instructions("Help with the user's open tasks.")
///   DynamicInstructionsForEach(tasks, id: \.self) { task in Instructions("Open: \(task)") }
/// }
/// ```
public struct DynamicInstructionsForEach<Data: RandomAccessCollection, ID: Hashable, Content: DynamicInstructions>:
  DynamicInstructions, PrimitiveDynamicInstructions
{
  let data: Data
  let content: (Data.Element) -> Content

  /// The instructions `content` gives for each element of `data`; `id` names an element (as SwiftUI's `ForEach`).
  public init(
    _ data: Data, id: KeyPath<Data.Element, ID>,
    @DynamicInstructionsBuilder content: @escaping (Data.Element) -> Content
  ) {
    self.data = data
    self.content = content
  }

  /// No further parts.
  public var body: Never { fatalError("a leaf") }

  func resolved() -> ResolvedInstructions {
    var all = ResolvedInstructions()
    for element in data { all.add(resolve(content(element))) }
    return all
  }
}

extension DynamicInstructionsForEach where Data.Element: Identifiable, ID == Data.Element.ID {
  /// The instructions `content` gives for each element of `data`, whose elements are identifiable.
  public init(_ data: Data, @DynamicInstructionsBuilder content: @escaping (Data.Element) -> Content) {
    self.init(data, id: \.id, content: content)
  }
}

/// The text and tools of any instructions: a leaf's own, or its body's.
func resolve(_ instructions: any DynamicInstructions) -> ResolvedInstructions {
  if let primitive = instructions as? any PrimitiveDynamicInstructions { return primitive.resolved() }
  return resolve(instructions.body)
}

/// Builds ``DynamicInstructions`` from ``Instructions``, tools, lists of tools, `if`/`else` and `if #available`.
@resultBuilder
public enum DynamicInstructionsBuilder {
  /// A tool.
  public static func buildExpression(_ tool: some Tool) -> ToolsDynamicInstructions {
    ToolsDynamicInstructions(tools: [tool])
  }
  /// Tools.
  public static func buildExpression(_ tools: [any Tool]) -> ToolsDynamicInstructions {
    ToolsDynamicInstructions(tools: tools)
  }
  /// Text as instructions (toolhost's; FoundationModels writes `Instructions("…")`).
  public static func buildExpression(_ text: String) -> Instructions { Instructions(text) }
  /// Instructions as they are.
  public static func buildExpression<T: DynamicInstructions>(_ expression: T) -> T { expression }
  /// Nothing.
  public static func buildBlock() -> EmptyDynamicInstructions { EmptyDynamicInstructions() }
  /// One part.
  public static func buildBlock<T: DynamicInstructions>(_ content: T) -> T { content }
  /// Parts in a row.
  @_disfavoredOverload
  public static func buildBlock(_ parts: any DynamicInstructions...) -> TupleDynamicInstructions {
    TupleDynamicInstructions(parts: parts)
  }
  /// The `if` branch.
  public static func buildEither<T: DynamicInstructions, F: DynamicInstructions>(first content: T)
    -> ConditionalDynamicInstructions<T, F>
  {
    ConditionalDynamicInstructions(.trueContent(content))
  }
  /// The `else` branch.
  public static func buildEither<T: DynamicInstructions, F: DynamicInstructions>(second content: F)
    -> ConditionalDynamicInstructions<T, F>
  {
    ConditionalDynamicInstructions(.falseContent(content))
  }
  /// An `if` without `else`.
  public static func buildOptional<T: DynamicInstructions>(_ content: T?) -> T? { content }
  /// A branch under `if #available`.
  public static func buildLimitedAvailability(_ content: some DynamicInstructions) -> AnyDynamicInstructions {
    AnyDynamicInstructions(erasing: content)
  }
}
