public import ToolhostJSON

/// The schema documents that references to other documents resolve from. Nothing is ever fetched over the network.
///
/// The draft 2020-12 meta-schema and its vocabularies are always there. Add documents by their absolute URI, or give
/// a loader that finds a document for a URI when a schema first refers to it (toolhost's plugins use one that reads
/// schema files shipped beside the manifest).
///
/// ```swift
/// var registry = SchemaRegistry()
/// registry.add(["type": "integer"], at: "https://example.com/count.json")
/// let schema = try JSONSchema(["$ref": "https://example.com/count.json"], options: .init(registry: registry))
/// schema.isValid(3)  // true
/// ```
public struct SchemaRegistry: Sendable {
  /// Finds the document at an absolute URI (without fragment); `nil` when there is none. A thrown error becomes the
  /// message of the `.unresolvedReference` that the reference fails with.
  public typealias Loader = @Sendable (_ uri: String) throws -> JSONValue?

  private var documents: [String: JSONValue]
  private let loader: Loader?

  /// Makes a registry of the given documents, keyed by absolute URI (a trailing empty fragment is ignored), with an
  /// optional loader asked for any other URI. Does not throw.
  public init(documents: [String: JSONValue] = [:], loader: Loader? = nil) {
    self.documents = [:]
    self.loader = loader
    for (uri, document) in documents { add(document, at: uri) }
  }

  /// Adds (or replaces) the document at `uri`. Does not throw.
  public mutating func add(_ document: JSONValue, at uri: String) {
    documents[uri.hasSuffix("#") ? String(uri.dropLast()) : uri] = document
  }

  /// The document at `uri`: an added one, a built-in meta-schema, or the loader's.
  ///
  /// - Throws: what the loader throws.
  func document(at uri: String) throws -> JSONValue? {
    if let document = documents[uri] { return document }
    if let text = MetaSchemas.documents[uri] ?? MetaSchemas.documents[Self.otherScheme(uri)] {
      return try? JSONValue.parse(text)
    }
    return try loader?(uri)
  }

  /// The meta-schemas are known under `https:`; `http:` names them too.
  private static func otherScheme(_ uri: String) -> String {
    uri.hasPrefix("http:") ? "https:" + uri.dropFirst("http:".count) : uri
  }
}

/// How a schema is compiled: where it came from, what its references may reach, and what `format` does.
public struct SchemaOptions: Sendable {
  /// What the `format` keyword does.
  public enum FormatMode: Sendable, Equatable {
    /// `format` is an annotation and never fails (the draft 2020-12 default), unless the schema's meta-schema turns
    /// on the format-assertion vocabulary.
    case annotation
    /// The formats this validator knows (`date-time`, `email`, `ipv4`, `uri`, `uuid`, ...) are checked; unknown ones
    /// stay annotations.
    case assertion
  }

  /// The URI the schema was retrieved from (for example the manifest's `file://` URL): the base that relative
  /// references resolve against when the schema has no `$id`. `nil` for none.
  public var baseURI: String?
  /// The documents that references to other documents resolve from.
  public var registry: SchemaRegistry
  /// What `format` does.
  public var format: FormatMode

  /// Makes options; the defaults are no base URI, only the meta-schemas, and `format` as an annotation.
  /// Does not throw.
  public init(baseURI: String? = nil, registry: SchemaRegistry = SchemaRegistry(), format: FormatMode = .annotation) {
    self.baseURI = baseURI
    self.registry = registry
    self.format = format
  }
}
