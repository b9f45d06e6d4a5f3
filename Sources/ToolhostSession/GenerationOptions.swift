public import ToolhostJSON
public import ToolhostTools

/// How one request is generated: tool-calling mode, sampling and limits. Shaped like FoundationModels'
/// `GenerationOptions`; `nil` leaves a setting to the backend.
///
/// ```swift
/// let options = GenerationOptions(temperature: 0.2, toolCallingMode: .required)
/// let answer = try await session.respond(to: "Weather in Lisbon?", options: options)
/// ```
public struct GenerationOptions: Sendable, Equatable {
  /// Whether the model may, must or must not call tools (FoundationModels' names, and toolhost's
  /// ``requiredUntilFirstCall``).
  public enum ToolCallingMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// The model decides in every turn (`tool_choice: "auto"`).
    case allowed
    /// The model must call a tool in every turn (`tool_choice: "required"`). A request then ends only at the round
    /// limit; use ``requiredUntilFirstCall`` to force one tool use and then get an answer.
    case required
    /// The model must not call tools (`tool_choice: "none"`); the tools are still described to it.
    case disallowed
    /// toolhost's own: required until the model has called a tool in this request, then allowed, so it can answer
    /// from the results (what FoundationModels writes as a dynamic profile switching the mode after the first call).
    case requiredUntilFirstCall

    /// FoundationModels' three kinds of mode.
    public enum Kind: Sendable, Equatable, Hashable {
      /// The model decides.
      case allowed
      /// The model must call a tool.
      case required
      /// The model must not call tools.
      case disallowed
    }

    /// The mode's kind as FoundationModels has it; ``requiredUntilFirstCall`` is ``Kind/required``.
    public var kind: Kind {
      switch self {
      case .allowed: .allowed
      case .required, .requiredUntilFirstCall: .required
      case .disallowed: .disallowed
      }
    }

    /// The choice for one turn, given whether a tool was already called during this request.
    public func choice(afterToolCalls called: Bool) -> ToolChoice {
      switch self {
      case .allowed: .auto
      case .required: .required
      case .disallowed: .none
      case .requiredUntilFirstCall: called ? .auto : .required
      }
    }
  }

  /// How tokens are picked (FoundationModels' `SamplingMode`).
  public struct SamplingMode: Sendable, Equatable {
    /// The ways of sampling (FoundationModels 27's kinds).
    public enum Kind: Sendable, Equatable {
      /// Always the likeliest token (sent as temperature 0).
      case greedy
      /// One of the `k` likeliest tokens (sent as `top_k`, which llama.cpp, vLLM and Ollama read), with a seed.
      case randomTopK(Int, seed: UInt64?)
      /// One of the likeliest tokens whose probabilities add up to the threshold (sent as `top_p`), with a seed.
      case randomProbabilityThreshold(Double, seed: UInt64?)
    }

    /// The way of sampling.
    public let kind: Kind

    /// Always the likeliest token.
    public static var greedy: SamplingMode { SamplingMode(kind: .greedy) }
    /// One of the `k` likeliest tokens.
    public static func random(top k: Int, seed: UInt64? = nil) -> SamplingMode {
      SamplingMode(kind: .randomTopK(k, seed: seed))
    }
    /// One of the likeliest tokens whose probabilities add up to `probabilityThreshold`.
    public static func random(probabilityThreshold: Double, seed: UInt64? = nil) -> SamplingMode {
      SamplingMode(kind: .randomProbabilityThreshold(probabilityThreshold, seed: seed))
    }
  }

  /// Whether the model may, must or must not call tools; `nil` (the default) is ``ToolCallingMode/allowed``.
  public var toolCallingMode: ToolCallingMode?
  /// How tokens are picked; `nil` leaves it to ``temperature``, ``topP`` and the backend.
  public var samplingMode: SamplingMode?
  /// Sampling temperature (0 is near-deterministic).
  public var temperature: Double?
  /// The most tokens one model turn may generate.
  public var maximumResponseTokens: Int?
  /// Whether the model may ask for several calls in one turn (`parallel_tool_calls`); `nil` leaves the server's
  /// default (which is `true` for OpenAI).
  public var parallelToolCalls: Bool?
  /// Nucleus sampling.
  public var topP: Double?
  /// A seed for reproducible sampling, where the backend supports it.
  public var seed: Int?
  /// Sequences that stop generation.
  public var stop: [String]?
  /// Extra members merged into the backend's request body as they are (for server-specific settings).
  public var additionalParameters: JSONObject
  /// Offer only these of the session's tools for this request and tell the model to use them (the instructions
  /// sent with the request end with ``SessionInstructions/preferring(tools:base:)``'s sentence; the transcript keeps
  /// the session's own), as picking a tool for one message does. A call of any other tool is sent back to the model
  /// as an unknown tool. `nil` (the default) offers all of them; names the session has no tool of are ignored.
  public var offeredTools: [String]?

  /// Makes options, in FoundationModels' order; everything defaults to the backend's settings, tools to
  /// ``ToolCallingMode/allowed``.
  public init(
    samplingMode: SamplingMode? = nil, temperature: Double? = nil, maximumResponseTokens: Int? = nil,
    toolCallingMode: ToolCallingMode? = nil, parallelToolCalls: Bool? = nil, topP: Double? = nil, seed: Int? = nil,
    stop: [String]? = nil, additionalParameters: JSONObject = JSONObject(), offeredTools: [String]? = nil
  ) {
    self.toolCallingMode = toolCallingMode
    self.samplingMode = samplingMode
    self.temperature = temperature
    self.maximumResponseTokens = maximumResponseTokens
    self.parallelToolCalls = parallelToolCalls
    self.topP = topP
    self.seed = seed
    self.stop = stop
    self.additionalParameters = additionalParameters
    self.offeredTools = offeredTools
  }

  /// Makes options with the sampling mode under FoundationModels 26's name.
  @available(*, deprecated, renamed: "init(samplingMode:temperature:maximumResponseTokens:)")
  public init(sampling: SamplingMode?, temperature: Double? = nil, maximumResponseTokens: Int? = nil) {
    self.init(samplingMode: sampling, temperature: temperature, maximumResponseTokens: maximumResponseTokens)
  }

  /// The sampling mode under FoundationModels 26's name.
  @available(*, deprecated, renamed: "samplingMode")
  public var sampling: SamplingMode? {
    get { samplingMode }
    set { samplingMode = newValue }
  }

  /// The tool-calling mode a turn gets: ``toolCallingMode``, or ``ToolCallingMode/allowed`` when it is `nil`.
  public var effectiveToolCallingMode: ToolCallingMode { toolCallingMode ?? .allowed }

  /// Makes options with the mode under its earlier name (toolhost's).
  @available(
    *, deprecated,
    renamed:
      "init(samplingMode:temperature:maximumResponseTokens:toolCallingMode:parallelToolCalls:topP:seed:stop:additionalParameters:offeredTools:)"
  )
  public init(
    toolCalling: ToolCallingMode, temperature: Double? = nil, maximumResponseTokens: Int? = nil,
    parallelToolCalls: Bool? = nil, topP: Double? = nil, seed: Int? = nil, stop: [String]? = nil,
    additionalParameters: JSONObject = JSONObject(), offeredTools: [String]? = nil
  ) {
    self.init(
      temperature: temperature, maximumResponseTokens: maximumResponseTokens, toolCallingMode: toolCalling,
      parallelToolCalls: parallelToolCalls, topP: topP, seed: seed, stop: stop,
      additionalParameters: additionalParameters, offeredTools: offeredTools)
  }

  /// The mode under its earlier name (toolhost's).
  @available(*, deprecated, renamed: "toolCallingMode")
  public var toolCalling: ToolCallingMode {
    get { effectiveToolCallingMode }
    set { toolCallingMode = newValue }
  }
}

/// What goes into the model's context besides the prompt (FoundationModels 27's `ContextOptions`).
public struct ContextOptions: Sendable, Equatable {
  /// How much a reasoning model thinks before it answers.
  public enum ReasoningLevel: Sendable, Equatable {
    /// Little reasoning (sent as `reasoning_effort: low`).
    case light
    /// Some reasoning (`medium`).
    case moderate
    /// Much reasoning (`high`).
    case deep
    /// A level the model's server names (sent as it is).
    case custom(String)
  }

  /// How much the model reasons; `nil` leaves it to the model.
  public var reasoningLevel: ReasoningLevel?

  /// Makes context options; `nil` leaves the level to the model.
  public init(reasoningLevel: ReasoningLevel? = nil) {
    self.reasoningLevel = reasoningLevel
  }
}

/// How a session treats tool calls and their failures. Set per session (``LanguageModelSession/policy``).
public struct SessionPolicy: Sendable {
  /// What happens when a tool call fails (the tool ran, or could not, and failed; invalid arguments and unknown
  /// tools are always sent back to the model as repairs instead).
  public enum ToolFailurePolicy: Sendable, Equatable {
    /// Throw the ``ToolCallError``; the transcript goes back to how it was before the request.
    /// FoundationModels' behaviour, and the default.
    case throwAndRevert
    /// Throw the ``ToolCallError``; the transcript keeps the prompt, the calls and the outputs so far.
    case throwAndPreserve
    /// Send the failure to the model as the tool's output (`{"error": {...}}`) and go on.
    case reportToModel
  }

  /// What an approval hook decides about a call.
  public enum Approval: Sendable, Equatable {
    /// Run the call.
    case allow
    /// Do not run it; the model is told it was refused, and why.
    case refuse(reason: String)
  }

  /// What happens when a tool call fails. Default ``ToolFailurePolicy/throwAndRevert``.
  public var toolFailures: ToolFailurePolicy
  /// The most model turns with tool calls in one request; one more throws
  /// ``LanguageModelSessionError/toolRoundLimitReached(limit:)``. Default 8.
  public var maximumToolRounds: Int
  /// The most turns in one request whose calls had invalid arguments or unknown tool names; one more throws
  /// ``LanguageModelSessionError/repairLimitReached(limit:lastProblem:)``. Default 3.
  public var maximumRepairs: Int
  /// The most characters of one tool output sent to the model; longer outputs keep their head and tail with a
  /// marker saying how much was cut. Default 16,000.
  public var toolOutputLimit: Int
  /// How many calls of one turn run at once. Default 8.
  public var toolConcurrency: Int
  /// Settings passed to every call (time limit, stdout cap, stderr observer).
  public var toolContext: ToolCallContext
  /// Asked before every call the model makes (``ToolApprover/decide(_:tool:)`` applies the user's approval rules);
  /// `nil` allows them all. Calls of one turn are approved one after another, before any of them runs.
  public var approveCall: (@Sendable (Transcript.ToolCall, any Tool) async -> Approval)?

  /// Makes a policy with the defaults above.
  public init(
    toolFailures: ToolFailurePolicy = .throwAndRevert, maximumToolRounds: Int = 8,
    maximumRepairs: Int = 3,
    toolOutputLimit: Int = 16_000, toolConcurrency: Int = 8,
    toolContext: ToolCallContext = ToolCallContext(),
    approveCall: (@Sendable (Transcript.ToolCall, any Tool) async -> Approval)? = nil
  ) {
    self.toolFailures = toolFailures
    self.maximumToolRounds = maximumToolRounds
    self.maximumRepairs = maximumRepairs
    self.toolOutputLimit = toolOutputLimit
    self.toolConcurrency = toolConcurrency
    self.toolContext = toolContext
    self.approveCall = approveCall
  }
}

extension SessionPolicy.ToolFailurePolicy {
  /// The policy that throws and keeps or reverts the transcript as `policy` says.
  init(_ policy: TranscriptErrorHandlingPolicy) { self = policy.preserves ? .throwAndPreserve : .throwAndRevert }
}

extension SessionPolicy {
  /// This policy with what a worked-out profile sets (its transcript error handling), for one model turn.
  func with(_ profile: LanguageModelSession.ResolvedProfile?) -> SessionPolicy {
    guard let chosen = profile?.transcriptErrorHandlingPolicy else { return self }
    var policy = self
    policy.toolFailures = ToolFailurePolicy(chosen)
    return policy
  }
}

/// What a request that throws leaves in the transcript (FoundationModels 27's policy): the transcript as it was
/// before the request, or the entries the request made so far. It applies to tool failures, the errors after which a
/// request has calls and outputs to keep (``SessionPolicy/ToolFailurePolicy``).
public struct TranscriptErrorHandlingPolicy: Sendable, Equatable {
  let preserves: Bool

  /// The transcript goes back to how it was before the request.
  public static let revertTranscript = TranscriptErrorHandlingPolicy(preserves: false)
  /// The transcript keeps the prompt, the calls and the outputs so far.
  public static let preserveTranscript = TranscriptErrorHandlingPolicy(preserves: true)
}
