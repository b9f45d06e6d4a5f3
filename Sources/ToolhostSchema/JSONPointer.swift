public import ToolhostJSON

/// JSON Pointer (RFC 6901) helpers: the `instanceLocation` of a ``ValidationIssue`` and the `schemaLocation` of a
/// ``SchemaError`` are pointers built with these.
///
/// A pointer is `""` for the whole document, else `/`-separated reference tokens in which `~` is written `~0` and
/// `/` is written `~1`. Nothing here throws.
public enum JSONPointer {
  /// Escapes one reference token: `~` becomes `~0`, then `/` becomes `~1`.
  ///
  /// Does not throw; any string is a valid token.
  public static func escape(_ token: String) -> String {
    guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
      return token
    }
    var out = ""
    out.reserveCapacity(token.utf8.count + 2)
    for scalar in token.unicodeScalars {
      switch scalar {
      case "~": out += "~0"
      case "/": out += "~1"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// Unescapes one reference token: `~1` becomes `/` and `~0` becomes `~`.
  ///
  /// Returns `nil` when a `~` is not followed by `0` or `1`; does not throw.
  public static func unescape(_ token: String) -> String? {
    guard token.utf8.contains(UInt8(ascii: "~")) else { return token }
    var out = ""
    var tilde = false
    for scalar in token.unicodeScalars {
      if tilde {
        switch scalar {
        case "0": out += "~"
        case "1": out += "/"
        default: return nil
        }
        tilde = false
      } else if scalar == "~" {
        tilde = true
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return tilde ? nil : out
  }

  /// The pointer made of these unescaped tokens: `["a/b", "0"]` gives `/a~1b/0`, no tokens give `""`.
  ///
  /// Does not throw.
  public static func pointer(_ tokens: some Sequence<String>) -> String {
    var out = ""
    for token in tokens {
      out += "/"
      out += escape(token)
    }
    return out
  }

  /// `pointer` with one more token appended: `appending("a/b", to: "/x")` gives `/x/a~1b`.
  ///
  /// Does not throw.
  public static func appending(_ token: String, to pointer: String) -> String {
    pointer + "/" + escape(token)
  }

  /// The unescaped tokens of a pointer: `/a~1b/0` gives `["a/b", "0"]`, `""` gives `[]`.
  ///
  /// Returns `nil` for text that is not a pointer (it does not start with `/`, or has a bad `~` escape); does not
  /// throw.
  public static func tokens(_ pointer: String) -> [String]? {
    if pointer.isEmpty { return [] }
    guard pointer.utf8.first == UInt8(ascii: "/") else { return nil }
    var result: [String] = []
    for raw in pointer.utf8.dropFirst().split(
      separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    {
      guard let token = unescape(String(decoding: raw, as: UTF8.self)) else { return nil }
      result.append(token)
    }
    return result
  }

  /// The value that `pointer` designates inside `document`.
  ///
  /// Returns `nil` when the pointer is malformed or designates nothing (a missing member, an array index that is out
  /// of range, has a leading zero or is not a number); does not throw.
  public static func resolve(_ pointer: String, in document: JSONValue) -> JSONValue? {
    guard let tokens = tokens(pointer) else { return nil }
    var current = document
    for token in tokens {
      switch current {
      case .object(let object):
        guard let next = object[token] else { return nil }
        current = next
      case .array(let array):
        guard let index = arrayIndex(token), index < array.count else { return nil }
        current = array[index]
      default:
        return nil
      }
    }
    return current
  }

  /// The array index a token spells: decimal digits without a leading zero (except `0` itself).
  static func arrayIndex(_ token: String) -> Int? {
    let utf8 = token.utf8
    guard let first = utf8.first,
      utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
      first != UInt8(ascii: "0") || utf8.count == 1
    else { return nil }
    return Int(token)
  }
}
