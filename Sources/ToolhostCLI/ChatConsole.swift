import Foundation
import Synchronization
import ToolhostChat
import ToolhostCommandLine
import ToolhostJSON
import ToolhostLocal
import ToolhostPlugins
import ToolhostSession
import ToolhostSystem
import ToolhostTools

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

  /// Whether tools' progress is shown (on a terminal, not in NDJSON mode).
  var showsProgress: Bool { spinning }

  /// Shows a running tool's progress on the spinner's line.
  func progress(_ tool: String, _ progress: ToolProgress) {
    let label = "running \(visibleErr(tool)): \(TerminalText.visible(String(progress.summary.prefix(100))))"
    state.withLock { s in
      if s.spinner != nil { s.spinner = label }
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
        let took = record.ran ? " " + paint("(\(record.duration.callText))", "2") : ""
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

  /// Says that the answer just shown called no tool, so it is the model's own and not checked: a dim line on
  /// stderr, or an `unchecked` event with `--json`.
  func unchecked() {
    if json {
      Self.out(JSONValue.object(["type": "unchecked", "text": .string(ChatTurn.uncheckedNote)]).serialized() + "\n")
    } else {
      Self.err(paint("(\(ChatTurn.uncheckedNote))", "2") + "\n")
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

  /// What the user is told of an error, and its code for `--json`.
  static func describe(_ error: any Error) -> (message: String, code: String) {
    switch error {
    case is CancellationError: ("cancelled", "cancelled")
    case let e as LanguageModelError: (CommandLineHints.describe(e), "model_error")
    case let e as ToolCallError: (CommandLineHints.describe(e), e.failure?.code ?? "tool_error")
    case let e as LanguageModelSessionError: (CommandLineHints.describe(e), "session_error")
    default: (String(describing: error), "error")
    }
  }

  /// Prints why a request failed: a line on stderr, and an `error` event with `--json`.
  func report(_ error: any Error) {
    let (message, code) = Self.describe(error)
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
      note(
        "toolhost: local model ready on 127.0.0.1:\(port) (pid \(pid), started in "
          + "\(String(format: "%.1f", startup.seconds)) s)")
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

  /// The chat's input prompt, as drawn.
  var promptText: String { paint("you› ", "1") }

  /// Shows the chat's input prompt.
  func promptMarker() {
    state.withLock { _ in Self.err(promptText) }
  }

  /// Asks on the terminal whether a call may run: yes, no, or always (remembered in config.json for that tool from
  /// where it comes); "v" shows the arguments whole and asks again. Lines typed before the question are thrown away
  /// first, so type-ahead never answers it, and "always" must be typed as the whole word.
  func confirm(_ call: Transcript.ToolCall, _ tool: any Tool, _ decision: ApprovalDecision, reader: LineReader) async
    -> ToolApprover.Answer
  {
    reader.discardTypeAhead()
    state.withLock { s in
      clearSpinner(&s)
      closeText(&s)
      let origin = (tool as? PluginTool)?.manifest.location
      let question = ApprovalPrompt.text(
        tool: call.toolName, origin: origin, reason: decision.reason, argumentsJSON: call.argumentsJSON,
        reach: (tool as? PluginTool)?.reach)
      Self.err(paint(question, "33"))
    }
    var answer = await reader.nextLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    // "v": the arguments whole, then the question again (as often as asked).
    while ApprovalPrompt.asksToView(answer) {
      let whole = ApprovalPrompt.wholeArguments(tool: call.toolName, argumentsJSON: call.argumentsJSON)
      state.withLock { _ in Self.err(paint(whole, "33")) }
      answer = await reader.nextLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    }
    switch answer {
    case "y", "yes": return .yes
    case ApprovalPrompt.alwaysWord: return .always
    default: return .no
    }
  }
}
