import Synchronization
public import ToolhostPlugins
public import ToolhostSession
public import ToolhostTools

/// A chat's life under every front end: the model, the tools, the approver of their calls and the conversations,
/// each kept by its ``ChatKeeping``. One turn (the tools offered, streaming or not, the error text, keeping and
/// titling) is run here and nowhere else; the terminal chat, `ask` and the chat page show its ``ChatEvent``s.
///
/// ```swift
/// let catalog = try await PluginCatalog.forUser(explicit: [])
/// let chosen = try ModelChoice(name: "local").makeModel()
/// let runtime = ChatRuntime(
///   configuration: .init(
///     model: chosen.model, tools: catalog.registry(), rules: catalog.trust.configuration, setup: ChatSetup(),
///     shutdown: { await chosen.shutdown(); await catalog.shutdown() }))
/// runtime.observe { event in if case .session(_, .textDelta(let text)) = event { print(text, terminator: "") } }
/// let conversation = runtime.startConversation()
/// let turn = await runtime.send("Weather in Oslo in May?", in: conversation)
/// print(turn.errorMessage ?? "")
/// await runtime.finish()
/// ```
public final class ChatRuntime: Sendable {
  /// What the runtime's conversations are made with.
  public struct Configuration: Sendable {
    /// The model every conversation talks to.
    public var model: any LanguageModel
    /// The tools offered (those the rules deny are best left out: see ``ToolSelection/allowed``).
    public var tools: ToolRegistry
    /// The user's approval rules.
    public var rules: UserConfiguration
    /// Instructions, tool rounds, time limits, streaming, `--yes`.
    public var setup: ChatSetup
    /// Who is asked about calls whose approval is `ask`, and where notes about approvals go.
    public var approval: ChatApproval
    /// What the user is told of an error that ended a turn (and what the history keeps of it).
    public var describeError: @Sendable (any Error) -> String
    /// Stops the model and the tools' processes; run by ``ChatRuntime/finish()``.
    public var shutdown: @Sendable () async -> Void

    /// Makes a configuration.
    public init(
      model: any LanguageModel, tools: ToolRegistry, rules: UserConfiguration, setup: ChatSetup,
      approval: ChatApproval = ChatApproval(),
      describeError: @escaping @Sendable (any Error) -> String = { String(describing: $0) },
      shutdown: @escaping @Sendable () async -> Void = {}
    ) {
      self.model = model
      self.tools = tools
      self.rules = rules
      self.setup = setup
      self.approval = approval
      self.describeError = describeError
      self.shutdown = shutdown
    }
  }

  /// The configuration.
  public let configuration: Configuration
  /// Decides every call of every conversation under the user's rules: an "always" in one holds in all.
  public let approver: ToolApprover
  private let state = Mutex(State())

  private struct State {
    /// In the order they were added.
    var observers: [(token: Int, handler: @Sendable (ChatEvent) -> Void)] = []
    var nextObserver = 0
    var conversations: [ObjectIdentifier: ChatConversation] = [:]
  }

  /// The kept chat whose turn the current task runs (`nil` outside a turn, or when none is kept): an approval hook
  /// shared by all conversations reads it to know where to ask.
  @TaskLocal public static var currentChat: Int64?

  /// Makes a runtime; nothing runs until a turn is sent.
  public init(configuration: Configuration) {
    self.configuration = configuration
    let approval = configuration.approval
    approver = ToolApprover(
      configuration: configuration.rules, assumeYes: configuration.setup.assumeYes, ask: approval.ask,
      onNote: approval.onNote, unattendedHint: approval.unattendedHint)
  }

  // MARK: Events

  /// Calls `handler` with every event from now on, on the task the event happens in (a session's text before its
  /// tool calls, a turn's end before it is kept); returns a token for ``removeObserver(_:)``.
  @discardableResult
  public func observe(_ handler: @escaping @Sendable (ChatEvent) -> Void) -> Int {
    state.withLock { s in
      s.nextObserver += 1
      s.observers.append((s.nextObserver, handler))
      return s.nextObserver
    }
  }

  /// Stops calling the observer `token` names.
  public func removeObserver(_ token: Int) {
    state.withLock { $0.observers.removeAll { $0.token == token } }
  }

  /// The events from now on, as a stream that ends when its reader stops reading.
  public func events() -> AsyncStream<ChatEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: ChatEvent.self, bufferingPolicy: .unbounded)
    let token = observe { continuation.yield($0) }
    continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
    return stream
  }

  private func emit(_ event: ChatEvent) {
    for observer in state.withLock({ $0.observers }) { observer.handler(event) }
  }

  // MARK: Conversations

  /// A conversation kept by `keeper` (`nil`: kept nowhere), continuing `transcript` when one is given; its
  /// instructions are the setup's (``ChatSetup/sessionInstructions``).
  public func startConversation(keeper: (any ChatKeeping)? = nil, continuing transcript: Transcript? = nil)
    -> ChatConversation
  {
    var setup = configuration.setup
    setup.resumedTranscript = transcript
    let session = setup.makeSession(model: configuration.model, tools: configuration.tools, approver: approver)
    let chat = keeper?.chatID
    let conversation = ChatConversation(chat: chat, session: session, keeper: keeper)
    _ = session.addObserver { [weak self] event in
      keeper?.observe(event)
      self?.emit(.session(chat: chat, event))
    }
    state.withLock { $0.conversations[ObjectIdentifier(conversation)] = conversation }
    return conversation
  }

  /// `/clear`: stops `conversation`, and starts a new one with the same tools and instructions, kept by the same
  /// keeper as a new chat. Returns it, with the id of the chat kept before and the keeper's failure to start a new
  /// chat, if it failed (the new conversation is then kept nowhere).
  public func clear(_ conversation: ChatConversation) async -> (
    conversation: ChatConversation, previous: Int64?, failure: (any Error)?
  ) {
    await close(conversation)
    var previous: Int64?
    var failure: (any Error)?
    do { previous = try conversation.keeper?.startAnotherChat() } catch { failure = error }
    let keeper = failure == nil ? conversation.keeper : nil
    return (startConversation(keeper: keeper), previous, failure)
  }

  /// Stops `conversation`'s turn, waits until it is kept, and forgets the conversation.
  public func close(_ conversation: ChatConversation) async {
    await stop(conversation)
    await conversation.waitUntilKept()
    state.withLock { _ = $0.conversations.removeValue(forKey: ObjectIdentifier(conversation)) }
  }

  // MARK: Turns

  /// Starts a turn of `conversation` with `prompt` and returns its task at once, or `nil` when a turn is running in
  /// it already. With `tool`, only that tool is offered and the model is told to use it (as `@NAME` does). `nonce`
  /// comes back in ``ChatEvent/turnStarted(chat:prompt:tool:nonce:)``.
  ///
  /// The task ends once the turn is kept and its title asked for; the events tell of it as it goes.
  @discardableResult
  public func start(_ prompt: String, in conversation: ChatConversation, tool: String? = nil, nonce: String? = nil)
    -> Task<ChatTurn, Never>?
  {
    var options = configuration.setup.generationOptions
    if let tool { options.offeredTools = [tool] }
    let requestOptions = options
    return conversation.running.withLock { running in
      if running != nil { return nil }
      let previous = conversation.last.withLock { $0 }
      let task = Task { [self] in
        _ = await previous?.value
        return await ChatRuntime.$currentChat.withValue(conversation.chat) {
          await turn(prompt, in: conversation, tool: tool, nonce: nonce, options: requestOptions)
        }
      }
      running = task
      conversation.last.withLock { $0 = task }
      return task
    }
  }

  /// Runs a turn of `conversation` (after the one running in it, if any) and returns it once it is kept.
  public func send(_ prompt: String, in conversation: ChatConversation, tool: String? = nil) async -> ChatTurn {
    while true {
      if let task = start(prompt, in: conversation, tool: tool) { return await task.value }
      _ = await conversation.running.withLock({ $0 })?.value
    }
  }

  /// Stops `conversation`'s turn: the request is cancelled and its tool calls end (their processes too); returns
  /// when it has wound down. Nothing happens when it is not running.
  public func stop(_ conversation: ChatConversation) async {
    guard let task = conversation.running.withLock({ $0 }) else { return }
    task.cancel()
    _ = await task.value
  }

  /// Stops every turn, waits until each is kept, lets titles being made finish for a moment, then shuts the model
  /// and the tools down (``Configuration/shutdown``). Conversations are forgotten only by ``close(_:)``.
  public func finish() async {
    // The conversations stay: a turn sent to one later still runs, and a later finish stops it too.
    let all = state.withLock { Array($0.conversations.values) }
    await withTaskGroup(of: Void.self) { group in
      for conversation in all {
        group.addTask {
          await self.stop(conversation)
          await conversation.waitUntilKept()
          await conversation.keeper?.finishKeeping()
        }
      }
    }
    await configuration.shutdown()
  }

  /// The one turn: ask, end, keep, title.
  private func turn(
    _ prompt: String, in conversation: ChatConversation, tool: String?, nonce: String?, options: GenerationOptions
  ) async -> ChatTurn {
    let chat = conversation.chat
    emit(.turnStarted(chat: chat, prompt: prompt, tool: tool, nonce: nonce))
    let session = conversation.session
    var response: String?
    var failure: (any Error)?
    do {
      if configuration.setup.streaming {
        response = try await session.streamResponse(to: prompt, options: options).collect().content
      } else {
        response = try await session.respond(to: prompt, options: options).content
      }
    } catch {
      failure = error
    }
    let stopped =
      failure != nil
      && (failure is CancellationError || Task.isCancelled || (failure as? ToolCallError)?.failure == .cancelled)
    let message = failure.map { stopped ? "stopped" : configuration.describeError($0) }
    var turn = ChatTurn(
      chat: chat, prompt: prompt, response: response, error: failure, errorMessage: message, stopped: stopped)
    turn.answeredWithoutTools =
      response != nil && !session.tools.tools.isEmpty && !session.transcript.calledToolSinceLastPrompt
    // The answer is done for the user now; the turn is kept after, and the next turn waits for that.
    conversation.running.withLock { $0 = nil }
    emit(.turnFinished(turn))
    guard let keeper = conversation.keeper else { return turn }
    if let problem = keeper.keepTurn(session.transcript, prompt: prompt, error: message) {
      emit(.warning(chat: chat, "\(problem); the rest of this chat is not kept"))
    }
    if failure == nil {
      keeper.titleAfterAnswer(
        to: prompt, onTitled: { [weak self] in self?.emit(.chatsChanged) },
        onFailure: { [weak self] problem in
          self?.emit(.warning(chat: chat, "\(problem); the chat keeps its first words as its title"))
        })
    }
    emit(.chatsChanged)
    return turn
  }
}
