#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A JSON value: object (keys in insertion order), array, string, integer, real, bool or null.
///
/// Integers and reals are distinct cases, so `3` and `3.0` round-trip as written. Integers are 64-bit.
/// Values are parsed with ``JSONValue/parse(_:)-(String)`` and printed with ``JSONValue/serialized(_:)``,
/// both through jansson.
public enum JSONValue: Sendable, Hashable {
  /// A JSON object; keys keep the order in which they were inserted or parsed.
  case object(JSONObject)
  /// A JSON array.
  case array([JSONValue])
  /// A JSON string.
  case string(String)
  /// A JSON number written without fraction or exponent that fits in 64 bits.
  case integer(Int64)
  /// A JSON number written with a fraction or exponent.
  case real(Double)
  /// `true` or `false`.
  case bool(Bool)
  /// `null`.
  case null
}

extension JSONValue {
  /// The JSON type name of this value as JSON Schema spells it (`object`, `array`, `string`, `integer`, `number`,
  /// `boolean`, `null`).
  ///
  /// A real with no fractional part is still a `number` here; schema validation treats it as an integer where the
  /// specification says so.
  public var typeName: String {
    switch self {
    case .object: "object"
    case .array: "array"
    case .string: "string"
    case .integer: "integer"
    case .real: "number"
    case .bool: "boolean"
    case .null: "null"
    }
  }

  /// The object, when this value is one.
  public var objectValue: JSONObject? {
    if case .object(let o) = self { return o }
    return nil
  }

  /// The array, when this value is one.
  public var arrayValue: [JSONValue]? {
    if case .array(let a) = self { return a }
    return nil
  }

  /// The string, when this value is one.
  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }

  /// The boolean, when this value is one.
  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  /// The integer, when this value is an integer or a real with no fractional part that fits in 64 bits.
  public var integerValue: Int64? {
    switch self {
    case .integer(let i): return i
    case .real(let d):
      guard d.isFinite, d.rounded() == d, d >= -9.223_372_036_854_775_808e18, d < 9.223_372_036_854_775_808e18
      else { return nil }
      return Int64(d)
    default: return nil
    }
  }

  /// The number as a `Double`, when this value is an integer or a real.
  public var doubleValue: Double? {
    switch self {
    case .integer(let i): Double(i)
    case .real(let d): d
    default: nil
    }
  }

  /// Whether this value is `null`.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// The member `key` of an object; `nil` for a missing key or a value that is not an object.
  public subscript(key: String) -> JSONValue? {
    objectValue?[key]
  }

  /// The element at `index` of an array; `nil` when out of range or not an array.
  public subscript(index: Int) -> JSONValue? {
    guard case .array(let a) = self, a.indices.contains(index) else { return nil }
    return a[index]
  }

  /// Whether two values are equal as JSON Schema compares them: numbers by value (`1 == 1.0`), objects without
  /// regard to key order, arrays element by element.
  public func jsonEquals(_ other: JSONValue) -> Bool {
    switch (self, other) {
    case (.integer(let a), .integer(let b)): return a == b
    case (.integer, .real), (.real, .integer), (.real, .real):
      if let a = integerValue, let b = other.integerValue { return a == b }
      return doubleValue == other.doubleValue
    case (.string(let a), .string(let b)): return a == b
    case (.bool(let a), .bool(let b)): return a == b
    case (.null, .null): return true
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.jsonEquals($1) }
    case (.object(let a), .object(let b)):
      guard a.count == b.count else { return false }
      for (k, v) in a {
        guard let w = b[k], v.jsonEquals(w) else { return false }
      }
      return true
    default: return false
    }
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  /// A string value.
  public init(stringLiteral value: String) { self = .string(value) }
  /// An integer value.
  public init(integerLiteral value: Int64) { self = .integer(value) }
  /// A real value.
  public init(floatLiteral value: Double) { self = .real(value) }
  /// A boolean value.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// `null`.
  public init(nilLiteral: ()) { self = .null }
  /// An array value.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  /// An object value whose keys keep the literal's order; a repeated key keeps its last value.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    var o = JSONObject()
    for (k, v) in elements { o[k] = v }
    self = .object(o)
  }
}

extension JSONValue: CustomStringConvertible {
  /// The value as compact JSON text.
  public var description: String { serialized() }
}

/// A JSON object whose keys keep their insertion order and are unique.
///
/// Setting an existing key replaces its value in place; removing a key keeps the order of the others. Keys are told
/// apart by their code points, as JSON does: `"é"` (U+00E9) and `"e\u{301}"` are two keys, although Swift's `==`
/// calls the two strings equal.
public struct JSONObject: Sendable, Hashable, Sequence {
  private var keyList: [String] = []
  private var values: [ExactKey: JSONValue] = [:]

  /// An empty object.
  public init() {}

  /// An object with these members in this order; a repeated key keeps its last value at its first position.
  public init(_ members: some Sequence<(String, JSONValue)>) {
    for (k, v) in members { self[k] = v }
  }

  /// The number of members.
  public var count: Int { keyList.count }
  /// Whether the object has no members.
  public var isEmpty: Bool { keyList.isEmpty }
  /// The keys in order.
  public var keys: [String] { keyList }

  /// The value for `key`; assigning `nil` removes the member.
  public subscript(key: String) -> JSONValue? {
    get { values[ExactKey(key)] }
    set {
      if let newValue {
        if values.updateValue(newValue, forKey: ExactKey(key)) == nil { keyList.append(key) }
      } else if values.removeValue(forKey: ExactKey(key)) != nil {
        keyList.removeAll { ExactKey($0) == ExactKey(key) }
      }
    }
  }

  /// Iterates the members in key order.
  public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
    var i = 0
    let keys = keyList
    let values = values
    return AnyIterator {
      guard i < keys.count else { return nil }
      defer { i += 1 }
      return (keys[i], values[ExactKey(keys[i])]!)
    }
  }

  /// Two objects are equal when they have the same members in the same order.
  public static func == (a: JSONObject, b: JSONObject) -> Bool {
    a.keyList.count == b.keyList.count
      && zip(a.keyList, b.keyList).allSatisfy { ExactKey($0) == ExactKey($1) } && a.values == b.values
  }

  /// Hashes the members in order.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(keyList.count)
    for k in keyList {
      let key = ExactKey(k)
      hasher.combine(key)
      hasher.combine(values[key])
    }
  }
}

/// A member name compared and hashed by its UTF-8 bytes (its code points), not by canonical equivalence.
struct ExactKey: Hashable, Sendable {
  let text: String

  @inline(__always)
  init(_ text: String) {
    self.text = text
  }

  @inline(__always)
  static func == (a: ExactKey, b: ExactKey) -> Bool {
    let x = a.text.utf8
    let y = b.text.utf8
    guard x.count == y.count else { return false }
    let fast = x.withContiguousStorageIfAvailable { p in
      y.withContiguousStorageIfAvailable { q in
        p.count == 0 || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0
      }
    }
    if let fast, let result = fast { return result }
    return x.elementsEqual(y)
  }

  @inline(__always)
  func hash(into hasher: inout Hasher) {
    let done: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    if done == nil { Array(text.utf8).withUnsafeBytes { hasher.combine(bytes: $0) } }
  }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
  /// An object whose keys keep the literal's order.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self.init(elements.map { ($0.0, $0.1) })
  }
}
