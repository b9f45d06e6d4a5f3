import ToolhostJSON

/// A schema built at run time, for a shape no Swift type describes (FoundationModels' `DynamicGenerationSchema`):
/// objects of properties, string choices, choices of schemas, arrays, the schema of a `Generable` type, and
/// references by name to the dependencies given to ``GenerationSchema/init(root:dependencies:)``.
///
/// ```swift
/// let dish = DynamicGenerationSchema(name: "Dish", properties: [
///   .init(name: "name", schema: .init(type: String.self)),
///   .init(name: "spicy", schema: .init(type: Bool.self), isOptional: true),
/// ])
/// let menu = DynamicGenerationSchema(name: "Menu", properties: [
///   .init(name: "dishes", schema: .init(arrayOf: .init(referenceTo: "Dish"), minimumElements: 1)),
/// ])
/// let schema = try GenerationSchema(root: menu, dependencies: [dish])
/// let answer = try await session.respond(to: "A menu for two", schema: schema)
/// ```
public struct DynamicGenerationSchema: Sendable {
  /// One property of an object schema.
  public struct Property: Sendable {
    let name: String
    let description: String?
    let schema: DynamicGenerationSchema
    let isOptional: Bool

    /// A property; an optional one may be left out.
    public init(name: String, description: String? = nil, schema: DynamicGenerationSchema, isOptional: Bool = false) {
      self.name = name
      self.description = description
      self.schema = schema
      self.isOptional = isOptional
    }
  }

  indirect enum Shape: Sendable {
    case object(properties: [Property])
    case stringChoices([String])
    case choices([DynamicGenerationSchema])
    case array(DynamicGenerationSchema, minimum: Int?, maximum: Int?)
    case fixed(JSONValue)
    case reference(String)
  }

  let name: String?
  let description: String?
  let shape: Shape

  /// An object with these properties, in order.
  public init(name: String, description: String? = nil, properties: [Property]) {
    self.name = name
    self.description = description
    shape = .object(properties: properties)
  }

  /// A value of one of these schemas.
  public init(name: String, description: String? = nil, anyOf choices: [DynamicGenerationSchema]) {
    self.name = name
    self.description = description
    shape = .choices(choices)
  }

  /// One of these strings.
  public init(name: String, description: String? = nil, anyOf choices: [String]) {
    self.name = name
    self.description = description
    shape = .stringChoices(choices)
  }

  /// An array of values of a schema, with bounds on its length.
  public init(arrayOf itemSchema: DynamicGenerationSchema, minimumElements: Int? = nil, maximumElements: Int? = nil) {
    name = nil
    description = nil
    shape = .array(itemSchema, minimum: minimumElements, maximum: maximumElements)
  }

  /// The schema of a `Generable` type, with guides.
  public init<Value: Generable>(type: Value.Type, guides: [GenerationGuide<Value>] = []) {
    name = nil
    description = nil
    shape = .fixed(GenerationSchema.applying(guides.map(\.keywords), to: Value.generationSchema.jsonSchema))
  }

  /// The schema named `name` among the dependencies.
  public init(referenceTo name: String) {
    self.name = nil
    description = nil
    shape = .reference(name)
  }

  /// `null`.
  public static var null: DynamicGenerationSchema {
    DynamicGenerationSchema(name: nil, description: nil, shape: .fixed(["type": "null"]))
  }

  private init(name: String?, description: String?, shape: Shape) {
    self.name = name
    self.description = description
    self.shape = shape
  }

  /// The schema as JSON Schema; references point into `$defs`.
  func jsonSchema(references: inout Set<String>) -> JSONValue {
    var object: JSONObject
    switch shape {
    case .object(let properties):
      var members = JSONObject()
      for p in properties {
        var schema = p.schema.jsonSchema(references: &references)
        if let d = p.description, case .object(var o) = schema {
          o["description"] = .string(d)
          schema = .object(o)
        }
        members[p.name] = schema
      }
      object = [
        "type": "object", "properties": .object(members),
        "required": .array(properties.filter { !$0.isOptional }.map { .string($0.name) }),
        "additionalProperties": false,
      ]
    case .stringChoices(let choices):
      object = ["type": "string", "enum": .array(choices.map { .string($0) })]
    case .choices(let choices):
      object = ["anyOf": .array(choices.map { $0.jsonSchema(references: &references) })]
    case .array(let items, let minimum, let maximum):
      object = ["type": "array", "items": items.jsonSchema(references: &references)]
      if let minimum { object["minItems"] = .integer(Int64(minimum)) }
      if let maximum { object["maxItems"] = .integer(Int64(maximum)) }
    case .fixed(let schema):
      object = schema.objectValue ?? [:]
    case .reference(let target):
      references.insert(target)
      return ["$ref": .string("#/$defs/\(target)")]
    }
    if let name, object["title"] == nil { object["title"] = .string(name) }
    if let description { object["description"] = .string(description) }
    return .object(object)
  }
}

extension GenerationSchema {
  /// The schema of a dynamic root, whose references name its dependencies.
  ///
  /// - Throws: ``SchemaError`` when two dependencies have one name, an object has a property twice, a choice has no
  ///   choices, or a reference names no dependency.
  public init(root: DynamicGenerationSchema, dependencies: [DynamicGenerationSchema]) throws {
    var definitions = JSONObject()
    var references = Set<String>()
    for dependency in dependencies {
      try Self.check(dependency)
      guard let name = dependency.name else { continue }
      if definitions[name] != nil { throw SchemaError.duplicateType(schema: root.name, type: name) }
      definitions[name] = dependency.jsonSchema(references: &references)
    }
    try Self.check(root)
    var schema = root.jsonSchema(references: &references)
    let missing = references.subtracting(definitions.keys).sorted()
    if !missing.isEmpty { throw SchemaError.undefinedReferences(schema: root.name, references: missing) }
    if !definitions.isEmpty, case .object(var o) = schema {
      o["$defs"] = .object(definitions)
      schema = .object(o)
    }
    self.init(typeName: root.name ?? "", jsonSchema: schema)
  }

  private static func check(_ schema: DynamicGenerationSchema) throws {
    switch schema.shape {
    case .object(let properties):
      var seen = Set<String>()
      for p in properties {
        if !seen.insert(p.name).inserted {
          throw SchemaError.duplicateProperty(schema: schema.name ?? "", property: p.name)
        }
        try check(p.schema)
      }
    case .stringChoices(let choices) where choices.isEmpty:
      throw SchemaError.emptyTypeChoices(schema: schema.name ?? "")
    case .choices(let choices):
      if choices.isEmpty { throw SchemaError.emptyTypeChoices(schema: schema.name ?? "") }
      for c in choices { try check(c) }
    case .array(let items, _, _): try check(items)
    default: break
    }
  }

  /// A dynamic schema that cannot be made (FoundationModels' `GenerationSchema.SchemaError`).
  public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Two dependencies have one name.
    case duplicateType(schema: String?, type: String)
    /// An object has a property twice.
    case duplicateProperty(schema: String, property: String)
    /// A choice of types or strings has none.
    case emptyTypeChoices(schema: String)
    /// References name schemas that are not among the dependencies.
    case undefinedReferences(schema: String?, references: [String])

    /// What is wrong and what to do.
    public var description: String {
      switch self {
      case .duplicateType(_, let type):
        "two dependencies are named \(type); give each schema a name of its own"
      case .duplicateProperty(let schema, let property):
        "\(schema) has the property \(property) twice; keep one"
      case .emptyTypeChoices(let schema):
        "\(schema) is a choice of nothing; give it at least one choice"
      case .undefinedReferences(_, let references):
        "no dependency is named \(references.joined(separator: ", ")); pass the schemas referred to as dependencies"
      }
    }
  }
}
