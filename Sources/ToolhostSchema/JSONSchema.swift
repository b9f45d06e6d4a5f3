public import ToolhostJSON

/// A compiled JSON Schema (draft 2020-12): compile once per tool, validate many times.
///
/// Compiling checks the schema, resolves every `$ref` (in the schema, or in the documents of the options' registry:
/// nothing is fetched over the network) and compiles every `pattern` once; validating then walks the compiled form
/// without re-reading the schema. Every keyword of draft 2020-12 is implemented, including `$dynamicRef`,
/// `unevaluatedProperties` and `unevaluatedItems`, and custom meta-schemas' vocabularies. A compiled schema is
/// immutable and safe to share between threads and tasks.
///
/// ```swift
/// let schema = try JSONSchema(["type": "object", "required": ["city"]])
/// schema.validate(["town": "Oslo"])  // [/: missing required property "city"]
/// ```
public struct JSONSchema: Sendable {
  /// The schema as given to ``init(_:options:)``.
  public let source: JSONValue

  /// The compiled form shared by all copies of this value.
  let program: Program

  /// Compiles a schema, given as a JSON value (an object or a boolean).
  ///
  /// - Throws: ``SchemaError`` of kind `.invalidSchema` when a keyword has a value of the wrong shape (for example
  ///   `"minimum": "3"`, a `pattern` that is not a valid regular expression, an `$id` with a fragment, or nesting
  ///   deeper than ``maximumDepth``); `.unresolvedReference` for a `$ref` that designates nothing, or names a document
  ///   that neither the schema nor the registry has; `.unsupportedKeyword` for a `$schema` that names an unknown
  ///   meta-schema, a meta-schema that requires an unknown vocabulary, or `$recursiveRef` in a schema that declares
  ///   draft 2019-09. Unknown keywords such as `x-foo` are ignored, as the specification says, and never throw.
  public init(_ schema: JSONValue, options: SchemaOptions = SchemaOptions()) throws(SchemaError) {
    source = schema
    program = try Compiler.compile(schema, options: options)
  }

  /// Validates an instance and returns every problem found; `[]` means the instance is valid.
  ///
  /// Issues come in the order the schema and the instance are walked. Does not throw: an instance nested deeper
  /// than ``maximumDepth`` through a recursive schema is reported as an issue rather than crashing.
  public func validate(_ instance: JSONValue) -> [ValidationIssue] {
    program.validate(instance)
  }

  /// Whether an instance is valid: the fast path, which stops at the first failure and builds no messages.
  ///
  /// Agrees with `validate(instance).isEmpty`. Does not throw.
  public func isValid(_ instance: JSONValue) -> Bool {
    program.isValid(instance)
  }

  /// The keywords a schema may use: every keyword of draft 2020-12, including the annotations that are accepted but
  /// not checked (`title`, `description`, `default`, `examples`, ...), and `definitions`.
  ///
  /// Other keywords are ignored, as the specification says.
  public static let supportedKeywords: Set<String> = Keywords.supported

  /// The deepest nesting of schemas that is compiled, and of schema applications that is validated (recursion
  /// through `$ref` counts).
  public static let maximumDepth = 512
}

/// One reason why an instance does not satisfy a schema.
public struct ValidationIssue: Sendable, Hashable, CustomStringConvertible {
  /// JSON Pointer (RFC 6901) of the offending value in the instance; `""` for the root.
  public var instanceLocation: String
  /// JSON Pointer of the failing keyword in the schema, for example `/properties/limit/maximum`.
  ///
  /// It points into ``JSONSchema/source`` as written: when the keyword was reached through a `$ref`, it is the
  /// keyword's own place (such as `/$defs/positive/minimum`), not the path through the reference.
  public var keywordLocation: String
  /// The failing keyword, for example `maximum`.
  ///
  /// Two cases are not keywords: `false` for a boolean schema `false` (which allows nothing), and `$ref` for an
  /// instance nested deeper than ``JSONSchema/maximumDepth`` through a recursive reference.
  public var keyword: String
  /// What is wrong, in words a person or a model can act on, for example `9 is greater than the maximum 6`.
  public var message: String

  /// Makes an issue. Does not throw.
  public init(instanceLocation: String, keywordLocation: String, keyword: String, message: String) {
    self.instanceLocation = instanceLocation
    self.keywordLocation = keywordLocation
    self.keyword = keyword
    self.message = message
  }

  /// The location and the message, for example `/limit: 9 is greater than the maximum 6`; the root is shown as `/`.
  public var description: String {
    "\(instanceLocation.isEmpty ? "/" : instanceLocation): \(message)"
  }
}

/// Why a schema cannot be compiled, and where in the schema.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of problem the schema has.
  public enum Kind: Sendable, Equatable {
    /// A keyword's value has the wrong shape, or the schema is not an object or a boolean.
    case invalidSchema
    /// Something the schema relies on that this validator does not know: a meta-schema, a vocabulary, or an older
    /// draft's keyword.
    case unsupportedKeyword
    /// A `$ref` that designates nothing: no such place or anchor, or a document that is not known.
    case unresolvedReference
  }

  /// What kind of problem the schema has.
  public var kind: Kind
  /// JSON Pointer of the (sub)schema that holds the offending keyword, for example `/properties/x`; `""` for the
  /// root.
  public var schemaLocation: String
  /// What is wrong, naming the keyword, for example `keyword 'unevaluatedProperties' is not supported`.
  public var message: String

  /// Makes an error. Does not throw.
  public init(kind: Kind, schemaLocation: String, message: String) {
    self.kind = kind
    self.schemaLocation = schemaLocation
    self.message = message
  }

  /// The location and the message, for example `/properties/x: 'minimum' must be a number, got string "3"`; the root
  /// is shown as `/`.
  public var description: String {
    "\(schemaLocation.isEmpty ? "/" : schemaLocation): \(message)"
  }
}
