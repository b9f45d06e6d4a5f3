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
    let location: String
    let depth: Int
  }

  private let root: JSONValue
  /// The root `$id` without a trailing empty fragment; a `$ref` that starts with it is local.
  private var rootID: String?
  private var nodes: [Node?] = []
  private var indexByPointer: [String: Int] = [:]
  private var queue: [Job] = []
  private var patterns: [String: Pattern] = [:]

  private init(root: JSONValue) {
    self.root = root
  }

  /// Compiles a whole schema document; node 0 of the result is the root.
  static func compile(_ schema: JSONValue) throws(SchemaError) -> Program {
    var compiler = Compiler(root: schema)
    if case .object(let object) = schema, let id = object["$id"] {
      guard case .string(var text) = id else {
        throw invalid("", "'$id' must be a string, got \(id.typeName)")
      }
      if text.hasSuffix("#") { text.removeLast() }
      compiler.rootID = text
    }
    _ = compiler.schema(schema, at: "", depth: 0)
    var next = 0
    while next < compiler.queue.count {
      let job = compiler.queue[next]
      next += 1
      try compiler.build(job.value, at: job.location, into: job.index, depth: job.depth)
    }
    return Program(nodes: compiler.nodes.map { $0! })
  }

  // MARK: - Schemas

  /// The node index of the schema `value` found at `location`; it is compiled later, from the queue, if it is new.
  private mutating func schema(_ value: JSONValue, at location: String, depth: Int) -> Int {
    if let index = indexByPointer[location] { return index }
    let index = nodes.count
    nodes.append(nil)
    indexByPointer[location] = index
    queue.append(Job(index: index, value: value, location: location, depth: depth))
    return index
  }

  private mutating func build(_ value: JSONValue, at location: String, into index: Int, depth: Int)
    throws(SchemaError)
  {
    guard depth <= JSONSchema.maximumDepth else {
      throw Self.invalid(
        location, "schemas are nested deeper than \(JSONSchema.maximumDepth) levels")
    }
    switch value {
    case .bool(let b):
      nodes[index] = Node(location: location, kind: b ? .anything : .nothing)
    case .object(let object):
      nodes[index] = try build(object, at: location, depth: depth)
    default:
      throw Self.invalid(location, "a schema must be an object or a boolean, got \(value.typeName)")
    }
  }

  /// Compiles the keywords of one schema object.
  private mutating func build(_ object: JSONObject, at location: String, depth: Int)
    throws(SchemaError) -> Node
  {
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
    let inner = depth + 1

    for key in object.keys {
      let value = object[key]!
      let here = JSONPointer.appending(key, to: location)
      func check(_ rule: Rule) -> Check { Check(keyword: key, location: here, rule: rule) }

      switch key {
      // Any instance.
      case "type":
        type = try typeCheck(value, at: location, keywordLocation: here)
      case "enum":
        guard case .array(let values) = value else {
          throw Self.invalid(location, "'enum' must be an array")
        }
        general.append(check(.enumeration(EnumRule(values))))
      case "const":
        general.append(check(.const(value)))
      case "$ref":
        general.append(check(.ref(try reference(value, at: location))))
      case "allOf":
        general.append(check(.allOf(try schemaArray(value, key, at: location, depth: inner))))
      case "anyOf":
        general.append(check(.anyOf(try schemaArray(value, key, at: location, depth: inner))))
      case "oneOf":
        general.append(check(.oneOf(try schemaArray(value, key, at: location, depth: inner))))
      case "not":
        general.append(check(.not(schema(value, at: here, depth: inner))))
      case "if":
        let condition = schema(value, at: here, depth: inner)
        var then: Int?
        var otherwise: Int?
        if let t = object["then"] {
          then = schema(t, at: JSONPointer.appending("then", to: location), depth: inner)
        }
        if let e = object["else"] {
          otherwise = schema(e, at: JSONPointer.appending("else", to: location), depth: inner)
        }
        if then != nil || otherwise != nil {
          general.append(check(.conditional(if: condition, then: then, else: otherwise)))
        }
      case "then", "else":
        // Without `if` they do nothing; with it they are compiled above. Either way they must be schemas.
        if object["if"] == nil { _ = schema(value, at: here, depth: inner) }

      // Numbers.
      case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
        guard let limit = Limit(value) else {
          throw Self.invalid(location, "'\(key)' must be a number, got \(Self.describe(value))")
        }
        switch key {
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
        string.append(check(.minLength(try count(value, key, at: location))))
      case "maxLength":
        string.append(check(.maxLength(try count(value, key, at: location))))
      case "pattern":
        guard case .string(let source) = value else {
          throw Self.invalid(location, "'pattern' must be a string, got \(value.typeName)")
        }
        string.append(check(.pattern(try pattern(source, key, at: location))))

      // Arrays.
      case "prefixItems":
        if case .array = object["items"] {
          throw Self.invalid(
            location, "'items' must be a schema, not an array, when 'prefixItems' is present")
        }
        array.append(check(.prefixItems(try schemaArray(value, key, at: location, depth: inner))))
      case "items":
        if case .array = value {
          // Draft 7 tuple form: the same as `prefixItems` (accepted for compatibility; `additionalItems` is not).
          array.append(check(.prefixItems(try schemaArray(value, key, at: location, depth: inner))))
        } else {
          let start = object["prefixItems"]?.arrayValue?.count ?? 0
          array.append(check(.items(schema(value, at: here, depth: inner), start: start)))
        }
      case "contains":
        let node = schema(value, at: here, depth: inner)
        var rule = (min: 1, max: Int?.none, minLocation: String?.none, maxLocation: String?.none)
        if let min = object["minContains"] {
          rule.min = try count(min, "minContains", at: location)
          rule.minLocation = JSONPointer.appending("minContains", to: location)
        }
        if let max = object["maxContains"] {
          rule.max = try count(max, "maxContains", at: location)
          rule.maxLocation = JSONPointer.appending("maxContains", to: location)
        }
        array.append(
          check(
            .contains(
              ContainsRule(
                node: node, min: rule.min, max: rule.max, minLocation: rule.minLocation,
                maxLocation: rule.maxLocation))))
      case "minContains", "maxContains":
        _ = try count(value, key, at: location)  // used by `contains`; ignored without it
      case "minItems":
        array.append(check(.minItems(try count(value, key, at: location))))
      case "maxItems":
        array.append(check(.maxItems(try count(value, key, at: location))))
      case "uniqueItems":
        guard case .bool(let unique) = value else {
          throw Self.invalid(location, "'uniqueItems' must be a boolean, got \(value.typeName)")
        }
        if unique { array.append(check(.uniqueItems)) }

      // Objects.
      case "properties":
        properties = try schemaObject(value, key, at: location, depth: inner)
      case "patternProperties":
        let entries = try schemaObject(value, key, at: location, depth: inner)
        var compiled: [(Pattern, Int)] = []
        for (source, node) in entries {
          compiled.append((try pattern(source, key, at: location), node))
        }
        patternProperties = compiled
      case "additionalProperties":
        additional = (schema(value, at: here, depth: inner), value == .bool(false))
      case "required":
        required = try strings(value, key, at: location)
      case "minProperties":
        members.append(check(.minProperties(try count(value, key, at: location))))
      case "maxProperties":
        members.append(check(.maxProperties(try count(value, key, at: location))))
      case "propertyNames":
        members.append(check(.propertyNames(schema(value, at: here, depth: inner))))
      case "dependentRequired":
        guard case .object(let map) = value else {
          throw Self.invalid(
            location, "'dependentRequired' must be an object, got \(value.typeName)")
        }
        var rules: [(String, [String])] = []
        for name in map.keys {
          rules.append((name, try strings(map[name]!, "dependentRequired", at: location)))
        }
        members.append(check(.dependentRequired(rules)))
      case "dependentSchemas":
        members.append(
          check(.dependentSchemas(try schemaObject(value, key, at: location, depth: inner))))

      // Structure.
      case "$defs", "definitions":
        _ = try schemaObject(value, key, at: location, depth: inner)
      case "$schema":
        guard case .string(let uri) = value else {
          throw Self.invalid(location, "'$schema' must be a string, got \(value.typeName)")
        }
        guard Keywords.knownMetaSchemas.contains(uri) else {
          throw SchemaError(
            kind: .unsupportedKeyword, schemaLocation: location,
            message:
              "'$schema' \(Self.quote(uri)) is not supported; use https://json-schema.org/draft/2020-12/schema"
          )
        }
      case "$id":
        if !location.isEmpty {
          throw SchemaError(
            kind: .unsupportedKeyword, schemaLocation: location,
            message: "'$id' is supported only at the root, not in a subschema")
        }

      default:
        if Keywords.unsupported.contains(key) {
          throw SchemaError(
            kind: .unsupportedKeyword, schemaLocation: location,
            message: "keyword '\(key)' is not supported")
        }
      // Annotations (title, description, default, format, examples, ...) and unknown keywords: nothing to check.
      }
    }

    if !properties.isEmpty || !required.isEmpty || !patternProperties.isEmpty || additional != nil {
      let requiredSet = Set(required)
      var list = properties.map {
        MembersRule.Member(name: $0.0, node: $0.1, required: requiredSet.contains($0.0))
      }
      let listed = Set(properties.map(\.0))
      for name in required where !listed.contains(name) {
        list.append(MembersRule.Member(name: name, node: nil, required: true))
      }
      let rule = MembersRule(
        members: list, propertiesLocation: JSONPointer.appending("properties", to: location),
        requiredLocation: JSONPointer.appending("required", to: location),
        patterns: patternProperties,
        additional: additional?.0, additionalForbidden: additional?.1 ?? false,
        additionalLocation: JSONPointer.appending("additionalProperties", to: location))
      members.insert(
        Check(keyword: "properties", location: rule.propertiesLocation, rule: .members(rule)), at: 0
      )
    }

    let empty =
      type == nil && general.isEmpty && numeric.isEmpty && string.isEmpty && array.isEmpty
      && members.isEmpty
    return Node(
      location: location, kind: empty ? .anything : .checks, type: type, general: general,
      numeric: numeric,
      string: string, array: array, object: members)
  }

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
      if !result.contains(s) { result.append(s) }
    }
    return result
  }

  private mutating func schemaArray(
    _ value: JSONValue, _ key: String, at location: String, depth: Int
  )
    throws(SchemaError) -> [Int]
  {
    guard case .array(let items) = value, !items.isEmpty else {
      throw Self.invalid(location, "'\(key)' must be a non-empty array of schemas")
    }
    let base = JSONPointer.appending(key, to: location)
    var result: [Int] = []
    result.reserveCapacity(items.count)
    for (i, item) in items.enumerated() {
      result.append(schema(item, at: "\(base)/\(i)", depth: depth))
    }
    return result
  }

  private mutating func schemaObject(
    _ value: JSONValue, _ key: String, at location: String, depth: Int
  )
    throws(SchemaError) -> [(String, Int)]
  {
    guard case .object(let map) = value else {
      throw Self.invalid(
        location, "'\(key)' must be an object whose values are schemas, got \(value.typeName)")
    }
    let base = JSONPointer.appending(key, to: location)
    var result: [(String, Int)] = []
    result.reserveCapacity(map.count)
    for name in map.keys {
      result.append(
        (name, schema(map[name]!, at: JSONPointer.appending(name, to: base), depth: depth)))
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

  /// The node index of a `$ref` target; the target is compiled later if it has not been yet.
  private mutating func reference(_ value: JSONValue, at location: String) throws(SchemaError)
    -> Int
  {
    guard case .string(let ref) = value else {
      throw Self.invalid(location, "'$ref' must be a string, got \(value.typeName)")
    }
    let base: Substring
    let fragment: Substring
    if let hash = ref.firstIndex(of: "#") {
      base = ref[..<hash]
      fragment = ref[ref.index(after: hash)...]
    } else {
      base = ref[...]
      fragment = ""
    }
    if !base.isEmpty && base != rootID.map({ $0[...] }) {
      throw SchemaError(
        kind: .unsupportedKeyword, schemaLocation: location,
        message:
          "remote reference \(Self.quote(ref)) is not supported; only local references such as '#/$defs/name' are"
      )
    }
    guard let pointer = Self.percentDecoded(fragment) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message: "'$ref' \(Self.quote(ref)) has invalid percent-encoding")
    }
    if !pointer.isEmpty && !pointer.hasPrefix("/") {
      throw SchemaError(
        kind: .unsupportedKeyword, schemaLocation: location,
        message:
          "'$ref' \(Self.quote(ref)) names an anchor, which is not supported; use a JSON Pointer such as '#/$defs/name'"
      )
    }
    guard let tokens = JSONPointer.tokens(pointer) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message: "'$ref' \(Self.quote(ref)) is not a valid JSON Pointer")
    }
    guard let target = JSONPointer.resolve(pointer, in: root) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message:
          "'$ref' \(Self.quote(ref)) does not resolve: the schema has nothing at \(Self.quote(pointer))"
      )
    }
    switch target {
    case .object, .bool: break
    default:
      throw Self.invalid(
        location, "'$ref' \(Self.quote(ref)) designates \(target.typeName), not a schema")
    }
    // The target's depth is not known from here; its number of pointer tokens is an upper bound.
    return schema(target, at: JSONPointer.pointer(tokens), depth: tokens.count)
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
