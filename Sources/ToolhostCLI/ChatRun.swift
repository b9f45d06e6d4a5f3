import ArgumentParser
import Foundation
import Synchronization
import ToolhostChat
import ToolhostCommandLine
import ToolhostHistory
import ToolhostJSON
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
  /// Keeps the chat in the history; empty with `--no-history`, or once the history failed (warned once).
  let recorder: RecorderSlot
  /// The history and what a new chat in it is, for `/clear`; `nil` when nothing is kept.
  private let newChat: (history: ChatHistory, chat: ChatHistory.NewChat)?
  /// Whether the model titles new chats after their first answer (`chat` does; `ask` keeps its prompt's title, so
  /// that nothing runs after its answer).
  private let titlesByModel: Bool
  /// The chats the model still has to title, and the running title request.
  private let titling = Mutex<(untitled: Set<Int64>, task: Task<Void, Never>?)>(([], nil))

  /// The plugins; their persistent processes and MCP servers are stopped when the conversation ends.
  let catalog: PluginCatalog

  /// Sets up `command` (`chat` or `ask`).
  init(options: ChatOptions, command: String) async throws {
    // A closed stdout then fails writes (ignored) instead of killing toolhost with its plugins still running.
    signal(SIGPIPE, SIG_IGN)
    let printer = options.output.printer
    var setup = options.setup
    let catalog = try await options.plugins.catalog(offering: setup.tools.discoveryNames, printer: printer)
    self.catalog = catalog
    let registry: ToolRegistry
    do { registry = try setup.tools.registry(from: catalog) } catch { throw Self.usageError(error, printer: printer) }
    if !options.json {
      for tool in registry.tools {
        for note in catalog.shadowNotes(for: tool.name) { printer.warn("toolhost: note: \(note)") }
      }
    }
    let keep = !options.noHistory && catalog.trust.configuration.history
    var history: ChatHistory?
    var continued: StoredChat?
    let resumeFile = options.resume.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
    if let resume = options.resume, resumeFile == nil, Int64(resume) == nil {
      throw printer.usageError(
        "--resume \(resume): there is no such file, and it is not a chat id (`toolhost chats` lists them)")
    }
    let resumeID = resumeFile == nil ? options.resume.flatMap { Int64($0) } : nil
    if keep || options.continueLast || resumeID != nil {
      do {
        let opened = try ChatHistory.open()
        history = opened
        if options.continueLast {
          guard let last = try opened.lastChatID() else {
            throw printer.usageError("--continue: there is no chat to continue yet")
          }
          continued = try opened.chat(last)
        } else if let resumeID {
          continued = try opened.chat(resumeID)
        }
      } catch let error as HistoryError {
        if error.unknownChat != nil { throw printer.usageError(error.description) }
        if options.continueLast || resumeID != nil {
          printer.warn("Error: \(error.description)")
          throw ExitCode(ExitStatus.toolFailed)
        }
        printer.warn(Self.notKept(error))
      }
    }
    if let continued { setup.resumedTranscript = continued.transcript }
    if let resumeFile {
      do { setup.resumedTranscript = try Transcript.load(from: resumeFile) } catch {
        throw printer.usageError("\(error.description) (start a conversation with --save FILE)")
      }
    }

    let console = ChatConsole(json: options.json, raw: options.output.raw)
    self.console = console
    if console.showsProgress { setup.onToolProgress = { tool, progress in console.progress(tool, progress) } }
    let chosen: ChosenModel
    do { chosen = try options.modelChoice.makeModel { event in console.show(event) } } catch {
      throw Self.usageError(error, printer: printer)
    }
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
    let recorder = RecorderSlot()
    self.recorder = recorder
    let rules = catalog.trust.configuration
    let model = self.model
    makeSession = { [setup] transcript in
      var setup = setup
      setup.resumedTranscript = transcript
      let session = setup.makeSession(model: model, tools: registry, rules: rules, approval: approval)
      _ = session.addObserver { [console] event in console.show(event) }
      _ = session.addObserver { event in recorder.current?.observe(event) }
      return session
    }
    sessionBox = Mutex(makeSession(setup.resumedTranscript))
    let newChat = ChatHistory.NewChat(
      command: command, model: chosen.model.displayName, settings: Self.settings(options, setup: setup))
    self.newChat = keep ? history.map { ($0, newChat) } : nil
    titlesByModel = command == "chat"
    if keep, let history {
      if let continued {
        recorder.current = ChatRecorder(
          history: history, continuing: continued.summary.id, stored: continued.transcript)
      } else {
        do { try startChat(in: history, newChat) } catch { printer.warn(Self.notKept(error)) }
      }
    }
    if catalog.hasErrors && !options.json {
      let n = catalog.diagnostics.filter(\.isError).count
      printer.warn(
        "toolhost: \(n) broken plugin\(n == 1 ? "" : "s") left out (`toolhost doctor` shows why)")
    }
  }

  /// Prints a setup error with the option that fixes it and returns the usage status to throw (a base URL given to
  /// a local model is a usage mistake ArgumentParser reports with the usage line, as before).
  private static func usageError(_ error: ChatSetupError, printer: Printer) -> any Error {
    let message = CommandLineHints.describe(error)
    if case .baseURLForLocalModel = error { return ValidationError(message) }
    return printer.usageError(message)
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
    guard let recorder = recorder.current else { return }
    do {
      try recorder.record(session.transcript, prompt: prompt, error: error.map { ChatConsole.describe($0).message })
    } catch {
      self.recorder.current = nil
      console.note("toolhost: warning: \(error.description); the rest of this chat is not kept")
    }
  }

  /// Starts keeping a new chat in `history`: it is recorded from now on, and the model titles it after its first
  /// answer (``titleInBackground(prompt:)``).
  ///
  /// - Throws: ``HistoryError`` when the history cannot make the chat; nothing changes then.
  private func startChat(in history: ChatHistory, _ chat: ChatHistory.NewChat) throws(HistoryError) {
    let started = try ChatRecorder(history: history, chat: chat)
    recorder.current = started
    titling.withLock { _ = $0.untitled.insert(started.chatID) }
  }

  /// The warning for a chat the history cannot keep.
  private static func notKept(_ error: HistoryError) -> String {
    "toolhost: warning: \(error.description); this chat is not kept (--no-history stops this warning)"
  }

  /// What the history keeps of a new chat's settings.
  private static func settings(_ options: ChatOptions, setup: ChatSetup) -> JSONValue {
    var o: JSONObject = ["maxToolRounds": .integer(Int64(options.maxToolRounds))]
    if let mode = options.toolCalling { o["toolCalling"] = .string(mode.rawValue) }
    if let t = options.temperature { o["temperature"] = .real(t) }
    if options.noTools { o["tools"] = .array([]) }
    if !options.toolNames.isEmpty { o["tools"] = .array(options.toolNames.map(JSONValue.string)) }
    if options.requireTool { o["requireTool"] = true }
    if let instructions = options.instructions { o["instructions"] = .string(instructions) }
    return .object(o)
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
    Task { await session.prewarm() }
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
    if let newChat, let previous = recorder.current?.chatID {
      do {
        try startChat(in: newChat.history, newChat.chat)
        kept = " (the last one is kept as chat \(previous))"
      } catch {
        recorder.current = nil
        console.note("toolhost: warning: \(error); this chat is not kept")
      }
    }
    console.note("toolhost: a new conversation\(kept)")
    let session = self.session
    Task { await session.prewarm() }
  }

  /// After a new chat's first answer, asks the chat's model for a title in a task of its own (the answer is already
  /// shown); the prompt's title stays when the model answers instead, fails, or is not done when the chat ends.
  private func titleInBackground(prompt: String) {
    guard titlesByModel, let recorder = recorder.current else { return }
    let id = recorder.chatID
    let model = self.model
    let console = self.console
    titling.withLock { state in
      guard state.untitled.remove(id) != nil else { return }
      let previous = state.task
      state.task = Task {
        await previous?.value
        guard let title = try? await ChatTitler(model: model).title(for: prompt) else { return }
        do { try recorder.history.setTitle(title, source: .model, for: id) } catch {
          console.note("toolhost: warning: \(error); the chat keeps its first prompt as its title")
        }
      }
    }
  }

  /// Shuts down the HTTP client and the plugins' long-running processes.
  private func finish() async {
    // A title still being made gets a moment, then is dropped (the chat keeps its prompt's title).
    if let task = titling.withLock({ $0.task }) {
      let done = OneShot<Void>()
      Task {
        await task.value
        _ = done.complete(())
      }
      Task {
        try? await Task.sleep(for: .seconds(3))
        task.cancel()
        _ = done.complete(())
      }
      await done.wait()
    }
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

/// The recorder a chat keeps its history with, replaced by `/clear` and dropped when the history fails.
final class RecorderSlot: Sendable {
  private let value = Mutex<ChatRecorder?>(nil)
  /// The recorder in use, if any.
  var current: ChatRecorder? {
    get { value.withLock { $0 } }
    set { value.withLock { $0 = newValue } }
  }
}
