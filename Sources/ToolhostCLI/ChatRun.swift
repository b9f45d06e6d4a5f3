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

/// One `chat` or `ask` invocation: the session, its renderer and the signal handling.
final class ChatRun: Sendable {
  /// The conversation's session; `/clear` puts a fresh one in its place.
  var session: LanguageModelSession { sessionBox.withLock { $0 } }
  private let sessionBox: Mutex<LanguageModelSession>
  /// A new session (with the chat's observers), continuing `transcript` when one is given.
  private let makeSession: @Sendable (Transcript?) -> LanguageModelSession
  let model: any LanguageModel
  /// Stops the model's HTTP client and, for a local model, its server.
  let shutdownModel: @Sendable () async -> Void
  let console: ChatConsole
  let input: LineReader
  let generation: GenerationOptions
  let savePath: String?
  let streaming: Bool
  /// The running request, for Ctrl-C.
  let current = Mutex<Task<Void, Never>?>(nil)
  /// Keeps the chat in the history, titled by the model (`chat`); `nil` with `--no-history`.
  private let keeper: ChatKeeper?

  /// The plugins; their persistent processes and MCP servers are stopped when the conversation ends.
  let catalog: PluginCatalog

  /// Sets up `command` (`chat` or `ask`).
  init(options: ChatOptions, command: String) async throws {
    let prepared = try await ChatPreparation(options: options)
    let (catalog, registry, setup, console, chosen) = (
      prepared.catalog, prepared.registry, prepared.setup, prepared.console, prepared.chosen
    )
    let (history, continued, resumeFile) = (prepared.history, prepared.continued, prepared.resumeFile)
    let printer = options.output.printer
    let keep = prepared.keep
    self.catalog = catalog
    self.console = console
    (model, shutdownModel) = (chosen.model, chosen.shutdown)

    let toolNames = registry.tools.map(\.name)
    let input = LineReader { word in ChatLine.completions(of: word, toolNames: toolNames) }
    self.input = input
    savePath = options.save ?? resumeFile
    streaming = setup.streaming
    generation = setup.generationOptions
    let terminal = isatty(0) != 0 && isatty(2) != 0
    let ask: ToolApprover.Ask = { call, tool, decision in
      await console.confirm(call, tool, decision, reader: input)
    }
    let approval = ChatApproval(
      ask: terminal ? ask : nil,
      onNote: { note in console.note("toolhost: \(note)") }, unattendedHint: "allow it with --yes")
    let newChat = prepared.newChat(command: command, options: options)
    let keeper =
      keep
      ? history.map { ChatKeeper(history: $0, newChat: newChat, model: chosen.model, titlesByModel: command == "chat") }
      : nil
    self.keeper = keeper
    let rules = catalog.trust.configuration
    let model = self.model
    makeSession = { [setup] transcript in
      var setup = setup
      setup.resumedTranscript = transcript
      let session = setup.makeSession(model: model, tools: registry, rules: rules, approval: approval)
      _ = session.addObserver { [console] event in console.show(event) }
      _ = session.addObserver { event in keeper?.observe(event) }
      return session
    }
    sessionBox = Mutex(makeSession(setup.resumedTranscript))
    if let keeper {
      if let continued {
        keeper.continueChat(continued)
      } else {
        do { try keeper.startNewChat() } catch { printer.warn(Self.notKept(error)) }
      }
    }
  }

  /// Runs one request in a task that Ctrl-C cancels, offering only `tools` when given; returns the error it ended
  /// with, if any.
  private func request(_ prompt: String, offering tools: [String]? = nil) async -> (any Error)? {
    let outcome = Mutex<(any Error)?>(nil)
    let session = self.session
    var generation = self.generation
    generation.offeredTools = tools
    let streaming = self.streaming
    let task = Task {
      do {
        if streaming {
          _ = try await session.streamResponse(to: prompt, options: generation).collect()
        } else {
          _ = try await session.respond(to: prompt, options: generation)
        }
      } catch {
        outcome.withLock { $0 = error }
      }
    }
    current.withLock { $0 = task }
    await task.value
    current.withLock { $0 = nil }
    console.endTurn()
    let error = outcome.withLock { $0 }
    keep(prompt: prompt, error: error)
    if error == nil { titleInBackground(prompt: prompt) }
    if error == nil, let savePath {
      do { try session.transcript.save(to: savePath) } catch { return error }
    }
    return error
  }

  /// Adds what the last request added to the history; the first failure is a warning and ends keeping for this run.
  private func keep(prompt: String, error: (any Error)?) {
    let message = error.map { ChatConsole.describe($0).message }
    if let failure = keeper?.record(session.transcript, prompt: prompt, error: message) {
      console.note("toolhost: warning: \(failure.description); the rest of this chat is not kept")
    }
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
    let session = self.session
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
      case .pick(let tool, let message): error = await request(message, offering: [tool])
      case .listTools(let filter):
        let lines = ToolPicker.lines(session.tools.tools, filter: filter)
        console.note(lines.isEmpty ? "toolhost: no tool matches \"\(filter)\"" : lines.joined(separator: "\n"))
      case .clear: clear()
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
  private func clear() {
    sessionBox.withLock { $0 = makeSession(nil) }
    var kept = ""
    // Kept unless nothing is (--no-history) or the history failed earlier in this run.
    do {
      if let previous = try keeper?.startAnotherChat() { kept = " (the last one is kept as chat \(previous))" }
    } catch {
      console.note("toolhost: warning: \(error); this chat is not kept")
    }
    console.note("toolhost: a new conversation\(kept)")
    let session = self.session
    session.prewarm()
  }

  /// After a new chat's first answer, asks the chat's model for a title in the background (the answer is shown).
  private func titleInBackground(prompt: String) {
    let console = self.console
    keeper?.titleInBackground(prompt: prompt) { error in
      console.note("toolhost: warning: \(error); the chat keeps its first prompt as its title")
    }
  }

  /// Shuts down the HTTP client and the plugins' long-running processes.
  private func finish() async {
    // A title still being made gets a moment, then is dropped (the chat keeps its prompt's title).
    await keeper?.finish()
    await shutdownModel()
    await catalog.shutdown()
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
