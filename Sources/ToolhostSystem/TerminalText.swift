/// Text from plugins, manifests, MCP servers and models made safe to print on a terminal, as git does with the
/// messages of a remote: control characters become visible instead of acting.
///
/// ESC becomes `^[` (so no escape sequence can retitle the window, clear the screen, write the clipboard with OSC 52
/// or hide a link with OSC 8), the other C0 controls except newline and tab become `^X`, DEL `^?`, and the C1
/// controls and the bidirectional overrides and isolates (which can make a prompt read differently from what it
/// runs) `<U+202E>`.
///
/// ```swift
/// print(TerminalText.visible(pluginOutput))
/// ```
public enum TerminalText {
  /// `text` with every control character that could act on a terminal made visible; plain text comes back as it is.
  public static func visible(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var out = ""
    out.reserveCapacity(text.utf8.count + 16)
    for scalar in text.unicodeScalars {
      guard needsEscape(scalar) else {
        out.unicodeScalars.append(scalar)
        continue
      }
      switch scalar.value {
      case 0x7F: out += "^?"
      case 0..<0x20: out += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
      default: out += "<U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + ">"
      }
    }
    return out
  }

  /// Whether `scalar` is made visible: C0 but newline and tab, DEL, C1, and the bidi controls.
  public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A, 0x09: false
    case 0..<0x20, 0x7F...0x9F: true
    case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
