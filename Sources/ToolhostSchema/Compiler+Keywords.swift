// The compiler's keywords by family: the validation keywords for any instance, references and identifiers, the
// applicators, the keywords for numbers, strings, arrays and objects, and the rest (annotations and unknown keywords).

import ToolhostJSON

/// One keyword of the schema object being compiled: its name and value, where it and its schema object are, and what
/// the schema object inherits. The compiler moves one site from keyword to keyword of an object.
struct KeywordSite {
  var keyword = ""
  var value = JSONValue.null
  /// The place of the keyword, and how it is shown in errors and issues.
  var here: SchemaKey
  var hereText = ""
  /// The schema object that holds the keyword, for the keywords that read their neighbours.
  let object: JSONObject
  /// The place of the schema object, and how it is shown in errors.
  let key: SchemaKey
  let location: String
  /// The depth of the keyword's subschemas.
  let inner: Int
  /// The base URI, resource and dialect of the schema object.
  let info: SubschemaInfo
  /// Whether `format` asserts (by the options or the dialect) rather than only annotates.
  let assertFormat: Bool

  /// A site in the schema object at `key`, before its first keyword.
  init(object: JSONObject, key: SchemaKey, location: String, inner: Int, info: SubschemaInfo, assertFormat: Bool) {
    self.here = key
    self.object = object
    self.key = key
    self.location = location
    self.inner = inner
    self.info = info
    self.assertFormat = assertFormat
  }

  /// A check of this keyword.
  func check(_ rule: Rule) -> Check { Check(keyword: keyword, location: hereText, rule: rule) }
}

/// The checks of one schema object as its keywords are compiled, and the keywords kept aside to be combined once all
/// are read: `properties`, `required`, `patternProperties` and `additionalProperties` make one rule, and
/// `unevaluated*` go last.
struct NodeChecks {
  var type: TypeCheck?
  var general: [Check] = []
  var numeric: [Check] = []
  var string: [Check] = []
  var array: [Check] = []
  var members: [Check] = []
  var properties: [(String, Int)] = []
  var required: [String] = []
  var patternProperties: [(Pattern, Int)] = []
  /// The `additionalProperties` subschema, and whether it is `false`.
  var additional: (Int, Bool)?
  var unevaluatedProperties: Check?
  var unevaluatedItems: Check?
}

extension Compiler {
  // MARK: - Keywords by family

  /// Compiles one keyword into `checks` by its family; a keyword that no family knows is an annotation or unknown.
  /// The families are disjoint, so the order in which they are tried changes nothing but speed: the commonest in tool
  /// schemas first. They are marked `@inline(__always)` so that compiling costs what one switch did.
  mutating func compileKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError) {
    if try anyInstanceKeyword(site, into: &checks) { return }
    if try objectKeyword(site, into: &checks) { return }
    if try stringKeyword(site, into: &checks) { return }
    if try numberKeyword(site, into: &checks) { return }
    if try arrayKeyword(site, into: &checks) { return }
    if try applicatorKeyword(site, into: &checks) { return }
    if try referenceKeyword(site, into: &checks) { return }
    try otherKeyword(site)
  }

  /// The node of the keyword's value, as a subschema of the keyword.
  private mutating func subschema(_ site: KeywordSite) -> Int {
    schema(site.value, at: site.here, depth: site.inner)
  }

  /// The nodes of the keyword's value, a non-empty array of subschemas.
  private mutating func subschemas(_ site: KeywordSite) throws(SchemaError) -> [Int] {
    try schemaArray(site.value, site.keyword, at: site.key, depth: site.inner)
  }

  /// Compiles `type`, `enum` and `const`, which validate any instance; `false` for another keyword.
  @inline(__always)
  private func anyInstanceKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError) -> Bool {
    switch site.keyword {
    case "type":
      checks.type = try typeCheck(site.value, at: site.location, keywordLocation: site.hereText)
    case "enum":
      guard case .array(let values) = site.value else {
        throw Self.invalid(site.location, "'enum' must be an array")
      }
      checks.general.append(site.check(.enumeration(EnumRule(values))))
    case "const":
      checks.general.append(site.check(.const(site.value)))
    default:
      return false
    }
    return true
  }

  /// Compiles `$ref` and `$dynamicRef`, and checks the structure keywords: identifiers and anchors were read by the
  /// index, and definitions are compiled when referred to. `false` for another keyword.
  @inline(__always)
  private mutating func referenceKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError)
    -> Bool
  {
    switch site.keyword {
    case "$ref":
      let target = try reference(site.value, from: site.key, base: site.info.base, dynamic: false)
      checks.general.append(site.check(.ref(target.node)))
    case "$dynamicRef":
      let target = try reference(site.value, from: site.key, base: site.info.base, dynamic: true)
      checks.general.append(site.check(.dynamicRef(target.node, anchor: target.anchor)))
    case "$defs", "definitions":
      _ = try schemaObject(site.value, site.keyword, at: site.key, depth: site.inner)
    case "$schema":
      guard case .string = site.value else {
        throw Self.invalid(site.location, "'$schema' must be a string, got \(site.value.typeName)")
      }
    default:
      return false
    }
    return true
  }

  /// Compiles the applicators that apply subschemas to the instance itself: `allOf`, `anyOf`, `oneOf`, `not` and
  /// `if`/`then`/`else`. `false` for another keyword.
  @inline(__always)
  private mutating func applicatorKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError)
    -> Bool
  {
    switch site.keyword {
    case "allOf":
      checks.general.append(site.check(.allOf(try subschemas(site))))
    case "anyOf":
      checks.general.append(site.check(.anyOf(try subschemas(site))))
    case "oneOf":
      checks.general.append(site.check(.oneOf(try subschemas(site))))
    case "not":
      checks.general.append(site.check(.not(subschema(site))))
    case "if":
      let condition = subschema(site)
      var then: Int?
      var otherwise: Int?
      if let t = site.object["then"] { then = schema(t, at: child(site.key, "then"), depth: site.inner) }
      if let e = site.object["else"] { otherwise = schema(e, at: child(site.key, "else"), depth: site.inner) }
      // `if` alone still evaluates, for the annotations `unevaluated*` read.
      checks.general.append(site.check(.conditional(if: condition, then: then, else: otherwise)))
    case "then", "else":
      // Without `if` they do nothing; with it they are compiled above. Either way they must be schemas.
      if site.object["if"] == nil { _ = subschema(site) }
    default:
      return false
    }
    return true
  }

  /// Compiles the keywords for numbers: the limits and `multipleOf`. `false` for another keyword.
  @inline(__always)
  private func numberKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError) -> Bool {
    switch site.keyword {
    case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
      guard let limit = Limit(site.value) else {
        throw Self.invalid(site.location, "'\(site.keyword)' must be a number, got \(Self.describe(site.value))")
      }
      switch site.keyword {
      case "minimum": checks.numeric.append(site.check(.minimum(limit)))
      case "maximum": checks.numeric.append(site.check(.maximum(limit)))
      case "exclusiveMinimum": checks.numeric.append(site.check(.exclusiveMinimum(limit)))
      default: checks.numeric.append(site.check(.exclusiveMaximum(limit)))
      }
    case "multipleOf":
      guard let divisor = Divisor(site.value) else {
        throw Self.invalid(
          site.location, "'multipleOf' must be a number greater than 0, got \(Self.describe(site.value))")
      }
      checks.numeric.append(site.check(.multipleOf(divisor)))
    default:
      return false
    }
    return true
  }

  /// Compiles the keywords for strings: the lengths, `pattern`, and `format` when it asserts (it is only an
  /// annotation otherwise, but must be a string either way). `false` for another keyword.
  @inline(__always)
  private mutating func stringKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError)
    -> Bool
  {
    switch site.keyword {
    case "minLength":
      checks.string.append(site.check(.minLength(try count(site.value, site.keyword, at: site.location))))
    case "maxLength":
      checks.string.append(site.check(.maxLength(try count(site.value, site.keyword, at: site.location))))
    case "pattern":
      guard case .string(let source) = site.value else {
        throw Self.invalid(site.location, "'pattern' must be a string, got \(site.value.typeName)")
      }
      checks.string.append(site.check(.pattern(try pattern(source, site.keyword, at: site.location))))
    case "format":
      guard case .string(let name) = site.value else {
        throw Self.invalid(site.location, "'format' must be a string, got \(site.value.typeName)")
      }
      if site.assertFormat, let formatCheck = FormatChecks.checks[name] {
        checks.string.append(site.check(.format(name, formatCheck)))
      }
    default:
      return false
    }
    return true
  }

  /// Compiles the keywords for arrays: `prefixItems`, `items` (and draft 7's `additionalItems`), `contains` with its
  /// bounds, the item counts, `uniqueItems`, and `unevaluatedItems`, kept aside to go last. `false` for another
  /// keyword.
  @inline(__always)
  private mutating func arrayKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError) -> Bool {
    let keyword = site.keyword
    switch keyword {
    case "prefixItems":
      if case .array = site.object["items"] {
        throw Self.invalid(
          site.location, "'items' must be a schema, not an array, when 'prefixItems' is present")
      }
      checks.array.append(site.check(.prefixItems(try subschemas(site))))
    case "items":
      if case .array = site.value {
        // Draft 7 tuple form: the same as `prefixItems` (accepted for compatibility, with `additionalItems`).
        checks.array.append(site.check(.prefixItems(try subschemas(site))))
      } else {
        let start = site.object["prefixItems"]?.arrayValue?.count ?? 0
        checks.array.append(site.check(.items(subschema(site), start: start)))
      }
    case "additionalItems":
      // Draft 7: the items after an `items` array; without one it does nothing.
      if case .array(let tuple) = site.object["items"] {
        checks.array.append(site.check(.items(subschema(site), start: tuple.count)))
      }
    case "contains":
      checks.array.append(site.check(.contains(try containsRule(site))))
    case "minContains", "maxContains":
      _ = try count(site.value, keyword, at: site.location)  // used by `contains`; ignored without it
    case "minItems":
      checks.array.append(site.check(.minItems(try count(site.value, keyword, at: site.location))))
    case "maxItems":
      checks.array.append(site.check(.maxItems(try count(site.value, keyword, at: site.location))))
    case "uniqueItems":
      guard case .bool(let unique) = site.value else {
        throw Self.invalid(site.location, "'uniqueItems' must be a boolean, got \(site.value.typeName)")
      }
      if unique { checks.array.append(site.check(.uniqueItems)) }
    case "unevaluatedItems":
      checks.unevaluatedItems = site.check(.unevaluatedItems(subschema(site)))
    default:
      return false
    }
    return true
  }

  /// The rule of `contains`, with the `minContains` and `maxContains` of its schema object when the dialect has the
  /// validation vocabulary (at least one match otherwise).
  private mutating func containsRule(_ site: KeywordSite) throws(SchemaError) -> ContainsRule {
    let node = subschema(site)
    let vocabularies = site.info.dialect.vocabularies
    var rule = (min: 1, max: Int?.none, minLocation: String?.none, maxLocation: String?.none)
    if let min = site.object["minContains"], vocabularies.contains(.validation) {
      rule.min = try count(min, "minContains", at: site.location)
      rule.minLocation = index.location(child(site.key, "minContains"))
    }
    if let max = site.object["maxContains"], vocabularies.contains(.validation) {
      rule.max = try count(max, "maxContains", at: site.location)
      rule.maxLocation = index.location(child(site.key, "maxContains"))
    }
    return ContainsRule(
      node: node, min: rule.min, max: rule.max, minLocation: rule.minLocation, maxLocation: rule.maxLocation)
  }

  /// Compiles the keywords for objects. `properties`, `required`, `patternProperties`, `additionalProperties` and
  /// `unevaluatedProperties` are kept aside in `checks` to be combined (``addMembersRule(to:at:)``) or put last; the
  /// others are checks. `false` for another keyword.
  @inline(__always)
  private mutating func objectKeyword(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError) -> Bool {
    let keyword = site.keyword
    switch keyword {
    case "properties":
      checks.properties = try schemaObject(site.value, keyword, at: site.key, depth: site.inner)
    case "patternProperties":
      let entries = try schemaObject(site.value, keyword, at: site.key, depth: site.inner)
      var compiled: [(Pattern, Int)] = []
      for (source, node) in entries {
        compiled.append((try pattern(source, keyword, at: site.location), node))
      }
      checks.patternProperties = compiled
    case "additionalProperties":
      checks.additional = (subschema(site), site.value == .bool(false))
    case "required":
      checks.required = try strings(site.value, keyword, at: site.location)
    case "minProperties":
      checks.members.append(site.check(.minProperties(try count(site.value, keyword, at: site.location))))
    case "maxProperties":
      checks.members.append(site.check(.maxProperties(try count(site.value, keyword, at: site.location))))
    case "propertyNames":
      checks.members.append(site.check(.propertyNames(subschema(site))))
    case "dependentRequired":
      checks.members.append(
        site.check(.dependentRequired(try dependentRequired(site.value, keyword, at: site.location))))
    case "dependentSchemas":
      checks.members.append(
        site.check(.dependentSchemas(try schemaObject(site.value, keyword, at: site.key, depth: site.inner))))
    case "dependencies":
      // Draft 7 (legacy dialects only; in 2020-12 an unknown keyword).
      if site.info.dialect.legacy { try dependencies(site, into: &checks) }
    case "unevaluatedProperties":
      checks.unevaluatedProperties = site.check(.unevaluatedProperties(subschema(site)))
    default:
      return false
    }
    return true
  }

  /// Compiles draft 7's `dependencies`: its arrays are `dependentRequired`, its schemas `dependentSchemas`.
  private mutating func dependencies(_ site: KeywordSite, into checks: inout NodeChecks) throws(SchemaError) {
    guard case .object(let map) = site.value else {
      throw Self.invalid(site.location, "'dependencies' must be an object, got \(site.value.typeName)")
    }
    var names: [(String, [String])] = []
    var schemas: [(String, Int)] = []
    for name in map.keys {
      if case .array = map[name]! {
        names.append((name, try strings(map[name]!, site.keyword, at: site.location)))
      } else {
        schemas.append((name, schema(map[name]!, at: child(site.key, site.keyword, name), depth: site.inner)))
      }
    }
    if !names.isEmpty { checks.members.append(site.check(.dependentRequired(names))) }
    if !schemas.isEmpty { checks.members.append(site.check(.dependentSchemas(schemas))) }
  }

  /// Rejects the keywords of older drafts that this validator does not support; any other keyword that no family
  /// knows (annotations such as title, description, default, examples, content*, and unknown keywords) has nothing to
  /// check.
  @inline(__always)
  private func otherKeyword(_ site: KeywordSite) throws(SchemaError) {
    if site.info.dialect.legacy && Keywords.legacyUnsupported.contains(site.keyword) {
      throw SchemaError(
        kind: .unsupportedKeyword, schemaLocation: site.location,
        message: "keyword '\(site.keyword)' of older drafts is not supported; use '$dynamicRef' (draft 2020-12)")
    }
  }

  /// Combines `properties`, `required`, `patternProperties` and `additionalProperties`, if the schema object has any,
  /// into one rule, checked first among the keywords for objects.
  func addMembersRule(to checks: inout NodeChecks, at key: SchemaKey) {
    let properties = checks.properties
    let required = checks.required
    guard !properties.isEmpty || !required.isEmpty || !checks.patternProperties.isEmpty || checks.additional != nil
    else { return }
    // Names are compared by code points, as JSON does (Swift's `==` would merge canonically equivalent ones).
    var list = properties.map { property in
      MembersRule.Member(
        name: property.0, node: property.1, required: required.contains { Equality.sameScalars($0, property.0) })
    }
    for name in required where !properties.contains(where: { Equality.sameScalars($0.0, name) }) {
      list.append(MembersRule.Member(name: name, node: nil, required: true))
    }
    let rule = MembersRule(
      members: list, propertiesLocation: index.location(child(key, "properties")),
      requiredLocation: index.location(child(key, "required")),
      patterns: checks.patternProperties,
      additional: checks.additional?.0, additionalForbidden: checks.additional?.1 ?? false,
      additionalLocation: index.location(child(key, "additionalProperties")))
    checks.members.insert(
      Check(keyword: "properties", location: rule.propertiesLocation, rule: .members(rule)), at: 0)
  }
}
