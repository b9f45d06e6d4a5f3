import Testing
import ToolhostJSON
import ToolhostSchema

@Suite("Inlining local references")
struct InliningTests {
  @Test("a $ref is replaced by its target, with its siblings laid over it")
  func inlines() {
    let schema = json(
      ##"""
      {"properties": {"who": {"$ref": "#/$defs/Person", "description": "the owner"},
                      "where": {"$ref": "#place"}, "same": {"$ref": "urn:example:root#/$defs/Person"}},
       "$id": "urn:example:root",
       "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}},
                 "Place": {"$anchor": "place", "type": "string"}}}
      """##)
    let inlined = JSONSchema.inliningReferences(in: schema)
    #expect(inlined["properties"]?["who"]?["type"] == "object")
    #expect(inlined["properties"]?["who"]?["description"] == "the owner")
    #expect(inlined["properties"]?["who"]?["$ref"] == nil)
    #expect(inlined["properties"]?["where"]?["type"] == "string")
    #expect(inlined["properties"]?["same"]?["properties"]?["name"] == ["type": "string"])
  }

  @Test("recursion, other documents, and values that are not schemas are left alone")
  func leavesAlone() {
    let schema = json(
      ##"""
      {"properties": {"tree": {"$ref": "#/$defs/Node"}, "remote": {"$ref": "https://example.com/x.json"},
                      "c": {"const": {"$ref": "#/$defs/Node"}}},
       "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}}
      """##)
    let inlined = JSONSchema.inliningReferences(in: schema)
    #expect(inlined["properties"]?["tree"]?["properties"]?["next"] == ["$ref": "#/$defs/Node"])
    #expect(inlined["properties"]?["remote"] == ["$ref": "https://example.com/x.json"])
    #expect(inlined["properties"]?["c"]?["const"] == ["$ref": "#/$defs/Node"])
    // Validation is not changed by inlining a non-recursive schema.
    let plain = json(##"{"properties": {"n": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "integer"}}}"##)
    let before = try? JSONSchema(plain)
    let after = try? JSONSchema(JSONSchema.inliningReferences(in: plain))
    for value in [json(#"{"n": 1}"#), json(#"{"n": "x"}"#)] {
      #expect(before?.isValid(value) == after?.isValid(value))
    }
  }
}
