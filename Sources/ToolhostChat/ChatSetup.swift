public import ToolhostPlugins
public import ToolhostSession
public import ToolhostTools

/// How a conversation with tools is set up, as `toolhost ask` and `toolhost chat` set it up: which tools are
/// offered, the instructions, a conversation to continue, and the session's policy (tool failures go back to the
/// model, a limit on tool rounds, a time limit per call, the user's approval rules).
///
/// ```swift
/// var setup = ChatSetup(tools: .named(["getWeather"]))
/// setup.instructions = "Answer briefly."
/// let catalog = try await PluginCatalog.forUser(explicit: [], offering: setup.tools.discoveryNames)
/// let chosen = try ModelChoice(name: "local").makeModel()
/// let session = try setup.makeSession(model: chosen.model, catalog: catalog)
/// let answer = try await session.respond(to: "Weather in Boston in July?", options: setup.generationOptions)
/// print(answer.content)
/// await chosen.shutdown()
/// await catalog.shutdown()
/// ```
public struct ChatSetup: Sendable {
  /// The tools offered. Default ``ToolSelection/allowed``.
  public var tools: ToolSelection
  /// The instructions (the system message); `nil` for none.
  public var instructions: String?
  /// A conversation to continue (see ``Transcript/load(from:)``); `nil` to start a new one.
  public var resumedTranscript: Transcript?
  /// The most rounds of tool calls for one prompt. Default 8.
  public var maximumToolRounds: Int
  /// The time limit of each tool call, over the manifests' own; `nil` to keep theirs.
  public var toolTimeout: Duration?
  /// Where the tools' progress reports go while they run (a terminal's status line, say); `nil`: nowhere, and
  /// tools are not asked for progress.
  public var onToolProgress: (@Sendable (_ tool: String, _ progress: ToolProgress) -> Void)?
  /// Whether tools whose approval is `ask` run without asking; `deny` tools never run all the same.
  public var assumeYes: Bool
  /// Whether the model has to call a tool before it answers each prompt.
  public var requireTool: Bool
  /// The sampling temperature; `nil` for the model's default.
  public var temperature: Double?
  /// Whether answers are streamed (``LanguageModelSession/streamResponse(to:options:)``) rather than asked for
  /// whole (``LanguageModelSession/respond(to:options:)``). Default `true`.
  public var streaming: Bool

  /// Makes a setup.
  public init(
    tools: ToolSelection = .allowed, instructions: String? = nil, resumedTranscript: Transcript? = nil,
    maximumToolRounds: Int = 8, toolTimeout: Duration? = nil, assumeYes: Bool = false, requireTool: Bool = false,
    temperature: Double? = nil, streaming: Bool = true
  ) {
    self.tools = tools
    self.instructions = instructions
    self.resumedTranscript = resumedTranscript
    self.maximumToolRounds = maximumToolRounds
    self.toolTimeout = toolTimeout
    self.assumeYes = assumeYes
    self.requireTool = requireTool
    self.temperature = temperature
    self.streaming = streaming
  }

  /// The options of each request: a required first tool call with ``requireTool``, and the temperature.
  public var generationOptions: GenerationOptions {
    GenerationOptions(temperature: temperature, toolCallingMode: requireTool ? .requiredUntilFirstCall : .allowed)
  }

  /// The session's instructions: ``instructions`` and, for named tools, a sentence telling the model to use them
  /// (``SessionInstructions/preferring(tools:base:)``).
  public var sessionInstructions: String? {
    SessionInstructions.preferring(tools: tools.preferredNames, base: instructions)
  }

  /// The session's policy: tool failures reported to the model, ``maximumToolRounds``, ``toolTimeout``,
  /// ``onToolProgress``, and each call decided by `approver`.
  public func policy(approver: ToolApprover) -> SessionPolicy {
    var policy = SessionPolicy(toolFailures: .reportToModel, maximumToolRounds: maximumToolRounds)
    policy.toolContext.timeout = toolTimeout
    policy.toolContext.onProgress = onToolProgress
    policy.approveCall = { call, tool in await approver.decide(call, tool: tool) }
    return policy
  }

  /// A session with `model` and `tools`, its calls approved under `rules` (see ``ChatApproval``). A
  /// ``resumedTranscript`` is continued, its instructions replaced by ``sessionInstructions`` when there are any.
  /// Does not throw.
  public func makeSession(
    model: any LanguageModel, tools: ToolRegistry, rules: UserConfiguration, approval: ChatApproval = ChatApproval()
  ) -> LanguageModelSession {
    let approver = ToolApprover(
      configuration: rules, assumeYes: assumeYes, ask: approval.ask, onNote: approval.onNote,
      unattendedHint: approval.unattendedHint)
    return makeSession(model: model, tools: tools, approver: approver)
  }

  /// A session with `model` and `tools`, its calls decided by `approver`: several sessions sharing one approver
  /// share its "always" answers (the chat page's chats do). A ``resumedTranscript`` is continued, its instructions
  /// replaced by ``sessionInstructions`` when there are any. Does not throw.
  public func makeSession(model: any LanguageModel, tools: ToolRegistry, approver: ToolApprover)
    -> LanguageModelSession
  {
    let policy = self.policy(approver: approver)
    guard var transcript = resumedTranscript else {
      return LanguageModelSession(model: model, tools: tools, instructions: sessionInstructions, policy: policy)
    }
    if let instructions = sessionInstructions { transcript = transcript.replacingInstructions(with: instructions) }
    return LanguageModelSession(model: model, tools: tools, transcript: transcript, policy: policy)
  }

  /// A session with `model` and the ``tools`` of `catalog`, its calls approved under the rules the catalog was
  /// discovered with.
  ///
  /// - Throws: what ``ToolSelection/registry(from:)`` throws: an unknown, broken or denied named tool, or a tool
  ///   whose schema does not compile. Does not start the model or any tool.
  public func makeSession(
    model: any LanguageModel, catalog: PluginCatalog, approval: ChatApproval = ChatApproval()
  ) throws(ChatSetupError) -> LanguageModelSession {
    makeSession(
      model: model, tools: try tools.registry(from: catalog), rules: catalog.trust.configuration, approval: approval)
  }
}
