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

  /// Compiles the keywords of one schema object: each keyword, in the order the object lists them, by its family
  /// (``compileKeyword(_:into:)``), then the rules that several keywords make together, and the node of them all.
  private mutating func build(_ object: JSONObject, at key: SchemaKey, depth: Int)
    throws(SchemaError) -> Node
  {
    let info = current
    let location = index.location(key)
    let vocabularies = info.dialect.vocabularies
    let assertFormat = options.format == .assertion || vocabularies.contains(.formatAssertion)
    var checks = NodeChecks()
    // One site for the whole object, moved from keyword to keyword: what the object gives is retained once.
    var site = KeywordSite(
      object: object, key: key, location: location, inner: depth + 1, info: info, assertFormat: assertFormat)

    for keyword in object.keys {
      site.keyword = keyword
      site.value = object[keyword]!
      site.here = child(key, keyword)
      site.hereText = index.location(site.here)

      if !walked, Self.identifiers.contains(keyword), keyword != "$schema" || !key.pointer.isEmpty {
        restart = true  // compiled again, with the index walked
        return Node(location: location, kind: .anything)
      }
      if vocabularies != .standard, let vocabulary = Keywords.vocabulary[keyword] {
        // A keyword of a vocabulary the dialect leaves out is an unknown keyword: ignored.
        guard vocabulary == .core || vocabularies.contains(vocabulary) else { continue }
      }
      try compileKeyword(site, into: &checks)
    }

    addMembersRule(to: &checks, at: key)
    // `unevaluated*` go last: they read what every other keyword evaluated.
    if let items = checks.unevaluatedItems { checks.array.append(items) }
    if let properties = checks.unevaluatedProperties { checks.members.append(properties) }
    // The node is made here, where the lists are last used, so that they are moved into it rather than copied.
    let empty =
      checks.type == nil && checks.general.isEmpty && checks.numeric.isEmpty && checks.string.isEmpty
      && checks.array.isEmpty && checks.members.isEmpty
    return Node(
      location: location, kind: empty ? .anything : .checks, resource: info.resource,
      collectsAnnotations: checks.unevaluatedItems != nil || checks.unevaluatedProperties != nil, type: checks.type,
      general: checks.general, numeric: checks.numeric, string: checks.string, array: checks.array,
      object: checks.members)
  }

  /// The keywords that a try without a walk cannot handle: identifiers and anchors (and `$schema` below the root).
  private static let identifiers: Set<String> = ["$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$schema"]
}
