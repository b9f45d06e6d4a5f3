import ToolhostSystem

/// The question a terminal asks before a call whose approval is `ask`: which tool, from where, why it asks, its
/// arguments (cut to a length, so a padded argument cannot scroll the tool's name out of sight), and the question
/// again with the tool's name. Everything that comes from a plugin, a server or the model is made visible
/// (``TerminalText``), so what the user reads is what would run.
///
/// ```swift
/// let text = ApprovalPrompt.text(tool: "appendNote", origin: "/home/me/tools/appender",
///                                reason: "not marked read-only", argumentsJSON: #"{"text":"hi"}"#)
/// ```
public enum ApprovalPrompt {
  /// The most characters of the arguments' JSON shown; the rest is replaced by a note of how long it is.
  public static let argumentsLimit = 300

  /// What the user types to allow the tool from now on: the whole word, so that a stray `a` typed ahead cannot.
  public static let alwaysWord = "always"

  /// The prompt, ending with the question (no newline after it).
  public static func text(
    tool: String, origin: String?, reason: String, argumentsJSON: String, limit: Int = argumentsLimit
  ) -> String {
    let name = TerminalText.visible(tool)
    let from = origin.map { " from " + TerminalText.visible($0) } ?? ""
    let scalars = argumentsJSON.unicodeScalars
    var arguments = argumentsJSON
    if scalars.count > limit {
      var cut = String.UnicodeScalarView()
      cut.append(contentsOf: scalars.prefix(limit))
      arguments = String(cut) + "… (cut: \(scalars.count) characters in all)"
    }
    return "\(name)\(from) asks before it runs (\(TerminalText.visible(reason))).\n"
      + "  arguments: \(TerminalText.visible(arguments))\n"
      + "Run \(name)? [y]es, [n]o, or \(alwaysWord) (run it from now on): "
  }
}
