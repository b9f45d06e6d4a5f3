import Testing
import ToolhostJSON
import ToolhostSchema

@Suite("Schema errors")
struct SchemaErrorTests {
  @Test("a keyword of an older draft that is not read is refused there, with its place")
  func legacyKeyword() throws {
    let error = try #require(
      schemaError(
        ##"{"$schema": "https://json-schema.org/draft/2019-09/schema", "properties": {"x": {"$recursiveRef": "#"}}}"##))
    #expect(error.kind == .unsupportedKeyword)
    #expect(error.schemaLocation == "/properties/x")
    #expect(error.description.hasPrefix("/properties/x: keyword '$recursiveRef' of older drafts is not supported"))
  }

  @Test(
    "older drafts' keywords are unknown keywords in draft 2020-12, and ignored",
    arguments: ["$recursiveRef", "$recursiveAnchor", "dependencies"])
  func ignoredInDraft2020(keyword: String) throws {
    let schema = try compile(#"{"items": {"\#(keyword)": {"a": ["b"]}, "type": "integer"}}"#)
    #expect(schema.isValid([1, 2]))
    #expect(!schema.isValid(["x"]))
  }

  @Test("references to unknown documents and anchors, unknown meta-schemas and vocabularies")
  func unresolvable() throws {
    let remote = try #require(
      schemaError(#"{"properties": {"a": {"$ref": "https://example.com/a.json"}}}"#))
    #expect(remote.kind == .unresolvedReference)
    #expect(remote.schemaLocation == "/properties/a")
    #expect(remote.message.contains("'https://example.com/a.json', which is not known"))
    #expect(remote.message.contains("never fetched over the network"))
    let anchor = try #require(schemaError(##"{"$ref": "#foo"}"##))
    #expect(anchor.kind == .unresolvedReference)
    #expect(anchor.message.contains("no '$anchor' named 'foo'"))
    let metaschema = try #require(schemaError(#"{"$schema": "http://example.com/my-meta"}"#))
    #expect(metaschema.kind == .unsupportedKeyword)
    #expect(metaschema.schemaLocation == "")
    #expect(
      metaschema.description.hasPrefix(
        "/: '$schema' 'http://example.com/my-meta' is not a meta-schema toolhost knows"))
    let vocabulary: JSONValue = [
      "$vocabulary": ["https://json-schema.org/draft/2020-12/vocab/core": true, "https://example.com/vocab/x": true]
    ]
    let options = SchemaOptions(registry: SchemaRegistry(documents: ["https://example.com/meta": vocabulary]))
    #expect(throws: SchemaError.self) {
      try JSONSchema(["$schema": "https://example.com/meta"], options: options)
    }
    let fragment = try #require(schemaError(##"{"$defs": {"a": {"$id": "a.json#x"}}}"##))
    #expect(fragment.kind == .invalidSchema)
    #expect(fragment.schemaLocation == "/$defs/a")
    let badAnchor = try #require(schemaError(#"{"$anchor": "1abc"}"#))
    #expect(badAnchor.kind == .invalidSchema)
  }

  @Test("a registry's loader: its documents resolve, its errors become the reference's")
  func loader() throws {
    struct Refused: Error, CustomStringConvertible {
      var description: String { "refused by the loader" }
    }
    let registry = SchemaRegistry { uri in
      if uri == "file:///plugins/a/common.json" { return ["$defs": ["n": ["type": "integer"]]] }
      if uri == "file:///plugins/a/secret.json" { throw Refused() }
      return nil
    }
    let options = SchemaOptions(baseURI: "file:///plugins/a/toolhost.json", registry: registry)
    let schema = try JSONSchema(["$ref": "common.json#/$defs/n"], options: options)
    #expect(schema.isValid(3))
    #expect(schema.validate("x").first?.keywordLocation == "file:///plugins/a/common.json#/$defs/n/type")
    do {
      _ = try JSONSchema(["$ref": "secret.json"], options: options)
      Issue.record("a refused document compiled")
    } catch {
      #expect(error.kind == .unresolvedReference)
      #expect(error.message.contains("refused by the loader"))
    }
  }

  @Test("a local reference to nothing")
  func unresolved() throws {
    let error = try #require(schemaError(##"{"properties": {"a": {"$ref": "#/$defs/missing"}}}"##))
    #expect(error.kind == .unresolvedReference)
    #expect(error.schemaLocation == "/properties/a")
    #expect(
      error.description
        == "/properties/a: '$ref' '#/$defs/missing' does not resolve: the schema has nothing at '/$defs/missing'"
    )
    #expect(schemaError(##"{"$ref": "#/$defs/a~2"}"##)?.kind == .unresolvedReference)
    #expect(schemaError(##"{"$ref": "#/$defs/%zz"}"##)?.kind == .unresolvedReference)
    #expect(schemaError(##"{"$defs": {"a": 1}, "$ref": "#/$defs/a"}"##)?.kind == .invalidSchema)
  }

  @Test(
    "invalid keyword values",
    arguments: [
      (#"{"minimum": "3"}"#, "", #"'minimum' must be a number, got string "3""#),
      (
        #"{"type": "strng"}"#, "",
        "'type' 'strng' is not a JSON Schema type (use array, boolean, integer, null, number, object or string)"
      ),
      (#"{"type": ["string", "string"]}"#, "", "'type' lists 'string' twice"),
      (#"{"required": "a"}"#, "", "'required' must be an array of strings, got string"),
      (
        #"{"required": ["a", 1]}"#, "",
        "'required' must be an array of strings, but it holds integer 1"
      ),
      (#"{"properties": {"a": {"pattern": "[a-"}}}"#, "/properties/a", nil),
      (#"{"multipleOf": 0}"#, "", "'multipleOf' must be a number greater than 0, got integer 0"),
      (#"{"minLength": -1}"#, "", "'minLength' must be a non-negative integer, got integer -1"),
      (#"{"maxItems": 1.5}"#, "", "'maxItems' must be a non-negative integer, got number 1.5"),
      (#"{"items": 3}"#, "/items", "a schema must be an object or a boolean, got integer"),
      (#"{"anyOf": []}"#, "", "'anyOf' must be a non-empty array of schemas"),
      (
        #"{"properties": []}"#, "",
        "'properties' must be an object whose values are schemas, got array"
      ),
      (#"{"enum": 1}"#, "", "'enum' must be an array"),
      (#"{"uniqueItems": 1}"#, "", "'uniqueItems' must be a boolean, got integer"),
      (#"{"$ref": 1}"#, "", "'$ref' must be a string, got integer"),
      ("5", "", "a schema must be an object or a boolean, got integer"),
    ] as [(String, String, String?)])
  func invalid(schema: String, location: String, message: String?) throws {
    let error = try #require(schemaError(schema))
    #expect(error.kind == .invalidSchema)
    #expect(error.schemaLocation == location)
    if let message { #expect(error.message == message) }
    #expect(!error.description.contains("(supported:"))
  }

  @Test("an invalid pattern names the pattern and the reason")
  func invalidPattern() throws {
    let error = try #require(schemaError(#"{"patternProperties": {"(": {}}}"#))
    #expect(error.kind == .invalidSchema)
    #expect(error.message.hasPrefix("'patternProperties' '(' is not a valid regular expression: "))
  }

  @Test("deeply nested schemas are refused, not a crash")
  func deepSchema() throws {
    var schema: JSONValue = true
    for _ in 0..<600 { schema = ["not": schema] }
    let error = try #require(schemaError(schema.serialized()))
    #expect(error.kind == .invalidSchema)
    #expect(error.message == "schemas are nested deeper than 512 levels")
  }

  @Test("errors compare equal by kind, location and message")
  func equatable() {
    let a = SchemaError(kind: .invalidSchema, schemaLocation: "/a", message: "m")
    #expect(a == SchemaError(kind: .invalidSchema, schemaLocation: "/a", message: "m"))
    #expect(a != SchemaError(kind: .unsupportedKeyword, schemaLocation: "/a", message: "m"))
    #expect(a.description == "/a: m")
  }
}

@Suite("JSON Pointer")
struct JSONPointerTests {
  @Test("escaping and unescaping tokens")
  func tokens() {
    #expect(JSONPointer.escape("a/b~c") == "a~1b~0c")
    #expect(JSONPointer.unescape("a~1b~0c") == "a/b~c")
    #expect(JSONPointer.unescape("~01") == "~1")
    #expect(JSONPointer.unescape("a~2") == nil)
    #expect(JSONPointer.unescape("a~") == nil)
    #expect(JSONPointer.pointer(["a/b", "0", ""]) == "/a~1b/0/")
    #expect(JSONPointer.pointer([String]()) == "")
    #expect(JSONPointer.tokens("/a~1b/0/") == ["a/b", "0", ""])
    #expect(JSONPointer.tokens("") == [])
    #expect(JSONPointer.tokens("a") == nil)
    #expect(JSONPointer.appending("x/y", to: "/p") == "/p/x~1y")
  }

  @Test("resolving pointers")
  func resolve() {
    let document = json(#"{"a": [10, {"b/c": true}], "": 1}"#)
    #expect(JSONPointer.resolve("", in: document) == document)
    #expect(JSONPointer.resolve("/a/1/b~1c", in: document) == true)
    #expect(JSONPointer.resolve("/a/0", in: document) == 10)
    #expect(JSONPointer.resolve("/", in: document) == 1)
    #expect(JSONPointer.resolve("/a/01", in: document) == nil)
    #expect(JSONPointer.resolve("/a/2", in: document) == nil)
    #expect(JSONPointer.resolve("/a/-", in: document) == nil)
    #expect(JSONPointer.resolve("/x", in: document) == nil)
  }
}
