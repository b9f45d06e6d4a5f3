/// Decodes `Decodable` Swift values straight from a ``JSONValue``, without printing and re-parsing text.
///
/// Integers are range-checked for the target type; a real with no fractional part decodes as an integer, and an
/// integer decodes as `Double` or `Float`. Strings, booleans and numbers are never converted into one another.
/// Types decode through their own `Decodable` conformance: a Foundation `Date` reads the number of seconds since
/// 2001-01-01 (`JSONDecoder`'s default strategy), `Data` an array of bytes.
public struct JSONValueDecoder: Sendable {
  /// Values handed to the types being decoded as `Decoder.userInfo`.
  public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

  /// A decoder with empty `userInfo`.
  public init() {}

  /// Decodes a value of type `T` from `value`.
  ///
  /// - Throws: `DecodingError.typeMismatch` when a value has the wrong JSON type, `.valueNotFound` for `null` (or a
  ///   missing array element) where a value is required, `.keyNotFound` for a missing object member, and
  ///   `.dataCorrupted` for a number that does not fit the target type; each with the coding path to the value.
  ///   Errors thrown by `T`'s own `init(from:)` propagate unchanged.
  public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    try ValueDecoder(value: value, codingPath: [], userInfo: userInfo.mapValues { $0 as Any })
      .unbox(value, as: type)
  }
}

extension JSONValue {
  /// Decodes a value of type `T` from this JSON value with a default ``JSONValueDecoder``.
  ///
  /// - Throws: `DecodingError` as ``JSONValueDecoder/decode(_:from:)`` does.
  public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
    try JSONValueDecoder().decode(type, from: self)
  }
}

extension JSONValue: Decodable {
  /// Reads a JSON value from any decoder.
  ///
  /// From a ``JSONValueDecoder`` the value is taken over as it is, so integers and reals keep their kind. From
  /// another decoder (Foundation's `JSONDecoder`, for instance) it is reconstructed as well as that decoder allows:
  /// `null`, then a boolean, an integer that fits `Int64`, a `Double`, a string, an object, an array. Such a decoder
  /// may report `3.0` as the integer `3` and may not keep the order of object keys.
  /// - Throws: `DecodingError.dataCorrupted` when the foreign decoder offers none of those shapes, or whatever it
  ///   throws while reading a nested value.
  public init(from decoder: any Decoder) throws {
    if let ours = decoder as? ValueDecoder {
      self = ours.value
      return
    }
    if let single = try? decoder.singleValueContainer() {
      if single.decodeNil() {
        self = .null
        return
      }
      if let b = try? single.decode(Bool.self) {
        self = .bool(b)
        return
      }
      if let i = try? single.decode(Int64.self) {
        self = .integer(i)
        return
      }
      if let d = try? single.decode(Double.self) {
        self = .real(d)
        return
      }
      if let s = try? single.decode(String.self) {
        self = .string(s)
        return
      }
    }
    if let keyed = try? decoder.container(keyedBy: JSONCodingKey.self) {
      var object = JSONObject()
      for key in keyed.allKeys {
        object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key)
      }
      self = .object(object)
      return
    }
    if var unkeyed = try? decoder.unkeyedContainer() {
      var array: [JSONValue] = []
      if let n = unkeyed.count { array.reserveCapacity(n) }
      while !unkeyed.isAtEnd { array.append(try unkeyed.decode(JSONValue.self)) }
      self = .array(array)
      return
    }
    throw DecodingError.dataCorrupted(
      .init(
        codingPath: decoder.codingPath,
        debugDescription: "The decoder offers no value that JSON can represent."))
  }
}

/// A coding key for object members read by name and array elements read by position.
struct JSONCodingKey: CodingKey {
  var stringValue: String
  var intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
    self.intValue = nil
  }

  init(intValue: Int) {
    self.stringValue = "Index \(intValue)"
    self.intValue = intValue
  }

  /// The key `superDecoder()` and `superEncoder()` use.
  static let `super` = JSONCodingKey(stringValue: "super")
}

// MARK: - The decoder

/// The `Decoder` for one value at one coding path; it is also that value's single-value container.
struct ValueDecoder: Decoder, SingleValueDecodingContainer {
  let value: JSONValue
  let codingPath: [any CodingKey]
  let userInfo: [CodingUserInfoKey: Any]

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let object) = value else {
      throw Self.wrongType([String: JSONValue].self, value, codingPath)
    }
    return KeyedDecodingContainer(KeyedValueDecoding<Key>(object: object, decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let array) = value else {
      throw Self.wrongType([JSONValue].self, value, codingPath)
    }
    return UnkeyedValueDecoding(array: array, decoder: self)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  // SingleValueDecodingContainer

  func decodeNil() -> Bool { value.isNull }
  func decode(_ type: Bool.Type) throws -> Bool { try Self.bool(value, codingPath) }
  func decode(_ type: String.Type) throws -> String { try Self.string(value, codingPath) }
  func decode(_ type: Double.Type) throws -> Double { try Self.float(value, type, codingPath) }
  func decode(_ type: Float.Type) throws -> Float { try Self.float(value, type, codingPath) }
  func decode(_ type: Int.Type) throws -> Int { try Self.integer(value, type, codingPath) }
  func decode(_ type: Int8.Type) throws -> Int8 { try Self.integer(value, type, codingPath) }
  func decode(_ type: Int16.Type) throws -> Int16 { try Self.integer(value, type, codingPath) }
  func decode(_ type: Int32.Type) throws -> Int32 { try Self.integer(value, type, codingPath) }
  func decode(_ type: Int64.Type) throws -> Int64 { try Self.integer(value, type, codingPath) }
  @available(macOS 15.0, *)
  func decode(_ type: Int128.Type) throws -> Int128 { try Self.integer(value, type, codingPath) }
  func decode(_ type: UInt.Type) throws -> UInt { try Self.integer(value, type, codingPath) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try Self.integer(value, type, codingPath) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try Self.integer(value, type, codingPath) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try Self.integer(value, type, codingPath) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try Self.integer(value, type, codingPath) }
  @available(macOS 15.0, *)
  func decode(_ type: UInt128.Type) throws -> UInt128 { try Self.integer(value, type, codingPath) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type) }

  // Unboxing

  /// Decodes `T` from `value`, which sits at `codingPath`; a ``JSONValue`` is passed through as it is.
  func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type) throws -> T {
    if T.self == JSONValue.self { return value as! T }
    return try T(from: ValueDecoder(value: value, codingPath: codingPath, userInfo: userInfo))
  }

  /// A decoder for the child at `key`.
  func child(_ value: JSONValue, at key: any CodingKey) -> ValueDecoder {
    ValueDecoder(value: value, codingPath: codingPath + [key], userInfo: userInfo)
  }

  static func bool(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
    guard case .bool(let b) = value else { throw wrongType(Bool.self, value, path()) }
    return b
  }

  static func string(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws
    -> String
  {
    guard case .string(let s) = value else { throw wrongType(String.self, value, path()) }
    return s
  }

  static func integer<T: FixedWidthInteger>(
    _ value: JSONValue, _ type: T.Type, _ path: @autoclosure () -> [any CodingKey]
  ) throws -> T {
    switch value {
    case .integer(let i):
      guard let n = T(exactly: i) else { throw outOfRange(type, value, path()) }
      return n
    case .real(let d):
      guard d.isFinite, let n = T(exactly: d) else { throw outOfRange(type, value, path()) }
      return n
    default:
      throw wrongType(type, value, path())
    }
  }

  static func float<T: BinaryFloatingPoint>(
    _ value: JSONValue, _ type: T.Type, _ path: @autoclosure () -> [any CodingKey]
  ) throws -> T {
    switch value {
    case .integer(let i):
      return T(i)
    case .real(let d):
      let f = T(d)
      if d.isFinite && !f.isFinite { throw outOfRange(type, value, path()) }
      return f
    default:
      throw wrongType(type, value, path())
    }
  }

  /// `valueNotFound` for `null`, `typeMismatch` for anything else.
  static func wrongType(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey])
    -> DecodingError
  {
    if value.isNull {
      return .valueNotFound(
        type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null."))
    }
    return .typeMismatch(
      type,
      .init(
        codingPath: path,
        debugDescription: "Expected \(type) value but found \(describe(value)) instead."))
  }

  static func outOfRange(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey])
    -> DecodingError
  {
    .dataCorrupted(
      .init(
        codingPath: path,
        debugDescription: "The number \(value.serialized()) does not fit in \(type)."))
  }

  static func describe(_ value: JSONValue) -> String {
    switch value {
    case .object: "an object"
    case .array: "an array"
    case .string: "a string"
    case .integer(let i): "the integer \(i)"
    case .real(let d): "the number \(d)"
    case .bool(let b): "\(b)"
    case .null: "null"
    }
  }
}

// MARK: - Containers

/// Reads the members of a JSON object by key.
struct KeyedValueDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let object: JSONObject
  let decoder: ValueDecoder

  var codingPath: [any CodingKey] { decoder.codingPath }
  var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

  func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

  /// The member at `key`, or `keyNotFound`.
  private func member(_ key: Key) throws -> JSONValue {
    guard let value = object[key.stringValue] else {
      throw DecodingError.keyNotFound(
        key,
        .init(codingPath: codingPath, debugDescription: "No value for key \"\(key.stringValue)\"."))
    }
    return value
  }

  func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try ValueDecoder.bool(member(key), codingPath + [key])
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try ValueDecoder.string(member(key), codingPath + [key])
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try float(type, key) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try float(type, key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
  @available(macOS 15.0, *)
  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(type, key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }
  @available(macOS 15.0, *)
  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(type, key) }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    let value = try member(key)
    if T.self == JSONValue.self { return value as! T }
    return try T(from: decoder.child(value, at: key))
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try decoder.child(member(key), at: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder.child(member(key), at: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder.child(object[JSONCodingKey.super.stringValue] ?? .null, at: JSONCodingKey.super)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.child(object[key.stringValue] ?? .null, at: key)
  }

  private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
    try ValueDecoder.integer(member(key), type, codingPath + [key])
  }

  private func float<T: BinaryFloatingPoint>(_ type: T.Type, _ key: Key) throws -> T {
    try ValueDecoder.float(member(key), type, codingPath + [key])
  }
}

/// Reads the elements of a JSON array in order.
struct UnkeyedValueDecoding: UnkeyedDecodingContainer {
  let array: [JSONValue]
  let decoder: ValueDecoder
  private(set) var currentIndex = 0

  init(array: [JSONValue], decoder: ValueDecoder) {
    self.array = array
    self.decoder = decoder
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { array.count }
  var isAtEnd: Bool { currentIndex >= array.count }

  private var indexKey: JSONCodingKey { JSONCodingKey(intValue: currentIndex) }

  /// The next element (without moving past it), or `valueNotFound` at the end.
  private func peek(_ type: Any.Type) throws -> JSONValue {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type,
        .init(
          codingPath: codingPath + [indexKey], debugDescription: "The array has no more elements."))
    }
    return array[currentIndex]
  }

  mutating func decodeNil() throws -> Bool {
    guard try peek(JSONValue.self).isNull else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    let b = try ValueDecoder.bool(peek(type), codingPath + [indexKey])
    currentIndex += 1
    return b
  }

  mutating func decode(_ type: String.Type) throws -> String {
    let s = try ValueDecoder.string(peek(type), codingPath + [indexKey])
    currentIndex += 1
    return s
  }

  mutating func decode(_ type: Double.Type) throws -> Double { try float(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try float(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
  @available(macOS 15.0, *)
  mutating func decode(_ type: Int128.Type) throws -> Int128 { try integer(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
  @available(macOS 15.0, *)
  mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(type) }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let value = try peek(type)
    let result: T
    if T.self == JSONValue.self {
      result = value as! T
    } else {
      result = try T(from: decoder.child(value, at: indexKey))
    }
    currentIndex += 1
    return result
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let container = try decoder.child(peek(JSONObject.self), at: indexKey).container(keyedBy: type)
    currentIndex += 1
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let container = try decoder.child(peek([JSONValue].self), at: indexKey).unkeyedContainer()
    currentIndex += 1
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let sub = try decoder.child(peek(JSONValue.self), at: indexKey)
    currentIndex += 1
    return sub
  }

  private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    let n = try ValueDecoder.integer(peek(type), type, codingPath + [indexKey])
    currentIndex += 1
    return n
  }

  private mutating func float<T: BinaryFloatingPoint>(_ type: T.Type) throws -> T {
    let f = try ValueDecoder.float(peek(type), type, codingPath + [indexKey])
    currentIndex += 1
    return f
  }
}
