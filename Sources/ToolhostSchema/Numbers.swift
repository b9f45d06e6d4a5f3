import ToolhostJSON

/// A schema limit (`minimum`, `maximum`, ...) kept exactly as written: a 64-bit integer or a double.
struct Limit: Sendable {
  enum Value: Sendable {
    case int(Int64)
    case double(Double)
  }

  let value: Value
  /// The limit as the schema wrote it, for messages.
  let text: String

  init?(_ json: JSONValue) {
    switch json {
    case .integer(let i): value = .int(i)
    case .real(let d) where d.isFinite: value = .double(d)
    default: return nil
    }
    text = json.serialized()
  }

  /// The sign of `instance - limit` (-1, 0 or 1), compared exactly; `nil` when the instance is not a number.
  @inline(__always)
  func compare(_ instance: JSONValue) -> Int? {
    switch (instance, value) {
    case (.integer(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
    case (.integer(let a), .double(let b)): return Self.compare(a, b)
    case (.real(let a), .int(let b)): return -Self.compare(b, a)
    case (.real(let a), .double(let b)): return a < b ? -1 : (a == b ? 0 : 1)
    default: return nil
    }
  }

  /// The sign of `i - d`, exact even where `Double(i)` would round.
  static func compare(_ i: Int64, _ d: Double) -> Int {
    if d.isNaN { return 0 }
    if d >= 9_223_372_036_854_775_808.0 { return -1 }
    if d < -9_223_372_036_854_775_808.0 { return 1 }
    let floor = d.rounded(.down)
    let f = Int64(floor)
    if i < f { return -1 }
    if i > f { return 1 }
    return d == floor ? 0 : -1
  }
}

/// A number as an exact decimal: `magnitude × 10^exponent`, sign dropped (it does not matter for `multipleOf`).
struct ExactDecimal: Sendable, Equatable {
  var magnitude: UInt64
  var exponent: Int

  /// The decimal an integer is.
  init(_ i: Int64) {
    magnitude = i.magnitude
    exponent = 0
    normalize()
  }

  /// The shortest decimal that reads back as `d`, which is what the JSON text said; `nil` for NaN and infinity.
  init?(_ d: Double) {
    guard d.isFinite else { return nil }
    if d == 0 {
      magnitude = 0
      exponent = 0
      return
    }
    // `description` is the shortest round-tripping text, with at most 17 significant digits:
    // "0.0075", "75.0", "1e-05", "1.2391239123e+18".
    var mantissa: UInt64 = 0
    var exponent = 0
    var afterPoint = false
    var exponentSign = 1
    var exponentValue = 0
    var inExponent = false
    for byte in d.description.utf8 {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"):
        let digit = Int(byte - UInt8(ascii: "0"))
        if inExponent {
          exponentValue = exponentValue * 10 + digit
        } else {
          mantissa = mantissa * 10 + UInt64(digit)
          if afterPoint { exponent -= 1 }
        }
      case UInt8(ascii: "."): afterPoint = true
      case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
      case UInt8(ascii: "-"): if inExponent { exponentSign = -1 }
      default: break
      }
    }
    magnitude = mantissa
    self.exponent = exponent + exponentSign * exponentValue
    normalize()
  }

  private mutating func normalize() {
    guard magnitude != 0 else {
      exponent = 0
      return
    }
    while magnitude % 10 == 0 {
      magnitude /= 10
      exponent += 1
    }
  }

  /// Whether `self` is an integer multiple of `divisor` (which must not be zero), exactly.
  func isMultiple(of divisor: ExactDecimal) -> Bool {
    if magnitude == 0 { return true }
    let shift = exponent - divisor.exponent
    if shift >= 0 {
      // self / divisor = magnitude × 10^shift / divisor.magnitude: test the remainder modulo the divisor.
      let m = divisor.magnitude
      return Self.mulmod(magnitude % m, Self.powmod(10, shift, m), m) == 0
    }
    // self / divisor = magnitude / (divisor.magnitude × 10^-shift).
    var d = divisor.magnitude
    for _ in 0 ..< -shift {
      let (product, overflow) = d.multipliedReportingOverflow(by: 10)
      if overflow { return false }  // larger than any magnitude, which is not zero
      d = product
    }
    return magnitude % d == 0
  }

  private static func mulmod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 {
    let (high, low) = a.multipliedFullWidth(by: b)
    return m.dividingFullWidth((high % m, low)).remainder
  }

  private static func powmod(_ base: UInt64, _ exponent: Int, _ m: UInt64) -> UInt64 {
    if m == 1 { return 0 }
    var result: UInt64 = 1
    var b = base % m
    var e = exponent
    while e > 0 {
      if e & 1 == 1 { result = mulmod(result, b, m) }
      b = mulmod(b, b, m)
      e >>= 1
    }
    return result
  }
}

/// A `multipleOf` divisor, with an integer fast path.
struct Divisor: Sendable {
  /// The divisor when it is a whole number that fits in 64 bits.
  let integer: UInt64?
  let decimal: ExactDecimal
  let text: String

  init?(_ json: JSONValue) {
    guard let d = json.doubleValue, d > 0, d.isFinite else { return nil }
    if case .integer(let i) = json {
      integer = i.magnitude
      decimal = ExactDecimal(i)
    } else {
      guard let dec = ExactDecimal(d) else { return nil }
      integer = json.integerValue.map(\.magnitude)
      decimal = dec
    }
    text = json.serialized()
  }

  /// Whether a number is a multiple of this divisor; `true` for non-numbers (the keyword does not apply).
  func divides(_ instance: JSONValue) -> Bool {
    switch instance {
    case .integer(let i):
      if let integer { return i.magnitude % integer == 0 }
      return ExactDecimal(i).isMultiple(of: decimal)
    case .real(let d):
      if let integer, let i = instance.integerValue { return i.magnitude % integer == 0 }
      guard let dec = ExactDecimal(d) else { return false }
      return dec.isMultiple(of: decimal)
    default:
      return true
    }
  }
}
