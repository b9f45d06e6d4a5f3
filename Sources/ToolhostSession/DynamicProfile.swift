import ToolhostGeneration
import ToolhostJSON
public import ToolhostTools

// Dynamic profiles (FoundationModels 27): a session's model, instructions, tools, tool-calling mode and sampling
// worked out anew before every model turn from the session's properties (its history so far among them), with
// modifiers and hooks that hear prompts, tool calls, tool outputs and responses.

extension LanguageModelSession {
  /// A session's behaviour worked out before every model turn: its instructions and tools (a ``Profile``), and the
  /// modifiers applied to it (FoundationModels' protocol).
  ///
  /// "Required until the first tool call, then allowed", as FoundationModels' guide writes it:
  /// ```swift
  /// extension SessionPropertyValues {
  ///   @SessionPropertyEntry var toolCallCount: Int = 0
  /// }
  /// struct Forecaster: LanguageModelSession.DynamicProfile {
  ///   @SessionProperty(\.toolCallCount) var toolCallCount
  ///   var body: some LanguageModelSession.DynamicProfile {
  ///     Profile {
  ///       Instructions("Answer with the weather tool's figures.")
  ///       GetWeather()
  ///     }
  ///     .toolCallingMode(toolCallCount < 1 ? .required : .allowed)
  ///     .onToolCall { toolCallCount += 1 }
  ///   }
  /// }
  /// let session = LanguageModelSession(profile: Forecaster().model(model))
  /// ```
  ///
  /// A setting written at several levels takes the value nearest the ``Profile``; the outer ones are defaults, and a
  /// request's own ``GenerationOptions`` win over all of them. Hooks and history transforms add up: each level's run,
  /// in the order they are written.
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

  /// Any profile, its type erased (FoundationModels' type): what an `if #available` branch gives.
  public struct AnyDynamicProfile: DynamicProfile {
    let base: any DynamicProfile

    /// `dynamicProfile`, its type erased.
    public init(_ dynamicProfile: any DynamicProfile) { base = dynamicProfile }

    /// `dynamicProfile`, its type erased.
    public init(erasing dynamicProfile: some DynamicProfile) { base = dynamicProfile }

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

  /// A modifier of profiles of your own, applied with ``DynamicProfile/modifier(_:)`` (FoundationModels' protocol):
  /// its `body` wraps the profile it is applied to (its `content`) in other modifiers.
  ///
  /// ```swift
  /// struct Careful: LanguageModelSession.DynamicProfileModifier {
  ///   func body(content: Content) -> some LanguageModelSession.DynamicProfile {
  ///     content.temperature(0).toolCallingMode(.required)
  ///   }
  /// }
  /// ```
  public protocol DynamicProfileModifier: SendableMetatype {
    /// What the modified profile is made of.
    associatedtype Body: DynamicProfile
    /// The profile the modifier is applied to, as its `body` sees it.
    typealias Content = DynamicProfileModifierContent<Self>
    /// The modified profile.
    @DynamicProfileBuilder func body(content: Content) -> Body
  }

  /// The profile a ``DynamicProfileModifier`` is applied to, inside its `body`.
  public struct DynamicProfileModifierContent<Modifier: DynamicProfileModifier>: DynamicProfile {
    let content: any DynamicProfile
    /// No further parts.
    public var body: Never { fatalError("a leaf") }
  }

  /// A profile with a modifier applied.
  public struct ModifiedDynamicProfile<Content: DynamicProfile, Modifier: DynamicProfileModifier>: DynamicProfile {
    let content: Content
    let modifier: Modifier
    /// No further parts.
    public var body: Never { fatalError("a leaf") }
  }

  /// Builds a profile: one profile, `if`/`else` over profiles, and `if #available`.
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
    /// A branch under `if #available`.
    public static func buildLimitedAvailability(_ component: some DynamicProfile) -> AnyDynamicProfile {
      AnyDynamicProfile(erasing: component)
    }
  }

  /// What a profile comes to for one model turn (toolhost's: the session's view of a worked-out profile).
  public struct ResolvedProfile: Sendable {
    /// The model that answers, when the profile sets one.
    public var model: (any LanguageModel)?
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
    /// How much the model reasons, when the profile sets it.
    public var reasoningLevel: ContextOptions.ReasoningLevel?
    /// What a request whose tool fails leaves in the transcript, when the profile sets it.
    public var transcriptErrorHandlingPolicy: TranscriptErrorHandlingPolicy?
    var historyTransforms: [@Sendable ([Transcript.Entry]) -> [Transcript.Entry]] = []
    var onPrompt: [@Sendable (Transcript.Prompt) async throws -> Void] = []
    var onToolCall: [@Sendable (Transcript.ToolCall) async throws -> Void] = []
    var onToolOutput: [@Sendable (Transcript.ToolCall, Transcript.ToolOutput) async throws -> Void] = []
    var onResponse: [@Sendable (Transcript.Response) async throws -> Void] = []
    var onReasoning: [@Sendable (Transcript.Reasoning) async throws -> Void] = []
    /// The activation hooks of the profile's parts, by where the part is in the profile.
    var lifecycles: [String: Lifecycle] = [:]

    /// A part's `onActivate` and `onDeactivate` actions.
    struct Lifecycle: Sendable {
      var activate: [@Sendable () async -> Void] = []
      var deactivate: [@Sendable () async -> Void] = []
    }

    /// `options` with the profile's settings where the request sets none (a request's own options win).
    func applied(to options: GenerationOptions) -> GenerationOptions {
      var o = options
      if o.toolCallingMode == nil { o.toolCallingMode = toolCallingMode }
      if o.temperature == nil { o.temperature = temperature }
      if o.samplingMode == nil { o.samplingMode = samplingMode }
      if o.maximumResponseTokens == nil { o.maximumResponseTokens = maximumResponseTokens }
      if let reasoningLevel, o.additionalParameters["reasoning_effort"] == nil {
        o.additionalParameters["reasoning_effort"] = .string(reasoningLevel.effort)
      }
      return o
    }

    /// The transcript as the model sees it: the profile's transforms applied in order to its history (the
    /// leading instructions stay).
    func transformed(_ transcript: Transcript) -> Transcript {
      guard !historyTransforms.isEmpty else { return transcript }
      var transformed = transcript
      var history = Array(transcript.history)
      for transform in historyTransforms { history = transform(history) }
      transformed.history = history[...]
      return transformed
    }
  }
}

extension LanguageModelSession.DynamicProfile {
  /// The root of a profile, written in a profile (FoundationModels' name).
  public typealias Profile = LanguageModelSession.Profile
  /// A dynamic profile, written in a profile (FoundationModels' name).
  public typealias DynamicProfile = LanguageModelSession.DynamicProfile
  /// One of the session's properties, read from a profile (FoundationModels' name).
  public typealias SessionProperty = LanguageModelSession.SessionProperty
}

extension LanguageModelSession.DynamicProfileModifier {
  /// A dynamic profile, written in a modifier (FoundationModels' name).
  public typealias DynamicProfile = LanguageModelSession.DynamicProfile
  /// One of the session's properties, read from a modifier (FoundationModels' name).
  public typealias SessionProperty = LanguageModelSession.SessionProperty
}

extension Never: LanguageModelSession.DynamicProfile {}

/// A part of a profile that knows what it comes to; `path` says where it is in the profile (for its activation).
protocol PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, path: String)
}

/// One of the modifiers toolhost's own profile modifiers are made of: a change to the worked-out profile. A value
/// (a temperature, a model) is set before what it modifies, so the setting nearest the `Profile` wins; an action (a
/// hook, a transform) is added after it, so actions run in the order they are written.
struct ProfileSetting: LanguageModelSession.DynamicProfileModifier {
  /// Whether the change adds an action rather than setting a value.
  var addsAction = false
  let change: @Sendable (inout LanguageModelSession.ResolvedProfile, _ path: String) -> Void

  func body(content: Content) -> Never { fatalError("a profile setting has no body") }
}

extension LanguageModelSession.Profile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, path: String) {
    let resolved = ToolhostSession.resolve(instructions)
    profile.instructions = resolved.texts.isEmpty ? nil : resolved.texts.joined(separator: "\n\n")
    profile.tools = resolved.tools
  }
}

extension LanguageModelSession.AnyDynamicProfile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, path: String) {
    // The erased type is part of where the parts are, as a type-erased view's identity is.
    LanguageModelSession.resolve(base, into: &profile, path: path + "/\(type(of: base))")
  }
}

extension LanguageModelSession.ConditionalDynamicProfile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, path: String) {
    switch branch {
    case .trueContent(let c): LanguageModelSession.resolve(c, into: &profile, path: path + "?")
    case .falseContent(let c): LanguageModelSession.resolve(c, into: &profile, path: path + "!")
    }
  }
}

extension LanguageModelSession.DynamicProfileModifierContent: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, path: String) {
    LanguageModelSession.resolve(content, into: &profile, path: path + "<")
  }
}

extension LanguageModelSession.ModifiedDynamicProfile: PrimitiveDynamicProfile {
  func resolve(into profile: inout LanguageModelSession.ResolvedProfile, path: String) {
    if let setting = modifier as? ProfileSetting {
      // A value first, then what it modifies: the value nearest the profile wins (FoundationModels' precedence), and
      // the outer ones are defaults. An action after it: actions accumulate in the order written.
      if !setting.addsAction { setting.change(&profile, path) }
      LanguageModelSession.resolve(content, into: &profile, path: path + ".")
      if setting.addsAction { setting.change(&profile, path) }
      return
    }
    let modified = modifier.body(content: LanguageModelSession.DynamicProfileModifierContent(content: content))
    LanguageModelSession.resolve(
      modified, into: &profile, path: path + "/\(Modifier.self)")
  }
}

extension LanguageModelSession {
  /// Works out a profile for one model turn. Its `@SessionProperty`s (and those of the profiles in its body, its
  /// instructions and its tools) read the session whose request runs.
  static func resolve(_ profile: any DynamicProfile) -> ResolvedProfile {
    var resolved = ResolvedProfile()
    resolve(profile, into: &resolved, path: "")
    return resolved
  }

  static func resolve(_ profile: any DynamicProfile, into resolved: inout ResolvedProfile, path: String) {
    if let primitive = profile as? any PrimitiveDynamicProfile {
      primitive.resolve(into: &resolved, path: path)
      return
    }
    resolve(profile.body, into: &resolved, path: path + "/\(type(of: profile))")
  }
}

extension Collection where Element == Transcript.Entry {
  /// Whether a tool was called after the last prompt: what "required until the first tool call" looks at
  /// (toolhost's).
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
