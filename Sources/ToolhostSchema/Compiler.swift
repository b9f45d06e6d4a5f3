import ToolhostJSON

/// Turns a schema into a ``Program``: checks every keyword's shape, compiles patterns once, and gives each
/// (sub)schema a node index. A `$ref` becomes the index of its target, which is compiled once however many
/// references point at it, so recursive schemas compile to cycles of indices.
///
/// Subschemas are compiled from a queue rather than by recursion, so deep schemas cannot exhaust the stack.
struct Compiler {
  /// A subschema waiting to be compiled into its reserved node.
  private struct Job {
    let index: Int
    let value: JSONValue
    let key: SchemaKey
    let depth: Int
    /// The base URI, resource and dialect the subschema inherits from where it was found.
    let info: SubschemaInfo
  }

  var index: SchemaIndex
  private let options: SchemaOptions
  private var nodes: [Node?] = []
  private var indexByKey: [SchemaKey: Int] = [:]
  private var queue: [Job] = []
  var patterns: [String: Pattern] = [:]
  /// The anchor names some `$dynamicRef` resolves dynamically.
  var dynamicNames: Set<String> = []
  /// The information of the schema object being built, which its subschemas inherit.
  private var current: SubschemaInfo
  /// Whether the index walked the schema for identifiers. The first try does not: most tool schemas have none.
  private(set) var walked: Bool
  /// Set when a try without a walk meets an identifier, an anchor or a reference to another document: the program
  /// is then thrown away and the schema compiled again with a walk.
  var restart = false

  private init(options: SchemaOptions, walk: Bool) {
    self.options = options
    self.walked = walk
    self.index = SchemaIndex(options: options)
    self.current = SubschemaInfo(base: URIReference(""), resource: 0, dialect: .standard)
  }

  /// Compiles a whole schema document; node 0 of the result is the root. Documents that references name are loaded
  /// from the options' registry and compiled into the same program.
  static func compile(_ schema: JSONValue, options: SchemaOptions = SchemaOptions()) throws(SchemaError) -> Program {
    if let program = try compile(schema, options: options, walk: false) { return program }
    return try compile(schema, options: options, walk: true)!
  }

  /// Compiles with or without walking the schema for identifiers first; `nil` when a try without a walk met one.
  private static func compile(_ schema: JSONValue, options: SchemaOptions, walk: Bool) throws(SchemaError)
    -> Program?
  {
    var compiler = Compiler(options: options, walk: walk || schema["$id"] != nil)
    _ = try compiler.index.add(schema, uri: options.baseURI ?? "", walk: compiler.walked)
    let root = SchemaKey(document: 0, pointer: "")
    _ = compiler.schema(schema, at: root, depth: 0, info: compiler.index.info(at: root))
    // Compile until every dynamic anchor that a `$dynamicRef` may reach is compiled too: compiling may load more
    // documents, and with them more anchors.
    var anchorsDone = Set<SchemaKey>()
    var next = 0
    while true {
      while next < compiler.queue.count {
        let job = compiler.queue[next]
        next += 1
        try compiler.build(job.value, at: job.key, into: job.index, depth: job.depth, info: job.info)
        if compiler.restart { return nil }
      }
      var added = false
      for resource in compiler.index.resources {
        for (name, key) in resource.dynamicAnchors
        where compiler.dynamicNames.contains(name) && !anchorsDone.contains(key) {
          anchorsDone.insert(key)
          if let value = compiler.index.value(at: key) {
            let depth = JSONPointer.tokens(key.pointer)?.count ?? 0
            _ = compiler.schema(value, at: key, depth: depth, info: compiler.index.info(at: key))
            added = true
          }
        }
      }
      if !added { break }
    }
    let dynamicAnchors: [[String: Int]] =
      compiler.dynamicNames.isEmpty
      ? []
      : compiler.index.resources.map { resource in
        resource.dynamicAnchors.filter { compiler.dynamicNames.contains($0.key) }
          .compactMapValues { compiler.indexByKey[$0] }
      }
    return Program(
      nodes: compiler.nodes.map { $0! }, dynamicAnchors: dynamicAnchors,
      usesDynamicScope: !compiler.dynamicNames.isEmpty)
  }

  // MARK: - Schemas

  /// The node index of the schema `value` found at `key`; it is compiled later, from the queue, if it is new. It
  /// inherits `info`, or by default that of the schema being built.
  mutating func schema(_ value: JSONValue, at key: SchemaKey, depth: Int, info: SubschemaInfo? = nil)
    -> Int
  {
    if let index = indexByKey[key] { return index }
    let index = nodes.count
    nodes.append(nil)
    indexByKey[key] = index
    queue.append(Job(index: index, value: value, key: key, depth: depth, info: info ?? current))
    return index
  }

  /// The place of a keyword (or a member of it) inside the schema at `key`.
  func child(_ key: SchemaKey, _ tokens: String...) -> SchemaKey {
    var pointer = key.pointer
    for token in tokens { pointer = JSONPointer.appending(token, to: pointer) }
    return SchemaKey(document: key.document, pointer: pointer)
  }

  private mutating func build(
    _ value: JSONValue, at key: SchemaKey, into index: Int, depth: Int, info: SubschemaInfo
  ) throws(SchemaError) {
    let location = self.index.location(key)
    guard depth <= JSONSchema.maximumDepth else {
      throw Self.invalid(
        location, "schemas are nested deeper than \(JSONSchema.maximumDepth) levels")
    }
    switch value {
    case .bool(let b):
      nodes[index] = Node(
        location: location, kind: b ? .anything : .nothing, resource: info.resource)
    case .object(let object):
      // A schema with its own `$id` or `$schema` starts a resource or a dialect, which the index knows.
      current = object["$id"] != nil || object["$schema"] != nil ? self.index.info(at: key) : info
      nodes[index] = try build(object, at: key, depth: depth)
    default:
      throw Self.invalid(location, "a schema must be an object or a boolean, got \(value.typeName)")
    }
  }

  /// Compiles the keywords of one schema object.
  private mutating func build(_ object: JSONObject, at key: SchemaKey, depth: Int)
    throws(SchemaError) -> Node
  {
    let info = current
    let location = index.location(key)
    let vocabularies = info.dialect.vocabularies
    let assertFormat = options.format == .assertion || vocabularies.contains(.formatAssertion)
    var type: TypeCheck?
    var general: [Check] = []
    var numeric: [Check] = []
    var string: [Check] = []
    var array: [Check] = []
    var members: [Check] = []
    var properties: [(String, Int)] = []
    var required: [String] = []
    var patternProperties: [(Pattern, Int)] = []
    var additional: (Int, Bool)?
    var unevaluated: (properties: Check?, items: Check?)
    let inner = depth + 1

    for keyword in object.keys {
      let value = object[keyword]!
      let here = child(key, keyword)
      let hereText = index.location(here)
      func check(_ rule: Rule) -> Check { Check(keyword: keyword, location: hereText, rule: rule) }
      func subschema(_ value: JSONValue) -> Int { schema(value, at: here, depth: inner) }

      if !walked, Self.identifiers.contains(keyword), keyword != "$schema" || !key.pointer.isEmpty {
        restart = true  // compiled again, with the index walked
        return Node(location: location, kind: .anything)
      }
      if vocabularies != .standard, let vocabulary = Keywords.vocabulary[keyword] {
        // A keyword of a vocabulary the dialect leaves out is an unknown keyword: ignored.
        guard vocabulary == .core || vocabularies.contains(vocabulary) else { continue }
      }

      switch keyword {
      // Any instance.
      case "type":
        type = try typeCheck(value, at: location, keywordLocation: hereText)
      case "enum":
        guard case .array(let values) = value else {
          throw Self.invalid(location, "'enum' must be an array")
        }
        general.append(check(.enumeration(EnumRule(values))))
      case "const":
        general.append(check(.const(value)))
      case "$ref":
        general.append(check(.ref(try reference(value, from: key, base: info.base, dynamic: false).node)))
      case "$dynamicRef":
        let target = try reference(value, from: key, base: info.base, dynamic: true)
        general.append(check(.dynamicRef(target.node, anchor: target.anchor)))
      case "allOf":
        general.append(check(.allOf(try schemaArray(value, keyword, at: key, depth: inner))))
      case "anyOf":
        general.append(check(.anyOf(try schemaArray(value, keyword, at: key, depth: inner))))
      case "oneOf":
        general.append(check(.oneOf(try schemaArray(value, keyword, at: key, depth: inner))))
      case "not":
        general.append(check(.not(subschema(value))))
      case "if":
        let condition = subschema(value)
        var then: Int?
        var otherwise: Int?
        if let t = object["then"] { then = schema(t, at: child(key, "then"), depth: inner) }
        if let e = object["else"] { otherwise = schema(e, at: child(key, "else"), depth: inner) }
        // `if` alone still evaluates, for the annotations `unevaluated*` read.
        general.append(check(.conditional(if: condition, then: then, else: otherwise)))
      case "then", "else":
        // Without `if` they do nothing; with it they are compiled above. Either way they must be schemas.
        if object["if"] == nil { _ = subschema(value) }

      // Numbers.
      case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
        guard let limit = Limit(value) else {
          throw Self.invalid(location, "'\(keyword)' must be a number, got \(Self.describe(value))")
        }
        switch keyword {
        case "minimum": numeric.append(check(.minimum(limit)))
        case "maximum": numeric.append(check(.maximum(limit)))
        case "exclusiveMinimum": numeric.append(check(.exclusiveMinimum(limit)))
        default: numeric.append(check(.exclusiveMaximum(limit)))
        }
      case "multipleOf":
        guard let divisor = Divisor(value) else {
          throw Self.invalid(
            location, "'multipleOf' must be a number greater than 0, got \(Self.describe(value))")
        }
        numeric.append(check(.multipleOf(divisor)))

      // Strings.
      case "minLength":
        string.append(check(.minLength(try count(value, keyword, at: location))))
      case "maxLength":
        string.append(check(.maxLength(try count(value, keyword, at: location))))
      case "pattern":
        guard case .string(let source) = value else {
          throw Self.invalid(location, "'pattern' must be a string, got \(value.typeName)")
        }
        string.append(check(.pattern(try pattern(source, keyword, at: location))))
      case "format":
        guard case .string(let name) = value else {
          throw Self.invalid(location, "'format' must be a string, got \(value.typeName)")
        }
        if assertFormat, let formatCheck = FormatChecks.checks[name] {
          string.append(check(.format(name, formatCheck)))
        }

      // Arrays.
      case "prefixItems":
        if case .array = object["items"] {
          throw Self.invalid(
            location, "'items' must be a schema, not an array, when 'prefixItems' is present")
        }
        array.append(check(.prefixItems(try schemaArray(value, keyword, at: key, depth: inner))))
      case "items":
        if case .array = value {
          // Draft 7 tuple form: the same as `prefixItems` (accepted for compatibility, with `additionalItems`).
          array.append(check(.prefixItems(try schemaArray(value, keyword, at: key, depth: inner))))
        } else {
          let start = object["prefixItems"]?.arrayValue?.count ?? 0
          array.append(check(.items(subschema(value), start: start)))
        }
      case "additionalItems":
        // Draft 7: the items after an `items` array; without one it does nothing.
        if case .array(let tuple) = object["items"] {
          array.append(check(.items(subschema(value), start: tuple.count)))
        }
      case "contains":
        let node = subschema(value)
        var rule = (min: 1, max: Int?.none, minLocation: String?.none, maxLocation: String?.none)
        if let min = object["minContains"], vocabularies.contains(.validation) {
          rule.min = try count(min, "minContains", at: location)
          rule.minLocation = index.location(child(key, "minContains"))
        }
        if let max = object["maxContains"], vocabularies.contains(.validation) {
          rule.max = try count(max, "maxContains", at: location)
          rule.maxLocation = index.location(child(key, "maxContains"))
        }
        array.append(
          check(
            .contains(
              ContainsRule(
                node: node, min: rule.min, max: rule.max, minLocation: rule.minLocation,
                maxLocation: rule.maxLocation))))
      case "minContains", "maxContains":
        _ = try count(value, keyword, at: location)  // used by `contains`; ignored without it
      case "minItems":
        array.append(check(.minItems(try count(value, keyword, at: location))))
      case "maxItems":
        array.append(check(.maxItems(try count(value, keyword, at: location))))
      case "uniqueItems":
        guard case .bool(let unique) = value else {
          throw Self.invalid(location, "'uniqueItems' must be a boolean, got \(value.typeName)")
        }
        if unique { array.append(check(.uniqueItems)) }
      case "unevaluatedItems":
        unevaluated.items = check(.unevaluatedItems(subschema(value)))

      // Objects.
      case "properties":
        properties = try schemaObject(value, keyword, at: key, depth: inner)
      case "patternProperties":
        let entries = try schemaObject(value, keyword, at: key, depth: inner)
        var compiled: [(Pattern, Int)] = []
        for (source, node) in entries {
          compiled.append((try pattern(source, keyword, at: location), node))
        }
        patternProperties = compiled
      case "additionalProperties":
        additional = (subschema(value), value == .bool(false))
      case "required":
        required = try strings(value, keyword, at: location)
      case "minProperties":
        members.append(check(.minProperties(try count(value, keyword, at: location))))
      case "maxProperties":
        members.append(check(.maxProperties(try count(value, keyword, at: location))))
      case "propertyNames":
        members.append(check(.propertyNames(subschema(value))))
      case "dependentRequired":
        members.append(check(.dependentRequired(try dependentRequired(value, keyword, at: location))))
      case "dependentSchemas":
        members.append(
          check(.dependentSchemas(try schemaObject(value, keyword, at: key, depth: inner))))
      case "dependencies":
        // Draft 7 (legacy dialects only; in 2020-12 an unknown keyword): arrays are `dependentRequired`, schemas
        // `dependentSchemas`.
        guard info.dialect.legacy else { continue }
        guard case .object(let map) = value else {
          throw Self.invalid(location, "'dependencies' must be an object, got \(value.typeName)")
        }
        var names: [(String, [String])] = []
        var schemas: [(String, Int)] = []
        for name in map.keys {
          if case .array = map[name]! {
            names.append((name, try strings(map[name]!, keyword, at: location)))
          } else {
            schemas.append((name, schema(map[name]!, at: child(key, keyword, name), depth: inner)))
          }
        }
        if !names.isEmpty { members.append(check(.dependentRequired(names))) }
        if !schemas.isEmpty { members.append(check(.dependentSchemas(schemas))) }
      case "unevaluatedProperties":
        unevaluated.properties = check(.unevaluatedProperties(subschema(value)))

      // Structure: identifiers and anchors were read by the index; definitions are compiled when referred to.
      case "$defs", "definitions":
        _ = try schemaObject(value, keyword, at: key, depth: inner)
      case "$schema":
        guard case .string = value else {
          throw Self.invalid(location, "'$schema' must be a string, got \(value.typeName)")
        }

      default:
        if info.dialect.legacy && Keywords.legacyUnsupported.contains(keyword) {
          throw SchemaError(
            kind: .unsupportedKeyword, schemaLocation: location,
            message: "keyword '\(keyword)' of older drafts is not supported; use '$dynamicRef' (draft 2020-12)")
        }
      // Annotations (title, description, default, examples, content*, ...): nothing to check.
      }
    }

    if !properties.isEmpty || !required.isEmpty || !patternProperties.isEmpty || additional != nil {
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
        patterns: patternProperties,
        additional: additional?.0, additionalForbidden: additional?.1 ?? false,
        additionalLocation: index.location(child(key, "additionalProperties")))
      members.insert(
        Check(keyword: "properties", location: rule.propertiesLocation, rule: .members(rule)), at: 0
      )
    }
    // `unevaluated*` go last: they read what every other keyword evaluated.
    if let items = unevaluated.items { array.append(items) }
    if let properties = unevaluated.properties { members.append(properties) }

    let empty =
      type == nil && general.isEmpty && numeric.isEmpty && string.isEmpty && array.isEmpty
      && members.isEmpty
    return Node(
      location: location, kind: empty ? .anything : .checks, resource: info.resource,
      collectsAnnotations: unevaluated.items != nil || unevaluated.properties != nil, type: type,
      general: general, numeric: numeric, string: string, array: array, object: members)
  }

  /// The keywords that a try without a walk cannot handle: identifiers and anchors (and `$schema` below the root).
  private static let identifiers: Set<String> = ["$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$schema"]
}
