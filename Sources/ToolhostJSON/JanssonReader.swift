// The reading side of the jansson bridge: jansson trees converted into `JSONValue`s, and the substitution that lets
// jansson parse `\u0000` escapes in object keys.

import CJansson

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
