/// The keyword tables: what is checked, what is accepted as an annotation, and what is known but refused.
enum Keywords {
  /// Keywords that are checked (or that structure the schema: `$ref`, `$defs`, `$schema`, root `$id`).
  static let validation: [String] = [
    "$defs", "$id", "$ref", "$schema", "additionalProperties", "allOf", "anyOf", "const",
    "contains",
    "definitions", "dependentRequired", "dependentSchemas", "else", "enum", "exclusiveMaximum",
    "exclusiveMinimum",
    "if", "items", "maxContains", "maxItems", "maxLength", "maxProperties", "maximum",
    "minContains", "minItems",
    "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern",
    "patternProperties",
    "prefixItems", "properties", "propertyNames", "required", "then", "type", "uniqueItems",
  ]

  /// Keywords that are accepted and not checked.
  static let annotations: [String] = [
    "$comment", "contentEncoding", "contentMediaType", "contentSchema", "default", "deprecated",
    "description",
    "examples", "format", "readOnly", "title", "writeOnly",
  ]

  /// Keywords that some JSON Schema draft defines and that this validator does not implement.
  static let unsupported: Set<String> = [
    "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef", "$vocabulary",
    "additionalItems", "dependencies", "unevaluatedItems", "unevaluatedProperties",
  ]

  /// Everything a schema may use.
  static let supported = Set(validation).union(annotations)

  /// The checked keywords, listed for error descriptions.
  static let validationList =
    validation.joined(separator: ", ") + ", and annotations such as title and description"

  /// The `$schema` values accepted: the published meta-schemas, with or without an empty fragment.
  ///
  /// Older drafts are accepted for their common subset; a construct whose meaning changed is refused when compiled
  /// (for example a boolean `exclusiveMinimum`).
  static let knownMetaSchemas: Set<String> = {
    let bases = [
      "https://json-schema.org/draft/2020-12/schema",
      "https://json-schema.org/draft/2019-09/schema",
      "http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-06/schema",
      "http://json-schema.org/draft-04/schema",
    ]
    var all = Set<String>()
    for base in bases {
      let other =
        base.hasPrefix("https:")
        ? "http:" + base.dropFirst("https:".count) : "https:" + base.dropFirst("http:".count)
      for uri in [base, other] {
        all.insert(uri)
        all.insert(uri + "#")
      }
    }
    return all
  }()
}
