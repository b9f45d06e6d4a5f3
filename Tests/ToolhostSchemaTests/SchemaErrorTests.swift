import Testing
import ToolhostJSON
import ToolhostSchema

@Suite("Schema errors")
struct SchemaErrorTests {
  @Test("an unsupported keyword is reported with its place and the supported keywords")
  func unsupportedKeyword() throws {
    let error = try #require(
      schemaError(#"{"properties": {"x": {"unevaluatedProperties": false}}}"#))
    #expect(error.kind == .unsupportedKeyword)
    #expect(error.schemaLocation == "/properties/x")
    #expect(error.message == "keyword 'unevaluatedProperties' is not supported")
    #expect(
      error.description.hasPrefix(
        "/properties/x: keyword 'unevaluatedProperties' is not supported (supported: "))
    #expect(error.description.contains("additionalProperties"))
  }

  @Test(
    "known but unsupported keywords",
    arguments: [
      "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor", "$anchor",
      "$recursiveRef",
      "$recursiveAnchor", "$vocabulary", "dependencies", "additionalItems",
    ])
  func unsupported(keyword: String) throws {
    let error = try #require(schemaError(#"{"items": {"\#(keyword)": "x"}}"#))
    #expect(error.kind == .unsupportedKeyword)
    #expect(error.schemaLocation == "/items")
    #expect(error.message == "keyword '\(keyword)' is not supported")
  }

  @Test("nested $id, remote and anchor references, unknown meta-schemas")
  func unsupportedForms() throws {
    let nested = try #require(schemaError(#"{"$defs": {"a": {"$id": "a.json"}}}"#))
    #expect(nested.kind == .unsupportedKeyword)
    #expect(nested.schemaLocation == "/$defs/a")
    let remote = try #require(
      schemaError(#"{"properties": {"a": {"$ref": "https://example.com/a.json"}}}"#))
    #expect(remote.kind == .unsupportedKeyword)
    #expect(remote.schemaLocation == "/properties/a")
    #expect(remote.message.contains("remote reference 'https://example.com/a.json'"))
    #expect(!remote.description.contains("(supported:"))
    let anchor = try #require(schemaError(##"{"$ref": "#foo"}"##))
    #expect(anchor.kind == .unsupportedKeyword)
    let metaschema = try #require(schemaError(#"{"$schema": "http://example.com/my-meta"}"#))
    #expect(metaschema.kind == .unsupportedKeyword)
    #expect(metaschema.schemaLocation == "")
    #expect(
      metaschema.description.hasPrefix("/: '$schema' 'http://example.com/my-meta' is not supported")
    )
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
