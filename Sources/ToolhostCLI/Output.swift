import ArgumentParser
import Foundation
import ToolhostCommandLine
import ToolhostSystem

/// `--raw`: print plugin, server and model text as it is, even on a terminal.
struct OutputOptions: ParsableArguments {
  @Flag(help: "Print text from plugins, servers and models as it is, control characters included.")
  var raw = false

  /// The printer for this command.
  var printer: Printer { Printer(raw: raw) }
}

/// Writes to stdout and stderr. On a terminal (without `--raw`) every control character that could act on it is
/// made visible (``TerminalText/visible(_:)``); toolhost's own text has none, so all text can go through it. Pipes
/// get the exact bytes.
struct Printer: Sendable {
  /// Whether text to stdout / stderr is made visible.
  let safeStdout: Bool
  let safeStderr: Bool

  init(raw: Bool) {
    safeStdout = !raw && isatty(1) != 0
    safeStderr = !raw && isatty(2) != 0
  }

  /// A line on stdout.
  func say(_ text: String) {
    write(1, safeStdout ? TerminalText.visible(text) : text)
  }

  /// A line on stdout exactly as given (JSON output: pipes and `--json` carry the exact bytes).
  func sayExactly(_ text: String) {
    write(1, text)
  }

  /// A line on stderr.
  func warn(_ text: String) {
    write(2, safeStderr ? TerminalText.visible(text) : text)
  }

  /// Prints `Error: message` on stderr and returns the usage exit status to throw. For messages that may carry
  /// untrusted text (ArgumentParser prints a `ValidationError` as it is).
  func usageError(_ message: String) -> ExitCode {
    warn("Error: \(message)")
    return ExitCode(ExitStatus.usage)
  }

  /// Writes `text` and a newline; a closed pipe is ignored (the rest is dropped), never fatal.
  private func write(_ fd: Int32, _ text: String) {
    let handle = fd == 1 ? FileHandle.standardOutput : FileHandle.standardError
    try? handle.write(contentsOf: Data((text + "\n").utf8))
  }
}
