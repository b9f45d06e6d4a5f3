import Foundation
import ToolhostSystem

/// The editing of one line typed on a terminal, as bytes arrive, without any I/O: the reader feeds it each byte
/// and writes what it answers (redraws of the line, or a list of completions) to the terminal.
///
/// Keys: printable text (UTF-8) inserts; Backspace deletes back; Delete and Ctrl-D delete forward (Ctrl-D on an
/// empty line ends the input); Left, Right, Home, End, Ctrl-A, Ctrl-E move; Ctrl-U and Ctrl-K cut to the start or
/// end; Ctrl-W cuts a word back; Up and Down walk through earlier lines; Tab completes the word before the cursor
/// (a single candidate is inserted with a space, several are listed after their common start is inserted); Enter
/// ends the line. Other control bytes, control and bidi characters (``TerminalText/needsEscape(_:)``), broken UTF-8
/// and unknown escape sequences are dropped, so nothing typed reaches the terminal as a control sequence. A line
/// wider than ``columns`` scrolls sideways on one row around the cursor (one column per character is assumed).
///
/// ```swift
/// var editor = LineEditor(prompt: "you› ", complete: { word in ["@getWeather"].filter { $0.hasPrefix(word) } })
/// for byte in input {
///   switch editor.feed(byte) {
///   case .redraw(let text): write(text)
///   case .line(let line): return line
///   …
///   }
/// }
/// ```
public struct LineEditor: Sendable {
  /// What the terminal should do after a byte.
  public enum Effect: Sendable, Equatable {
    /// Nothing to show.
    case none
    /// Write this (it redraws the prompt and the line, and puts the cursor in place).
    case redraw(String)
    /// Show these completions on lines of their own, then redraw (the associated text).
    case list([String], redraw: String)
    /// The line is done (the terminal should move to a new line).
    case line(String)
    /// End of input (Ctrl-D on an empty line).
    case endOfInput
  }

  /// The prompt the line is drawn after.
  public let prompt: String
  /// The terminal's width in columns (the reader sets it from the terminal; 80 when unknown).
  public var columns = 80
  /// The candidates for a word (the text from the last space before the cursor to the cursor).
  public let complete: @Sendable (String) -> [String]
  /// The line so far.
  public private(set) var text: [Character] = []
  /// Where the cursor is in ``text``.
  public private(set) var cursor = 0
  private var history: [String]
  private var historyIndex: Int
  private var pendingUTF8: [UInt8] = []
  private var escape: [UInt8]?
  /// The first character of the text shown when the line is wider than the terminal.
  private var scroll = 0

  /// An editor for one line, with earlier lines to walk through with Up and Down.
  public init(prompt: String, history: [String] = [], complete: @escaping @Sendable (String) -> [String] = { _ in [] })
  {
    self.prompt = prompt
    self.complete = complete
    self.history = history
    historyIndex = history.count
  }

  /// Takes one byte.
  public mutating func feed(_ byte: UInt8) -> Effect {
    if var sequence = escape {
      sequence.append(byte)
      // ESC [ ... ends with a byte in @...~ ; ESC O x is one more byte.
      let done = sequence.count >= 2 && (sequence[0] == UInt8(ascii: "O") || (0x40...0x7E).contains(byte))
      if sequence.count == 1 && byte != UInt8(ascii: "[") && byte != UInt8(ascii: "O") {
        escape = nil
        return .none
      }
      guard done || sequence.count > 8 else {
        escape = sequence
        return .none
      }
      escape = nil
      return handleEscape(sequence)
    }
    if !pendingUTF8.isEmpty && !(0x80...0xBF).contains(byte) {
      // A sequence cut short: what came so far is dropped, and this byte counts on its own.
      pendingUTF8 = []
      return feed(byte)
    }
    if !pendingUTF8.isEmpty || byte >= 0x80 {
      pendingUTF8.append(byte)
      guard let expected = Self.utf8Length(pendingUTF8[0]) else {
        pendingUTF8 = []
        return .none
      }
      guard pendingUTF8.count >= expected else { return .none }
      let decoded = String(decoding: pendingUTF8, as: UTF8.self)
      pendingUTF8 = []
      return insert(decoded)
    }
    switch byte {
    case 0x0D, 0x0A:
      return .line(String(text))
    case 0x04:
      if text.isEmpty { return .endOfInput }
      return deleteForward()
    case 0x7F, 0x08:
      guard cursor > 0 else { return .none }
      text.remove(at: cursor - 1)
      cursor -= 1
      return .redraw(drawing())
    case 0x01:
      cursor = 0
      return .redraw(drawing())
    case 0x05:
      cursor = text.count
      return .redraw(drawing())
    case 0x15:
      text.removeSubrange(0..<cursor)
      cursor = 0
      return .redraw(drawing())
    case 0x0B:
      text.removeSubrange(cursor...)
      return .redraw(drawing())
    case 0x17:
      var start = cursor
      while start > 0 && text[start - 1] == " " { start -= 1 }
      while start > 0 && text[start - 1] != " " { start -= 1 }
      text.removeSubrange(start..<cursor)
      cursor = start
      return .redraw(drawing())
    case 0x09:
      return completeWord()
    case 0x1B:
      escape = []
      return .none
    case 0x20..<0x7F:
      return insert(String(UnicodeScalar(byte)))
    default:
      return .none
    }
  }

  private mutating func insert(_ string: String) -> Effect {
    var clean = ""
    clean.unicodeScalars.append(
      contentsOf: string.unicodeScalars.filter { !TerminalText.needsEscape($0) && $0 != "\u{FFFD}" })
    let string = clean
    guard !string.isEmpty else { return .none }
    text.insert(contentsOf: string, at: cursor)
    cursor += string.count
    return .redraw(drawing())
  }

  private mutating func deleteForward() -> Effect {
    guard cursor < text.count else { return .none }
    text.remove(at: cursor)
    return .redraw(drawing())
  }

  private mutating func handleEscape(_ sequence: [UInt8]) -> Effect {
    switch String(decoding: sequence, as: UTF8.self) {
    case "[C", "OC":
      guard cursor < text.count else { return .none }
      cursor += 1
    case "[D", "OD":
      guard cursor > 0 else { return .none }
      cursor -= 1
    case "[H", "OH", "[1~", "[7~":
      cursor = 0
    case "[F", "OF", "[4~", "[8~":
      cursor = text.count
    case "[3~":
      return deleteForward()
    case "[A", "OA":
      guard historyIndex > 0 else { return .none }
      if historyIndex == history.count { history.append(String(text)) } else { history[historyIndex] = String(text) }
      historyIndex -= 1
      text = Array(history[historyIndex])
      cursor = text.count
    case "[B", "OB":
      guard historyIndex < history.count - 1 else { return .none }
      history[historyIndex] = String(text)
      historyIndex += 1
      text = Array(history[historyIndex])
      cursor = text.count
    default:
      return .none
    }
    return .redraw(drawing())
  }

  private mutating func completeWord() -> Effect {
    var start = cursor
    while start > 0 && text[start - 1] != " " { start -= 1 }
    let word = String(text[start..<cursor])
    let candidates = complete(word)
    guard !candidates.isEmpty else { return .none }
    if candidates.count == 1 {
      let rest = candidates[0].dropFirst(word.count)
      return insert(String(rest) + " ")
    }
    let common = candidates.dropFirst().reduce(candidates[0]) { $0.commonPrefix(with: $1) }
    if common.count > word.count { return insert(String(common.dropFirst(word.count))) }
    return .list(candidates, redraw: drawing())
  }

  /// The prompt and the line from the start of the terminal's line, the rest of that line cleared, and the cursor
  /// moved back to its place. A line too wide for the terminal shows the part around the cursor.
  private mutating func drawing() -> String {
    let room = max(8, columns - Self.visibleWidth(prompt) - 1)
    if text.count <= room {
      scroll = 0
    } else {
      if cursor < scroll { scroll = cursor }
      if cursor > scroll + room { scroll = cursor - room }
      scroll = min(scroll, max(0, text.count - room))
    }
    let shown = text[scroll..<min(text.count, scroll + room)]
    var out = "\r" + prompt + String(shown) + "\u{1B}[K"
    let back = scroll + shown.count - cursor
    if back > 0 { out += "\u{1B}[\(back)D" }
    return out
  }

  /// How many columns `text` takes, its escape sequences (colours) left out.
  static func visibleWidth(_ text: String) -> Int {
    var width = 0
    var inEscape = false
    for scalar in text.unicodeScalars {
      if inEscape {
        if (0x40...0x7E).contains(scalar.value) && scalar != "[" { inEscape = false }
      } else if scalar == "\u{1B}" {
        inEscape = true
      } else {
        width += 1
      }
    }
    return width
  }

  /// How many bytes a UTF-8 sequence that starts with `lead` has; `nil` for a byte that cannot start one.
  static func utf8Length(_ lead: UInt8) -> Int? {
    switch lead {
    case 0xC2...0xDF: 2
    case 0xE0...0xEF: 3
    case 0xF0...0xF4: 4
    default: nil
    }
  }
}
