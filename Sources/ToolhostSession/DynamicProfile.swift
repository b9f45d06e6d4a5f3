import Synchronization
public import ToolhostGeneration
public import ToolhostTools

// Dynamic profiles (FoundationModels 27): a session's instructions, tools, tool-calling mode and sampling worked out
// anew before every model turn from the session's properties (its history so far among them), with hooks that hear
// prompts, tool calls, tool outputs and responses.

/// Instructions and tools, written with a result builder, that a ``LanguageModelSession/Profile`` offers: strings of
/// ``Instructions``, tools, lists of tools, and `if`/`else` over them (FoundationModels' protocol).
public protocol DynamicInstructions {
  /// What this is made of.
  associatedtype Body: DynamicInstructions
  /// The parts.
  @DynamicInstructionsBuilder var body: Body { get }
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
  var resolved: ResolvedInstructions { get }
}

extension Instructions: PrimitiveDynamicInstructions {
  var resolved: ResolvedInstructions { ResolvedInstructions(texts: [text]) }
}

/// Tools as a part of ``DynamicInstructions``.
public struct ToolsDynamicInstructions: DynamicInstructions, PrimitiveDynamicInstructions {
  let tools: [any Tool]
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  var resolved: ResolvedInstructions { ResolvedInstructions(tools: tools) }
}

/// Several parts in a row.
public struct TupleDynamicInstructions: DynamicInstructions, PrimitiveDynamicInstructions {
  let parts: [any DynamicInstructions]
  /// No further parts.
  public var body: Never { fatalError("a leaf") }
  var resolved: ResolvedInstructions {
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
  var resolved: ResolvedInstructions { ResolvedInstructions() }
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
  var resolved: ResolvedInstructions {
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
  var resolved: ResolvedInstructions { map { resolve($0) } ?? ResolvedInstructions() }
}

/// The text and tools of any instructions: a leaf's own, or its body's.
func resolve(_ instructions: any DynamicInstructions) -> ResolvedInstructions {
  if let primitive = instructions as? any PrimitiveDynamicInstructions { return primitive.resolved }
  return resolve(instructions.body)
}

/// Builds ``DynamicInstructions`` from strings, ``Instructions``, tools and lists of tools.
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
  /// Text.
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
}

/// A key of a custom session property (FoundationModels' protocol): its type and its value before anything sets it.
public protocol SessionPropertyKey: SendableMetatype {
  /// The value's type.
  associatedtype Value: Sendable
  /// The value before anything sets it.
  static var defaultValue: Value { get }
}

/// A session's properties: its history so far and custom values (FoundationModels' `SessionPropertyValues`). A
/// profile reads them through ``LanguageModelSession/SessionProperty``; hooks may change them, and the profile is
/// worked out again before the next model turn.
///
/// ```swift
/// enum Expertise: SessionPropertyKey { static let defaultValue = "beginner" }
/// extension SessionPropertyValues {
///   var expertise: String { get { self[Expertise.self] } set { self[Expertise.self] = newValue } }
/// }
/// ```
public final class SessionPropertyValues: Sendable {
  private struct State {
    var history: ArraySlice<Transcript.Entry> = []
    var custom: [ObjectIdentifier: any Sendable] = [:]
  }

  private let state = Mutex(State())

  /// Empty properties.
  public init() {}

  /// The session's entries so far, the current request's among them while it runs.
  public var history: ArraySlice<Transcript.Entry> {
    get { state.withLock { $0.history } }
    set { state.withLock { $0.history = newValue } }
  }

  /// A custom property's value.
  public subscript<K: SessionPropertyKey>(key: K.Type) -> K.Value {
    get { state.withLock { $0.custom[ObjectIdentifier(key)] as? K.Value } ?? K.defaultValue }
    set { state.withLock { $0.custom[ObjectIdentifier(key)] = newValue } }
  }
}

/// A place a ``LanguageModelSession/SessionProperty`` reads: the properties of the session that evaluates its profile.
final class SessionPropertyLocation: Sendable {
  private let values = Mutex<SessionPropertyValues?>(nil)

  var current: SessionPropertyValues { values.withLock { $0 } ?? SessionPropertyValues() }

  func bind(to properties: SessionPropertyValues) { values.withLock { $0 = properties } }
}

/// A property wrapper field the session binds before it evaluates a profile.
protocol SessionPropertyBinding {
  func bind(to properties: SessionPropertyValues)
}

extension LanguageModelSession {
  /// Reads (and writes) one of the session's properties from a dynamic profile: `@SessionProperty(\.history)`. The
  /// session binds the profiles it evaluates; elsewhere (a tool, say) the wrapper reads the defaults.
  @propertyWrapper
  public struct SessionProperty<Value>: SessionPropertyBinding {
    let keyPath: any ReferenceWritableKeyPath<SessionPropertyValues, Value> & Sendable
    let location = SessionPropertyLocation()

    /// A property of the session (a key path literal such as `\.history`).
    public init(_ keyPath: any ReferenceWritableKeyPath<SessionPropertyValues, Value> & Sendable) {
      self.keyPath = keyPath
    }

    /// The value in the session evaluating the profile (the default before one does).
    public var wrappedValue: Value {
      get { location.current[keyPath: keyPath] }
      nonmutating set { location.current[keyPath: keyPath] = newValue }
    }

    func bind(to properties: SessionPropertyValues) { location.bind(to: properties) }
  }

  /// A session's behaviour worked out before every model turn: its instructions and tools (a ``Profile``), and the
  /// modifiers applied to it (FoundationModels' protocol).
  ///
  /// "Required until the first tool call, then allowed", as FoundationModels' guide writes it:
  /// ```swift
  /// struct Forecaster: LanguageModelSession.DynamicProfile {
  ///   @LanguageModelSession.SessionProperty(\.history) var history
  ///   var body: some LanguageModelSession.DynamicProfile {
  ///     LanguageModelSession.Profile {
  ///       "Answer with the weather tool's figures."
  ///       GetWeather()
  ///     }
  ///     .toolCallingMode(history.calledToolSinceLastPrompt ? .allowed : .required)
  ///   }
  /// }
  /// let session = LanguageModelSession(model: model, profile: Forecaster())
  /// ```
  public protocol DynamicProfile: SendableMetatype {
    /// What this profile is made of.
    associatedtype Body: DynamicProfile
    /// The profile. The session works it out with its state locked, so it must not use the session itself.
    @DynamicProfileBuilder var body: Body { get }
  }

  /// Instructions and tools, the root of a dynamic profile.
  public struct Profile: DynamicProfile {
    let instructions: any DynamicInstructions

    /// A profile of these instructions and tools.
    public init(@DynamicInstructionsBuilder _ dynamicInstructions: () -> some DynamicInstructions) {
      instructions = dynamicInstructions()
    }

    /// No further parts.
    public var body: Never { fatalError("a leaf") }
  }

  /// What `if`/`else` over profiles gives.
  public struct ConditionalDynamicProfile<TrueContent: DynamicProfile, FalseContent: DynamicProfile>: DynamicProfile {
    enum Branch {
      case trueContent(TrueContent)
      case falseContent(FalseContent)
    }
    let branch: Branch
    /// No further parts.
    public var body: Never { fatalError("a leaf") }
  }

  /// A profile with a modifier applied.
  public struct ModifiedDynamicProfile<Content: DynamicProfile>: DynamicProfile {
    let content: Content
    let modify: @Sendable (inout ResolvedProfile) -> Void
    /// No further parts.
    public var body: Never { fatalError("a leaf") }
  }

  /// Builds a profile.
  @resultBuilder
  public enum DynamicProfileBuilder {
    /// One profile.
    public static func buildBlock<T: DynamicProfile>(_ content: T) -> T { content }
    /// The `if` branch.
    public static func buildEither<T: DynamicProfile, F: DynamicProfile>(first content: T)
      -> ConditionalDynamicProfile<T, F>
    {
      ConditionalDynamicProfile(branch: .trueContent(content))
    }
    /// The `else` branch.
    public static func buildEither<T: DynamicProfile, F: DynamicProfile>(second content: F)
      -> ConditionalDynamicProfile<T, F>
    {
      ConditionalDynamicProfile(branch: .falseContent(content))
    }
  }

  /// What a profile comes to for one model turn.
  public struct ResolvedProfile: Sendable {
    /// The instructions' text.
    public var instructions: String?
    /// The tools offered.
    public var tools: [any Tool] = []
    /// The tool-calling mode, when the profile sets one.
    public var toolCallingMode: GenerationOptions.ToolCallingMode?
    /// The temperature, when the profile sets one.
    public var temperature: Double?
    /// The sampling mode, when the profile sets one.
    public var samplingMode: GenerationOptions.SamplingMode?
    /// The most tokens a turn may generate, when the profile sets it.
    public var maximumResponseTokens: Int?
    var onPrompt: [@Sendable (Transcript.Prompt) async throws -> Void] = []
    var onToolCall: [@Sendable (Transcript.ToolCall) async throws -> Void] = []
    var onToolOutput: [@Sendable (Transcript.ToolCall, Transcript.ToolOutput) async throws -> Void] = []
    var onResponse: [@Sendable (Transcript.Response) async throws -> Void] = []

    /// `options` with the profile's settings: its tool-calling mode, and its sampling where the request sets none.
    func applied(to options: GenerationOptions) -> GenerationOptions {
      var o = options
      if let toolCallingMode { o.toolCallingMode = toolCallingMode }
      if o.temperature == nil { o.temperature = temperature }
      if o.samplingMode == nil { o.samplingMode = samplingMode }
      if o.maximumResponseTokens == nil { o.maximumResponseTokens = maximumResponseTokens }
      return o
    }
  }
}

extension Never: LanguageModelSession.DynamicProfile {}

/// A part of a profile that knows what it comes to.
protocol PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, properties: SessionPropertyValues)
}

extension LanguageModelSession.Profile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, properties: SessionPropertyValues) {
    let resolved = ToolhostSession.resolve(instructions)
    profile.instructions = resolved.texts.isEmpty ? nil : resolved.texts.joined(separator: "\n\n")
    profile.tools = resolved.tools
  }
}

extension LanguageModelSession.ConditionalDynamicProfile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, properties: SessionPropertyValues) {
    switch branch {
    case .trueContent(let c): LanguageModelSession.resolve(c, into: &profile, properties: properties)
    case .falseContent(let c): LanguageModelSession.resolve(c, into: &profile, properties: properties)
    }
  }
}

extension LanguageModelSession.ModifiedDynamicProfile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, properties: SessionPropertyValues) {
    LanguageModelSession.resolve(content, into: &profile, properties: properties)
    modify(&profile)
  }
}

extension LanguageModelSession {
  /// Works out a profile for one model turn, its `@SessionProperty`s (and those of the profiles in its body) reading
  /// `properties`.
  static func resolve(_ profile: any DynamicProfile, properties: SessionPropertyValues) -> ResolvedProfile {
    var resolved = ResolvedProfile()
    resolve(profile, into: &resolved, properties: properties)
    return resolved
  }

  static func resolve(
    _ profile: any DynamicProfile, into resolved: inout ResolvedProfile, properties: SessionPropertyValues
  ) {
    if let primitive = profile as? any PrimitiveDynamicProfile {
      primitive.resolve(into: &resolved, properties: properties)
      return
    }
    bind(profile, to: properties)
    resolve(profile.body, into: &resolved, properties: properties)
  }

  /// Points every `@SessionProperty` stored in `value` at `properties`.
  static func bind(_ value: Any, to properties: SessionPropertyValues) {
    for child in Mirror(reflecting: value).children {
      if let binding = child.value as? any SessionPropertyBinding { binding.bind(to: properties) }
    }
  }
}

extension LanguageModelSession.DynamicProfile {
  private func modified(_ modify: @escaping @Sendable (inout LanguageModelSession.ResolvedProfile) -> Void)
    -> LanguageModelSession.ModifiedDynamicProfile<Self>
  {
    LanguageModelSession.ModifiedDynamicProfile(content: self, modify: modify)
  }

  /// Sets the tool-calling mode of the turns this profile answers.
  public func toolCallingMode(_ mode: GenerationOptions.ToolCallingMode?) -> some LanguageModelSession.DynamicProfile {
    modified { $0.toolCallingMode = mode }
  }

  /// Sets the temperature (a request's own temperature wins).
  public func temperature(_ temperature: Double?) -> some LanguageModelSession.DynamicProfile {
    modified { $0.temperature = temperature }
  }

  /// Sets the sampling mode (a request's own wins).
  public func samplingMode(_ mode: GenerationOptions.SamplingMode?) -> some LanguageModelSession.DynamicProfile {
    modified { $0.samplingMode = mode }
  }

  /// Sets the most tokens a turn may generate (a request's own limit wins).
  public func maximumResponseTokens(_ limit: Int?) -> some LanguageModelSession.DynamicProfile {
    modified { $0.maximumResponseTokens = limit }
  }

  /// Runs `action` when a request starts, with its prompt; throwing ends the request with the error.
  public func onPrompt(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.Prompt) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    modified { $0.onPrompt.append(action) }
  }

  /// Runs `action` for every tool call the model asks for, before it runs; throwing ends the request.
  public func onToolCall(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.ToolCall) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    modified { $0.onToolCall.append(action) }
  }

  /// Runs `action` for every tool output, with its call; throwing ends the request.
  public func onToolOutput(
    @_inheritActorContext perform action:
      @escaping @Sendable (Transcript.ToolCall, Transcript.ToolOutput) async throws
      -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    modified { $0.onToolOutput.append(action) }
  }

  /// Runs `action` with the model's response, before the request returns it; throwing ends the request.
  public func onResponse(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.Response) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    modified { $0.onResponse.append(action) }
  }
}

extension Collection where Element == Transcript.Entry {
  /// Whether a tool was called after the last prompt: what "required until the first tool call" looks at.
  public var calledToolSinceLastPrompt: Bool {
    for entry in reversed() {
      switch entry {
      case .prompt: return false
      case .toolCalls: return true
      default: continue
      }
    }
    return false
  }
}

extension LanguageModelSession.SessionProperty: Sendable where Value: Sendable {}
