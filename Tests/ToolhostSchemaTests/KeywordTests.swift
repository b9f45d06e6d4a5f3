import Testing
import ToolhostJSON
import ToolhostSchema

/// Whether `instance` (JSON text) is valid, after checking that `validate` and `isValid` agree.
private func valid(
  _ schema: JSONSchema, _ instance: String, sourceLocation: SourceLocation = #_sourceLocation
)
  -> Bool
{
  problems(schema, instance, sourceLocation: sourceLocation).isEmpty
}

@Suite("Keywords")
struct KeywordTests {
  @Test("type: integer also matches reals with no fractional part")
  func integerType() throws {
    let schema = try compile(#"{"type": "integer"}"#)
    #expect(valid(schema, "1"))
    #expect(valid(schema, "1.0"))
    #expect(valid(schema, "-0.0"))
    #expect(valid(schema, "1e3"))
    #expect(!valid(schema, "1.5"))
    #expect(!valid(schema, #""1""#))
    #expect(problems(schema, "1.5") == ["/: expected integer, got number"])
  }

  @Test("type: number matches integers and reals; lists of types")
  func numberAndLists() throws {
    let number = try compile(#"{"type": "number"}"#)
    #expect(valid(number, "1"))
    #expect(valid(number, "1.5"))
    #expect(!valid(number, "true"))
    let nullable = try compile(#"{"type": ["string", "null"]}"#)
    #expect(valid(nullable, "null"))
    #expect(valid(nullable, #""x""#))
    #expect(problems(nullable, "3") == ["/: expected string or null, got integer"])
    for (name, instance) in [
      ("object", "{}"), ("array", "[]"), ("boolean", "false"), ("null", "null"), ("string", #""""#),
    ] {
      #expect(valid(try compile(#"{"type": "\#(name)"}"#), instance))
      #expect(!valid(try compile(#"{"type": "\#(name)"}"#), "0"))
    }
  }

  @Test("lengths count code points, not bytes or grapheme clusters")
  func codePoints() throws {
    let one = try compile(#"{"minLength": 1, "maxLength": 1}"#)
    #expect(valid(one, #""💩""#))  // 1 code point, 4 UTF-8 bytes, 2 UTF-16 units
    #expect(valid(one, #""é""#))
    #expect(!valid(one, "\"e\u{301}\""))  // 2 code points, 1 grapheme cluster
    #expect(!valid(one, #""""#))
    let two = try compile(#"{"minLength": 2}"#)
    #expect(valid(two, "\"e\u{301}\""))
    #expect(!valid(two, #""💩""#))
    #expect(valid(try compile(#"{"maxLength": 2}"#), #""日本""#))
  }

  @Test("pattern: ECMA-262 flavour, unanchored, Unicode properties")
  func patterns() throws {
    let letters = try compile(#"{"pattern": "^\\p{Letter}+$"}"#)
    #expect(valid(letters, #""héllo""#))
    #expect(valid(letters, #""日本語""#))
    #expect(!valid(letters, #""abc1""#))
    let short = try compile(#"{"pattern": "^\\p{L}\\p{Lu}$"}"#)
    #expect(valid(short, #""aB""#))
    #expect(!valid(short, #""ab""#))
    let unanchored = try compile(#"{"pattern": "b+"}"#)
    #expect(valid(unanchored, #""abbc""#))
    #expect(!valid(unanchored, #""ac""#))
    #expect(valid(unanchored, "5"))  // does not apply to non-strings
    let digits = try compile(#"{"pattern": "^\\d+$"}"#)
    #expect(valid(digits, #""123""#))
    #expect(!valid(digits, #""١٢٣""#))  // \d is ASCII only in ECMA-262
    let dot = try compile(#"{"pattern": "^.$"}"#)
    #expect(valid(dot, #""💩""#))
    #expect(!valid(dot, "\"e\u{301}\""))  // `.` is one code point
    let dollar = try compile(#"{"pattern": "^abc$"}"#)
    #expect(!valid(dollar, #""abc\n""#))
    // `.` leaves out only ECMA-262's four line terminators (Swift's own `.` also leaves out U+000B, U+000C, U+0085),
    // and stays literal when escaped or in a class.
    let anyButLineEnds = try compile(#"{"pattern": "^a.b$"}"#)
    for inside in ["\u{0B}", "\u{0C}", "\u{85}", "x"] { #expect(anyButLineEnds.isValid(.string("a\(inside)b"))) }
    for inside in ["\n", "\r", "\u{2028}", "\u{2029}"] { #expect(!anyButLineEnds.isValid(.string("a\(inside)b"))) }
    let literal = try compile(#"{"pattern": "^[.]\\.$"}"#)
    #expect(valid(literal, #""..""#))
    #expect(!valid(literal, #""ab""#))
  }

  @Test("member names are matched by code points")
  func exactNames() throws {
    let schema = try compile("{\"properties\": {\"\u{E9}\": {\"type\": \"integer\"}}, \"additionalProperties\": false}")
    #expect(schema.isValid(["\u{E9}": 1]))
    #expect(!schema.isValid(["e\u{301}": 1]))  // not the listed name, so additional
    let both = try compile(
      "{\"properties\": {\"\u{E9}\": true, \"e\u{301}\": true}, \"additionalProperties\": false}")
    #expect(both.isValid(["\u{E9}": 1, "e\u{301}": 2]))
    #expect(!both.isValid(["\u{E9}": 1, "x": 2]))
    let required = try compile("{\"required\": [\"e\u{301}\"]}")
    #expect(!required.isValid(["\u{E9}": 1]))
  }

  @Test("enum and const compare as JSON Schema does")
  func equality() throws {
    let schema = try compile(#"{"enum": [1, "a", [1, 2], {"x": 1, "y": [true]}, null]}"#)
    #expect(valid(schema, "1.0"))
    #expect(valid(schema, #"{"y": [true], "x": 1}"#))
    #expect(valid(schema, "[1.0, 2]"))
    #expect(valid(schema, "null"))
    #expect(!valid(schema, "true"))
    #expect(!valid(schema, "[2, 1]"))
    #expect(!valid(schema, #""A""#))
    let falseConst = try compile(#"{"const": false}"#)
    #expect(!valid(falseConst, "0"))
    #expect(valid(falseConst, "false"))
    // Strings compare by code points: precomposed é is not e + combining accent.
    let accent = try compile(#"{"const": "é"}"#)
    #expect(!valid(accent, "\"e\u{301}\""))
    // Long string enums take the indexed path.
    let many = try compile(#"{"enum": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "é"]}"#)
    #expect(valid(many, #""i""#))
    #expect(valid(many, #""é""#))
    #expect(!valid(many, "\"e\u{301}\""))
    #expect(!valid(many, #""z""#))
    #expect(!valid(many, "1"))
  }

  @Test("numeric limits compare exactly, integers against reals")
  func limits() throws {
    let schema = try compile(#"{"minimum": 1.5, "maximum": 9007199254740993}"#)
    #expect(valid(schema, "2"))
    #expect(valid(schema, "1.5"))
    #expect(!valid(schema, "1"))
    #expect(valid(schema, "9007199254740993"))
    #expect(!valid(schema, "9007199254740994"))  // beyond 2^53, where Double would round
    let exclusive = try compile(#"{"exclusiveMinimum": 0, "exclusiveMaximum": 1}"#)
    #expect(valid(exclusive, "0.5"))
    #expect(!valid(exclusive, "0"))
    #expect(!valid(exclusive, "1.0"))
    #expect(valid(exclusive, #""not a number""#))
  }

  @Test("multipleOf is exact for decimals")
  func multipleOf() throws {
    let small = try compile(#"{"multipleOf": 0.0001}"#)
    #expect(valid(small, "0.0075"))
    #expect(!valid(small, "0.00751"))
    #expect(valid(small, "12"))
    let cents = try compile(#"{"multipleOf": 0.01}"#)
    #expect(valid(cents, "19.99"))
    #expect(valid(cents, "0.07"))
    #expect(!valid(cents, "19.999"))
    let integer = try compile(#"{"multipleOf": 3}"#)
    #expect(valid(integer, "9"))
    #expect(valid(integer, "-9"))
    #expect(valid(integer, "9.0"))
    #expect(!valid(integer, "10"))
    #expect(!valid(integer, "4.5"))
    #expect(valid(integer, "9223372036854775806"))  // 3 × 3074457345618258602
    let huge = try compile(#"{"multipleOf": 0.123456789}"#)
    #expect(!valid(huge, "1e308"))
    let half = try compile(#"{"multipleOf": 1.5}"#)
    #expect(valid(half, "4.5"))
    #expect(valid(half, "0"))
    #expect(!valid(half, "35"))
  }

  @Test("properties, patternProperties and additionalProperties together")
  func objectMembers() throws {
    let schema = try compile(
      #"""
      {"properties": {"foo": {"type": "array", "maxItems": 3}, "bar": {"type": "array"}},
       "patternProperties": {"f.o": {"minItems": 2}},
       "additionalProperties": {"type": "integer"}}
      """#)
    #expect(valid(schema, #"{"foo": [1, 2]}"#))
    #expect(problems(schema, #"{"foo": []}"#) == ["/foo: expected at least 2 items, got 0"])
    #expect(problems(schema, #"{"fxo": [1]}"#) == ["/fxo: expected at least 2 items, got 1"])
    #expect(problems(schema, #"{"quux": "x"}"#) == ["/quux: expected integer, got string"])
    #expect(valid(schema, #"{"quux": 3, "bar": []}"#))
    #expect(valid(schema, "[1]"))  // object keywords do not apply to arrays
  }

  @Test("items, prefixItems and the draft 7 tuple form")
  func arrays() throws {
    let tuple = try compile(
      #"{"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}}"#)
    #expect(valid(tuple, #"["a", 1, true, false]"#))
    #expect(valid(tuple, #"["a"]"#))
    #expect(
      problems(tuple, #"[1, 1, 1]"#) == [
        "/0: expected string, got integer", "/2: expected boolean, got integer",
      ])
    let closed = try compile(#"{"prefixItems": [{}, {}], "items": false}"#)
    #expect(problems(closed, "[1, 2, 3]") == ["/: expected at most 2 items, got 3"])
    let empty = try compile(#"{"items": false}"#)
    #expect(problems(empty, "[1]") == ["/: expected an empty array, got 1 item"])
    let draft7 = try compile(#"{"items": [{"type": "string"}, {"type": "integer"}]}"#)
    #expect(valid(draft7, #"["a", 1, "anything"]"#))
    #expect(!valid(draft7, #"[1]"#))
    #expect(schemaError(#"{"prefixItems": [{}], "items": [{}]}"#)?.kind == .invalidSchema)
  }

  @Test("uniqueItems uses JSON equality, also past the pairwise limit")
  func uniqueItems() throws {
    let schema = try compile(#"{"uniqueItems": true}"#)
    #expect(valid(schema, #"[1, "1", [1], {"a": 1}, true]"#))
    #expect(!valid(schema, "[1, 1.0]"))
    #expect(!valid(schema, #"[{"a": 1, "b": 2}, {"b": 2, "a": 1}]"#))
    let many = (0..<40).map(String.init).joined(separator: ", ")
    #expect(valid(schema, "[\(many)]"))
    #expect(
      problems(schema, "[\(many), 17.0]") == [
        "/: items 17 and 40 are equal (17); all items must be unique"
      ])
    #expect(
      !valid(schema, #"[\#(many), {"x": [1, {"y": 2, "z": 3}]}, {"x": [1.0, {"z": 3, "y": 2}]}]"#))
  }

  @Test("contains with minContains and maxContains")
  func contains() throws {
    let schema = try compile(#"{"contains": {"const": 1}, "minContains": 2, "maxContains": 3}"#)
    #expect(valid(schema, "[1, 1, 2]"))
    #expect(valid(schema, "[1, 1, 1]"))
    #expect(!valid(schema, "[1, 2]"))
    #expect(!valid(schema, "[1, 1, 1, 1]"))
    #expect(valid(try compile(#"{"contains": {"const": 1}, "minContains": 0}"#), "[]"))
    #expect(!valid(try compile(#"{"contains": {"const": 1}}"#), "[]"))
  }

  @Test("dependentRequired, dependentSchemas, propertyNames, min/maxProperties")
  func otherObjectKeywords() throws {
    let schema = try compile(
      #"""
      {"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}},
       "propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 3}
      """#)
    #expect(valid(schema, #"{"a": 1, "b": 2}"#))
    #expect(!valid(schema, #"{"a": 1}"#))
    #expect(problems(schema, #"{"c": 1}"#) == [#"/: missing required property "d""#])
    #expect(!valid(schema, #"{"long": 1}"#))
    #expect(!valid(schema, "{}"))
    #expect(!valid(schema, #"{"e": 1, "f": 2, "g": 3, "h": 4}"#))
  }

  @Test("if, then and else")
  func conditional() throws {
    let schema = try compile(
      #"""
      {"if": {"properties": {"country": {"const": "US"}}},
       "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}},
       "else": {"properties": {"zip": {"pattern": "^[A-Z0-9 ]+$"}}}}
      """#)
    #expect(valid(schema, #"{"country": "US", "zip": "12345"}"#))
    #expect(
      problems(schema, #"{"country": "US", "zip": "AB1"}"#) == [
        #"/zip: "AB1" does not match the pattern ^[0-9]{5}$"#
      ])
    #expect(valid(schema, #"{"country": "NL", "zip": "1234 AB"}"#))
    #expect(!valid(schema, #"{"country": "NL", "zip": "x"}"#))
    // then/else without if do nothing.
    #expect(valid(try compile(#"{"then": false, "else": false}"#), "1"))
  }

  @Test("allOf, anyOf, oneOf, not")
  func applicators() throws {
    let all = try compile(#"{"allOf": [{"minimum": 1}, {"maximum": 3}]}"#)
    #expect(valid(all, "2"))
    #expect(problems(all, "5") == ["/: 5 is greater than the maximum 3"])
    let any = try compile(#"{"anyOf": [{"type": "string"}, {"minimum": 10}]}"#)
    #expect(valid(any, #""x""#))
    #expect(valid(any, "11"))
    #expect(!valid(any, "9"))
    let one = try compile(#"{"oneOf": [{"type": "integer"}, {"minimum": 2}]}"#)
    #expect(valid(one, "1"))
    #expect(valid(one, "2.5"))
    #expect(!valid(one, "3"))
    #expect(!valid(one, "1.5"))
    let not = try compile(#"{"not": {"type": "string"}}"#)
    #expect(valid(not, "1"))
    #expect(!valid(not, #""x""#))
  }

  @Test("boolean schemas")
  func booleanSchemas() throws {
    #expect(valid(try JSONSchema(true), #"{"anything": [1]}"#))
    #expect(
      problems(try JSONSchema(false), "1") == ["/: no value is allowed here (the schema is false)"])
    #expect(valid(try JSONSchema([:]), "null"))
  }

  @Test("$ref: local pointers, recursion, siblings, the root $id")
  func references() throws {
    let tree = try compile(
      #"""
      {"$defs": {"node": {"type": "object", "required": ["value"],
                          "properties": {"value": {"type": "integer"},
                                         "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
       "$ref": "#/$defs/node"}
      """#)
    #expect(valid(tree, #"{"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}"#))
    let issues = tree.validate(
      json(#"{"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]}"#))
    #expect(
      issues.map(\.description) == ["/children/0/children/0/value: expected integer, got string"])
    #expect(issues.first?.keywordLocation == "/$defs/node/properties/value/type")

    let root = try compile(##"{"properties": {"next": {"$ref": "#"}}, "required": ["id"]}"##)
    #expect(valid(root, #"{"id": 1, "next": {"id": 2, "next": {"id": 3}}}"#))
    #expect(
      problems(root, #"{"id": 1, "next": {"next": {"id": 3}}}"#) == [
        #"/next: missing required property "id""#
      ])

    let legacy = try compile(
      ##"{"definitions": {"s": {"type": "string"}}, "items": {"$ref": "#/definitions/s"}}"##)
    #expect(!valid(legacy, "[1]"))

    let sibling = try compile(
      ##"{"$defs": {"a": {"type": "array"}}, "$ref": "#/$defs/a", "maxItems": 1}"##)
    #expect(!valid(sibling, "[1, 2]"))
    #expect(!valid(sibling, "{}"))

    let identified = try compile(
      #"{"$id": "https://example.com/s.json", "$defs": {"i": {"type": "integer"}}, "items": {"$ref": "https://example.com/s.json#/$defs/i"}}"#
    )
    #expect(!valid(identified, #"["x"]"#))

    let escaped = try compile(
      ##"{"$defs": {"a/b": {"type": "integer"}, "c%d": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c%25d"}}}"##
    )
    #expect(valid(escaped, #"{"x": 1, "y": "s"}"#))
    #expect(!valid(escaped, #"{"y": 1}"#))
  }

  @Test("annotations and unknown keywords are accepted and not checked")
  func annotations() throws {
    let schema = try compile(
      #"""
      {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "$comment": "c",
       "title": "t", "description": "d", "default": 1, "examples": [1], "deprecated": true, "readOnly": false,
       "writeOnly": false, "format": "email", "contentMediaType": "text/plain", "contentEncoding": "base64",
       "x-foo": {"unevaluatedProperties": false}, "foo": 1}
      """#)
    #expect(valid(schema, #""not an email""#))
    #expect(
      try compile(#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}"#)
        .isValid("a"))
    for keyword in [
      "type", "enum", "const", "properties", "pattern", "default", "title", "$ref", "if",
    ] {
      #expect(JSONSchema.supportedKeywords.contains(keyword))
    }
    #expect(JSONSchema.supportedKeywords.contains("unevaluatedProperties"))
  }

  @Test("a compiled schema is shared across tasks")
  func concurrency() async throws {
    let schema = try compile(
      #"{"type": "object", "properties": {"n": {"type": "integer", "pattern": "x", "maximum": 10}}}"#
    )
    let counts = await withTaskGroup(of: Int.self) { group in
      for i in 0..<8 {
        group.addTask {
          var invalid = 0
          for j in 0..<500 where !schema.isValid(["n": .integer(Int64(i * 500 + j) % 20)]) {
            invalid += 1
          }
          return invalid
        }
      }
      return await group.reduce(0, +)
    }
    #expect(counts == 8 * 500 * 9 / 20)
    #expect(schema.source["type"] == "object")
  }
}
