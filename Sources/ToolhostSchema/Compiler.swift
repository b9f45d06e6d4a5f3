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

  private var index: SchemaIndex
  private let options: SchemaOptions
  private var nodes: [Node?] = []
  private var indexByKey: [SchemaKey: Int] = [:]
  private var queue: [Job] = []
  private var patterns: [String: Pattern] = [:]
  /// The anchor names some `$dynamicRef` resolves dynamically.
  private var dynamicNames: Set<String> = []
  /// The information of the schema object being built, which its subschemas inherit.
  private var current: SubschemaInfo
  /// Whether the index walked the schema for identifiers. The first try does not: most tool schemas have none.
  private var walked: Bool
  /// Set when a try without a walk meets an identifier, an anchor or a reference to another document: the program
  /// is then thrown away and the schema compiled again with a walk.
  private var restart = false

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
  private mutating func schema(_ value: JSONValue, at key: SchemaKey, depth: Int, info: SubschemaInfo? = nil)
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
  private func child(_ key: SchemaKey, _ tokens: String...) -> SchemaKey {
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

  // MARK: - Keyword values

  private func typeCheck(_ value: JSONValue, at location: String, keywordLocation: String)
    throws(SchemaError)
    -> TypeCheck
  {
    var names: [String] = []
    switch value {
    case .string(let name): names = [name]
    case .array(let items):
      for item in items {
        guard case .string(let name) = item else {
          throw Self.invalid(location, "'type' must be a type name or an array of type names")
        }
        if names.contains(name) {
          throw Self.invalid(location, "'type' lists \(Self.quote(name)) twice")
        }
        names.append(name)
      }
    default:
      throw Self.invalid(location, "'type' must be a type name or an array of type names")
    }
    var mask = TypeMask()
    for name in names {
      guard let bit = TypeMask(name: name) else {
        throw Self.invalid(
          location,
          "'type' \(Self.quote(name)) is not a JSON Schema type (use array, boolean, integer, null, number, object or string)"
        )
      }
      mask.insert(bit)
    }
    // An empty list allows nothing, which the mask expresses by itself.
    return TypeCheck(mask: mask, names: names, location: keywordLocation)
  }

  /// A non-negative integer such as `minLength`; `2.0` counts as an integer, as the specification allows.
  private func count(_ value: JSONValue, _ key: String, at location: String) throws(SchemaError)
    -> Int
  {
    if case .real(let d) = value, d.isFinite, d.rounded() == d, d >= 0 {
      return d >= 9.0e18 ? Int.max : Int(d)
    }
    guard let n = value.integerValue, n >= 0 else {
      throw Self.invalid(
        location, "'\(key)' must be a non-negative integer, got \(Self.describe(value))")
    }
    return Int(n)
  }

  private func strings(_ value: JSONValue, _ key: String, at location: String) throws(SchemaError)
    -> [String]
  {
    guard case .array(let items) = value else {
      throw Self.invalid(location, "'\(key)' must be an array of strings, got \(value.typeName)")
    }
    var result: [String] = []
    for item in items {
      guard case .string(let s) = item else {
        throw Self.invalid(
          location, "'\(key)' must be an array of strings, but it holds \(Self.describe(item))")
      }
      if !result.contains(where: { Equality.sameScalars($0, s) }) { result.append(s) }
    }
    return result
  }

  private func dependentRequired(_ value: JSONValue, _ key: String, at location: String) throws(SchemaError)
    -> [(String, [String])]
  {
    guard case .object(let map) = value else {
      throw Self.invalid(location, "'\(key)' must be an object, got \(value.typeName)")
    }
    var rules: [(String, [String])] = []
    for name in map.keys {
      rules.append((name, try strings(map[name]!, key, at: location)))
    }
    return rules
  }

  private mutating func schemaArray(
    _ value: JSONValue, _ keyword: String, at key: SchemaKey, depth: Int
  )
    throws(SchemaError) -> [Int]
  {
    guard case .array(let items) = value, !items.isEmpty else {
      throw Self.invalid(index.location(key), "'\(keyword)' must be a non-empty array of schemas")
    }
    var result: [Int] = []
    result.reserveCapacity(items.count)
    for (i, item) in items.enumerated() {
      result.append(schema(item, at: child(key, keyword, String(i)), depth: depth))
    }
    return result
  }

  private mutating func schemaObject(
    _ value: JSONValue, _ keyword: String, at key: SchemaKey, depth: Int
  )
    throws(SchemaError) -> [(String, Int)]
  {
    guard case .object(let map) = value else {
      throw Self.invalid(
        index.location(key), "'\(keyword)' must be an object whose values are schemas, got \(value.typeName)")
    }
    var result: [(String, Int)] = []
    result.reserveCapacity(map.count)
    for name in map.keys {
      result.append((name, schema(map[name]!, at: child(key, keyword, name), depth: depth)))
    }
    return result
  }

  private mutating func pattern(_ source: String, _ key: String, at location: String)
    throws(SchemaError) -> Pattern
  {
    if let compiled = patterns[source] { return compiled }
    do {
      let compiled = try Pattern(source)
      patterns[source] = compiled
      return compiled
    } catch {
      throw Self.invalid(
        location,
        "'\(key)' \(Self.quote(source)) is not a valid regular expression: \(error.message)")
    }
  }

  // MARK: - References

  /// The node a `$ref` or `$dynamicRef` designates (compiled later if it has not been yet), and for a `$dynamicRef`
  /// whose target is a `$dynamicAnchor`, the anchor's name, which evaluation looks up in the dynamic scope.
  private mutating func reference(_ value: JSONValue, from key: SchemaKey, base: URIReference, dynamic: Bool)
    throws(SchemaError) -> (node: Int, anchor: String?)
  {
    let keyword = dynamic ? "$dynamicRef" : "$ref"
    let location = index.location(key)
    guard case .string(let ref) = value else {
      throw Self.invalid(location, "'\(keyword)' must be a string, got \(value.typeName)")
    }
    let target = URIReference(ref).resolved(against: base)
    if !walked && (target.withoutFragment != index.resources[0].uri || !Self.isPointerFragment(target.fragment)) {
      restart = true  // another document or an anchor: compiled again, with the index walked
      return (0, nil)
    }
    let resource = try index.resource(target.withoutFragment, for: ref, at: location)
    guard let fragment = Self.percentDecoded((target.fragment ?? "")[...]) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message: "'\(keyword)' \(Self.quote(ref)) has invalid percent-encoding")
    }
    let root = index.resources[resource].root
    let place: SchemaKey
    var anchor: String?
    if fragment.isEmpty {
      place = root
    } else if fragment.hasPrefix("/") {
      guard let tokens = JSONPointer.tokens(fragment) else {
        throw SchemaError(
          kind: .unresolvedReference, schemaLocation: location,
          message: "'\(keyword)' \(Self.quote(ref)) is not a valid JSON Pointer")
      }
      place = SchemaKey(document: root.document, pointer: root.pointer + JSONPointer.pointer(tokens))
    } else {
      guard let found = index.anchor(fragment, in: resource) else {
        throw SchemaError(
          kind: .unresolvedReference, schemaLocation: location,
          message: "'\(keyword)' \(Self.quote(ref)) does not resolve: no '$anchor' named \(Self.quote(fragment))")
      }
      place = found
      if dynamic && index.resources[resource].dynamicAnchors[fragment] == found {
        anchor = fragment
        dynamicNames.insert(fragment)
      }
    }
    guard let designated = index.value(at: place) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message:
          "'\(keyword)' \(Self.quote(ref)) does not resolve: the schema has nothing at \(Self.quote(fragment))")
    }
    switch designated {
    case .object, .bool: break
    default:
      throw Self.invalid(
        location, "'\(keyword)' \(Self.quote(ref)) designates \(designated.typeName), not a schema")
    }
    // The target's depth is not known from here; its number of pointer tokens is an upper bound.
    let depth = JSONPointer.tokens(place.pointer)?.count ?? 0
    return (schema(designated, at: place, depth: depth, info: index.info(at: place)), anchor)
  }

  /// Whether a fragment is empty or a JSON Pointer (percent-encoded or not), not an anchor name.
  private static func isPointerFragment(_ fragment: String?) -> Bool {
    guard let first = fragment?.utf8.first else { return true }
    return first == UInt8(ascii: "/") || first == UInt8(ascii: "%")
  }

  /// Decodes `%XX` escapes (as UTF-8); `nil` for a malformed escape or invalid UTF-8.
  static func percentDecoded(_ text: Substring) -> String? {
    guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next().flatMap(hexValue),
        let low = iterator.next().flatMap(hexValue)
      else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  // MARK: - Errors

  static func invalid(_ location: String, _ message: String) -> SchemaError {
    SchemaError(kind: .invalidSchema, schemaLocation: location, message: message)
  }

  /// A short rendering of a keyword value for error messages.
  static func describe(_ value: JSONValue) -> String {
    "\(value.typeName) \(Messages.preview(value))"
  }

  /// Text in single quotes, for schema errors.
  static func quote(_ text: String) -> String {
    "'\(text)'"
  }
}
