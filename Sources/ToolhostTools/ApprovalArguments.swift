public import ToolhostJSON

/// A call's arguments as an approval shows them: every top-level argument by its name (names never cut), each value
/// shortened on its own, and runs of whitespace made visible. So a padded first argument cannot push
/// `"path": "~/.bashrc"` out of sight, as a cut of the whole JSON text did. The terminal's question and the chat
/// page's approval both show this.
///
/// ```swift
/// let shown = ApprovalArguments(json: #"{"text": "hi", "path": "~/.bashrc"}"#)
/// for argument in shown.arguments { print("\(argument.name): \(argument.line)") }   // text: "hi", path: "~/.bashrc"
/// ```
public struct ApprovalArguments: Sendable, Equatable {
  /// One top-level argument.
  public struct Argument: Sendable, Equatable {
    /// The argument's name, whole.
    public var name: String
    /// Its value as JSON text with whitespace runs made visible, cut to the limit.
    public var shown: String
    /// How many characters of that text the cut left out (0 when none).
    public var more: Int
    /// Its value as JSON text, whole.
    public var whole: String

    /// `shown`, followed by "… (N more characters)" when it was cut.
    public var line: String { more == 0 ? shown : "\(shown)… (\(more) more characters)" }
  }

  /// The most characters of one value shown before it is cut.
  public static let valueLimit = 120
  /// The shortest run of spaces shown as a count (`⟨12 spaces⟩`) instead of itself.
  public static let spaceRun = 4

  /// The arguments in the model's order; empty when they are not a JSON object (see ``other``).
  public var arguments: [Argument]
  /// The arguments' text when it is not a JSON object (broken JSON, an array), shown the same way as a value.
  public var other: Argument?

  /// The arguments of `json`, each value cut at `limit` characters.
  public init(json: String, limit: Int = ApprovalArguments.valueLimit) {
    if let object = (try? JSONValue.parse(json))?.objectValue {
      arguments = object.map { name, value in Self.argument(name, value.serialized(), limit: limit) }
      other = nil
    } else {
      arguments = []
      other = Self.argument("arguments", json, limit: limit)
    }
  }

  /// The arguments of `value` (an object, or anything else as ``other``).
  public init(_ value: JSONValue, limit: Int = ApprovalArguments.valueLimit) {
    self.init(json: value.serialized(), limit: limit)
  }

  static func argument(_ name: String, _ text: String, limit: Int) -> Argument {
    let visible = visibleWhitespace(text)
    let characters = Array(visible)
    guard characters.count > limit else { return Argument(name: name, shown: visible, more: 0, whole: text) }
    return Argument(name: name, shown: String(characters.prefix(limit)), more: characters.count - limit, whole: text)
  }

  /// `text` with every run of ``spaceRun`` or more spaces as `⟨N spaces⟩`, and every other whitespace character
  /// that JSON text keeps raw (outside strings, where JSON escapes it) as its escape (`\n`, `\t`, `\r`, `\u{…}`).
  public static func visibleWhitespace(_ text: String) -> String {
    var out = ""
    var spaces = 0
    func flush() {
      if spaces >= spaceRun {
        out += "⟨\(spaces) spaces⟩"
      } else {
        out += String(repeating: " ", count: spaces)
      }
      spaces = 0
    }
    for scalar in text.unicodeScalars {
      if scalar == " " {
        spaces += 1
        continue
      }
      flush()
      switch scalar {
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      default:
        if scalar.properties.isWhitespace {
          out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    flush()
    return out
  }
}
