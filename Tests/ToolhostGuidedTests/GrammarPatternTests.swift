import Testing
import ToolhostJSON
import ToolhostSession

@testable import ToolhostGuided

/// What of a string schema reaches the local model's grammar: patterns in llama.cpp's subset, formats, lengths.
@Suite struct GrammarPatternTests {
  @Test func patternsAreWrittenInTheConvertersSubset() {
    #expect(GrammarPattern.rewrite("^[A-Za-z]{3}$") == "^[A-Za-z]{3}$")
    #expect(GrammarPattern.rewrite(#"^\d{3}-\d{4}$"#) == "^[0-9]{3}-[0-9]{4}$")
    #expect(GrammarPattern.rewrite(#"^1Z[0-9A-Z]{16}$"#) == "^1Z[0-9A-Z]{16}$")
    #expect(GrammarPattern.rewrite(#"^[\w.]+\.txt$"#) == "^[A-Za-z0-9_.]+[.]txt$")
    #expect(GrammarPattern.rewrite("^(?:AB|CD)+?$") == "^(AB|CD)+$", "a plain group, a greedy quantifier")
    // Nothing may end the JSON string the value is written in.
    #expect(GrammarPattern.rewrite("^.+$") == #"^[^\x22\x5C\x0A\x0D]+$"#)
    #expect(GrammarPattern.rewrite("^[^,]*$") == #"^[^,\x22\x5C\x0A\x0D]*$"#)
    #expect(GrammarPattern.rewrite(#"^a"b$"#) == nil)
  }

  @Test func whatTheSubsetCannotSayIsLeftToTheValidator() {
    #expect(GrammarPattern.rewrite("[a-z]+") == nil, "unanchored: it may match inside a longer value")
    #expect(GrammarPattern.rewrite("^(?=a)a$") == nil, "a look-ahead")
    #expect(GrammarPattern.rewrite(#"^(a)\1$"#) == nil, "a back-reference")
    #expect(GrammarPattern.rewrite("^a{1,100}$") == nil, "a count too long for the grammar parser")
    #expect(GrammarPattern.rewrite("^a$|^b$") == nil, "an anchor inside")
    #expect(GrammarPattern.rewrite("^(a$") == nil)
    #expect(GrammarPattern.rewrite("^é$") == nil)
  }

  @Test func theDecodingSchemaHoldsWhatAStringMayBe() {
    let schema: JSONValue = [
      "type": "object",
      "properties": [
        "currency": ["type": "string", "pattern": "^[A-Z]{3}$"],
        "day": ["type": "string", "format": "date"],
        "contact": ["type": "string", "format": "email"],
        "code": ["type": "string", "minLength": 2, "maxLength": 6],
        "note": ["type": "string", "maxLength": 2000],
        "loose": ["type": "string", "pattern": "[0-9]"],
      ],
      "required": ["currency"],
    ]
    let properties = GuidedToolCalls.decodingSchema(schema)["properties"]
    #expect(properties?["currency"] == ["type": "string", "pattern": "^[A-Z]{3}$"])
    #expect(properties?["day"] == ["type": "string", "format": "date"])
    #expect(properties?["contact"]?["pattern"]?.stringValue?.contains("@") == true)
    #expect(properties?["code"]?.jsonEquals(["type": "string", "minLength": 2, "maxLength": 6]) == true)
    #expect(properties?["note"] == ["type": "string"], "a long bound is left to the validator")
    #expect(properties?["loose"] == ["type": "string"])
  }

  @Test func theSignatureShowsTheFormOfAValue() {
    let schema: JSONValue = [
      "type": "object",
      "properties": [
        "day": ["type": "string", "format": "date"], "to": ["type": "string", "pattern": "^[A-Z]{3}$"],
      ],
      "required": ["day", "to"],
    ]
    let signature = GuidedToolCalls.signature(of: schema)
    #expect(signature.contains("day: string YYYY-MM-DD"))
    #expect(signature.contains("to: string /^[A-Z]{3}$/"))
    // The signature shows what the grammar holds: a pattern before a format, as the decoding schema keeps it.
    let both: JSONValue = [
      "type": "object", "properties": ["day": ["type": "string", "format": "date", "pattern": "^2026-[0-9]{2}-01$"]],
    ]
    #expect(GuidedToolCalls.signature(of: both) == "day?: string /^2026-[0-9]{2}-01$/")
    #expect(GuidedToolCalls.decodingSchema(both)["properties"]?["day"]?["pattern"] == "^2026-[0-9]{2}-01$")
    let email: JSONValue = ["type": "object", "properties": ["to": ["type": "string", "format": "email"]]]
    #expect(GuidedToolCalls.signature(of: email) == "to?: string email")
  }
}

/// When an answer without a call is asked for again as a call: the prompt in a tool's own words.
@Suite struct AsksWhatAToolDoesTests {
  let fetch = Transcript.ToolDefinition(
    name: "requests.get",
    description: "Sends a GET request to the URL given and returns the response.",
    parameters: [
      "type": "object",
      "properties": [
        "url": ["type": "string", "description": "The URL to send the request to."],
        "params": ["type": "object", "description": "Query parameters of the request."],
      ],
      "required": ["url"],
    ])
  let bread = Transcript.ToolDefinition(
    name: "searchBreadDatabase", description: "Finds bread recipes by a search term.",
    parameters: ["type": "object", "properties": ["searchTerm": ["type": "string"]], "required": ["searchTerm"]])

  @Test func aPromptInAToolsWordsAsksForIt() {
    #expect(
      GuidedToolCalls.asksWhatAToolDoes(
        "Send a GET request to the URL https://api.example.com with the params limit 20", [fetch, bread]))
    #expect(GuidedToolCalls.asksWhatAToolDoes("Find me bread recipes with rye", [fetch, bread]))
  }

  @Test func oneSharedWordOrALongPromptDoesNot() {
    #expect(!GuidedToolCalls.asksWhatAToolDoes("Write a short poem about fresh bread.", [fetch, bread]))
    #expect(!GuidedToolCalls.asksWhatAToolDoes("Thanks!", [fetch, bread]))
    #expect(
      !GuidedToolCalls.asksWhatAToolDoes(
        "My grandmother always said the request of a guest is sacred; tell me a story about hospitality, kindness, "
          + "travel, family, villages and old traditions in the mountains.", [fetch, bread]))
  }
}
