import CJansson

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A JSON parse or serialization failure, with the place in the text where it happened.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure this is.
  public enum Kind: Sendable, Equatable {
    /// The text is not valid JSON.
    case syntax
    /// The value is nested deeper than ``JSONValue/maximumDepth``.
    case tooDeep
    /// A value cannot be represented (for example an integer beyond 64 bits while encoding a Swift type).
    case unrepresentable
  }

  /// What kind of failure this is.
  public var kind: Kind
  /// What went wrong, in words (jansson's message for syntax errors).
  public var message: String
  /// The 1-based line of the failure in the text, when parsing.
  public var line: Int?
  /// The 1-based column of the failure in the text, when parsing.
  public var column: Int?
  /// The 0-based byte offset of the failure in the text, when parsing.
  public var position: Int?

  /// Makes an error.
  public init(
    kind: Kind, message: String, line: Int? = nil, column: Int? = nil, position: Int? = nil
  ) {
    self.kind = kind
    self.message = message
    self.line = line
    self.column = column
    self.position = position
  }

  /// `line 3, column 7: ...` when the place is known, else the message alone.
  public var description: String {
    if let line, let column { return "line \(line), column \(column): \(message)" }
    return message
  }
}

/// How ``JSONValue/serialized(_:)`` lays out its text.
public struct JSONStyle: Sendable, Equatable {
  /// Two-space indentation and a line per member, instead of compact text.
  public var pretty: Bool
  /// Object keys in sorted order instead of insertion order.
  public var sortedKeys: Bool
  /// Escape every non-ASCII character as `\uXXXX`.
  public var asciiOnly: Bool

  /// Makes a style; the default is compact, in insertion order, UTF-8.
  public init(pretty: Bool = false, sortedKeys: Bool = false, asciiOnly: Bool = false) {
    self.pretty = pretty
    self.sortedKeys = sortedKeys
    self.asciiOnly = asciiOnly
  }

  /// Compact text: no spaces, insertion order.
  public static let compact = JSONStyle()
  /// Indented text for people.
  public static let pretty = JSONStyle(pretty: true)
}

extension JSONValue {
  /// The deepest nesting of arrays and objects that is parsed or serialized (jansson's parser limit).
  public static let maximumDepth = 2048

  /// Parses strict RFC 8259 JSON text; any value may be at the top level.
  ///
  /// - Throws: ``JSONError`` of kind `.syntax` with line and column for invalid text (trailing commas, comments,
  ///   invalid UTF-8, a raw NUL byte, trailing garbage), and `.tooDeep` past ``maximumDepth``. Never crashes on
  ///   hostile input.
  public static func parse(_ text: String) throws(JSONError) -> JSONValue {
    var text = text
    return try text.withUTF8 { buffer in
      Result { () throws(JSONError) in try parse(UnsafeRawBufferPointer(buffer)) }
    }
    .get()
  }

  /// Parses strict RFC 8259 JSON from UTF-8 bytes.
  ///
  /// - Throws: ``JSONError`` as ``parse(_:)-(String)`` does.
  public static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
    try bytes.withUnsafeBytes { buffer in Result { () throws(JSONError) in try parse(buffer) } }
      .get()
  }

  /// Parses strict RFC 8259 JSON from a buffer of UTF-8 bytes.
  ///
  /// - Throws: ``JSONError`` as ``parse(_:)-(String)`` does.
  public static func parse(_ buffer: UnsafeRawBufferPointer) throws(JSONError) -> JSONValue {
    // A raw NUL is never valid JSON (inside strings it must be escaped); reject it before jansson sees it.
    if let nul = buffer.firstIndex(of: 0) {
      let (line, column) = lineAndColumn(of: nul, in: buffer)
      throw JSONError(
        kind: .syntax, message: "a NUL byte is not allowed in JSON text", line: line,
        column: column, position: nul)
    }
    var error = json_error_t()
    if let root = load(buffer, &error) {
      defer { toolhost_json_decref(root) }
      return JanssonReader.value(root)
    }
    // jansson refuses a `\u0000` escape inside an object key, which RFC 8259 allows. Parse again with every such
    // escape replaced by the escape of a character the text does not contain (same length, so error places hold), and
    // turn that character back into NUL while reading.
    if toolhost_json_error_code(&error) == Int32(json_error_null_byte_in_key.rawValue),
      let substitution = NulEscapeSubstitution(buffer)
    {
      let root = substitution.bytes.withUnsafeBytes { load($0, &error) }
      if let root {
        defer { toolhost_json_decref(root) }
        return JanssonReader(nulSentinel: substitution.sentinel).value(root)
      }
      throw parseError(error, replacing: substitution.escapeDigits)
    }
    throw parseError(error, replacing: nil)
  }

  /// Runs jansson's parser on `buffer`, which has no NUL byte.
  private static func load(
    _ buffer: UnsafeRawBufferPointer, _ error: inout json_error_t
  ) -> UnsafeMutablePointer<json_t>? {
    let flags = toolhost_json_flag_decode_any() | toolhost_json_flag_allow_nul()
    let base = buffer.baseAddress?.assumingMemoryBound(to: CChar.self) ?? emptyCString
    return json_loadb(base, buffer.count, flags, &error)
  }

  /// The ``JSONError`` for a jansson parse failure; `replacing` names the hex digits of a NUL substitute to show as
  /// `0000` again in the message.
  private static func parseError(_ error: json_error_t, replacing digits: String?) -> JSONError {
    var error = error
    var message = withUnsafeBytes(of: error.text) { raw in
      String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
    }
    if let digits { message = NulEscapeSubstitution.restore(message, digits: digits) }
    let tooDeep = toolhost_json_error_code(&error) == Int32(json_error_stack_overflow.rawValue)
    return JSONError(
      kind: tooDeep ? .tooDeep : .syntax,
      message: tooDeep ? "nesting is deeper than \(maximumDepth) levels" : message,
      line: Int(error.line), column: Int(error.column), position: Int(error.position))
  }

  /// The value as JSON text, printed through jansson. Reals print as the shortest text that reads back as the
  /// same `Double` (`0.1`, not `0.10000000000000001`) and keep a fraction or exponent (`3.0`), so they stay reals.
  ///
  /// Non-finite reals (NaN, infinity), which JSON cannot express, print as `null`.
  /// - Throws: ``JSONError`` of kind `.tooDeep` when the value nests deeper than ``maximumDepth``. Nothing else.
  public func serialized(_ style: JSONStyle = .compact) throws(JSONError) -> String {
    var writer = JanssonWriter()
    let root = try writer.make(self, depth: 0)
    defer { toolhost_json_decref(root) }
    var flags = toolhost_json_flag_encode_any() | toolhost_json_flag_real_precision(17)
    flags |= style.pretty ? toolhost_json_flag_indent(2) : toolhost_json_flag_compact()
    if style.asciiOnly { flags |= toolhost_json_flag_ensure_ascii() }
    if style.sortedKeys { flags |= 0x80 }  // JSON_SORT_KEYS
    let size = json_dumpb(root, nil, 0, flags)
    var bytes = [UInt8](repeating: 0, count: size)
    _ = bytes.withUnsafeMutableBytes {
      json_dumpb(root, $0.baseAddress?.assumingMemoryBound(to: CChar.self), size, flags)
    }
    if writer.realCount > 0 { bytes = ShortestReals.rewrite(bytes) }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The value as compact JSON text, or a note when it nests deeper than ``maximumDepth``; never throws.
  public func serialized() -> String {
    do { return try serialized(.compact) } catch { return "null /* \(error.message) */" }
  }

  /// The 1-based line and column (in bytes) of `offset` in `buffer`.
  static func lineAndColumn(of offset: Int, in buffer: UnsafeRawBufferPointer) -> (Int, Int) {
    var line = 1
    var column = 1
    for i in 0..<offset {
      if buffer[i] == 10 {
        line += 1
        column = 1
      } else {
        column += 1
      }
    }
    return (line, column)
  }
}

/// A pointer to a constant empty C string, for empty buffers that have no base address.
private var emptyCString: UnsafePointer<CChar> { toolhost_json_empty_cstring() }

/// Converts jansson trees into ``JSONValue``s.
struct JanssonReader {
  /// The UTF-8 bytes of a character that stands for NUL in the tree's strings (see ``NulEscapeSubstitution``).
  var nulSentinel: [UInt8]? = nil

  static func value(_ j: UnsafeMutablePointer<json_t>) -> JSONValue {
    JanssonReader().value(j)
  }

  /// A Swift string from jansson's UTF-8 bytes, with the NUL sentinel (if any) turned back into NUL.
  func string(_ start: UnsafePointer<CChar>?, _ count: Int) -> String {
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    guard let sentinel = nulSentinel, raw.contains(sentinel[0]) else {
      return String(decoding: raw, as: UTF8.self)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    var i = 0
    while i < count {
      if i + 2 < count, raw[i] == sentinel[0], raw[i + 1] == sentinel[1], raw[i + 2] == sentinel[2] {
        bytes.append(0)
        i += 3
      } else {
        bytes.append(raw[i])
        i += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  func value(_ j: UnsafeMutablePointer<json_t>) -> JSONValue {
    switch toolhost_json_typeof(j) {
    case JSON_OBJECT:
      var object = JSONObject()
      var iter = json_object_iter(j)
      while let it = iter {
        let key = string(json_object_iter_key(it), json_object_iter_key_len(it))
        object[key] = value(json_object_iter_value(it))
        iter = json_object_iter_next(j, it)
      }
      return .object(object)
    case JSON_ARRAY:
      let n = json_array_size(j)
      var array: [JSONValue] = []
      array.reserveCapacity(n)
      for i in 0..<n { array.append(value(json_array_get(j, i))) }
      return .array(array)
    case JSON_STRING:
      return .string(string(json_string_value(j), json_string_length(j)))
    case JSON_INTEGER:
      return .integer(Int64(json_integer_value(j)))
    case JSON_REAL:
      return .real(json_real_value(j))
    case JSON_TRUE:
      return .bool(true)
    case JSON_FALSE:
      return .bool(false)
    default:
      return .null
    }
  }
}

/// A copy of JSON text in which every `\u0000` escape inside a string is replaced by the escape of a sentinel
/// character that occurs nowhere in the text, neither raw nor escaped; the copy has the same length.
///
/// jansson 2.14 rejects `\u0000` inside object keys ("NUL byte in object key not supported"), though RFC 8259 and
/// JSONTestSuite (`y_object_escaped_null_in_key`) accept it. The sentinel is a noncharacter (U+FDD0...U+FDEF) or
/// else a private-use character (U+E000...U+F8FF); ``JanssonReader`` turns it back into NUL.
struct NulEscapeSubstitution {
  /// The rewritten text.
  var bytes: [UInt8]
  /// The sentinel's UTF-8 bytes (three of them).
  var sentinel: [UInt8]
  /// The sentinel's four uppercase hex digits, as written into the escapes.
  var escapeDigits: String

  /// `nil` when every candidate sentinel already occurs in the text.
  init?(_ text: UnsafeRawBufferPointer) {
    let backslash = UInt8(ascii: "\\")
    let quote = UInt8(ascii: "\"")
    // Code points U+E000...U+FFFF that occur in the text, raw or as \uXXXX (anywhere: over-counting is harmless).
    var present = Set<UInt16>()
    var i = 0
    while i < text.count {
      let c = text[i]
      if c >= 0xEE, c <= 0xEF, i + 2 < text.count {
        present.insert(
          UInt16(c & 0x0F) << 12 | UInt16(text[i + 1] & 0x3F) << 6 | UInt16(text[i + 2] & 0x3F))
      } else if c == backslash, i + 5 < text.count, text[i + 1] == UInt8(ascii: "u"),
        let h = Self.hex(text, i + 2)
      {
        present.insert(h)
      }
      i += 1
    }
    let candidates = Array(UInt16(0xFDD0)...0xFDEF) + Array(UInt16(0xE000)...0xF8FF)
    guard let code = candidates.first(where: { !present.contains($0) }) else { return nil }
    sentinel = Array(String(Character(Unicode.Scalar(code)!)).utf8)
    let digits = Array(String(code, radix: 16, uppercase: true).utf8)
    escapeDigits = String(decoding: digits, as: UTF8.self)

    bytes = Array(text)
    var inString = false
    i = 0
    while i < bytes.count {
      let c = bytes[i]
      if !inString {
        if c == quote { inString = true }
        i += 1
      } else if c == quote {
        inString = false
        i += 1
      } else if c == backslash {
        if i + 5 < bytes.count, bytes[i + 1] == UInt8(ascii: "u"),
          bytes[(i + 2)...(i + 5)].allSatisfy({ $0 == 0x30 })
        {
          bytes.replaceSubrange((i + 2)...(i + 5), with: digits)
        }
        i += 2
      } else {
        i += 1
      }
    }
  }

  /// The value of four hex digits at `offset`, if they are hex digits.
  private static func hex(_ text: UnsafeRawBufferPointer, _ offset: Int) -> UInt16? {
    var v: UInt16 = 0
    for k in offset..<(offset + 4) {
      let c = text[k]
      let d: UInt8
      switch c {
      case 0x30...0x39: d = c - 0x30
      case 0x41...0x46: d = c - 0x41 + 10
      case 0x61...0x66: d = c - 0x61 + 10
      default: return nil
      }
      v = v << 4 | UInt16(d)
    }
    return v
  }

  /// `message` with each `\u` + `digits` written as `\u0000` again (jansson quotes the text it stopped near).
  static func restore(_ message: String, digits: String) -> String {
    let needle = Array(("\\u" + digits).utf8)
    var bytes = Array(message.utf8)
    var i = 0
    while i + needle.count <= bytes.count {
      if bytes[i..<(i + needle.count)].elementsEqual(needle) {
        bytes.replaceSubrange((i + 2)..<(i + 6), with: Array("0000".utf8))
        i += needle.count
      } else {
        i += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// Builds jansson trees from ``JSONValue``s.
struct JanssonWriter {
  var realCount = 0

  mutating func make(_ value: JSONValue, depth: Int) throws(JSONError) -> UnsafeMutablePointer<
    json_t
  > {
    switch value {
    case .object(let object):
      guard depth < JSONValue.maximumDepth else { throw Self.tooDeep }
      let j = json_object()!
      for (key, member) in object {
        let child: UnsafeMutablePointer<json_t>
        do { child = try make(member, depth: depth + 1) } catch {
          toolhost_json_decref(j)
          throw error
        }
        var key = key
        _ = key.withUTF8 { k in
          k.withMemoryRebound(to: CChar.self) {
            json_object_setn_new_nocheck(j, $0.baseAddress ?? emptyCString, $0.count, child)
          }
        }
      }
      return j
    case .array(let array):
      guard depth < JSONValue.maximumDepth else { throw Self.tooDeep }
      let j = json_array()!
      for element in array {
        let child: UnsafeMutablePointer<json_t>
        do { child = try make(element, depth: depth + 1) } catch {
          toolhost_json_decref(j)
          throw error
        }
        json_array_append_new(j, child)
      }
      return j
    case .string(var s):
      return s.withUTF8 { u in
        u.withMemoryRebound(to: CChar.self) {
          json_stringn_nocheck($0.baseAddress ?? emptyCString, $0.count)
        }
      }
    case .integer(let i):
      return json_integer(json_int_t(i))
    case .real(let d):
      guard d.isFinite, let j = json_real(d) else { return json_null() }
      realCount += 1
      return j
    case .bool(let b):
      return b ? json_true() : json_false()
    case .null:
      return json_null()
    }
  }

  static let tooDeep = JSONError(
    kind: .tooDeep, message: "nesting is deeper than \(JSONValue.maximumDepth) levels")
}

/// Rewrites the real-number literals of jansson's output (printed with 17 significant digits) as the shortest text
/// that reads back as the same `Double`.
enum ShortestReals {
  static func rewrite(_ input: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(input.count)
    var i = 0
    var inString = false
    while i < input.count {
      let c = input[i]
      if inString {
        out.append(c)
        if c == UInt8(ascii: "\\") {
          if i + 1 < input.count { out.append(input[i + 1]) }
          i += 2
          continue
        }
        if c == UInt8(ascii: "\"") { inString = false }
        i += 1
        continue
      }
      if c == UInt8(ascii: "\"") {
        inString = true
        out.append(c)
        i += 1
        continue
      }
      if c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) {
        var j = i
        var isReal = false
        while j < input.count {
          let d = input[j]
          if d == UInt8(ascii: ".") || d == UInt8(ascii: "e") || d == UInt8(ascii: "E") {
            isReal = true
          } else if !(d == UInt8(ascii: "-") || d == UInt8(ascii: "+")
            || (d >= UInt8(ascii: "0") && d <= UInt8(ascii: "9")))
          {
            break
          }
          j += 1
        }
        if isReal, let value = Double(String(decoding: input[i..<j], as: UTF8.self)) {
          out.append(contentsOf: shortest(value).utf8)
        } else {
          out.append(contentsOf: input[i..<j])
        }
        i = j
        continue
      }
      out.append(c)
      i += 1
    }
    return out
  }

  /// Swift's `description` of a finite `Double` has the fewest significant digits that round-trip, and always a `.`
  /// or an exponent (`3.0`, `1e-05`, `1e+16`), which is valid JSON; the exponent's `+` and leading zeros are dropped
  /// here (`1e-5`, `1e16`) so the text is the shortest.
  static func shortest(_ d: Double) -> String {
    let text = d.description
    guard let e = text.utf8.firstIndex(of: UInt8(ascii: "e")) else { return text }
    var exponent = text.utf8[text.utf8.index(after: e)...]
    var sign = ""
    if let first = exponent.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
      if first == UInt8(ascii: "-") { sign = "-" }
      exponent = exponent.dropFirst()
    }
    let digits = exponent.drop { $0 == UInt8(ascii: "0") }
    return String(text.utf8[..<e])! + "e" + sign + (digits.isEmpty ? "0" : String(digits)!)
  }
}
