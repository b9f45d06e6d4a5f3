import Testing
import ToolhostJSON
import ToolhostSchema

@Suite("Issue messages and locations")
struct MessageTests {
  @Test("maximum: location, keyword location and message")
  func maximum() throws {
    let schema = try compile(
      #"{"type": "object", "properties": {"limit": {"type": "integer", "maximum": 6}}}"#)
    let issues = schema.validate(json(#"{"limit": 9}"#))
    #expect(issues.count == 1)
    let issue = try #require(issues.first)
    #expect(issue.instanceLocation == "/limit")
    #expect(issue.keywordLocation == "/properties/limit/maximum")
    #expect(issue.keyword == "maximum")
    #expect(issue.message == "9 is greater than the maximum 6")
    #expect(issue.description == "/limit: 9 is greater than the maximum 6")
  }

  @Test("required: one issue per missing property, at the object")
  func required() throws {
    let schema = try compile(#"{"type": "object", "required": ["searchTerm", "limit"]}"#)
    #expect(
      problems(schema, "{}") == [
        #"/: missing required property "searchTerm""#, #"/: missing required property "limit""#,
      ])
    let issue = try #require(schema.validate(json(#"{"limit": 1}"#)).first)
    #expect(issue.instanceLocation == "")
    #expect(issue.keywordLocation == "/required")
    #expect(issue.keyword == "required")
  }

  @Test("enum lists the allowed values")
  func enumeration() throws {
    let schema = try compile(#"{"properties": {"units": {"enum": ["celsius", "fahrenheit"]}}}"#)
    #expect(
      problems(schema, #"{"units": "kelvin"}"#) == [
        #"/units: "kelvin" is not one of "celsius", "fahrenheit""#
      ])
    #expect(problems(schema, #"{"units": "celsius"}"#) == [])
  }

  @Test("type mismatch inside an array")
  func typeInArray() throws {
    let schema = try compile(
      #"{"properties": {"tags": {"type": "array", "items": {"type": "string"}}}}"#)
    let issues = schema.validate(json(#"{"tags": ["a", "b", 3]}"#))
    #expect(issues.map(\.description) == ["/tags/2: expected string, got integer"])
    #expect(issues.first?.keywordLocation == "/properties/tags/items/type")
  }

  @Test("additionalProperties: false names the offender and what is allowed")
  func additionalPropertiesFalse() throws {
    let schema = try compile(
      #"{"type": "object", "properties": {"color": {}, "size": {}}, "additionalProperties": false}"#
    )
    let issues = schema.validate(json(#"{"color": "red", "colour": "red"}"#))
    #expect(
      issues.map(\.description) == [
        #"/: property "colour" is not allowed (allowed: "color", "size")"#
      ])
    #expect(issues.first?.keywordLocation == "/additionalProperties")
    #expect(issues.first?.keyword == "additionalProperties")

    let none = try compile(#"{"additionalProperties": false}"#)
    #expect(
      problems(none, #"{"a": 1}"#) == [
        #"/: property "a" is not allowed (no properties are allowed)"#
      ])

    let patterns = try compile(
      #"{"properties": {"id": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": false}"#
    )
    #expect(
      problems(patterns, #"{"id": 1, "x-a": 2, "y": 3}"#) == [
        #"/: property "y" is not allowed (allowed: "id", names matching ^x-)"#
      ])
  }

  @Test("string length and pattern messages")
  func strings() throws {
    let schema = try compile(
      #"{"properties": {"name": {"minLength": 3, "maxLength": 5}, "code": {"pattern": "^[a-z]+$"}}}"#
    )
    #expect(
      problems(schema, #"{"name": "ab"}"#) == [#"/name: "ab" is shorter than the minimum length 3"#]
    )
    #expect(
      problems(schema, #"{"name": "abcdef"}"#) == [
        #"/name: "abcdef" is longer than the maximum length 5"#
      ])
    #expect(
      problems(schema, #"{"code": "x1"}"#) == [#"/code: "x1" does not match the pattern ^[a-z]+$"#])
  }

  @Test("long strings are shortened in messages, with their length")
  func longStrings() throws {
    let schema = try compile(#"{"maxLength": 10}"#)
    let long = String(repeating: "a", count: 100)
    let message = try #require(schema.validate(.string(long)).first?.message)
    #expect(
      message
        == "\"\(String(repeating: "a", count: 37))…\" (100 characters) is longer than the maximum length 10"
    )
  }

  @Test("numeric messages")
  func numbers() throws {
    let schema = try compile(
      #"{"properties": {"a": {"minimum": 1.5}, "b": {"exclusiveMinimum": 0}, "c": {"exclusiveMaximum": 10}, "d": {"multipleOf": 0.5}}}"#
    )
    #expect(
      problems(schema, #"{"a": 1, "b": 0, "c": 10, "d": 0.3}"#) == [
        "/a: 1 is less than the minimum 1.5", "/b: 0 is not greater than the exclusive minimum 0",
        "/c: 10 is not less than the exclusive maximum 10", "/d: 0.3 is not a multiple of 0.5",
      ])
  }

  @Test("JSON Pointer escaping in instance and keyword locations")
  func pointerEscaping() throws {
    let schema = try compile(
      #"{"properties": {"a/b": {"properties": {"c~d": {"type": "string"}}}}}"#)
    let issue = try #require(schema.validate(json(#"{"a/b": {"c~d": 1}}"#)).first)
    #expect(issue.instanceLocation == "/a~1b/c~0d")
    #expect(issue.keywordLocation == "/properties/a~1b/properties/c~0d/type")
  }

  @Test("all issues are reported, not just the first")
  func allIssues() throws {
    let schema = try compile(
      #"""
      {"type": "object", "required": ["city"], "additionalProperties": false,
       "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14},
                      "units": {"enum": ["c", "f"]}}}
      """#)
    #expect(
      problems(schema, #"{"days": 30, "units": "k", "x": true}"#) == [
        #"/: missing required property "city""#, "/days: 30 is greater than the maximum 14",
        #"/units: "k" is not one of "c", "f""#,
        #"/: property "x" is not allowed (allowed: "city", "days", "units")"#,
      ])
  }

  @Test("anyOf of types says which types would do")
  func anyOfTypes() throws {
    let schema = try compile(
      ##"{"anyOf": [{"type": "string"}, {"type": "integer"}, {"$ref": "#/$defs/n"}], "$defs": {"n": {"type": "null"}}}"##
    )
    let issue = try #require(schema.validate(true).first)
    #expect(issue.message == "expected string, integer or null, got boolean")
    #expect(issue.keyword == "anyOf")
    #expect(issue.keywordLocation == "/anyOf")
  }

  @Test("anyOf quotes the closest alternative")
  func anyOfClosest() throws {
    let schema = try compile(
      #"""
      {"anyOf": [{"type": "string"},
                 {"type": "object", "required": ["name"], "properties": {"name": {"minLength": 3}}}]}
      """#)
    #expect(
      problems(schema, #"{"name": "ab"}"#) == [
        #"/: does not match any alternative in anyOf; closest is alternative 2 of 2: /name: "ab" is shorter than the minimum length 3"#
      ])
  }

  @Test("nested anyOf explanations do not nest")
  func nestedAnyOf() throws {
    let schema = try compile(
      ##"{"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}]}"##)
    let message = try #require(schema.validate(json(#"[[["x"]]]"#)).first?.description)
    #expect(
      message == "/: does not match any alternative in anyOf; closest is alternative 2 of 2: "
        + "/0/0/0: expected integer or array, got string")
  }

  @Test("oneOf that matches twice says which alternatives matched")
  func oneOfTwice() throws {
    let schema = try compile(
      #"{"oneOf": [{"type": "integer"}, {"minimum": 2}, {"type": "string"}]}"#)
    #expect(
      problems(schema, "3") == [
        "/: matches alternatives 1 and 2 of the 3 in oneOf, but must match exactly one"
      ])
    #expect(problems(schema, "1") == [])
  }

  @Test("other keywords' messages")
  func otherKeywords() throws {
    let schema = try compile(
      #"""
      {"properties": {
        "a": {"minItems": 2}, "b": {"maxItems": 1}, "c": {"uniqueItems": true}, "d": {"const": "x"},
        "e": {"not": {"type": "null"}}, "f": {"contains": {"type": "string"}},
        "g": {"contains": {"type": "string"}, "minContains": 2}, "h": {"contains": {"type": "string"}, "maxContains": 1},
        "i": {"minProperties": 1}, "j": {"maxProperties": 1}, "k": {"propertyNames": {"pattern": "^[a-z]+$"}},
        "l": {"dependentRequired": {"card": ["cvv"]}}, "m": {"prefixItems": [{}], "items": false}, "n": {"allOf": [false]},
        "o": {"properties": {"p": false}}
      }}
      """#)
    #expect(
      problems(
        schema,
        #"""
        {"a": [1], "b": [1, 2], "c": [1, "x", 1.0], "d": "y", "e": null, "f": [1], "g": ["x"], "h": ["x", "y"],
         "i": {}, "j": {"x": 1, "y": 2}, "k": {"Bad": 1}, "l": {"card": 1}, "m": [1, 2, 3], "n": 1, "o": {"p": 1}}
        """#) == [
          "/a: expected at least 2 items, got 1",
          "/b: expected at most 1 item, got 2",
          #"/c: items 0 and 2 are equal (1); all items must be unique"#,
          #"/d: "y" is not equal to the constant "x""#,
          #"/e: null must not match the schema in "not""#,
          #"/f: no item matches the schema in "contains""#,
          #"/g: expected at least 2 items matching the schema in "contains", got 1"#,
          #"/h: expected at most 1 item matching the schema in "contains", got 2"#,
          "/i: expected at least 1 property, got 0",
          "/j: expected at most 1 property, got 2",
          #"/k: property name "Bad" is not valid: "Bad" does not match the pattern ^[a-z]+$"#,
          #"/l: missing property "cvv", which is required when "card" is present"#,
          "/m: expected at most 1 item, got 3",
          "/n: no value is allowed here (the schema is false)",
          #"/o: property "p" is not allowed"#,
        ])
  }

  @Test("unevaluatedProperties and unevaluatedItems name what no keyword evaluated")
  func unevaluated() throws {
    let schema = try compile(
      #"""
      {"properties": {"o": {"allOf": [{"properties": {"a": true}}], "anyOf": [{"properties": {"b": true}}, true],
                            "unevaluatedProperties": false},
                      "l": {"prefixItems": [true], "contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}}}}
      """#)
    #expect(problems(schema, #"{"o": {"a": 1, "b": 2}, "l": [null, "s", 3]}"#) == [])
    let issues = schema.validate(json(#"{"o": {"a": 1, "c": 3}, "l": [null, "s", false]}"#))
    #expect(
      issues.map(\.description) == [
        #"/o: property "c" is not allowed: no other keyword of the schema evaluates it (unevaluatedProperties is false)"#,
        "/l/2: expected integer, got boolean",
      ])
    #expect(issues.first?.keywordLocation == "/properties/o/unevaluatedProperties")
    #expect(issues.last?.keywordLocation == "/properties/l/unevaluatedItems/type")
  }

  @Test("a $dynamicRef resolves to the outermost dynamic anchor, and issues point into it")
  func dynamicReference() throws {
    // The usual extensible shape: a generic list whose items the schema that uses it fixes as strings.
    let schema = try compile(
      ##"""
      {"$id": "https://example.com/strings", "$ref": "list",
       "$defs": {"string": {"$dynamicAnchor": "item", "type": "string"},
                 "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item"},
                          "$defs": {"default": {"$dynamicAnchor": "item"}}}}}
      """##)
    #expect(problems(schema, #"["a", "b"]"#) == [])
    let issues = schema.validate(json(#"["a", 1]"#))
    #expect(issues.map(\.description) == ["/1: expected string, got integer"])
    #expect(issues.first?.keywordLocation == "/$defs/string/type")
    // The list alone allows any item.
    let list = try compile(
      ##"""
      {"$id": "https://example.com/list", "type": "array", "items": {"$dynamicRef": "#item"},
       "$defs": {"default": {"$dynamicAnchor": "item"}}}
      """##)
    #expect(list.isValid(json(#"["a", 1]"#)))
  }

  @Test("too-deep validation is an issue, not a crash")
  func depthLimit() async throws {
    let schema = try compile(##"{"type": "array", "items": {"$ref": "#"}}"##)
    let result = await onLargeStack { () -> (Bool, [ValidationIssue]) in
      var value: JSONValue = []
      for _ in 0..<1000 { value = .array([value]) }
      return (schema.isValid(value), schema.validate(value))
    }
    #expect(result.0 == false)
    #expect(result.1.count == 1)
    let issue = try #require(result.1.first)
    #expect(issue.keyword == "$ref")
    #expect(issue.message.contains("nested too deeply"))
    #expect(issue.instanceLocation.hasPrefix("/0/0/0"))
  }
}
