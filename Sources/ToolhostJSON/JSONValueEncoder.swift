/// Encodes `Encodable` Swift values straight into a ``JSONValue``, without printing and re-parsing text.
///
/// Integer types become ``JSONValue/integer(_:)``, `Double` and `Float` become ``JSONValue/real(_:)``, and object
/// keys keep the order in which they were encoded; `encodeIfPresent` with `nil` leaves the key out. Types encode
/// through their own `Encodable` conformance: a Foundation `Date` becomes the number of seconds since 2001-01-01
/// (`JSONEncoder`'s default strategy), `Data` an array of bytes.
public struct JSONValueEncoder: Sendable {
  /// Values handed to the types being encoded as `Encoder.userInfo`.
  public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

  /// An encoder with empty `userInfo`.
  public init() {}

  /// Encodes `value` as a JSON value.
  ///
  /// - Throws: `EncodingError.invalidValue`, with the coding path, for an integer beyond the 64-bit signed range
  ///   (a `UInt64` above `Int64.max`, say), a non-finite `Double` or `Float`, and a top-level value that encodes
  ///   nothing at all. Errors thrown by the value's own `encode(to:)` propagate unchanged.
  public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
    if let json = value as? JSONValue { return json }
    let root = EncodingNode()
    try value.encode(
      to: ValueEncoder(node: root, codingPath: [], userInfo: userInfo.mapValues { $0 as Any }))
    guard root.kind != .unset else {
      throw EncodingError.invalidValue(
        value,
        .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
    }
    return root.materialize()
  }
}

extension JSONValue {
  /// Encodes `value` with a default ``JSONValueEncoder``.
  ///
  /// - Throws: `EncodingError` as ``JSONValueEncoder/encode(_:)`` does.
  public init(encoding value: some Encodable) throws {
    self = try JSONValueEncoder().encode(value)
  }
}

extension JSONValue: Encodable {
  /// Writes this JSON value to any encoder.
  ///
  /// Into a ``JSONValueEncoder`` the value goes as it is, so integers and reals keep their kind. Into another encoder
  /// (Foundation's `JSONEncoder`, for instance) objects become keyed containers in key order, arrays unkeyed ones,
  /// integers `Int64`, reals `Double` (non-finite reals as `nil`, as ``JSONValue/serialized(_:)`` prints them) and
  /// `null` `nil`; that encoder may then print `3.0` as `3`.
  /// - Throws: Whatever the encoder throws.
  public func encode(to encoder: any Encoder) throws {
    if let ours = encoder as? ValueEncoder {
      ours.node.set(self)
      return
    }
    switch self {
    case .object(let object):
      var keyed = encoder.container(keyedBy: JSONCodingKey.self)
      for (key, member) in object {
        try keyed.encode(member, forKey: JSONCodingKey(stringValue: key))
      }
    case .array(let array):
      var unkeyed = encoder.unkeyedContainer()
      for element in array { try unkeyed.encode(element) }
    case .string(let s):
      var single = encoder.singleValueContainer()
      try single.encode(s)
    case .integer(let i):
      var single = encoder.singleValueContainer()
      try single.encode(i)
    case .real(let d):
      var single = encoder.singleValueContainer()
      if d.isFinite { try single.encode(d) } else { try single.encodeNil() }
    case .bool(let b):
      var single = encoder.singleValueContainer()
      try single.encode(b)
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    }
  }
}

// MARK: - The tree being built

/// A value under construction: containers hand out references to their children so nested containers and super
/// encoders can fill them in later, and ``materialize()`` turns the finished tree into a ``JSONValue``.
///
/// Not `Sendable`: a node lives only for the duration of one synchronous `JSONValueEncoder.encode(_:)` call.
final class EncodingNode {
  /// A member or element: a finished value, or a node still being filled.
  enum Slot {
    case value(JSONValue)
    case node(EncodingNode)
  }

  enum Kind {
    case unset, single, object, array
  }

  private(set) var kind: Kind = .unset
  private var single: JSONValue = .null
  private var keys: [String] = []
  private var members: [String: Slot] = [:]
  private(set) var elements: [Slot] = []

  init() {}

  init(kind: Kind) { self.kind = kind }

  /// Makes this node a single finished value.
  func set(_ value: JSONValue) {
    clear()
    kind = .single
    single = value
  }

  /// Makes this node an object, keeping its members if it already is one.
  func becomeObject() {
    guard kind != .object else { return }
    clear()
    kind = .object
  }

  /// Makes this node an array, keeping its elements if it already is one.
  func becomeArray() {
    guard kind != .array else { return }
    clear()
    kind = .array
  }

  /// Sets the member `key`; a key set again keeps its first position.
  func set(_ slot: Slot, forKey key: String) {
    if members.updateValue(slot, forKey: key) == nil { keys.append(key) }
  }

  /// Appends an element.
  func append(_ slot: Slot) { elements.append(slot) }

  private func clear() {
    single = .null
    keys = []
    members = [:]
    elements = []
  }

  /// The finished value; a node nobody wrote to is an empty object, as with Foundation's `JSONEncoder`.
  func materialize() -> JSONValue {
    switch kind {
    case .unset:
      return .object(JSONObject())
    case .single:
      return single
    case .object:
      var object = JSONObject()
      for key in keys { object[key] = members[key]!.materialize() }
      return .object(object)
    case .array:
      return .array(elements.map { $0.materialize() })
    }
  }
}

extension EncodingNode.Slot {
  func materialize() -> JSONValue {
    switch self {
    case .value(let v): v
    case .node(let n): n.materialize()
    }
  }
}

// MARK: - The encoder

/// The `Encoder` that writes one node at one coding path; it is also that node's single-value container.
struct ValueEncoder: Encoder, SingleValueEncodingContainer {
  let node: EncodingNode
  let codingPath: [any CodingKey]
  let userInfo: [CodingUserInfoKey: Any]

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    node.becomeObject()
    return KeyedEncodingContainer(KeyedValueEncoding<Key>(encoder: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    node.becomeArray()
    return UnkeyedValueEncoding(encoder: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { self }

  // SingleValueEncodingContainer

  func encodeNil() { node.set(.null) }
  func encode(_ value: Bool) { node.set(.bool(value)) }
  func encode(_ value: String) { node.set(.string(value)) }
  func encode(_ value: Double) throws { node.set(try Self.real(value, codingPath)) }
  func encode(_ value: Float) throws { node.set(try Self.real(value, codingPath)) }
  func encode(_ value: Int) { node.set(.integer(Int64(value))) }
  func encode(_ value: Int8) { node.set(.integer(Int64(value))) }
  func encode(_ value: Int16) { node.set(.integer(Int64(value))) }
  func encode(_ value: Int32) { node.set(.integer(Int64(value))) }
  func encode(_ value: Int64) { node.set(.integer(value)) }
  @available(macOS 15.0, *)
  func encode(_ value: Int128) throws { node.set(try Self.integer(value, codingPath)) }
  func encode(_ value: UInt) throws { node.set(try Self.integer(value, codingPath)) }
  func encode(_ value: UInt8) { node.set(.integer(Int64(value))) }
  func encode(_ value: UInt16) { node.set(.integer(Int64(value))) }
  func encode(_ value: UInt32) { node.set(.integer(Int64(value))) }
  func encode(_ value: UInt64) throws { node.set(try Self.integer(value, codingPath)) }
  @available(macOS 15.0, *)
  func encode(_ value: UInt128) throws { node.set(try Self.integer(value, codingPath)) }

  func encode<T: Encodable>(_ value: T) throws {
    if let json = value as? JSONValue {
      node.set(json)
    } else {
      try value.encode(to: self)
    }
  }

  /// Encodes `value`, which will sit at `key` below this encoder's path, as a slot for a container.
  func box<T: Encodable>(_ value: T, at key: any CodingKey) throws -> EncodingNode.Slot {
    if let json = value as? JSONValue { return .value(json) }
    let child = EncodingNode()
    try value.encode(
      to: ValueEncoder(node: child, codingPath: codingPath + [key], userInfo: userInfo))
    switch child.kind {
    case .single: return .value(child.materialize())
    default: return .node(child)
    }
  }

  /// An encoder for a new child node at `key`.
  func child(_ node: EncodingNode, at key: any CodingKey) -> ValueEncoder {
    ValueEncoder(node: node, codingPath: codingPath + [key], userInfo: userInfo)
  }

  static func integer<T: BinaryInteger>(_ value: T, _ path: @autoclosure () -> [any CodingKey])
    throws -> JSONValue
  {
    guard let i = Int64(exactly: value) else {
      throw EncodingError.invalidValue(
        value,
        .init(
          codingPath: path(),
          debugDescription: "\(value) does not fit in a 64-bit signed JSON integer."))
    }
    return .integer(i)
  }

  static func real<T: BinaryFloatingPoint>(_ value: T, _ path: @autoclosure () -> [any CodingKey])
    throws -> JSONValue
  {
    guard value.isFinite else {
      throw EncodingError.invalidValue(
        value,
        .init(codingPath: path(), debugDescription: "\(value) is not a number JSON can represent."))
    }
    return .real(Double(value))
  }
}

// MARK: - Containers

/// Writes the members of a JSON object.
struct KeyedValueEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: ValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }

  private func put(_ value: JSONValue, _ key: Key) {
    encoder.node.set(.value(value), forKey: key.stringValue)
  }

  mutating func encodeNil(forKey key: Key) { put(.null, key) }
  mutating func encode(_ value: Bool, forKey key: Key) { put(.bool(value), key) }
  mutating func encode(_ value: String, forKey key: Key) { put(.string(value), key) }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    put(try ValueEncoder.real(value, codingPath + [key]), key)
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    put(try ValueEncoder.real(value, codingPath + [key]), key)
  }
  mutating func encode(_ value: Int, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int8, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int16, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int32, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int64, forKey key: Key) { put(.integer(value), key) }
  @available(macOS 15.0, *)
  mutating func encode(_ value: Int128, forKey key: Key) throws {
    put(try ValueEncoder.integer(value, codingPath + [key]), key)
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    put(try ValueEncoder.integer(value, codingPath + [key]), key)
  }
  mutating func encode(_ value: UInt8, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: UInt16, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: UInt32, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    put(try ValueEncoder.integer(value, codingPath + [key]), key)
  }
  @available(macOS 15.0, *)
  mutating func encode(_ value: UInt128, forKey key: Key) throws {
    put(try ValueEncoder.integer(value, codingPath + [key]), key)
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    encoder.node.set(try encoder.box(value, at: key), forKey: key.stringValue)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let child = EncodingNode(kind: .object)
    encoder.node.set(.node(child), forKey: key.stringValue)
    return KeyedEncodingContainer(
      KeyedValueEncoding<NestedKey>(encoder: encoder.child(child, at: key)))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let child = EncodingNode(kind: .array)
    encoder.node.set(.node(child), forKey: key.stringValue)
    return UnkeyedValueEncoding(encoder: encoder.child(child, at: key))
  }

  mutating func superEncoder() -> any Encoder {
    let child = EncodingNode()
    encoder.node.set(.node(child), forKey: JSONCodingKey.super.stringValue)
    return encoder.child(child, at: JSONCodingKey.super)
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    let child = EncodingNode()
    encoder.node.set(.node(child), forKey: key.stringValue)
    return encoder.child(child, at: key)
  }
}

/// Writes the elements of a JSON array.
struct UnkeyedValueEncoding: UnkeyedEncodingContainer {
  let encoder: ValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }
  var count: Int { encoder.node.elements.count }

  private var indexKey: JSONCodingKey { JSONCodingKey(intValue: count) }
  private func put(_ value: JSONValue) { encoder.node.append(.value(value)) }

  mutating func encodeNil() { put(.null) }
  mutating func encode(_ value: Bool) { put(.bool(value)) }
  mutating func encode(_ value: String) { put(.string(value)) }
  mutating func encode(_ value: Double) throws {
    put(try ValueEncoder.real(value, codingPath + [indexKey]))
  }
  mutating func encode(_ value: Float) throws {
    put(try ValueEncoder.real(value, codingPath + [indexKey]))
  }
  mutating func encode(_ value: Int) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int8) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int16) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int32) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int64) { put(.integer(value)) }
  @available(macOS 15.0, *)
  mutating func encode(_ value: Int128) throws {
    put(try ValueEncoder.integer(value, codingPath + [indexKey]))
  }
  mutating func encode(_ value: UInt) throws {
    put(try ValueEncoder.integer(value, codingPath + [indexKey]))
  }
  mutating func encode(_ value: UInt8) { put(.integer(Int64(value))) }
  mutating func encode(_ value: UInt16) { put(.integer(Int64(value))) }
  mutating func encode(_ value: UInt32) { put(.integer(Int64(value))) }
  mutating func encode(_ value: UInt64) throws {
    put(try ValueEncoder.integer(value, codingPath + [indexKey]))
  }
  @available(macOS 15.0, *)
  mutating func encode(_ value: UInt128) throws {
    put(try ValueEncoder.integer(value, codingPath + [indexKey]))
  }

  mutating func encode<T: Encodable>(_ value: T) throws {
    encoder.node.append(try encoder.box(value, at: indexKey))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    let key = indexKey
    let child = EncodingNode(kind: .object)
    encoder.node.append(.node(child))
    return KeyedEncodingContainer(
      KeyedValueEncoding<NestedKey>(encoder: encoder.child(child, at: key)))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let key = indexKey
    let child = EncodingNode(kind: .array)
    encoder.node.append(.node(child))
    return UnkeyedValueEncoding(encoder: encoder.child(child, at: key))
  }

  mutating func superEncoder() -> any Encoder {
    let key = indexKey
    let child = EncodingNode()
    encoder.node.append(.node(child))
    return encoder.child(child, at: key)
  }
}
