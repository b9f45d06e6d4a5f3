import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

/// Reading generated values for the known-difference predicates.
enum Inspect {
  /// The values of `keyword` in every schema object of `schema` (`const`, `enum`, `default` and `examples` values are
  /// data and are not searched).
  static func schemaValues(of keyword: String, in schema: JSONValue) -> [JSONValue] {
    SchemaIndex.subschemaPaths(schema).compactMap { SchemaIndex.value(at: $0, in: schema)?[keyword] }
  }

  /// Every `pattern` and `patternProperties` key of a schema.
  static func patterns(in schema: JSONValue) -> [String] {
    schemaValues(of: "pattern", in: schema).compactMap(\.stringValue)
      + schemaValues(of: "patternProperties", in: schema).flatMap { $0.objectValue?.keys ?? [] }
  }

  /// Whether a pattern ends with an unescaped `$`.
  static func endsWithDollar(_ pattern: String) -> Bool {
    pattern.hasSuffix("$") && !pattern.hasSuffix("\\$")
  }

  /// Whether a pattern has a `.` that matches any character: neither escaped nor in a character class.
  static func hasWildcardDot(_ pattern: String) -> Bool {
    var escaped = false
    var inClass = false
    for character in pattern {
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if inClass {
        if character == "]" { inClass = false }
      } else if character == "[" {
        inClass = true
      } else if character == "." {
        return true
      }
    }
    return false
  }

  /// Every string in a value, member names included.
  static func strings(in value: JSONValue) -> [String] {
    switch value {
    case .string(let s): [s]
    case .array(let a): a.flatMap(strings)
    case .object(let o): o.keys + o.flatMap { strings(in: $0.value) }
    default: []
    }
  }

  /// Every number in a value.
  static func numbers(in value: JSONValue) -> [JSONValue] {
    switch value {
    case .integer, .real: [value]
    case .array(let a): a.flatMap(numbers)
    case .object(let o): o.flatMap { numbers(in: $0.value) }
    default: []
    }
  }

  /// Every array in a value, outermost first.
  static func arrays(in value: JSONValue) -> [[JSONValue]] {
    switch value {
    case .array(let a): [a] + a.flatMap(arrays)
    case .object(let o): o.flatMap { arrays(in: $0.value) }
    default: []
    }
  }

  /// The value at a JSON Pointer (unescaped tokens, no percent-encoding).
  static func value(at pointer: String, in root: JSONValue) -> JSONValue? {
    var value: JSONValue? = root
    for token in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
      let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
      if case .array = value, let i = Int(key) { value = value?[i] } else { value = value?[key] }
    }
    return value
  }

  /// Equality as JSON Schema defines it, written here independently of the validator.
  static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return x == y
    case (.integer, .real), (.real, .integer), (.real, .real): return a.doubleValue == b.doubleValue
    case (.string(let x), .string(let y)): return Array(x.unicodeScalars) == Array(y.unicodeScalars)
    case (.bool(let x), .bool(let y)): return x == y
    case (.null, .null): return true
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(equal)
    case (.object(let x), .object(let y)):
      return x.count == y.count && x.allSatisfy { member in y[member.key].map { equal(member.value, $0) } ?? false }
    default: return false
    }
  }

  /// Python's `==` on the decoded values, where `True == 1` and `False == 0` (used by its sort).
  static func pythonEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    func numeric(_ v: JSONValue) -> JSONValue {
      if case .bool(let flag) = v { return .integer(flag ? 1 : 0) }
      return v
    }
    switch (numeric(a), numeric(b)) {
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(pythonEqual)
    case (.object(let x), .object(let y)):
      return x.count == y.count
        && x.allSatisfy { member in y[member.key].map { pythonEqual(member.value, $0) } ?? false }
    case (let x, let y): return equal(x, y)
    }
  }

  /// What python-jsonschema computes for a float divisor: `int(x / d) == x / d` in binary floating point, and when
  /// the quotient overflows, `Fraction(x) / Fraction(d)`, exact on the binary values (0.1 is not one tenth there).
  static func pythonFloatMultiple(_ x: JSONValue, of d: Double) -> Bool {
    guard let value = x.doubleValue else { return true }
    let quotient = value / d
    if quotient.isFinite { return quotient.rounded(.towardZero) == quotient }
    let numerator: (UInt64, Int)?
    switch x {
    case .integer(let i): numerator = i == 0 ? nil : oddTimesPowerOfTwo(i.magnitude, 0)
    case .real(let r): numerator = binary(r)
    default: numerator = nil
    }
    guard let (xm, xe) = numerator else { return true }  // zero is a multiple of anything
    guard let (dm, de) = binary(d) else { return false }
    // x / d = (xm / dm) × 2^(xe - de) with xm and dm odd: an integer when dm divides xm and the power is not negative.
    return xm % dm == 0 && xe >= de
  }

  /// A finite, non-zero, normal double as an odd integer times a power of two.
  static func binary(_ d: Double) -> (UInt64, Int)? {
    guard d.isNormal else { return nil }
    return oddTimesPowerOfTwo(d.significandBitPattern | (1 << 52), Int(d.exponent) - 52)
  }

  /// `m × 2^e` with the factors of two moved from `m` (non-zero) into `e`.
  static func oddTimesPowerOfTwo(_ m: UInt64, _ e: Int) -> (UInt64, Int) {
    let zeros = m.trailingZeroBitCount
    return (m >> zeros, e + zeros)
  }

  /// Whether `x` is an integer multiple of `d`, in exact decimal arithmetic on the shortest texts of both numbers;
  /// `nil` when a text has more digits than this small check reads.
  static func exactlyMultiple(_ x: JSONValue, of d: Double) -> Bool? {
    let text: String
    switch x {
    case .integer(let i): text = String(i)
    case .real(let r): text = "\(r)"
    default: return nil
    }
    guard let (xm, xe) = decimal(text), let (dm, de) = decimal("\(d)"), dm != 0 else { return nil }
    // x / d = (xm / dm) × 10^(xe - de): an integer when dm divides xm × 10^(xe - de), or when dm × 10^(de - xe)
    // divides xm.
    if xe >= de {
      // The remainder of xm × 10^(xe - de) modulo dm, one factor of ten at a time.
      var remainder = xm.magnitude % dm.magnitude
      for _ in 0..<(xe - de) {
        remainder = dm.magnitude.dividingFullWidth(remainder.multipliedFullWidth(by: 10)).remainder
      }
      return remainder == 0
    }
    var denominator = dm.magnitude
    for _ in 0..<(de - xe) {
      let (product, overflow) = denominator.multipliedReportingOverflow(by: 10)
      if overflow { return xm == 0 }  // larger than any non-zero xm
      denominator = product
    }
    return xm.magnitude % denominator == 0
  }

  /// A decimal text (`-12.5`, `1e-05`, `3.0`) as mantissa × 10^exponent.
  static func decimal(_ text: String) -> (Int64, Int)? {
    let parts = text.lowercased().split(separator: "e", maxSplits: 1)
    guard let number = parts.first else { return nil }
    var exponent = parts.count > 1 ? (Int(parts[1]) ?? 0) : 0
    var digits = ""
    var seenPoint = false
    for character in number {
      if character == "." {
        seenPoint = true
      } else if character.isNumber {
        digits.append(character)
        if seenPoint { exponent -= 1 }
      } else if character != "-" && character != "+" {
        return nil
      }
    }
    guard let mantissa = Int64(digits) else { return nil }
    return (number.hasPrefix("-") ? -mantissa : mantissa, exponent)
  }
}

/// Runs differential.py (found from this file's path) with python3 from PATH, once for all pairs.
enum PythonPeer {
  /// How a run ended.
  enum Result: Sendable {
    /// One answer line per pair.
    case answered([String])
    /// python3 or the pinned jsonschema is missing.
    case unavailable(String)
    case failed(String)
  }

  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Differential/differential.py").path

  /// Runs the script on `pairs` (a JSON Lines file); kills it after `timeout` seconds. Blocks: call it from a thread
  /// of its own, not from the cooperative pool.
  static func run(pairs: String, timeout: Double) -> Result {
    guard let python = TestPackage.which("python3") else { return .unavailable("python3 is not on PATH") }
    let output: Subprocess.Output
    do {
      output = try Subprocess.run(
        executable: URL(fileURLWithPath: python), arguments: [script, pairs], timeout: timeout)
    } catch {
      return .unavailable("cannot run \(python): \(error)")
    }
    if output.timedOut { return .failed("no answer within \(Int(timeout)) s; killed") }
    switch output.status {
    case 0:
      return .answered(
        output.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init))
    case 3:
      return .unavailable(output.stderrText.trimmingCharacters(in: .whitespacesAndNewlines))
    default:
      return .failed("exit status \(output.status): \(output.stderrText.suffix(2000))")
    }
  }
}
