public import ToolhostJSON

/// An identifier of one generated value, stable across the snapshots of a stream (FoundationModels' `GenerationID`):
/// a session gives each response's content one, and the values inside it get theirs from it and where they are (a
/// property's name, an element's index), so the same element has the same identifier in every snapshot.
public struct GenerationID: Sendable, Hashable {
  let value: UInt64

  /// A new identifier.
  public init() { value = UInt64.random(in: 0...UInt64.max) }

  init(value: UInt64) { self.value = value }

  /// The identifier of the value at `key` inside the value this one identifies: the same for the same two, always
  /// (FNV-1a of the key's bytes, started from this identifier).
  func child(_ key: String) -> GenerationID {
    var hash = value ^ 0xcbf2_9ce4_8422_2325
    for byte in key.utf8 {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01b3
    }
    return GenerationID(value: hash)
  }
}

/// A value a model generated, before (or after) it is converted into a Swift type: FoundationModels'
/// `GeneratedContent`, a JSON-shaped tree that keeps its properties' order.
///
/// ```swift
/// let content = try GeneratedContent(json: #"{"city": "Boston", "days": 3}"#)
/// let city = try content.value(String.self, forProperty: "city")  // "Boston"
/// let forecast = try Forecast(content)                               // a @Generable type
/// ```
public struct GeneratedContent: Sendable, Equatable, CustomDebugStringConvertible {
  /// What the content is.
  public enum Kind: Sendable, Equatable {
    /// `null`.
    case null
    /// A Boolean.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([GeneratedContent])
    /// An object: its properties, and their keys in the order they were generated.
    case structure(properties: [String: GeneratedContent], orderedKeys: [String])
  }

  /// What the content is.
  public var kind: Kind
  /// The identifier of the generation this content belongs to, when it has one.
  public var id: GenerationID?
  /// Whether the content is whole; `false` for a snapshot of a value still being generated.
  public var isComplete: Bool

  /// Makes content of a kind.
  public init(kind: Kind, id: GenerationID? = nil) {
    self.kind = kind
    self.id = id
    self.isComplete = true
  }

  /// `null` content (toolhost's: the first FoundationModels 27 beta had it, the release does not; write
  /// `GeneratedContent(kind: .null)` in code that must build against both).
  public static let null = GeneratedContent(kind: .null)

  /// The content of a value that can be converted.
  public init(_ value: some ConvertibleToGeneratedContent) {
    self = value.generatedContent
  }

  /// The content of a value, with an identifier.
  public init(_ value: some ConvertibleToGeneratedContent, id: GenerationID) {
    self = value.generatedContent
    self.id = id
  }

  /// An array of values.
  public init<S: Sequence>(elements: S, id: GenerationID? = nil) where S.Element == any ConvertibleToGeneratedContent {
    self.init(kind: .array(elements.map(\.generatedContent)), id: id)
  }

  /// An object with these properties, in this order.
  public init(properties: KeyValuePairs<String, any ConvertibleToGeneratedContent>, id: GenerationID? = nil) {
    var values: [String: GeneratedContent] = [:]
    var keys: [String] = []
    for (key, value) in properties {
      if values.updateValue(value.generatedContent, forKey: key) == nil { keys.append(key) }
    }
    self.init(kind: .structure(properties: values, orderedKeys: keys), id: id)
  }

  /// An object with these properties, in this order; `combine` picks the value of a repeated key.
  public init<S: Sequence>(
    properties: S, id: GenerationID? = nil,
    uniquingKeysWith combine: (GeneratedContent, GeneratedContent) throws -> some ConvertibleToGeneratedContent
  ) rethrows where S.Element == (String, any ConvertibleToGeneratedContent) {
    var values: [String: GeneratedContent] = [:]
    var keys: [String] = []
    for (key, value) in properties {
      if let old = values[key] {
        values[key] = try combine(old, value.generatedContent).generatedContent
      } else {
        values[key] = value.generatedContent
        keys.append(key)
      }
    }
    self.init(kind: .structure(properties: values, orderedKeys: keys), id: id)
  }

  /// Content parsed from JSON text. A truncated text (a value still streaming) is completed as far as it goes and
  /// marked incomplete.
  ///
  /// - Throws: ``GeneratedContentError`` when the text is not JSON, even cut short.
  public init(json: String) throws {
    if let whole = try? JSONValue.parse(json) {
      self.init(json: whole)
      return
    }
    guard let closed = PartialJSON.close(json), let value = try? JSONValue.parse(closed) else {
      throw GeneratedContentError(path: "", message: "the text is not JSON: \(json.prefix(80))")
    }
    self.init(json: value)
    isComplete = false
  }

  /// Content with the value of a JSON value.
  public init(json value: JSONValue) {
    switch value {
    case .null: self.init(kind: .null)
    case .bool(let b): self.init(kind: .bool(b))
    case .integer(let i): self.init(kind: .number(Double(i)))
    case .real(let d): self.init(kind: .number(d))
    case .string(let s): self.init(kind: .string(s))
    case .array(let items): self.init(kind: .array(items.map { GeneratedContent(json: $0) }))
    case .object(let object):
      var values: [String: GeneratedContent] = [:]
      for (key, member) in object { values[key] = GeneratedContent(json: member) }
      self.init(kind: .structure(properties: values, orderedKeys: object.keys))
    }
  }

  /// The content as a JSON value; whole numbers become integers.
  public var jsonValue: JSONValue {
    switch kind {
    case .null: return .null
    case .bool(let b): return .bool(b)
    case .number(let d):
      if d.rounded() == d, abs(d) < 9.0e15 { return .integer(Int64(d)) }
      return .real(d)
    case .string(let s): return .string(s)
    case .array(let items): return .array(items.map(\.jsonValue))
    case .structure(let properties, let keys):
      return .object(JSONObject(keys.compactMap { key in properties[key].map { (key, $0.jsonValue) } }))
    }
  }

  /// The content as compact JSON text.
  public var jsonString: String { jsonValue.serialized() }

  /// The JSON text.
  public var debugDescription: String { jsonString }

  /// Equal when the values are equal (identifiers and completeness aside).
  public static func == (a: GeneratedContent, b: GeneratedContent) -> Bool { a.kind == b.kind }

  /// The content converted into a type.
  ///
  /// - Throws: ``GeneratedContentError`` naming what did not fit.
  public func value<Value: ConvertibleFromGeneratedContent>(_ type: Value.Type = Value.self) throws -> Value {
    try Value(self)
  }

  /// A property converted into a type.
  ///
  /// - Throws: ``GeneratedContentError`` when the content is not an object, has no such property, or the property
  ///   does not convert; its ``GeneratedContentError/path`` names the property.
  public func value<Value: ConvertibleFromGeneratedContent>(
    _ type: Value.Type = Value.self, forProperty property: String
  ) throws -> Value {
    let properties = try self.properties()
    guard let member = properties[property] else {
      throw GeneratedContentError(
        path: "/\(property)", message: "the required property \"\(property)\" (\(Value.self)) is missing")
    }
    do { return try Value(member) } catch let error as GeneratedContentError {
      throw error.inside("/\(property)")
    }
  }

  /// An optional property converted into a type: `nil` when it is missing or `null`.
  ///
  /// - Throws: ``GeneratedContentError`` when the content is not an object or the property does not convert.
  public func value<Value: ConvertibleFromGeneratedContent>(
    _ type: Value?.Type = Value?.self, forProperty property: String
  ) throws -> Value? {
    let properties = try self.properties()
    guard let member = properties[property], member.kind != .null else { return nil }
    do { return try Value(member) } catch let error as GeneratedContentError {
      throw error.inside("/\(property)")
    }
  }

  /// The content of an enum's case as `@Generable` writes it: a case without associated values, or an object of one
  /// property, the case's name, holding them (see ``GenerationSchema/init(type:description:cases:)``).
  public init(enumCase name: String, values: [(String, any ConvertibleToGeneratedContent)]?) {
    guard let values else {
      self.init(kind: .string(name))
      return
    }
    // A nil optional value is left out, as a struct's nil property is, so that the content fits the schema.
    let present: [(String, any ConvertibleToGeneratedContent)] = values.compactMap { key, value in
      let content = value.generatedContent
      return content.kind == .null ? nil : (key, content)
    }
    let inner =
      present.count == 1 && present[0].0.isEmpty
      ? present[0].1.generatedContent
      : GeneratedContent(properties: present, uniquingKeysWith: { first, _ in first })
    self.init(properties: [name: inner])
  }

  /// The case an enum's content names, and its associated values: a string is a case without (`values` is `nil`);
  /// an object of one property is the case of that name with the property's value.
  ///
  /// - Throws: ``GeneratedContentError`` when the content is neither.
  public func enumCase() throws -> (name: String, values: GeneratedContent?) {
    switch kind {
    case .string(let name): return (name, nil)
    case .structure(let properties, let keys) where properties.count == 1:
      let name = keys.first ?? properties.keys.first ?? ""
      return (name, properties[name])
    default:
      throw GeneratedContentError(
        path: "", message: "expected a case's name or an object of one property naming the case, found \(kindName)")
    }
  }

  /// The properties of an object.
  ///
  /// - Throws: ``GeneratedContentError`` when the content is not an object.
  public func properties() throws -> [String: GeneratedContent] {
    guard case .structure(var properties, _) = kind else {
      throw GeneratedContentError(path: "", message: "expected an object, found \(kindName)")
    }
    if let id {
      for (key, value) in properties where value.id == nil { properties[key]?.id = id.child(key) }
    }
    return properties
  }

  /// The elements of an array.
  ///
  /// - Throws: ``GeneratedContentError`` when the content is not an array.
  public func elements() throws -> [GeneratedContent] {
    guard case .array(let items) = kind else {
      throw GeneratedContentError(path: "", message: "expected an array, found \(kindName)")
    }
    guard let id else { return items }
    return items.enumerated().map { index, item in
      var item = item
      if item.id == nil { item.id = id.child(String(index)) }
      return item
    }
  }

  /// The kind's name, for messages.
  var kindName: String {
    switch kind {
    case .null: "null"
    case .bool: "a Boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .structure: "an object"
    }
  }
}

extension GeneratedContent: Codable {
  /// Decodes JSON.
  public init(from decoder: any Decoder) throws {
    self.init(json: try JSONValue(from: decoder))
  }

  /// Encodes as JSON.
  public func encode(to encoder: any Encoder) throws {
    try jsonValue.encode(to: encoder)
  }
}

/// Generated content that does not convert into the type asked for: where (a JSON Pointer into the content) and
/// what was expected.
public struct GeneratedContentError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Where in the content, as a JSON Pointer (`""` for the whole value, `/items/0/name` inside it).
  public var path: String
  /// What was expected and what was found.
  public var message: String

  /// Makes an error.
  public init(path: String, message: String) {
    self.path = path
    self.message = message
  }

  /// The same error inside a property or element.
  public func inside(_ prefix: String) -> GeneratedContentError {
    GeneratedContentError(path: prefix + path, message: message)
  }

  /// `at /path: message`.
  public var description: String { "at \(path.isEmpty ? "the top level" : path): \(message)" }
}
