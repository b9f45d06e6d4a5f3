/// Completes JSON text cut short (a reply still streaming) into the longest prefix that is a whole JSON value:
/// open strings that are values are closed where they stop, a key without its value and a half-written number or
/// literal are dropped, and open arrays and objects are closed.
enum PartialJSON {
  private enum Expect { case key, colon, value, comma }

  /// What ends a number or a literal.
  private static let terminators = Array(",]} \n\r\t".utf8)

  /// The completed text, or `nil` when not even a prefix of the text is JSON.
  static func close(_ text: String) -> String? {
    let bytes = Array(text.utf8)
    var stack: [UInt8] = []  // `{` or `[`
    var expect: [Expect] = []  // what each open container expects next
    var safe: (end: Int, closers: String)? = nil
    var i = 0
    var topLevelDone = false

    func closers() -> String { String(stack.reversed().map { $0 == UInt8(ascii: "{") ? "}" : "]" }) }
    func markSafe(_ end: Int) { safe = (end, closers()) }
    func valueEnded(at end: Int) {
      if expect.isEmpty { topLevelDone = true } else { expect[expect.count - 1] = .comma }
      markSafe(end)
    }

    while i < bytes.count {
      let c = bytes[i]
      switch c {
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
        i += 1
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        stack.append(c)
        expect.append(c == UInt8(ascii: "{") ? .key : .value)
        i += 1
        markSafe(i)
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        guard !stack.isEmpty else { return nil }
        stack.removeLast()
        expect.removeLast()
        i += 1
        valueEnded(at: i)
      case UInt8(ascii: ":"):
        if !expect.isEmpty { expect[expect.count - 1] = .value }
        i += 1
      case UInt8(ascii: ","):
        if let top = stack.last { expect[expect.count - 1] = top == UInt8(ascii: "{") ? .key : .value }
        i += 1
      case UInt8(ascii: "\""):
        let isKey = expect.last == .key
        var j = i + 1
        var closed = false
        while j < bytes.count {
          if bytes[j] == UInt8(ascii: "\\") {
            j += 2
            continue
          }
          if bytes[j] == UInt8(ascii: "\"") {
            closed = true
            break
          }
          j += 1
        }
        if !closed {
          // A value string still being written: keep what there is of it (without a half escape).
          guard !isKey else { return finish(bytes, safe) }
          var end = min(j, bytes.count)
          if let slash = bytes[(i + 1)..<end].lastIndex(of: UInt8(ascii: "\\")), end - slash < 6 { end = slash }
          let head = String(decoding: bytes[0..<end], as: UTF8.self)
          return head + "\"" + closers()
        }
        i = j + 1
        if isKey { expect[expect.count - 1] = .colon } else { valueEnded(at: i) }
      default:
        // A number or a literal: whole only when something follows it.
        var j = i
        while j < bytes.count, !terminators.contains(bytes[j]) { j += 1 }
        guard j < bytes.count else { return finish(bytes, safe) }
        i = j
        valueEnded(at: i)
      }
      if topLevelDone { break }
    }
    return finish(bytes, safe)
  }

  private static func finish(_ bytes: [UInt8], _ safe: (end: Int, closers: String)?) -> String? {
    guard let safe else { return nil }
    var head = String(decoding: bytes[0..<safe.end], as: UTF8.self)
    while let last = head.last, last == "," || last.isWhitespace { head.removeLast() }
    return head + safe.closers
  }
}
