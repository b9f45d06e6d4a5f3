public import ToolhostJSON
public import ToolhostSchema

/// The shape a model's output must take, derived from a ``Generable`` type (FoundationModels' `GenerationSchema`).
/// It is a standard JSON Schema (``jsonSchema``): what toolhost's validator checks tool calls against, what a local
/// model's output is constrained to, and what an HTTP model is sent as a `json_schema` response format.
///
/// ```swift
/// let schema = GenerationSchema(type: Forecast.self, description: "A forecast request", properties: [
///   GenerationSchema.Property(name: "city", description: "The city", type: String.self),
///   GenerationSchema.Property(name: "days", type: Int.self, guides: [.range(1...7)]),
/// ])
/// print(schema.jsonSchema)   // {"type":"object","title":"Forecast",…,"required":["city","days"]}
/// ```
public struct GenerationSchema: Sendable, CustomDebugStringConvertible {
  /// One property of an object schema.
  public struct Property: Sendable {
    /// The property's name.
    public var name: String
    /// What it is, for the model.
    public var description: String?
    /// Whether it may be left out (an optional Swift property).
    public var isOptional: Bool
    /// The property's own schema, guides applied.
    var schema: JSONValue

    /// A required property of a ``Generable`` type, with guides.
    public init<Value: Generable>(
      name: String, description: String? = nil, type: Value.Type, guides: [GenerationGuide<Value>] = []
    ) {
      self.name = name
      self.description = description
      self.isOptional = false
      self.schema = GenerationSchema.applying(guides.map(\.keywords), to: Value.generationSchema.jsonSchema)
    }

    /// An optional property (it may be missing or `null`), with guides.
    public init<Value: Generable>(
      name: String, description: String? = nil, type: Value?.Type, guides: [GenerationGuide<Value>] = []
    ) {
      self.name = name
      self.description = description
      self.isOptional = true
      self.schema = GenerationSchema.applying(guides.map(\.keywords), to: Value.generationSchema.jsonSchema)
    }
  }

  /// One case of an enum, for ``GenerationSchema/init(type:description:cases:)``: a name alone, or a name with
  /// associated values.
  public struct Case: Sendable {
    /// The case's name.
    public var name: String
    /// The schema of the associated values, or `nil` for a case without.
    var values: JSONValue?

    /// A case without associated values: generated as its name, a string.
    public init(name: String) {
      self.name = name
      values = nil
    }

    /// A case with labelled (or several) associated values: generated as `{"name": {"label": …, …}}`.
    public init(name: String, properties: [Property]) {
      self.name = name
      values = .object(GenerationSchema.objectSchema(properties))
    }

    /// A case with one unlabelled associated value: generated as `{"name": value}`.
    public init<Value: Generable>(name: String, value: Value.Type) {
      self.name = name
      values = Value.generationSchema.jsonSchema
    }
  }

  /// The JSON Schema.
  public let jsonSchema: JSONValue
  /// The name of the type it describes.
  public let typeName: String

  /// The schema of an object type: its properties, in order; the non-optional ones required, no others allowed.
  public init(type: any Generable.Type, description: String? = nil, properties: [Property]) {
    var object: JSONObject = ["type": "object", "title": .string(Self.name(of: type))]
    if let description { object["description"] = .string(description) }
    for (key, value) in Self.objectSchema(properties) where key != "type" { object[key] = value }
    self.init(typeName: Self.name(of: type), object)
  }

  /// An object schema of properties, in order: the non-optional ones required, no others allowed.
  static func objectSchema(_ properties: [Property]) -> JSONObject {
    var members = JSONObject()
    for p in properties {
      var schema = p.schema
      if let d = p.description, case .object(var o) = schema {
        o["description"] = .string(d)
        schema = .object(o)
      }
      members[p.name] = schema
    }
    return [
      "type": "object", "properties": .object(members),
      "required": .array(properties.filter { !$0.isOptional }.map { .string($0.name) }),
      "additionalProperties": false,
    ]
  }

  /// The schema of an enum whose cases may have associated values: a case without is its name (a string), a case
  /// with is an object of one property, the case's name, whose value holds the associated values
  /// (`{"flight": {"number": "TP123", "seat": 4}}`). Without any associated values, a string of one of the names,
  /// as for cases given as strings.
  public init(type: any Generable.Type, description: String? = nil, cases: [Case]) {
    let names = cases.filter { $0.values == nil }.map(\.name)
    let withValues = cases.filter { $0.values != nil }
    guard !withValues.isEmpty else {
      self.init(type: type, description: description, anyOf: names)
      return
    }
    var choices: [JSONValue] = []
    if !names.isEmpty { choices.append(["type": "string", "enum": .array(names.map { .string($0) })]) }
    for choice in withValues {
      choices.append([
        "type": "object", "properties": .object([choice.name: choice.values ?? [:]]),
        "required": [.string(choice.name)], "additionalProperties": false,
      ])
    }
    var object: JSONObject = ["title": .string(Self.name(of: type))]
    if let description { object["description"] = .string(description) }
    object["anyOf"] = .array(choices)
    self.init(typeName: Self.name(of: type), object)
  }

  /// The schema of a type whose values are one of these strings (an enum without associated values).
  public init(type: any Generable.Type, description: String? = nil, anyOf choices: [String]) {
    var object: JSONObject = ["type": "string", "title": .string(Self.name(of: type))]
    if let description { object["description"] = .string(description) }
    object["enum"] = .array(choices.map { .string($0) })
    self.init(typeName: Self.name(of: type), object)
  }

  /// The schema of a type whose values take the shape of one of these types.
  public init(type: any Generable.Type, description: String? = nil, anyOf types: [any Generable.Type]) {
    var object: JSONObject = ["title": .string(Self.name(of: type))]
    if let description { object["description"] = .string(description) }
    object["anyOf"] = .array(types.map { $0.generationSchema.jsonSchema })
    self.init(typeName: Self.name(of: type), object)
  }

  /// The name of the schema (FoundationModels 27's name for ``typeName``).
  public var name: String { typeName }

  /// This schema under another name: its ``typeName`` and its JSON Schema `title` (what `@Generable(name:)` gives;
  /// toolhost's).
  public func renamed(_ name: String) -> GenerationSchema {
    guard case .object(var object) = jsonSchema else { return GenerationSchema(typeName: name, jsonSchema: jsonSchema) }
    object["title"] = .string(name)
    return GenerationSchema(typeName: name, jsonSchema: .object(object))
  }

  /// A schema given as JSON Schema, for a type written by hand.
  public init(typeName: String, jsonSchema: JSONValue) {
    self.typeName = typeName
    self.jsonSchema = jsonSchema
  }

  init(primitive name: String, _ object: JSONObject) {
    self.init(typeName: name, object)
  }

  private init(typeName: String, _ object: JSONObject) {
    self.init(typeName: typeName, jsonSchema: .object(object))
  }

  /// The JSON Schema, indented.
  public var debugDescription: String { (try? jsonSchema.serialized(.pretty)) ?? jsonSchema.serialized() }

  /// Checks a value against the schema with toolhost's JSON Schema validator (the one that checks tool calls).
  ///
  /// - Returns: the problems, none when the value fits.
  public func validate(_ content: GeneratedContent) -> [ValidationIssue] {
    do { return try JSONSchema(jsonSchema).validate(content.jsonValue) } catch {
      return [ValidationIssue(instanceLocation: "", keywordLocation: "", keyword: "schema", message: "\(error)")]
    }
  }

  static func name(of type: any Generable.Type) -> String {
    String(describing: type)
  }

  /// `base` with each guide's keywords added; `items` keywords go into the element schema.
  static func applying(_ guides: [JSONObject], to base: JSONValue) -> JSONValue {
    guard case .object(var object) = base else { return base }
    for guide in guides {
      for (key, value) in guide {
        if key == "items", case .object(let inner) = value, let items = object["items"] {
          object["items"] = applying([inner], to: items)
        } else {
          object[key] = value
        }
      }
    }
    return .object(object)
  }
}

extension GenerationSchema: Codable {
  /// Reads a JSON Schema; the type name is its `title`, when it has one.
  public init(from decoder: any Decoder) throws {
    let value = try JSONValue(from: decoder)
    self.init(typeName: value.objectValue?["title"]?.stringValue ?? "", jsonSchema: value)
  }

  /// Writes the JSON Schema.
  public func encode(to encoder: any Encoder) throws {
    try jsonSchema.encode(to: encoder)
  }
}
