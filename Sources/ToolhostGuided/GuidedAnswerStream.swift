/// Picks the answer's text out of a guided reply while it streams, so an answer can be shown as it is generated.
///
/// Feed it the reply's text as it arrives; once the reply's top-level `answer` member starts (after `need` and
/// `tool`, or first), it returns the newly decoded characters of that string, and nothing for a tool call or
/// anything that is not a JSON object. Escape sequences and UTF-8 sequences are passed on only when complete.
public struct GuidedAnswerStream: Sendable {
  private enum State: Sendable {
    /// Reading the object's structure, looking for the `answer` member.
    case scanning
    /// Inside the answer string.
    case inAnswer
    /// The answer ended, or this is not an answer.
    case finished
  }
  private var state = State.scanning
  private var buffer: [UInt8] = []
  private var position = 0
  // The scanner: nesting depth, whether inside a string (and where it started), the last key at depth 1 and
  // whether its colon has been seen.
  private var depth = 0
  private var stringStart: Int?
  private var key: [UInt8]?
  private var afterColon = false

  /// Makes an empty stream.
  public init() {}

  /// Adds `piece` and returns the answer text it completes (often empty).
  public mutating func feed(_ piece: String) -> String {
    buffer.append(contentsOf: piece.utf8)
    if case .scanning = state { scan() }
    guard case .inAnswer = state else { return "" }
    var out: [UInt8] = []
    while position < buffer.count {
      let byte = buffer[position]
      if byte == UInt8(ascii: "\"") {
        state = .finished
        break
      }
      if byte != UInt8(ascii: "\\") {
        out.append(byte)
        position += 1
        continue
      }
      guard let (decoded, length) = escape(at: position) else { break }  // incomplete: wait for more
      out.append(contentsOf: decoded)
      position += length
    }
    // Hold back a partial UTF-8 sequence at the end until the rest arrives.
    var keep = 0
    if case .inAnswer = state {
      keep = Self.incompleteUTF8Tail(out)
    }
    position -= keep
    return String(decoding: out.dropLast(keep), as: UTF8.self)
  }

  /// Advances the scanner over the buffer until the answer string starts, the reply proves to be something else, or
  /// the buffer runs out.
  private mutating func scan() {
    let quote = UInt8(ascii: "\"")
    let backslash = UInt8(ascii: "\\")
    while position < buffer.count {
      let byte = buffer[position]
      if let start = stringStart {
        if byte == backslash {
          guard position + 1 < buffer.count else { return }  // wait for the escaped character
          position += 2
          continue
        }
        if byte == quote {
          if depth == 1 && !afterColon { key = Array(buffer[(start + 1)..<position]) }
          if depth == 1 && afterColon { afterColon = false }
          stringStart = nil
        }
        position += 1
        continue
      }
      switch byte {
      case quote:
        if depth == 1 && afterColon && key == Array("answer".utf8) {
          position += 1
          state = .inAnswer
          return
        }
        stringStart = position
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth <= 0 {
          state = .finished
          return
        }
      case UInt8(ascii: ":"):
        if depth == 1 { afterColon = true }
      case UInt8(ascii: ","):
        if depth == 1 {
          afterColon = false
          key = nil
        }
      case 9, 10, 13, 32:
        break
      default:
        // Anything before the opening brace means this is not a JSON object.
        if depth == 0 {
          state = .finished
          return
        }
      }
      position += 1
    }
  }

  /// The bytes an escape sequence at `start` stands for and its length, or `nil` when it is not complete yet.
  private func escape(at start: Int) -> ([UInt8], Int)? {
    guard start + 1 < buffer.count else { return nil }
    switch buffer[start + 1] {
    case UInt8(ascii: "n"): return ([10], 2)
    case UInt8(ascii: "t"): return ([9], 2)
    case UInt8(ascii: "r"): return ([13], 2)
    case UInt8(ascii: "b"): return ([8], 2)
    case UInt8(ascii: "f"): return ([12], 2)
    case UInt8(ascii: "u"):
      guard let high = hex4(at: start + 2) else { return nil }
      if (0xD800..<0xDC00).contains(high) {
        guard start + 12 <= buffer.count else { return nil }
        if buffer[start + 6] == UInt8(ascii: "\\"), buffer[start + 7] == UInt8(ascii: "u"),
          let low = hex4(at: start + 8), (0xDC00..<0xE000).contains(low)
        {
          let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
          return (utf8(scalar), 12)
        }
        return (utf8(0xFFFD), 6)
      }
      return (utf8((0xDC00..<0xE000).contains(high) ? 0xFFFD : high), 6)
    default: return ([buffer[start + 1]], 2)  // \" \\ \/ (and anything else, kept as written)
    }
  }

  private func hex4(at start: Int) -> UInt32? {
    guard start + 4 <= buffer.count else { return nil }
    return UInt32(String(decoding: buffer[start..<start + 4], as: UTF8.self), radix: 16)
  }

  private func utf8(_ value: UInt32) -> [UInt8] {
    Array(String(Character(Unicode.Scalar(value) ?? "\u{FFFD}")).utf8)
  }

  /// How many bytes at the end of `bytes` start a UTF-8 sequence that is not complete.
  private static func incompleteUTF8Tail(_ bytes: [UInt8]) -> Int {
    var i = bytes.count - 1
    var continuation = 0
    while i >= 0, bytes[i] & 0xC0 == 0x80, continuation < 3 {
      continuation += 1
      i -= 1
    }
    guard i >= 0 else { return 0 }
    let lead = bytes[i]
    let needed = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
    let have = continuation + 1
    return have < needed ? have : 0
  }
}
