import Foundation
import Synchronization
public import ToolhostChat
public import ToolhostHistory
public import ToolhostJSON
public import ToolhostPlugins
public import ToolhostSession
import ToolhostSystem
public import ToolhostTools

/// The chats of the chat page, without HTTP: the history's chats, a session for each chat being talked to, the
/// running answers, the approvals waiting for the user, and the events that tell the page (``events``).
///
/// It renders a ``ChatRuntime``, as the terminal chat does: the runtime runs each turn, a ``ChatKeeper`` keeps and
/// titles each chat in the ``ChatHistory``, and the runtime's one ``ToolApprover`` decides every call under the
/// user's rules (an "always" in one chat holds in all); a tool whose approval is `ask` waits for an answer from the
/// page. This engine adds what only the page has: several chats at once, the running turn as the page draws it,
/// approvals answered from the page, and the events in the page's JSON.
///
/// ```swift
/// let engine = WebChatEngine(
///   configuration: .init(model: model, tools: registry, rules: catalog.trust.configuration, setup: ChatSetup(),
///     history: try ChatHistory.open(), newChat: .init(command: "chat", model: model.displayName)))
/// let events = engine.events.subscribe()
/// let chat = try engine.send("Weather in Oslo in May?")
/// for await event in events where event["type"] == "done" && event["chat"] == .integer(chat) { break }
/// ```
public final class WebChatEngine: Sendable {
  /// What the chats are made with.
  public struct Configuration: Sendable {
    /// The model every chat talks to.
    public var model: any LanguageModel
    /// The tools offered (those the rules deny are best left out: see ``ToolSelection/allowed``).
    public var tools: ToolRegistry
    /// The user's approval rules.
    public var rules: UserConfiguration
    /// Instructions, tool rounds, time limits, streaming, `--yes`.
    public var setup: ChatSetup
    /// Where the chats are kept.
    public var history: ChatHistory
    /// What a new chat is (command, model name, settings).
    public var newChat: ChatHistory.NewChat
    /// Whether the model titles a new chat after its first answer.
    public var titlesByModel: Bool
    /// What the user is told of an error that ended an answer.
    public var describeError: @Sendable (any Error) -> String
    /// Whether ``history`` is kept after the page stops (`false` for a scratch history, as with `--no-history`);
    /// the page says so.
    public var keepsHistory: Bool

    /// Makes a configuration.
    public init(
      model: any LanguageModel, tools: ToolRegistry, rules: UserConfiguration, setup: ChatSetup,
      history: ChatHistory, newChat: ChatHistory.NewChat, titlesByModel: Bool = true,
      describeError: @escaping @Sendable (any Error) -> String = WebChatEngine.describe, keepsHistory: Bool = true
    ) {
      self.keepsHistory = keepsHistory
      self.model = model
      self.tools = tools
      self.rules = rules
      self.setup = setup
      self.history = history
      self.newChat = newChat
      self.titlesByModel = titlesByModel
      self.describeError = describeError
    }
  }

  /// Why a request of the page cannot be done, with the HTTP status it is answered with.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    /// 400, 404, 409 or 500.
    public var status: Int
    /// What went wrong and what to do.
    public var description: String
  }

  /// An answer to an approval.
  public enum ApprovalAnswer: String, Sendable {
    /// Run this call.
    case once
    /// Run it, and every later call of the tool (remembered in the configuration file).
    case always
    /// Do not run it.
    case deny
  }

  /// The configuration.
  public let configuration: Configuration
  /// The events for the page.
  public let events: WebEventHub
  /// The chats' turns, tools and approvals.
  public let runtime: ChatRuntime
  private var approver: ToolApprover { runtime.approver }
  private let state = Mutex(State())

  private struct State {
    var conversations: [Int64: Conversation] = [:]
    var approvals: [String: Approval] = [:]
    var nextApproval = 0
  }

  /// A chat being talked to: the runtime's conversation and its running turn as the page draws it.
  private final class Conversation: Sendable {
    let id: Int64
    let conversation: ChatConversation
    /// The running turn as the page draws it (prompt, rounds, calls, text so far), until its `done`: the history
    /// has it only once it is kept.
    let live = Mutex<WebTurn?>(nil)
    init(id: Int64, conversation: ChatConversation) {
      self.id = id
      self.conversation = conversation
    }
    var isRunning: Bool { conversation.isRunning }
  }

  private struct Approval {
    var chat: Int64
    var answer: OneShot<ToolApprover.Answer>
    /// The `approval` event that asked.
    var event: WebEvent
  }

  /// Makes an engine; nothing runs until ``send(_:to:tool:nonce:)``.
  public init(configuration: Configuration, events: WebEventHub = WebEventHub()) {
    self.configuration = configuration
    self.events = events
    let box = WeakEngine()
    let ask: ToolApprover.Ask = { call, tool, decision in
      guard let engine = box.engine, let chat = ChatRuntime.currentChat else { return .no }
      return await engine.ask(call, tool: tool, decision: decision, chat: chat)
    }
    runtime = ChatRuntime(
      configuration: .init(
        model: configuration.model, tools: configuration.tools, rules: configuration.rules, setup: configuration.setup,
        approval: ChatApproval(
          ask: ask, onNote: { [events] note in events.send(.note(chat: ChatRuntime.currentChat, text: note)) }),
        describeError: configuration.describeError))
    box.engine = self
    runtime.observe { event in box.engine?.show(event) }
  }

  /// The engine the approver's question goes to, held weakly (the engine holds the approver).
  private final class WeakEngine: Sendable {
    private let box = Mutex<Weak>(Weak())
    private struct Weak { weak var engine: WebChatEngine? }
    var engine: WebChatEngine? {
      get { box.withLock { $0.engine } }
      set { box.withLock { $0.engine = newValue } }
    }
  }

  // MARK: Reading

  /// The tools offered, with how each is approved; tools the rules deny are not listed.
  public var toolsJSON: [JSONValue] {
    let rules = approver.rules
    return configuration.tools.tools.compactMap { tool in
      let mode = rules.approval(for: tool).mode
      if mode == .deny { return nil }
      return WebJSON.tool(tool, approval: configuration.setup.assumeYes ? .auto : mode)
    }
  }

  /// Whether the tool named `name` is offered: the session has it and the rules do not deny it.
  func offers(_ name: String) -> Bool {
    guard let tool = configuration.tools.tool(named: name) else { return false }
    return approver.rules.approval(for: tool).mode != .deny
  }

  /// The chats, newest first, at most `limit` of them, with `matching` text only (see
  /// ``ChatHistory/chats(matching:limit:)``); and whether there are more.
  public func chats(matching text: String? = nil, limit: Int = 1000) throws(Failure) -> (chats: [JSONValue], more: Bool)
  {
    let found: [ChatSummary]
    do {
      found = try configuration.history.chats(matching: text?.isEmpty == false ? text : nil, limit: limit + 1)
    } catch { throw Failure(status: 500, description: error.description) }
    let running = runningChats
    return (found.prefix(limit).map { WebJSON.summary($0, running: running.contains($0.id)) }, found.count > limit)
  }

  /// One chat, whole: with its last turn once that is kept (a turn is kept just after its `done` event).
  public func chat(_ id: Int64) async throws(Failure) -> JSONValue {
    let conversation = state.withLock { $0.conversations[id] }
    if let conversation, !conversation.isRunning { await conversation.conversation.waitUntilKept() }
    // A running turn is not in the history yet: it comes last, as far as it has got.
    return WebJSON.chat(
      try stored(id), running: conversation?.isRunning ?? false, live: conversation?.live.withLock({ $0 }))
  }

  /// A stream of the page's events: `{"type": "hello"}`, the `approval` events still waiting for an answer (a page
  /// that opens, or opens its stream again, is asked again), then every event from now on.
  public func subscribe() -> AsyncStream<JSONValue> {
    // Under the lock, so that an approval asked meanwhile is in the greeting or comes after it (or both: the page
    // draws an approval once).
    state.withLock { s in
      let waiting = s.approvals.sorted { $0.key < $1.key }.map(\.value.event)
      return events.subscribe(greeting: [.hello] + waiting)
    }
  }

  /// The ids of the chats answering now.
  public var runningChats: Set<Int64> {
    Set(state.withLock { Array($0.conversations.values) }.filter(\.isRunning).map(\.id))
  }

  private func stored(_ id: Int64) throws(Failure) -> StoredChat {
    do { return try configuration.history.chat(id) } catch {
      throw Failure(status: error.unknownChat == nil ? 500 : 404, description: error.description)
    }
  }

  // MARK: Changing

  /// Sends `text` to chat `id` (a new chat when `nil`) and returns the chat's id at once; the answer comes as
  /// events. With `tool`, only that tool is offered for this message and the model is told to use it (as `@NAME`
  /// does in the terminal). `nonce` comes back in the chat's `turn` event.
  ///
  /// - Throws: ``Failure`` 400 for an empty message or a tool not offered, 404 for an unknown chat, 409 when the
  ///   chat is answering already, 500 when the history fails.
  @discardableResult
  public func send(_ text: String, to id: Int64? = nil, tool: String? = nil, nonce: String? = nil) throws(Failure)
    -> Int64
  {
    let prompt = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !prompt.isEmpty else { throw Failure(status: 400, description: "the message is empty") }
    if let tool, !offers(tool) {
      throw Failure(status: 400, description: "no tool named \(tool) is offered here (the tool picker lists them)")
    }
    let conversation = try self.conversation(id)
    let started = runtime.start(prompt, in: conversation.conversation, tool: tool, nonce: nonce) != nil
    guard started else {
      throw Failure(status: 409, description: "this chat is still answering: wait for it, or stop it first")
    }
    return conversation.id
  }

  /// Shows one of the runtime's events on the page.
  private func show(_ event: ChatEvent) {
    switch event {
    case .turnStarted(let chat?, let prompt, let tool, let nonce):
      updateLive(chat) { $0 = WebTurn(prompt: prompt, tool: tool) }
      events.send(.turn(chat: chat, prompt: prompt, tool: tool, nonce: nonce))
    case .session(let chat?, let event):
      updateLive(chat) { $0?.follow(event) }
      if let event = Self.event(event, chat: chat) { events.send(event) }
    case .turnFinished(let turn):
      guard let chat = turn.chat else { return }
      cancelApprovals(of: chat)
      // The answer is done for the page now, as the terminal shows it before keeping it.
      updateLive(chat) { $0 = nil }
      events.send(.done(chat: chat, response: turn.response, error: turn.errorMessage, stopped: turn.stopped))
      if turn.answeredWithoutTools { events.send(.note(chat: chat, text: ChatTurn.uncheckedNote)) }
    case .warning(let chat, let text):
      events.send(.note(chat: chat, text: text))
    case .chatsChanged:
      events.send(.chats)
    case .turnStarted(nil, _, _, _), .session(nil, _):
      break
    }
  }

  /// Changes the running turn of chat `chat` as the page draws it.
  private func updateLive(_ chat: Int64, _ change: (inout WebTurn?) -> Void) {
    state.withLock { $0.conversations[chat] }?.live.withLock { change(&$0) }
  }

  /// Stops chat `id`'s answer: the request is cancelled and its tool calls end (their processes too), as Ctrl-C
  /// does in the terminal; returns when it has wound down. Nothing happens when it is not answering.
  public func stop(_ id: Int64) async {
    guard let conversation = state.withLock({ $0.conversations[id] }), conversation.isRunning else { return }
    cancelApprovals(of: id)
    await runtime.stop(conversation.conversation)
  }

  /// Renames chat `id`; returns its summary.
  ///
  /// - Throws: ``Failure`` 400 for an empty title, 404 for an unknown chat, 500 when the history fails.
  public func rename(_ id: Int64, to title: String) throws(Failure) -> JSONValue {
    let text = title.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { throw Failure(status: 400, description: "the title is empty") }
    guard text.count <= 200 else { throw Failure(status: 400, description: "the title is over 200 characters") }
    _ = try stored(id)
    do throws(HistoryError) { try configuration.history.setTitle(text, source: .user, for: id) } catch {
      throw Failure(status: 500, description: error.description)
    }
    events.send(.chats)
    return WebJSON.summary(try stored(id).summary, running: runningChats.contains(id))
  }

  /// Deletes chat `id`, stopping its answer first.
  ///
  /// - Throws: ``Failure`` 404 for an unknown chat, 500 when the history fails.
  public func delete(_ id: Int64) async throws(Failure) {
    _ = try stored(id)
    await stop(id)
    // A turn still being kept is kept first, so nothing is written to the chat once it is gone.
    if let conversation = state.withLock({ $0.conversations.removeValue(forKey: id) }) {
      await runtime.close(conversation.conversation)
    }
    do { try configuration.history.delete(id) } catch { throw Failure(status: 500, description: error.description) }
    events.send(.chats)
  }

  /// Answers the approval `id`; `false` when it is not waiting (answered already, or its answer was stopped).
  public func answer(approval id: String, with answer: ApprovalAnswer) -> Bool {
    settle(approval: id, with: answer == .once ? .yes : answer == .always ? .always : .no)
  }

  /// Ends the approval `id` with `answer` and tells the page; `false` when it was not waiting.
  @discardableResult
  private func settle(approval id: String, with answer: ToolApprover.Answer) -> Bool {
    guard let pending = state.withLock({ $0.approvals.removeValue(forKey: id) }) else { return false }
    pending.answer.complete(answer)
    events.send(.approvalDone(chat: pending.chat, id: id))
    return true
  }

  /// Stops every answer and waits for them; titles still being made get a moment (``ChatRuntime/finish()``, whose
  /// shutdown is the caller's here). Later sends still work.
  public func finish() async {
    await runtime.finish()
  }

  // MARK: Inside

  /// The conversation of chat `id`, made when it is first talked to; a new chat for `nil`.
  private func conversation(_ id: Int64?) throws(Failure) -> Conversation {
    if let id, let existing = state.withLock({ $0.conversations[id] }) { return existing }
    let keeper = ChatKeeper(
      history: configuration.history, newChat: configuration.newChat, model: configuration.model,
      titlesByModel: configuration.titlesByModel)
    var transcript: Transcript?
    if let id {
      let stored = try self.stored(id)
      keeper.continueChat(stored)
      transcript = stored.transcript
    } else {
      do { try keeper.startNewChat() } catch { throw Failure(status: 500, description: error.description) }
    }
    guard let chat = keeper.chatID else { throw Failure(status: 500, description: "the history made no chat") }
    let made = Conversation(id: chat, conversation: runtime.startConversation(keeper: keeper, continuing: transcript))
    // Two sends to one chat at once both make one; the first kept wins, and the runtime forgets the other.
    let kept = state.withLock { s in
      if let existing = s.conversations[chat] { return existing }
      s.conversations[chat] = made
      return made
    }
    if kept !== made { Task { [runtime] in await runtime.close(made.conversation) } }
    return kept
  }

  /// Asks the page about a call of chat `chat` and waits for the answer; a stopped answer is a "no".
  private func ask(_ call: Transcript.ToolCall, tool: any Tool, decision: ApprovalDecision, chat: Int64) async
    -> ToolApprover.Answer
  {
    let answer = OneShot<ToolApprover.Answer>()
    let origin = (tool as? PluginTool)?.manifest.location
    let id = state.withLock { s -> String in
      s.nextApproval += 1
      let id = "a\(s.nextApproval)"
      let event = WebEvent.approval(
        chat: chat,
        approval: [
          "id": .string(id), "call": .string(call.id), "tool": .string(call.toolName), "arguments": call.arguments,
          "shown": WebJSON.shownArguments(call.argumentsJSON), "reason": .string(decision.reason),
          "origin": origin.map(JSONValue.string) ?? .null,
          "reach": ((tool as? PluginTool)?.reach).map(JSONValue.string) ?? .null,
        ])
      s.approvals[id] = Approval(chat: chat, answer: answer, event: event)
      return id
    }
    if let event = state.withLock({ $0.approvals[id]?.event }) { events.send(event) }
    guard let given = await answer.waitUnlessCancelled() else {
      settle(approval: id, with: .no)
      return .no
    }
    return given
  }

  /// Refuses every approval chat `chat` still waits for.
  private func cancelApprovals(of chat: Int64) {
    let waiting = state.withLock { $0.approvals.filter { $0.value.chat == chat }.map(\.key) }
    for id in waiting { settle(approval: id, with: .no) }
  }

  /// What the user is told of an error, without a command line's hints.
  public static func describe(_ error: any Error) -> String {
    if error is CancellationError { return "stopped" }
    return String(describing: error)
  }
}
