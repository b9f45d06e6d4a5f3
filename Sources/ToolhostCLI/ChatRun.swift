import ArgumentParser
import Foundation
import Synchronization
import ToolhostChat
import ToolhostCommandLine
import ToolhostHistory
import ToolhostJSON
import ToolhostOpenAI
import ToolhostPlugins
import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// One `chat` or `ask` invocation: the terminal's rendering of a ``ChatRuntime``, its input and the signal handling.
final class ChatRun: Sendable {
  /// The conversation; `/clear` puts a fresh one in its place.
  var conversation: ChatConversation { conversationBox.withLock { $0 } }
  private let conversationBox: Mutex<ChatConversation>
  /// The session, its tools, the approver and every turn.
  let runtime: ChatRuntime
  let model: any LanguageModel
  let console: ChatConsole
  let input: LineReader
  let savePath: String?
  /// The running request, for Ctrl-C.
  let current = Mutex<Task<ChatTurn, Never>?>(nil)

  /// Sets up `command` (`chat` or `ask`).
  init(options: ChatOptions, command: String) async throws {
    let prepared = try await ChatPreparation(options: options)
    let (catalog, registry, setup, console, chosen) = (
      prepared.catalog, prepared.registry, prepared.setup, prepared.console, prepared.chosen
    )
    let (history, continued, resumeFile) = (prepared.history, prepared.continued, prepared.resumeFile)
    let printer = options.output.printer
    self.console = console
    model = chosen.model

    let toolNames = registry.tools.map(\.name)
    let input = LineReader { word in ChatLine.completions(of: word, toolNames: toolNames) }
    self.input = input
    savePath = options.save ?? resumeFile
    let terminal = isatty(0) != 0 && isatty(2) != 0
    let ask: ToolApprover.Ask = { call, tool, decision in
      await console.confirm(call, tool, decision, reader: input)
    }
    let approval = ChatApproval(
      ask: terminal ? ask : nil,
      onNote: { note in console.note("toolhost: \(note)") }, unattendedHint: "allow it with --yes")
    runtime = ChatRuntime(
      configuration: .init(
        model: chosen.model, tools: registry, rules: catalog.trust.configuration, setup: setup, approval: approval,
        describeError: { ChatConsole.describe($0).message },
        shutdown: {
          await chosen.shutdown()
          await catalog.shutdown()
        }))
    runtime.observe { event in
      switch event {
      case .session(_, let event): console.show(event)
      case .turnFinished(let turn):
        console.endTurn()
        if turn.answeredWithoutTools { console.unchecked() }
      case .warning(_, let text): console.note("toolhost: warning: \(text)")
      case .turnStarted, .chatsChanged: break
      }
    }
    let newChat = prepared.newChat(command: command, options: options)
    let keeper =
      prepared.keep
      ? history.map { ChatKeeper(history: $0, newChat: newChat, model: chosen.model, titlesByModel: command == "chat") }
      : nil
    if let keeper {
      if let continued {
        keeper.continueChat(continued)
      } else {
        do { try keeper.startNewChat() } catch { printer.warn(Self.notKept(error)) }
      }
    }
    conversationBox = Mutex(runtime.startConversation(keeper: keeper, continuing: setup.resumedTranscript))
  }

  /// Runs one request in a task that Ctrl-C cancels, offering only `tool` when given; returns the error it ended
  /// with, if any.
  private func request(_ prompt: String, offering tool: String? = nil) async -> (any Error)? {
    let conversation = self.conversation
    guard let task = runtime.start(prompt, in: conversation, tool: tool) else { return nil }
    current.withLock { $0 = task }
    let turn = await task.value
    current.withLock { $0 = nil }
    if turn.error == nil, let savePath {
      do { try conversation.session.transcript.save(to: savePath) } catch { return error }
    }
    return turn.error
  }

  /// The warning for a chat the history cannot keep.
  static func notKept(_ error: HistoryError) -> String {
    "toolhost: warning: \(error.description); this chat is not kept (--no-history stops this warning)"
  }

  /// Ctrl-C (and SIGTERM, SIGHUP) cancel the running request; with none running they end the program.
  /// Set by SIGTERM or SIGHUP during a request: the program ends with this status once the request has wound
  /// down (its tools stopped).
  let exitAfterRequest = Mutex<Int32?>(nil)

  /// Ctrl-C cancels the running request; SIGTERM and SIGHUP cancel it and end the program after it; with no request
  /// running, any of them ends the program at once.
  private func handleSignals() -> InterruptHandler {
    InterruptHandler { [self] signal in
      let status = signal == SIGINT ? Status.interrupted : 128 + signal
      let task = self.current.withLock { $0 }
      if let task {
        if signal != SIGINT { self.exitAfterRequest.withLock { $0 = status } }
        task.cancel()
        return
      }
      self.console.endTurn()
      exit(status)
    }
  }

  func runOnce(_ prompt: String) async throws {
    let handler = handleSignals()
    defer { handler.stop() }
    let error = await request(prompt)
    await finish()
    if let error {
      console.report(error)
      throw ExitCode(exitAfterRequest.withLock { $0 } ?? Self.status(for: error))
    }
  }

  func runInteractive() async throws {
    let handler = handleSignals()
    defer { handler.stop() }
    // A local model loads, and reads the instructions and tool descriptions, while the user types the first prompt
    // (a failed start is reported by that prompt).
    let session = conversation.session
    session.prewarm()
    let interactive = isatty(0) != 0
    if interactive && !console.json {
      console.note(
        "toolhost chat with \(model.displayName), \(session.tools.tools.count) tools. Ctrl-C stops an answer, "
          + "Ctrl-D quits; /help lists the commands.")
    }
    while true {
      let line: String?
      if interactive && !console.json && input.edits {
        line = await input.nextLine(prompt: console.promptText)
      } else {
        if interactive && !console.json { console.promptMarker() }
        line = await input.nextLine()
      }
      guard let line else { break }
      let text = line.trimmingCharacters(in: .whitespaces)
      if text.isEmpty { continue }
      var error: (any Error)?
      switch ChatLine(text, tools: session.tools) {
      case .prompt(let prompt): error = await request(prompt)
      case .pick(let tool, let message): error = await request(message, offering: tool)
      case .listTools(let filter):
        let lines = ToolPicker.lines(session.tools.tools, filter: filter)
        console.note(lines.isEmpty ? "toolhost: no tool matches \"\(filter)\"" : lines.joined(separator: "\n"))
      case .clear: await clear()
      case .help: console.note(ChatLine.commands.map { "  \($0.name)  \($0.help)" }.joined(separator: "\n"))
      case .hint(let hint): console.note("toolhost: " + hint)
      case .quit:
        if interactive && !console.json { console.note("") }
        await finish()
        return
      }
      if let error { console.report(error) }
      if let status = exitAfterRequest.withLock({ $0 }) {
        await finish()
        throw ExitCode(status)
      }
    }
    if interactive && !console.json { console.note("") }
    await finish()
  }

  /// `/clear`: a fresh session with the same tools and instructions, kept as a new chat in the history.
  private func clear() async {
    let (conversation, previous, failure) = await runtime.clear(self.conversation)
    conversationBox.withLock { $0 = conversation }
    // Kept unless nothing is (--no-history) or the history failed earlier in this run.
    if let failure { console.note("toolhost: warning: \(failure); this chat is not kept") }
    console.note("toolhost: a new conversation\(previous.map { " (the last one is kept as chat \($0))" } ?? "")")
    conversation.session.prewarm()
  }

  /// Stops the turns, lets a title still being made finish for a moment (the chat keeps its prompt's title
  /// otherwise), and shuts down the model's HTTP client and the plugins' long-running processes.
  private func finish() async {
    await runtime.finish()
  }

  static func status(for error: any Error) -> Int32 {
    if error is CancellationError { return Status.interrupted }
    if let e = error as? ToolCallError {
      return e.failure == .cancelled ? Status.interrupted : Status.toolFailed
    }
    if let e = error as? LanguageModelError, e.kind == .configuration { return Status.usage }
    return Status.toolFailed
  }
}
