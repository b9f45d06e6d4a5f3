import ToolhostJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Equality as JSON Schema defines it for `const`, `enum` and `uniqueItems`: numbers by exact value (`1 == 1.0`),
/// strings by their code points (not by Unicode canonical equivalence, which Swift's `==` uses), arrays element by
/// element, objects without regard to member order.
///
/// Object keys are matched by ``JSONObject``'s own lookup, which also compares code points.
enum Equality {
  static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.string(let x), .string(let y)): return sameScalars(x, y)
    case (.integer(let x), .integer(let y)): return x == y
    case (.integer(let x), .real(let y)): return Limit.compare(x, y) == 0 && !y.isNaN
    case (.real(let x), .integer(let y)): return Limit.compare(y, x) == 0 && !x.isNaN
    case (.real(let x), .real(let y)): return x == y
    case (.bool(let x), .bool(let y)): return x == y
    case (.null, .null): return true
    case (.array(let x), .array(let y)):
      guard x.count == y.count else { return false }
      for i in x.indices where !equal(x[i], y[i]) { return false }
      return true
    case (.object(let x), .object(let y)):
      guard x.count == y.count else { return false }
      for key in x.keys {
        guard let other = y[key], equal(x[key]!, other) else { return false }
      }
      return true
    default:
      return false
    }
  }

  /// Whether two strings have the same code points (the same UTF-8 bytes).
  @inline(__always)
  static func sameScalars(_ x: String, _ y: String) -> Bool {
    guard x.utf8.count == y.utf8.count else { return false }
    let fast = x.utf8.withContiguousStorageIfAvailable { a in
      y.utf8.withContiguousStorageIfAvailable { b in
        a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
      }
    }
    if let fast, let result = fast { return result }
    return x.utf8.elementsEqual(y.utf8)
  }
}
