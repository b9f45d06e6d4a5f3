import ToolhostJSON

/// The vocabularies of draft 2020-12 as a bit set: which keywords a schema resource's dialect turns on.
struct Vocabularies: OptionSet, Hashable, Sendable {
  let rawValue: UInt8

  static let core = Vocabularies(rawValue: 1)
  static let applicator = Vocabularies(rawValue: 2)
  static let unevaluated = Vocabularies(rawValue: 4)
  static let validation = Vocabularies(rawValue: 8)
  static let metaData = Vocabularies(rawValue: 16)
  static let formatAnnotation = Vocabularies(rawValue: 32)
  static let formatAssertion = Vocabularies(rawValue: 64)
  static let content = Vocabularies(rawValue: 128)

  /// The vocabularies of the standard 2020-12 meta-schema.
  static let standard: Vocabularies = [
    .core, .applicator, .unevaluated, .validation, .metaData, .formatAnnotation, .content,
  ]

  /// The vocabulary a `$vocabulary` URI names; `nil` for one this validator does not know.
  init?(uri: String) {
    let prefix = "https://json-schema.org/draft/2020-12/vocab/"
    guard uri.hasPrefix(prefix) else { return nil }
    switch uri.dropFirst(prefix.count) {
    case "core": self = .core
    case "applicator": self = .applicator
    case "unevaluated": self = .unevaluated
    case "validation": self = .validation
    case "meta-data": self = .metaData
    case "format-annotation": self = .formatAnnotation
    case "format-assertion": self = .formatAssertion
    case "content": self = .content
    default: return nil
    }
  }

  init(rawValue: UInt8) {
    self.rawValue = rawValue
  }
}

/// The rules a schema resource is read with: its vocabularies, and whether it declares an older draft.
struct Dialect: Hashable, Sendable {
  var vocabularies: Vocabularies
  /// The resource's `$schema` names draft 2019-09 or older: their keywords that 2020-12 dropped are refused or read
  /// the old way (`additionalItems`, `dependencies`) instead of being ignored as unknown.
  var legacy: Bool

  static let standard = Dialect(vocabularies: .standard, legacy: false)
}

/// Where a subschema sits in its parent schema object.
enum SubschemaSlot {
  /// The value of a keyword (`not`, `items`, ...).
  case keyword(String)
  /// An item of a keyword's array (`allOf/2`).
  case item(String, Int)
  /// A member of a keyword's object (`properties/city`).
  case member(String, String)

  /// The slot's pointer below the parent's `pointer`.
  func pointer(under pointer: String) -> String {
    switch self {
    case .keyword(let keyword): JSONPointer.appending(keyword, to: pointer)
    case .item(let keyword, let index): JSONPointer.appending(keyword, to: pointer) + "/\(index)"
    case .member(let keyword, let name):
      JSONPointer.appending(name, to: JSONPointer.appending(keyword, to: pointer))
    }
  }

  /// Puts `value` in this slot of `object`.
  func set(_ value: JSONValue, in object: inout JSONObject) {
    switch self {
    case .keyword(let keyword):
      object[keyword] = value
    case .item(let keyword, let index):
      guard case .array(var items) = object[keyword], items.indices.contains(index) else { return }
      items[index] = value
      object[keyword] = .array(items)
    case .member(let keyword, let name):
      guard case .object(var map) = object[keyword] else { return }
      map[name] = value
      object[keyword] = .object(map)
    }
  }
}

/// The keyword tables: which vocabulary each keyword belongs to, and what older drafts had.
enum Keywords {
  /// Every keyword of draft 2020-12, by vocabulary.
  static let vocabulary: [String: Vocabularies] = {
    var table: [String: Vocabularies] = [:]
    let groups: [(Vocabularies, [String])] = [
      (
        .core,
        ["$id", "$schema", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs"]
      ),
      (
        .applicator,
        [
          "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
          "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
        ]
      ),
      (.unevaluated, ["unevaluatedItems", "unevaluatedProperties"]),
      (
        .validation,
        [
          "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
          "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
          "maxProperties", "minProperties", "required", "dependentRequired",
        ]
      ),
      (.metaData, ["title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"]),
      (.formatAnnotation, ["format"]),
      (.content, ["contentEncoding", "contentMediaType", "contentSchema"]),
    ]
    for (vocabulary, keywords) in groups {
      for keyword in keywords { table[keyword] = vocabulary }
    }
    return table
  }()

  /// Keywords of older drafts that 2020-12 dropped and this validator does not read: refused in a resource that
  /// declares an older draft, ignored (as unknown keywords) in a 2020-12 one.
  static let legacyUnsupported: Set<String> = ["$recursiveAnchor", "$recursiveRef"]

  /// Every keyword a schema may use: all of draft 2020-12, plus `definitions`.
  static let supported = Set(vocabulary.keys).union(["definitions"])

  /// Keywords whose value is one schema.
  static let singleSubschema: Set<String> = [
    "additionalProperties", "propertyNames", "contains", "if", "then", "else", "not", "unevaluatedItems",
    "unevaluatedProperties", "additionalItems", "contentSchema",
  ]

  /// Keywords whose value is an array of schemas.
  static let subschemaArrays: Set<String> = ["allOf", "anyOf", "oneOf", "prefixItems"]

  /// Keywords whose value is an object whose values are schemas.
  static let subschemaMaps: Set<String> = [
    "properties", "patternProperties", "dependentSchemas", "$defs", "definitions",
  ]

  /// Calls `body` with each subschema directly under a schema object and where it sits: the values of the keywords
  /// whose values are schemas (`dependencies` too with `legacy`), except the keywords in `skipping`. Values that
  /// cannot be schemas (an array where one schema goes, ...) are passed over.
  ///
  /// - Throws: what `body` throws.
  static func forEachSubschema<E: Error>(
    of object: JSONObject, legacy: Bool = false, skipping: Set<String> = [],
    _ body: (JSONValue, SubschemaSlot) throws(E) -> Void
  ) throws(E) {
    for keyword in object.keys where !skipping.contains(keyword) {
      let child = object[keyword]!
      if singleSubschema.contains(keyword) || (keyword == "items" && child.arrayValue == nil) {
        try body(child, .keyword(keyword))
      } else if subschemaArrays.contains(keyword) || keyword == "items" {
        guard case .array(let items) = child else { continue }
        for (i, item) in items.enumerated() { try body(item, .item(keyword, i)) }
      } else if subschemaMaps.contains(keyword) || (keyword == "dependencies" && legacy) {
        guard case .object(let map) = child else { continue }
        for name in map.keys where map[name]!.arrayValue == nil { try body(map[name]!, .member(keyword, name)) }
      }
    }
  }

  /// The `$schema` value of 2020-12, with or without an empty fragment, and with either scheme.
  static func isStandard(_ uri: String) -> Bool {
    variants("https://json-schema.org/draft/2020-12/schema").contains(uri)
  }

  /// The `$schema` values of older drafts that are read for their common subset; a construct whose meaning changed
  /// is refused when compiled (for example a boolean `exclusiveMinimum`).
  static let legacyMetaSchemas: Set<String> = [
    "https://json-schema.org/draft/2019-09/schema", "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema", "http://json-schema.org/draft-04/schema",
  ].reduce(into: []) { $0.formUnion(variants($1)) }

  /// A meta-schema URI with `http`/`https` swapped and with or without an empty fragment.
  private static func variants(_ base: String) -> Set<String> {
    let other =
      base.hasPrefix("https:")
      ? "http:" + base.dropFirst("https:".count) : "https:" + base.dropFirst("http:".count)
    return [base, base + "#", other, other + "#"]
  }
}
