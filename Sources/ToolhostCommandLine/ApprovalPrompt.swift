import ToolhostSystem
public import ToolhostTools

/// The question a terminal asks before a call whose approval is `ask`: which tool, from where, why it asks, what it
/// may reach (its plugin's confinement), every
/// top-level argument by name with its value shortened on its own (``ApprovalArguments``, so a padded argument can
/// neither hide another nor scroll the tool's name out of sight), and the question again with the tool's name.
/// Answering ``viewWord`` shows the arguments whole (``wholeArguments(_:)``) before the question comes again.
/// Everything that comes from a plugin, a server or the model is made visible (``TerminalText``), so what the user
/// reads is what would run.
///
/// ```swift
/// let text = ApprovalPrompt.text(tool: "appendNote", origin: "/home/me/tools/appender",
///                                reason: "not marked read-only", argumentsJSON: #"{"text":"hi"}"#)
/// ```
public enum ApprovalPrompt {
  /// What the user types to allow the tool from now on: the whole word, so that a stray `a` typed ahead cannot.
  public static let alwaysWord = "always"
  /// What the user types to see the arguments whole before answering (or just `v`).
  public static let viewWord = "view"

  /// The prompt, ending with the question (no newline after it); each value cut at `limit` characters.
  public static func text(
    tool: String, origin: String?, reason: String, argumentsJSON: String, reach: String? = nil,
    limit: Int = ApprovalArguments.valueLimit
  ) -> String {
    let name = TerminalText.visible(tool)
    let from = origin.map { " from " + TerminalText.visible($0) } ?? ""
    let shown = ApprovalArguments(json: argumentsJSON, limit: limit)
    var lines = ["\(name)\(from) asks before it runs (\(TerminalText.visible(reason)))."]
    if let reach { lines.append("  reaches: \(TerminalText.visible(reach))") }
    if let other = shown.other {
      lines.append("  arguments: \(TerminalText.visible(other.line))")
    } else if shown.arguments.isEmpty {
      lines.append("  no arguments")
    } else {
      lines += shown.arguments.map { "  \(TerminalText.visible($0.name)): \(TerminalText.visible($0.line))" }
    }
    // Offered when what is shown is not the whole text: a value cut, or a run of spaces counted.
    let partial = (shown.other.map { [$0] } ?? shown.arguments).contains { $0.line != $0.whole }
    return lines.joined(separator: "\n") + "\n" + question(tool: name, cut: partial)
  }

  /// The question itself; it offers ``viewWord`` when what was shown is not the whole text.
  static func question(tool name: String, cut: Bool) -> String {
    "Run \(name)? [y]es, [n]o, \(alwaysWord) (run it from now on)"
      + (cut ? ", or [v]iew the arguments whole: " : ": ")
  }

  /// Every argument whole, one after the other, made visible (control characters shown, nothing obeyed), for the
  /// user who answered ``viewWord``; then the question again.
  public static func wholeArguments(tool: String, argumentsJSON: String) -> String {
    let shown = ApprovalArguments(json: argumentsJSON, limit: Int.max)
    let parts = shown.other.map { [$0] } ?? shown.arguments
    let body = parts.map {
      "  \(TerminalText.visible($0.name)) (\($0.whole.count) characters):\n    "
        + TerminalText.visible($0.whole)
    }
    return body.joined(separator: "\n") + "\n" + question(tool: TerminalText.visible(tool), cut: false)
  }

  /// Whether `answer` (trimmed, lower-cased) asks to view the arguments whole.
  public static func asksToView(_ answer: String) -> Bool { answer == "v" || answer == viewWord }
}
