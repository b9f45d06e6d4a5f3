import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import Toolhost
import ToolhostCommandLine
import ToolhostJSON
import ToolhostLocal
import ToolhostMCP
import ToolhostOpenAI
import ToolhostSession

/// Options shared by `chat` and `ask`.
struct ChatOptions: ParsableArguments {
  @OptionGroup var plugins: PluginOptions
  @OptionGroup var output: OutputOptions

  @Option(
    help: ArgumentHelp(
      "The model name (default: $TOOLHOST_MODEL, else gpt-4o-mini); `local` runs the default local model with "
        + "llama.cpp, `local:1.5b` the larger one (`scripts/install-local-model --with-1.5b`), "
        + "`local:/path/model.gguf` any GGUF file.", valueName: "name"))
  var model: String?

  @Option(
    name: .customLong("tool-calling"),
    help: ArgumentHelp(
      "How the model calls tools: `native` (the server's tool calls; the default for HTTP models) or `guided` "
        + "(a reply constrained to a JSON Schema; the default for local models).", valueName: "mode"))
  var toolCalling: ToolCallingStrategy?

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp(
      "The OpenAI-compatible API, up to /v1 (default: $TOOLHOST_BASE_URL, $OPENAI_BASE_URL, else OpenAI's).",
      valueName: "url"))
  var baseURL: String?

  @Option(
    name: .customLong("tool"),
    help: ArgumentHelp(
      "Offer only this tool, and tell the model to use it (repeatable).", valueName: "name"))
  var toolNames: [String] = []

  @Flag(
    name: .customLong("require-tool"),
    help: "Make the model call a tool before it answers each prompt.")
  var requireTool = false

  @Flag(name: .customLong("no-tools"), help: "Offer no tools.")
  var noTools = false

  @Option(help: ArgumentHelp("Instructions for the model (the system message).", valueName: "text"))
  var instructions: String?

  @Option(
    help: ArgumentHelp(
      "Save the conversation to this JSONL file after each answer.", valueName: "file"))
  var save: String?

  @Option(
    help: ArgumentHelp(
      "Continue the conversation saved in this JSONL file (and save it back there unless --save is given).",
      valueName: "file"))
  var resume: String?

  @Flag(help: "Print the session's events as NDJSON on stdout instead of text.")
  var json = false

  @Flag(
    name: .customLong("yes"),
    help: "Run the tools that would ask first (approval `ask`) without asking; `deny` tools still never run.")
  var yes = false

  @Flag(
    name: .customLong("no-stream"),
    help: "Ask the server for whole replies instead of streamed ones.")
  var noStream = false

  @Option(
    name: .customLong("max-tool-rounds"), help: "The most rounds of tool calls for one prompt.")
  var maxToolRounds = 8

  @Option(help: "Sampling temperature.")
  var temperature: Double?

  @Option(
    name: .customLong("keep-alive"),
    help: ArgumentHelp(
      "Keep a local model's server running this long after its last request, for the next ask or chat to "
        + "reuse (`90s`, `5m`, `1h`; default: $TOOLHOST_MODEL_KEEP_ALIVE, else it ends with toolhost). "
        + "`toolhost model stop` stops it.",
      valueName: "time"))
  var keepAlive: String?

  @Option(
    help: ArgumentHelp(
      "Time limit in seconds for each tool call (overrides the manifests).", valueName: "s"))
  var timeout: Double?

  func validate() throws {
    if noTools && (!toolNames.isEmpty || requireTool) {
      throw ValidationError("--no-tools cannot be combined with --tool or --require-tool")
    }
    if maxToolRounds < 1 { throw ValidationError("--max-tool-rounds must be at least 1") }
    if let timeout, timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds") }
    try ModelCommand.validate(keepAlive: keepAlive)
  }
}

extension ToolCallingStrategy: ExpressibleByArgument {}

/// `toolhost chat`: an interactive conversation with the discovered tools.
struct Chat: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Chat with a model that can call the plugins' tools.",
    discussion: """
      Streams the answer; each tool call is shown with its arguments, duration and a short result. Ctrl-C cancels \
      the current answer and its running tools; Ctrl-D (end of input) exits. Tools whose approval is `ask` (MCP \
      tools, and tools not marked read-only or non-destructive, unless config.json says otherwise) ask first on a \
      terminal and are refused without one unless --yes. API key: $TOOLHOST_API_KEY or $OPENAI_API_KEY.
      """)

  @OptionGroup var options: ChatOptions

  @Option(
    name: .shortAndLong,
    help: ArgumentHelp("Answer this prompt and exit (as toolhost ask).", valueName: "text"))
  var prompt: String?

  func run() async throws {
    let chat = try await ChatRun(options: options)
    if let prompt {
      try await chat.runOnce(prompt)
    } else {
      try await chat.runInteractive()
    }
  }
}

/// `toolhost ask "prompt"`: one question, one answer.
struct Ask: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Ask a model one question; it may call the plugins' tools.",
    discussion: """
      The answer goes to stdout, tool calls to stderr. Without a prompt argument, the prompt is read from stdin. \
      Exit status: 0 answered, 1 the model or a tool failed, 64 usage error, 130 interrupted.
      """)

  @OptionGroup var options: ChatOptions

  @Argument(help: "The prompt (default: read from stdin).")
  var prompt: String?

  func run() async throws {
    var text = prompt
    if text == nil {
      if isatty(0) != 0 {
        throw ValidationError("give a prompt: toolhost ask \"...\" (or pipe one on stdin)")
      }
      text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ValidationError("the prompt is empty")
    }
    let chat = try await ChatRun(options: options)
    try await chat.runOnce(text)
  }
}

// MARK: - Running a conversation

/// One `chat` or `ask` invocation: the session, its renderer and the signal handling.
final class ChatRun: Sendable {
  let session: LanguageModelSession
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

  /// The plugins; their persistent processes and MCP servers are stopped when the conversation ends.
  let catalog: PluginCatalog

  init(options: ChatOptions) async throws {
    // A closed stdout then fails writes (ignored) instead of killing toolhost with its plugins still running.
    signal(SIGPIPE, SIG_IGN)
    let printer = options.output.printer
    let catalog = try await Self.catalog(options, printer: printer)
    self.catalog = catalog
    var tools: [any Tool] = []
    let rules = catalog.trust.configuration
    if !options.noTools {
      if options.toolNames.isEmpty {
        // A tool that may never run is not offered: the model would only spend a round on a refusal.
        tools = catalog.tools.filter { rules.approval(for: $0).mode != .deny }
      } else {
        for name in options.toolNames {
          guard let entry = catalog.entries.first(where: { $0.tool.name == name }) else {
            throw printer.usageError(Report.unknownTool(name, in: catalog))
          }
          let approval = rules.approval(for: entry.tool)
          if approval.mode == .deny {
            throw printer.usageError("\(name) is denied by config.json (\(approval.reason))")
          }
          tools.append(entry.tool)
        }
      }
    }
    let registry: ToolRegistry
    do { registry = try ToolRegistry(tools) } catch { throw printer.usageError(error.description) }
    if !options.json {
      for tool in tools {
        for note in catalog.shadowNotes(for: tool.name) { printer.warn("toolhost: note: \(note)") }
      }
    }

    var resumed: Transcript?
    if let resume = options.resume {
      do { resumed = try Transcript.load(from: resume) } catch {
        throw printer.usageError("\(error.description) (start a conversation with --save FILE)")
      }
    }

    console = ChatConsole(json: options.json, raw: options.output.raw)
    (model, shutdownModel) = try Self.makeModel(options, console: console, printer: printer)

    let terminal = isatty(0) != 0 && isatty(2) != 0
    input = LineReader()
    savePath = options.save ?? options.resume
    streaming = !options.noStream
    generation = GenerationOptions(
      toolCalling: options.requireTool ? .requiredUntilFirstCall : .allowed,
      temperature: options.temperature)

    let console = self.console
    let input = self.input
    var policy = SessionPolicy(
      toolFailures: .reportToModel, maximumToolRounds: options.maxToolRounds)
    policy.toolContext.timeout = options.timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    let ask: ToolApprover.Ask = { call, tool, decision in
      await console.confirm(call, tool, decision, reader: input)
    }
    let approver = ToolApprover(
      configuration: catalog.trust.configuration, assumeYes: options.yes, ask: terminal ? ask : nil,
      onNote: { note in console.note("toolhost: \(note)") }, unattendedHint: "allow it with --yes")
    policy.approveCall = { call, tool in await approver.decide(call, tool: tool) }

    let instructions = SessionInstructions.preferring(
      tools: options.toolNames, base: options.instructions)
    if var transcript = resumed {
      if let instructions {
        let entry = Transcript.Entry.instructions(Transcript.Instructions(text: instructions))
        if let i = transcript.entries.firstIndex(where: {
          if case .instructions = $0 { true } else { false }
        }) {
          transcript.entries[i] = entry
        } else {
          transcript.entries.insert(entry, at: 0)
        }
      }
      session = LanguageModelSession(
        model: model, tools: registry, transcript: transcript, policy: policy)
    } else {
      session = LanguageModelSession(
        model: model, tools: registry, instructions: instructions, policy: policy)
    }
    _ = session.addObserver { [console] event in console.show(event) }
    if catalog.hasErrors && !options.json {
      let n = catalog.diagnostics.filter(\.isError).count
      printer.warn(
        "toolhost: \(n) broken plugin\(n == 1 ? "" : "s") left out (`toolhost doctor` shows why)")
    }
  }

  /// The plugins `chat` or `ask` offers: MCP servers are started only when their tools may be offered (not with
  /// `--no-tools`, nor when every `--tool` is a plugin's).
  static func catalog(_ options: ChatOptions, printer: Printer) async throws -> PluginCatalog {
    let names: [String]? = options.noTools ? [] : (options.toolNames.isEmpty ? nil : options.toolNames)
    return try await options.plugins.catalog(offering: names, printer: printer)
  }

  /// The model `--model` names: a local model (`local`, `local:PATH`) or an OpenAI-compatible server.
  static func makeModel(_ options: ChatOptions, console: ChatConsole, printer: Printer) throws -> (
    any LanguageModel, @Sendable () async -> Void
  ) {
    let environment = ProcessInfo.processInfo.environment
    let name = options.model ?? environment["TOOLHOST_MODEL"].flatMap { $0.isEmpty ? nil : $0 }
    if let name, LocalModelSpecifier.isLocal(name) {
      if options.baseURL != nil {
        throw ValidationError("--base-url is for HTTP models; a local model runs its own server")
      }
      var configuration: LocalModelConfiguration
      do {
        let keepAlive = try ModelCommand.keepAlive(options.keepAlive, environment: environment)
        configuration = try LocalModelConfiguration.named(name, environment: environment, keepAlive: keepAlive)
      } catch {
        throw printer.usageError(CommandLineHints.describe(error))
      }
      if let strategy = options.toolCalling { configuration.toolCalling = strategy }
      let local = LocalModel(configuration: configuration) { event in console.show(event) }
      return (local, { await local.shutdown() })
    }
    var configuration = OpenAIConfiguration.fromEnvironment(model: options.model, baseURL: options.baseURL)
    if let strategy = options.toolCalling { configuration.toolCalling = strategy }
    let remote: OpenAIModel
    do { remote = try OpenAIModel(configuration: configuration) } catch {
      throw printer.usageError(CommandLineHints.describe(error))
    }
    return (remote, { try? await remote.shutdown() })
  }

  /// Runs one request in a task that Ctrl-C cancels; returns the error it ended with, if any.
  private func request(_ prompt: String) async -> (any Error)? {
    let outcome = Mutex<(any Error)?>(nil)
    let session = self.session
    let generation = self.generation
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
    if error == nil, let savePath {
      do { try session.transcript.save(to: savePath) } catch { return error }
    }
    return error
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
          + "Ctrl-D quits.")
    }
    while true {
      if interactive && !console.json { console.promptMarker() }
      guard let line = await input.nextLine() else { break }
      let prompt = line.trimmingCharacters(in: .whitespaces)
      if prompt.isEmpty { continue }
      if let error = await request(prompt) { console.report(error) }
      if let status = exitAfterRequest.withLock({ $0 }) {
        await finish()
        throw ExitCode(status)
      }
    }
    if interactive && !console.json { console.note("") }
    await finish()
  }

  /// Shuts down the HTTP client and the plugins' long-running processes.
  private func finish() async {
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

// MARK: - Terminal output

/// Renders session events: text to stdout, tool calls and notes to stderr, a spinner on a terminal; or NDJSON.
///
/// All writes go through one lock so the spinner, streamed text and tool lines never interleave mid-line.
final class ChatConsole: Sendable {
  private struct State {
    var spinner: String?
    var frame = 0
    var textOpen = false
    var streamedText = false
    var spinnerTask: Task<Void, Never>?
  }

  let json: Bool
  private let color: Bool
  private let spinning: Bool
  /// Whether text from models and tools is made visible (``TerminalText``) on stdout and stderr.
  private let printer: Printer
  private let state = Mutex(State())

  init(json: Bool, raw: Bool) {
    self.json = json
    let environment = ProcessInfo.processInfo.environment
    let noColor = !(environment["NO_COLOR"] ?? "").isEmpty || environment["TERM"] == "dumb"
    let stderrTTY = isatty(2) != 0
    color = stderrTTY && !noColor
    spinning = stderrTTY && !json
    printer = Printer(raw: raw)
  }

  /// Untrusted text (a model's, a tool's) for stdout.
  private func visibleOut(_ text: String) -> String { printer.safeStdout ? TerminalText.visible(text) : text }
  /// Untrusted text for stderr.
  private func visibleErr(_ text: String) -> String { printer.safeStderr ? TerminalText.visible(text) : text }

  private func paint(_ text: String, _ code: String) -> String {
    color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }

  // A reader that went away (`toolhost ask ... | head -1`) must not crash the program: `write(contentsOf:)` throws
  // EPIPE where `write(_:)` traps, and the rest of the output is dropped.
  private static func out(_ text: String) {
    try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
  }
  private static func err(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
  }

  /// Clears the spinner line; call with the lock held.
  private func clearSpinner(_ s: inout State) {
    if s.spinner != nil {
      Self.err("\r\u{1B}[K")
      s.spinner = nil
    }
  }

  /// Ends an open line of streamed text; call with the lock held.
  private func closeText(_ s: inout State) {
    if s.textOpen {
      Self.out("\n")
      s.textOpen = false
    }
  }

  private func startSpinner(_ label: String) {
    guard spinning else { return }
    state.withLock { s in
      s.spinner = label
      if s.spinnerTask == nil {
        s.spinnerTask = Task { [weak self] in
          while !Task.isCancelled {
            self?.tick()
            try? await Task.sleep(for: .milliseconds(100))
          }
        }
      }
    }
  }

  private func tick() {
    let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    state.withLock { s in
      guard let label = s.spinner else { return }
      s.frame += 1
      Self.err("\r\u{1B}[K" + paint(frames[s.frame % frames.count] + " " + label, "2"))
    }
  }

  /// Shows one event.
  func show(_ event: SessionEvent) {
    if json {
      Self.out(event.json.serialized() + "\n")
      return
    }
    switch event {
    case .requestStarted:
      state.withLock { $0.streamedText = false }
    case .modelTurnStarted(let round):
      startSpinner(round == 1 ? "thinking…" : "reading the results…")
    case .textDelta(let text):
      state.withLock { s in
        clearSpinner(&s)
        Self.out(visibleOut(text))
        s.textOpen = !text.hasSuffix("\n")
        s.streamedText = true
      }
    case .toolCallStarted(let call):
      state.withLock { s in
        clearSpinner(&s)
        closeText(&s)
        var args = call.argumentsJSON
        if args.count > 200 { args = String(args.prefix(199)) + "…" }
        Self.err(paint("→ \(visibleErr(call.toolName))", "36") + " " + paint(visibleErr(args), "2") + "\n")
      }
      startSpinner("running \(visibleErr(call.toolName))…")
    case .toolCallFinished(let record):
      state.withLock { s in
        clearSpinner(&s)
        let mark = record.succeeded ? paint("✓", "32") : paint("✗", "31")
        let took = record.ran ? " " + paint("(\(Self.format(record.duration)))", "2") : ""
        Self.err(
          "\(mark) \(visibleErr(record.call.toolName))\(took): \(visibleErr(record.summary(width: 110)))\n")
      }
    case .response(let response):
      state.withLock { s in
        clearSpinner(&s)
        if !s.streamedText && !response.content.isEmpty {
          Self.out(visibleOut(response.content))
          s.textOpen = !response.content.hasSuffix("\n")
        }
        closeText(&s)
      }
    }
  }

  /// Stops the spinner and ends any open text line (after a request, finished or not).
  func endTurn() {
    state.withLock { s in
      s.spinnerTask?.cancel()
      s.spinnerTask = nil
      clearSpinner(&s)
      if !json { closeText(&s) }
    }
  }

  /// Prints why a request failed: a line on stderr, and an `error` event with `--json`.
  func report(_ error: any Error) {
    let message: String
    let code: String
    switch error {
    case is CancellationError:
      message = "cancelled"
      code = "cancelled"
    case let e as LanguageModelError:
      message = CommandLineHints.describe(e)
      code = "model_error"
    case let e as ToolCallError:
      message = CommandLineHints.describe(e)
      code = e.failure?.code ?? "tool_error"
    case let e as LanguageModelSessionError:
      message = CommandLineHints.describe(e)
      code = "session_error"
    default:
      message = String(describing: error)
      code = "error"
    }
    if json {
      Self.out(
        JSONValue.object(["type": "error", "code": .string(code), "message": .string(message)])
          .serialized() + "\n")
    }
    state.withLock { s in
      clearSpinner(&s)
      closeText(&s)
      Self.err(paint("toolhost: \(visibleErr(message))", "31") + "\n")
    }
  }

  /// A local model's server starting, ready, restarting or stopped: a line on stderr (none for `stopped`).
  func show(_ event: LocalServerEvent) {
    switch event {
    case .starting(let log):
      note("toolhost: starting the local model (llama.cpp server log: \(log))")
    case .ready(let pid, let port, let startup):
      let seconds = Double(startup.components.seconds) + Double(startup.components.attoseconds) / 1e18
      note(
        "toolhost: local model ready on 127.0.0.1:\(port) (pid \(pid), started in "
          + "\(String(format: "%.1f", seconds)) s)")
    case .restarting(let reason):
      note("toolhost: \(reason); starting it again")
    case .stopped:
      break
    }
  }

  /// A line for people on stderr.
  func note(_ text: String) {
    state.withLock { _ in Self.err(paint(visibleErr(text), "2") + "\n") }
  }

  /// The chat's input prompt.
  func promptMarker() {
    state.withLock { _ in Self.err(paint("you› ", "1")) }
  }

  /// Asks on the terminal whether a call may run: yes, no, or always (remembered in config.json).
  func confirm(_ call: Transcript.ToolCall, _ tool: any Tool, _ decision: ApprovalDecision, reader: LineReader) async
    -> ToolApprover.Answer
  {
    state.withLock { s in
      clearSpinner(&s)
      closeText(&s)
      // The name and arguments come from the model: any control or bidi character in them is shown, not obeyed,
      // so what the user reads is what would run.
      let origin = (tool as? PluginTool).map { " from \($0.manifest.directory)" } ?? ""
      Self.err(
        paint("\(TerminalText.visible(call.toolName))\(TerminalText.visible(origin)) asks before it runs", "33")
          + " (\(TerminalText.visible(decision.reason))). Run it with "
          + "\(TerminalText.visible(call.argumentsJSON))? [y]es, [n]o, [a]lways: ")
    }
    let answer = await reader.nextLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    switch answer {
    case "y", "yes": return .yes
    case "a", "always": return .always
    default: return .no
    }
  }

  static func format(_ d: Duration) -> String {
    let c = d.components
    let ms = Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
    if ms < 1 { return "<1 ms" }
    if ms < 1000 { return "\(Int(ms.rounded())) ms" }
    return String(format: "%.1f s", ms / 1000)
  }
}

// MARK: - Reading lines

/// Reads stdin one line at a time on its own thread (blocking reads must stay off the cooperative pool), only when
/// asked, so the chat prompt and confirmations share it.
final class LineReader: Sendable {
  private struct State {
    var buffered: [String] = []
    var eof = false
    var reading = false
    var waiter: CheckedContinuation<String?, Never>?
  }

  private let state = Mutex(State())
  private let wake = DispatchSemaphore(value: 0)

  init() {
    let thread = Thread { [self] in
      while true {
        wake.wait()
        let line = readLine(strippingNewline: true)
        deliver(line)
        if line == nil { return }
      }
    }
    thread.name = "toolhost.stdin"
    thread.start()
  }

  private func deliver(_ line: String?) {
    let waiter = state.withLock { s -> CheckedContinuation<String?, Never>? in
      s.reading = false
      if line == nil { s.eof = true }
      if let w = s.waiter {
        s.waiter = nil
        return w
      }
      if let line { s.buffered.append(line) }
      return nil
    }
    waiter?.resume(returning: line)
  }

  /// The next line, or `nil` at end of input or when the task is cancelled while waiting.
  func nextLine() async -> String? {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (c: CheckedContinuation<String?, Never>) in
        let immediate: String?? = state.withLock { s in
          if !s.buffered.isEmpty { return .some(s.buffered.removeFirst()) }
          if s.eof || Task.isCancelled { return .some(nil) }
          s.waiter = c
          if !s.reading {
            s.reading = true
            wake.signal()
          }
          return .none
        }
        if let immediate { c.resume(returning: immediate) }
      }
    } onCancel: {
      let waiter = state.withLock { s -> CheckedContinuation<String?, Never>? in
        defer { s.waiter = nil }
        return s.waiter
      }
      waiter?.resume(returning: nil)
    }
  }
}
