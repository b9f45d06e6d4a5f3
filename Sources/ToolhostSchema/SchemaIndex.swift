import ToolhostJSON

/// A place in one of the documents being compiled: the document's number (0 is the schema itself) and a JSON Pointer.
struct SchemaKey: Hashable {
  let document: Int
  let pointer: String
}

/// What the index knows of one subschema: the base URI its references resolve against, the schema resource it
/// belongs to, and the dialect it is read with.
///
/// A class, so that the compiler hands it from a schema to its subschemas with one retain.
final class SubschemaInfo {
  let base: URIReference
  let resource: Int
  let dialect: Dialect

  init(base: URIReference, resource: Int, dialect: Dialect) {
    self.base = base
    self.resource = resource
    self.dialect = dialect
  }
}

/// A schema resource: a document's root or a subschema with `$id`.
struct SchemaResource {
  /// The resource's URI without fragment; `""` for a document with no URI at all.
  let uri: String
  let root: SchemaKey
  /// Its `$anchor`s and `$dynamicAnchor`s: name → place.
  var anchors: [String: SchemaKey] = [:]
  /// Its `$dynamicAnchor`s: name → place.
  var dynamicAnchors: [String: SchemaKey] = [:]
}

/// The identifiers of every document being compiled: resources by URI, anchors, and every subschema's base URI,
/// resource and dialect. Documents are added as references reach them, from the registry.
///
/// Only keywords whose values are schemas are walked, so an `$id` or `$anchor` inside `const`, `enum` or an unknown
/// keyword identifies nothing, as the specification says.
struct SchemaIndex {
  /// The documents, by number, with the URI each was retrieved from.
  private(set) var documents: [(uri: String, root: JSONValue)] = []
  private(set) var resources: [SchemaResource] = []
  private var resourceByURI: [String: Int] = [:]
  private var info: [SchemaKey: SubschemaInfo] = [:]
  let registry: SchemaRegistry
  let options: SchemaOptions

  init(options: SchemaOptions) {
    self.options = options
    self.registry = options.registry
  }

  /// Adds a document retrieved from `uri` and indexes it; returns its number.
  ///
  /// - Throws: ``SchemaError`` for a malformed `$id`, `$anchor`, `$dynamicAnchor` or `$schema`, or a meta-schema that
  ///   requires a vocabulary this validator does not know.
  ///
  /// With `walk: false` (the compiler's first try at a schema, which usually has no identifiers), a root without
  /// `$id` is not walked: it is one resource with no anchors, and the compiler starts again with a walk if it meets an
  /// identifier after all.
  mutating func add(_ root: JSONValue, uri: String, walk: Bool = true) throws(SchemaError) -> Int {
    let number = documents.count
    documents.append((uri, root))
    let base = URIReference(uri)
    let key = SchemaKey(document: number, pointer: "")
    let resource = newResource(uri: base.withoutFragment, root: key)
    if walk || root["$id"] != nil {
      try self.walk(root, key, base: base, resource: resource, dialect: .standard)
    } else {
      var dialect = Dialect.standard
      if let schema = root["$schema"] {
        dialect = try self.dialect(schema, at: Self.location(key, uri))
      }
      info[key] = SubschemaInfo(base: base, resource: resource, dialect: dialect)
    }
    return number
  }

  /// The subschema information at `key`: its own when indexed (a document's root, or a schema with its own `$id` or
  /// `$schema`), else that of the nearest indexed place above it.
  func info(at key: SchemaKey) -> SubschemaInfo {
    if let found = info[key] { return found }
    var pointer = key.pointer
    while let slash = pointer.lastIndex(of: "/") {
      pointer = String(pointer[..<slash])
      if let found = info[SchemaKey(document: key.document, pointer: pointer)] { return found }
    }
    return info[SchemaKey(document: key.document, pointer: "")]!
  }

  /// The resource with URI `uri`, loading its document from the registry when no document added so far has it.
  ///
  /// - Throws: ``SchemaError`` `.unresolvedReference` when neither has it (saying that nothing is fetched over the
  ///   network), or what indexing the loaded document throws.
  mutating func resource(_ uri: String, for ref: String, at location: String) throws(SchemaError) -> Int {
    if let found = resourceByURI[uri] { return found }
    let document: JSONValue?
    do { document = try registry.document(at: uri) } catch {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message: "'$ref' '\(ref)' cannot be loaded: \(error)")
    }
    guard let document else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message:
          "'$ref' '\(ref)' names the schema '\(uri)', which is not known; schemas are never fetched over the network,"
          + " so ship it beside the schema that refers to it")
    }
    _ = try add(document, uri: uri)
    guard let found = resourceByURI[uri] else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message: "'$ref' '\(ref)': the document found for '\(uri)' does not identify as it")
    }
    return found
  }

  /// The place an anchor names in a resource; `nil` when there is no such anchor.
  func anchor(_ name: String, in resource: Int) -> SchemaKey? {
    resources[resource].anchors[name]
  }

  /// The document value at a place; `nil` when the pointer designates nothing.
  func value(at key: SchemaKey) -> JSONValue? {
    JSONPointer.resolve(key.pointer, in: documents[key.document].root)
  }

  // MARK: - Walking

  private mutating func newResource(uri: String, root: SchemaKey) -> Int {
    let index = resources.count
    resources.append(SchemaResource(uri: uri, root: root))
    if resourceByURI[uri] == nil { resourceByURI[uri] = index }
    return index
  }

  private mutating func walk(
    _ value: JSONValue, _ key: SchemaKey, base: URIReference, resource: Int, dialect: Dialect
  ) throws(SchemaError) {
    guard case .object(let object) = value else { return }
    var base = base
    var resource = resource
    var dialect = dialect
    let location = Self.location(key, documents[key.document].uri)
    if let id = object["$id"] {
      guard case .string(let text) = id else {
        throw Compiler.invalid(location, "'$id' must be a string, got \(id.typeName)")
      }
      let reference = URIReference(text)
      if let fragment = reference.fragment, !fragment.isEmpty {
        if dialect.legacy && reference.withoutFragment.isEmpty {
          resources[resource].anchors[fragment] = key
        } else {
          throw Compiler.invalid(
            location, "'$id' \(Compiler.quote(text)) has a fragment; name a place with '$anchor' instead")
        }
      } else {
        base = reference.resolved(against: base)
        base.fragment = nil
        if key.pointer.isEmpty {
          // A document's own `$id`: the root resource answers to it as well as to the retrieval URI.
          if resourceByURI[base.text] == nil { resourceByURI[base.text] = resource }
        } else {
          resource = newResource(uri: base.text, root: key)
        }
      }
    }
    if let schema = object["$schema"], key.pointer.isEmpty || object["$id"] != nil {
      dialect = try self.dialect(schema, at: location)
    }
    for keyword in ["$anchor", "$dynamicAnchor"] {
      guard let anchor = object[keyword] else { continue }
      guard case .string(let name) = anchor, Self.isAnchorName(name) else {
        throw Compiler.invalid(
          location, "'\(keyword)' must be a name (a letter or '_', then letters, digits, '-', '_' or '.')")
      }
      if resources[resource].anchors[name] == nil || keyword == "$anchor" { resources[resource].anchors[name] = key }
      if keyword == "$dynamicAnchor" { resources[resource].dynamicAnchors[name] = key }
    }
    if key.pointer.isEmpty || object["$id"] != nil || object["$schema"] != nil {
      info[key] = SubschemaInfo(base: base, resource: resource, dialect: dialect)
    }

    try Keywords.forEachSubschema(of: object, legacy: dialect.legacy) { (child, slot) throws(SchemaError) in
      try walk(
        child, SchemaKey(document: key.document, pointer: slot.pointer(under: key.pointer)), base: base,
        resource: resource, dialect: dialect)
    }
  }

  /// The dialect a `$schema` value declares.
  private func dialect(_ value: JSONValue, at location: String) throws(SchemaError) -> Dialect {
    guard case .string(let uri) = value else {
      throw Compiler.invalid(location, "'$schema' must be a string, got \(value.typeName)")
    }
    if Keywords.isStandard(uri) { return .standard }
    if Keywords.legacyMetaSchemas.contains(uri) { return Dialect(vocabularies: .standard, legacy: true) }
    let metaSchema = try? registry.document(at: uri.hasSuffix("#") ? String(uri.dropLast()) : uri)
    guard let metaSchema else {
      throw SchemaError(
        kind: .unsupportedKeyword, schemaLocation: location,
        message:
          "'$schema' \(Compiler.quote(uri)) is not a meta-schema toolhost knows; use "
          + "https://json-schema.org/draft/2020-12/schema or ship the meta-schema beside the schema")
    }
    guard case .object(let vocabularyList) = metaSchema["$vocabulary"] else { return .standard }
    var vocabularies: Vocabularies = [.core]
    for (vocabularyURI, required) in vocabularyList {
      if let known = Vocabularies(uri: vocabularyURI) {
        vocabularies.insert(known)
      } else if required == .bool(true) {
        throw SchemaError(
          kind: .unsupportedKeyword, schemaLocation: location,
          message:
            "the meta-schema \(Compiler.quote(uri)) requires the vocabulary \(Compiler.quote(vocabularyURI)), "
            + "which toolhost does not know")
      }
    }
    return Dialect(vocabularies: vocabularies, legacy: false)
  }

  /// `$anchor` names: `^[A-Za-z_][-A-Za-z0-9._]*$`.
  private static func isAnchorName(_ name: String) -> Bool {
    guard let first = name.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
    return name.utf8.allSatisfy {
      isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
        || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
    }
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
  }

  /// How a place is shown in errors and issues: the pointer in the schema itself, or `URI#pointer` in another
  /// document.
  static func location(_ key: SchemaKey, _ documentURI: String) -> String {
    key.document == 0 ? key.pointer : documentURI + "#" + key.pointer
  }

  /// How a place is shown in errors and issues.
  func location(_ key: SchemaKey) -> String {
    key.document == 0 ? key.pointer : documents[key.document].uri + "#" + key.pointer
  }
}
