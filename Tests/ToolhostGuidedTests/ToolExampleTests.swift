import Foundation
import Testing
import ToolhostJSON
import ToolhostSession
import ToolhostTools

@testable import ToolhostGuided

/// A tool's own examples (issue 49, item 4): the ones nearest the question are shown to the model after the
/// made-up ones, and none that shares no word with it.
@Suite struct ToolExampleTests {
  let units = Transcript.ToolDefinition(
    name: "convertUnits", description: "Converts a quantity between units.",
    parameters: [
      "type": "object",
      "properties": ["value": ["type": "number"], "from": ["type": "string"], "to": ["type": "string"]],
      "required": ["value", "from", "to"],
    ],
    examples: [
      ToolExample(prompt: "How many feet is 3 metres?", arguments: ["value": 3, "from": "m", "to": "ft"]),
      ToolExample(prompt: "What is 180 °C in Fahrenheit?", arguments: ["value": 180, "from": "c", "to": "f"]),
      ToolExample(prompt: "Convert 2 cups to millilitres", arguments: ["value": 2, "from": "cup", "to": "ml"]),
    ])
  let parcels = Transcript.ToolDefinition(
    name: "trackParcel", description: "Where a parcel is.",
    parameters: ["type": "object", "properties": ["id": ["type": "string"]], "required": ["id"]],
    examples: [ToolExample(prompt: nil, arguments: ["id": "1Z999AA10123456784 parcel"])])

  @Test func theExamplesNearestTheQuestionAreChosen() {
    let chosen = GuidedToolCalls.examples(for: "How hot is 200 °C in fahrenheit?", among: [units, parcels])
    #expect(chosen.map(\.example.prompt) == ["What is 180 °C in Fahrenheit?"])
    // Two words shared at least, numbers aside, the better first, two of one tool at most; an example of arguments
    // alone is found by their text.
    let several = GuidedToolCalls.examples(
      for: "Convert 3 cups to feet and metres, and where is parcel 1Z999AA10123456784?", among: [units, parcels])
    #expect(several.map(\.tool) == ["convertUnits", "convertUnits", "trackParcel"])
    #expect(several.map(\.example.prompt) == ["How many feet is 3 metres?", "Convert 2 cups to millilitres", nil])
    #expect(GuidedToolCalls.examples(for: "Tell me a joke", among: [units, parcels]).isEmpty)
    #expect(
      GuidedToolCalls.examples(for: "Find a pita recipe and the weather in 3 feet", among: [units, parcels]).isEmpty,
      "one word shared, and a number, are not enough")
  }

  @Test func theChosenExamplesEndTheInstructions() throws {
    let text = GuidedToolCalls.toolInstructions(
      tools: [units, parcels], choice: .auto, prompt: "What is 40 °C in fahrenheit?")
    let plain = GuidedToolCalls.toolInstructions(tools: [units, parcels], choice: .auto)
    #expect(text.hasPrefix(plain), "the instructions before the examples stay the same")
    let added = text.dropFirst(plain.count)
    #expect(
      added == """

        Examples of the tools above:
        User: What is 180 °C in Fahrenheit?
        {"need":"what is 180 °c in fahrenheit","calls":[{"tool":"convertUnits","arguments":{"value":180,"from":"c","to":"f"}}]}
        """)
    let call = GuidedToolCalls.toolInstructions(
      tools: [units, parcels], choice: .auto, prompt: "Find parcel 1Z999AA10123456784")
    #expect(
      call.hasSuffix(#"A call of trackParcel: {"tool":"trackParcel","arguments":{"id":"1Z999AA10123456784 parcel"}}"#))
    // The offer of a request carries them.
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "What is 40 °C in fahrenheit?"))]), tools: [units],
      toolChoice: .auto)
    let offer = GuidedToolCalls.ToolOffer(for: request, today: nil)
    #expect(try #require(offer.instructions).contains("User: What is 180 °C in Fahrenheit?"))
  }

  /// An example's prompt says what the tool is about, but for what one request asks (its arguments' text and its
  /// capitalised names).
  @Test func theWordsOfAnExamplesPromptAreTheToolsTopic() {
    var bare = units
    bare.examples = []
    #expect(!GuidedToolCalls.asksWhatAToolDoes("How many feet is 12 metres?", [bare]))
    #expect(GuidedToolCalls.asksWhatAToolDoes("How many feet is 12 metres?", [units]))
    let weather = Transcript.ToolDefinition(
      name: "getWeather", description: "Typical weather.",
      parameters: ["type": "object", "properties": ["city": ["type": "string"]]],
      examples: [ToolExample(prompt: "How warm does Lisbon get in Porto season?", arguments: ["city": "porto"])])
    let words = TopicWords(weather).words
    #expect(words.contains("warm"))
    #expect(!words.contains("lisbon") && !words.contains("porto"), "a name or an argument is one request's")
  }

  @Test func aDefinitionWithoutExamplesKeepsItsSavedForm() throws {
    let plain = Transcript.ToolDefinition(name: "t", description: "d", parameters: ["type": "object"])
    let data = try JSONEncoder().encode(plain)
    #expect(String(decoding: data, as: UTF8.self).contains("examples") == false)
    #expect(try JSONDecoder().decode(Transcript.ToolDefinition.self, from: data) == plain)
    let decoded = try JSONDecoder().decode(Transcript.ToolDefinition.self, from: JSONEncoder().encode(units))
    #expect(decoded.examples.map(\.prompt) == units.examples.map(\.prompt))
    #expect(zip(decoded.examples, units.examples).allSatisfy { $0.arguments.jsonEquals($1.arguments) })
  }
}
