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
