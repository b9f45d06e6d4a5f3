import Foundation
import Testing
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession

@testable import ToolhostGuided

@Suite struct GuidedToolCallTests {
  let weather = Transcript.ToolDefinition(
    name: "getWeather", description: "Climate normals for a city.",
    parameters: [
      "type": "object",
      "properties": [
        "city": ["type": "string", "minLength": 1, "pattern": "^[A-Za-z ]+$"],
        "month": ["type": "integer", "minimum": 1, "maximum": 12],
      ],
      "required": ["city"],
    ])
  let search = Transcript.ToolDefinition(
    name: "searchBreadDatabase", description: "",
    parameters: [
      "type": "object", "properties": ["searchTerm": ["type": "string"]], "required": ["searchTerm"],
      "additionalProperties": true,
    ])

  @Test func replySchemaOffersAnAnswerAndOneBranchPerTool() throws {
    let schema = GuidedToolCalls.replySchema(tools: [weather, search], choice: .auto)
    let replies = try #require(schema["anyOf"]?.arrayValue)
    #expect(replies.count == 2)
    #expect(replies[0]["required"] == ["need", "calls"])
    let list = try #require(replies[0]["properties"]?["calls"])
    #expect(list["minItems"] == 1)
    #expect(list["maxItems"] == .integer(Int64(GuidedToolCalls.maximumCallsPerReply)))
    let branches = try #require(list["items"]?["anyOf"]?.arrayValue)
    #expect(branches.count == 2)
    #expect(branches[0]["properties"]?["tool"] == ["const": "getWeather"])
    #expect(branches[0]["required"] == ["tool", "arguments"])
    #expect(branches[1]["properties"]?["tool"] == ["const": "searchBreadDatabase"])
    #expect(replies[1]["required"] == ["need", "answer"])
    // The decoding schema keeps structure and what a string may be, and drops what grammar converters do not
    // handle.
    let arguments = try #require(branches[0]["properties"]?["arguments"])
    #expect(arguments["properties"]?["city"] == ["type": "string", "pattern": "^[A-Za-z ]+$"])
    #expect(arguments["properties"]?["month"] == ["type": "integer"])
    #expect(arguments["additionalProperties"] == false)
    #expect(arguments["required"] == ["city"])
    // A schema that allows more properties keeps saying so.
    #expect(branches[1]["properties"]?["arguments"]?["additionalProperties"] == true)
  }

  @Test func requiredChoiceLeavesOutTheAnswer() {
    let one = GuidedToolCalls.replySchema(tools: [weather], choice: .required)
    #expect(one["anyOf"] == nil)
    #expect(one["properties"]?["calls"]?["items"]?["properties"]?["tool"] == ["const": "getWeather"])
    let instructions = GuidedToolCalls.toolInstructions(tools: [weather], choice: .required)
    #expect(!instructions.contains("\"none\""))
    #expect(instructions.contains("A tool call is required now."))
  }

  /// The one example of an answer without a tool is a reply to thanks: no example answers a question from
  /// knowledge (which taught the default model to answer conversions and averages from memory), and what a short
  /// prompt copies from it still fits.
  @Test func theOnlyExampleAnswerIsAReplyToThanks() {
    let instructions = GuidedToolCalls.toolInstructions(tools: [weather], choice: .auto)
    let answers = instructions.split(separator: "\n").filter { $0.hasPrefix("{") && $0.contains(#""answer": "#) }
    #expect(answers == [#"{"need": "a reply to thanks", "answer": "You're welcome!"}"#])
    #expect(instructions.components(separatedBy: #""arguments": {"#).count - 1 == 5, "five example calls")
    // One example makes two calls in one reply, with a made-up tool no offered one resembles.
    #expect(instructions.contains(#"{"tool": "getStockPrice", "arguments": {"symbol": "Globex"}}]}"#))
  }

  /// Under each tool, a line for each argument whose description says more than its name: the description, cut to
  /// about 250 characters.
  @Test func argumentsAreDescribedUnderTheirTool() throws {
    let booking = Transcript.ToolDefinition(
      name: "bookTable", description: "Books a table.",
      parameters: [
        "type": "object",
        "properties": [
          "city": ["type": "string", "description": "The city."],
          "day": ["type": "string", "description": "The day, in the form YYYY-MM-DD. Today if left out."],
          "party": ["type": "integer"],
          "note": [
            "type": "string", "description": .string(String(repeating: "A long remark for the staff ", count: 10)),
          ],
        ],
        "required": ["city"],
      ])
    let lines = GuidedToolCalls.toolInstructions(tools: [booking], choice: .auto).split(separator: "\n")
    let tool = try #require(lines.firstIndex { $0.hasPrefix("- bookTable(") })
    #expect(lines[tool + 1] == "    day: The day, in the form YYYY-MM-DD. Today if left out.")
    let note = lines[tool + 2]
    #expect(note.hasPrefix("    note: A long remark for the staff"), "\(note)")
    #expect(note.hasSuffix("…") && note.count < 270, "\(note)")
    #expect(!lines[tool + 3].hasPrefix("    "), "no line for city (its name says it all) or party (no description)")
    // An object's members and those of an array's objects follow it, one level down.
    let device = Transcript.ToolDefinition(
      name: "setDevice", description: "Sets a device.",
      parameters: [
        "type": "object",
        "properties": [
          "body": [
            "type": "object", "description": "The settings to change.",
            "properties": [
              "fan": ["type": "string", "description": "The strength of the air flow."],
              "deep": [
                "type": "object", "properties": ["x": ["type": "integer", "description": "Not shown, too deep."]],
              ],
            ],
          ],
          "people": [
            "type": "array",
            "items": ["type": "object", "properties": ["age": ["type": "integer", "description": "In years."]]],
          ],
        ],
      ])
    #expect(
      GuidedToolCalls.argumentNotes(of: device.parameters) == [
        "body: The settings to change.", "body.fan: The strength of the air flow.", "people[].age: In years.",
      ])
  }

  /// An answer that says it cannot do what an offered tool is for is asked for again as a call; one that cannot do
  /// something no tool is for, or that does not refuse, is not.
  @Test func aRefusalOfWhatAToolDoesIsNoAnswer() {
    let flights = Transcript.ToolDefinition(
      name: "book_flight", description: "Books a flight from a place at a time.",
      parameters: ["type": "object", "properties": ["from": ["type": "string"]]])
    let prompt = "Can you arrange a flight from New York to Paris on June 20?"
    #expect(
      GuidedToolCalls.declinesWhatAToolDoes("I can't arrange a flight for you.", prompt: prompt, tools: [flights]))
    #expect(GuidedToolCalls.declinesWhatAToolDoes("Lo siento, no puedo hacerlo.", prompt: prompt, tools: [flights]))
    #expect(GuidedToolCalls.declinesWhatAToolDoes("Sorry, I can't.", prompt: prompt, tools: [flights]))
    #expect(
      !GuidedToolCalls.declinesWhatAToolDoes("The uncannot word.", prompt: prompt, tools: [flights]), "whole words")
    #expect(
      GuidedToolCalls.declinesWhatAToolDoes("I can\u{2019}t do that.", prompt: prompt, tools: [flights]),
      "a curly apostrophe")
    #expect(!GuidedToolCalls.declinesWhatAToolDoes("Your flight is booked.", prompt: prompt, tools: [flights]))
    #expect(
      !GuidedToolCalls.declinesWhatAToolDoes("I can't write poems.", prompt: "Write a poem", tools: [flights]),
      "no offered tool is for it")
    #expect(
      !GuidedToolCalls.declinesWhatAToolDoes(
        "I can't see your plans.", prompt: "From where do I leave on Monday?", tools: [flights]),
      "words of the parameters are not what the tool is for")
  }

  @Test func toolsAreRankedAgainstTheRequest() {
    let todo = Transcript.ToolDefinition(
      name: "todoAdd", description: "Adds an item to the user's to-do list.",
      parameters: ["type": "object", "properties": ["text": ["type": "string", "description": "What to do."]]])
    let tools = [search, todo, weather]
    #expect(ToolRanking.rank(tools, for: "Add 'buy milk' to my to-do list.").first?.tool.name == "todoAdd")
    #expect(ToolRanking.rank(tools, for: "Climate of Lima in May?").first?.tool.name == "getWeather")
    #expect(ToolRanking.rank(tools, for: "Any sourdough? searchTerm").first?.tool.name == "searchBreadDatabase")
    // Nothing in common: every score is 0 and the given order stays.
    let none = ToolRanking.rank(tools, for: "Who wrote Hamlet?")
    #expect(none.map(\.score) == [0, 0, 0])
    #expect(none.map(\.tool.name) == ["searchBreadDatabase", "todoAdd", "getWeather"])
    #expect(ToolRanking.terms(in: "getWeather to-do lists") == ["get", "weather", "todo", "list"])
  }

  @Test func manyToolsAreShortlisted() {
    let tools = (0..<30).map { i in
      Transcript.ToolDefinition(
        name: "tool\(i)", description: i == 17 ? "Finds recipes for bread." : "Does thing number \(i).",
        parameters: ["type": "object"])
    }
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "A bread recipe, please"))]), tools: tools,
      toolChoice: .auto)
    let offered = GuidedToolCalls.offeredTools(for: request)
    #expect(offered.count == GuidedToolCalls.shortlistSize)
    #expect(offered.first?.name == "tool17")
    // The request offers only those, in the reply schema too.
    let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: false)
    let calls = body["response_format"]?["schema"]?["anyOf"]?[0]?["properties"]?["calls"]?["items"]?["anyOf"]
    #expect(calls?.arrayValue?.count == GuidedToolCalls.shortlistSize)
    // Up to the threshold every tool is offered, in the order given.
    let few = ModelRequest(
      transcript: request.transcript, tools: Array(tools.prefix(GuidedToolCalls.shortlistThreshold)), toolChoice: .auto)
    #expect(
      GuidedToolCalls.offeredTools(for: few).map(\.name)
        == tools.prefix(GuidedToolCalls.shortlistThreshold).map(\.name))
  }

  /// The offer is where the strategy narrows the tools: the shortlist, then what a second try may call.
  @Test func theOfferListsTheShortlistAndLeavesOutOnlyWhatLeavesSomething() {
    let tools = (0..<3).map { i in
      Transcript.ToolDefinition(name: "tool\(i)", description: "Does thing \(i).", parameters: ["type": "object"])
    }
    let prompt = Transcript(entries: [.prompt(.init(text: "Do a thing"))])
    let offer = GuidedToolCalls.ToolOffer(
      for: ModelRequest(transcript: prompt, tools: tools, toolChoice: .auto), today: nil)
    #expect(offer.tools.map(\.name) == ["tool0", "tool1", "tool2"])
    #expect(offer.instructions?.contains("tool2") == true)
    #expect(offer.callable(excluding: ["tool1"]).map(\.name) == ["tool0", "tool2"])
    #expect(offer.callable(excluding: ["tool0", "tool1", "tool2"]).map(\.name) == ["tool0", "tool1", "tool2"])
    // A reply that may not call lists nothing.
    let none = GuidedToolCalls.ToolOffer(
      for: ModelRequest(transcript: prompt, tools: tools, toolChoice: .none), today: nil)
    #expect(none.tools.isEmpty && none.instructions == nil)
  }

  @Test func callsThatSucceededSinceTheLastPromptAreTheHistory() {
    let transcript = Transcript(entries: [
      .prompt(.init(text: "a")),
      .toolCalls(.init(calls: [.init(id: "1", toolName: "t", arguments: [:])])),
      .toolOutput(.init(callID: "1", toolName: "t", text: "ok")),
      .prompt(.init(text: "b")),
      .toolCalls(.init(calls: [.init(id: "2", toolName: "t", arguments: ["x": 1])])),
      .toolOutput(.init(callID: "2", toolName: "t", text: "ok")),
      .toolCalls(.init(calls: [.init(id: "3", toolName: "t", arguments: ["x": 2])])),
      .toolOutput(.init(callID: "3", toolName: "t", text: "ok")),
      .toolCalls(.init(calls: [.init(id: "4", toolName: "u", arguments: ["y": 1])])),
      .toolOutput(.init(callID: "4", toolName: "u", text: "bad", isError: true)),
    ])
    let history = CallHistory(transcript)
    #expect(history.succeeded.map(\.id) == ["2", "3"])
    #expect(history.isThirdCall(of: "t"))
    #expect(!history.isThirdCall(of: "u"))
    #expect(history.repeats(.init(id: "5", toolName: "t", arguments: ["x": 1])))
    // A failed call may be tried again (that is a repair).
    #expect(!history.repeats(.init(id: "6", toolName: "u", arguments: ["y": 1])))
    #expect(!history.loops([.init(id: "7", toolName: "u", arguments: ["y": 2])]))
    #expect(history.loops([.init(id: "8", toolName: "t", arguments: ["x": 9])]))
    #expect(!history.loops([]))
  }

  @Test func decodingSchemaSimplifiesNestedSchemas() {
    let schema: JSONValue = [
      "type": "object",
      "properties": [
        "values": ["type": "array", "items": ["type": "number", "exclusiveMinimum": 0], "maxItems": 5],
        "many": ["type": "array", "items": ["type": "string", "maxLength": 500], "maxItems": 100],
        "mode": ["enum": ["mean", "median"], "default": "mean"],
        "ref": ["$ref": "#/$defs/x"],
        "choice": ["oneOf": [["type": "string"], ["type": "integer", "multipleOf": 2]]],
      ],
      "required": ["values", "missing"],
      "allOf": [["required": ["mode"]]],
    ]
    let out = GuidedToolCalls.decodingSchema(schema)
    #expect(out["allOf"] == nil)
    #expect(out["required"] == ["values"])  // names no property does not stay
    #expect(out["properties"]?["values"] == ["type": "array", "items": ["type": "number"], "maxItems": 5])
    #expect(out["properties"]?["many"] == ["type": "array", "items": ["type": "string"]])
    #expect(out["properties"]?["mode"] == ["enum": ["mean", "median"]])
    #expect(out["properties"]?["ref"] == [:])
    #expect(out["properties"]?["choice"] == ["anyOf": [["type": "string"], ["type": "integer"]]])
  }

  @Test func decodingSchemaFollowsLocalReferences() {
    // As Pydantic writes it: fields behind `$ref`, a described reference wrapped in `allOf`, a recursive type.
    let schema: JSONValue = [
      "type": "object",
      "properties": [
        "owner": ["allOf": [["$ref": "#/$defs/Person"]], "description": "Who owns it"],
        "tree": ["$ref": "#/$defs/Node"],
      ],
      "required": ["owner"],
      "$defs": [
        "Person": ["type": "object", "properties": ["name": ["type": "string"]], "required": ["name"]],
        "Node": ["type": "object", "properties": ["children": ["type": "array", "items": ["$ref": "#/$defs/Node"]]]],
      ],
    ]
    let out = GuidedToolCalls.decodingSchema(schema)
    #expect(
      out["properties"]?["owner"]
        == [
          "type": "object", "properties": ["name": ["type": "string"]], "required": ["name"],
          "additionalProperties": false,
        ])
    // The recursive type is expanded once; where it recurs, anything is allowed.
    let children = out["properties"]?["tree"]?["properties"]?["children"]
    #expect(children?["type"] == "array")
    #expect(children?["items"] == [:])
    #expect(out["$defs"] == nil)
    #expect(GuidedToolCalls.signature(of: schema).hasPrefix("owner: {name: string}"))
  }

  @Test func decodingSchemaUsesOnlyWhatGrammarConvertersAccept() throws {
    // 2020-12 keywords that llama.cpp's converter does not know never reach it, however they are nested.
    let accepted: Set<String> = [
      "type", "enum", "const", "anyOf", "properties", "required", "additionalProperties", "items", "minItems",
      "maxItems", "pattern", "format", "minLength", "maxLength",
    ]
    let schemas = [
      ##"{"$id": "https://example.com/t", "$dynamicAnchor": "node", "type": "object", "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}}, "unevaluatedProperties": false}"##,
      ##"{"type": "object", "properties": {"a": {"$ref": "#a"}}, "$defs": {"a": {"$anchor": "a", "type": "string", "format": "date", "pattern": "^2"}}, "dependentSchemas": {"a": {"required": ["b"]}}}"##,
      ##"{"prefixItems": [{"type": "integer"}], "unevaluatedItems": false, "contains": {"const": 1}, "minContains": 1}"##,
      ##"{"type": "object", "properties": {"p": {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"not": {"type": "null"}}}}, "propertyNames": {"maxLength": 3}}"##,
    ]
    func keys(_ value: JSONValue, _ found: inout Set<String>) {
      guard case .object(let object) = value else { return }
      for (key, child) in object {
        found.insert(key)
        switch key {
        case "properties":
          for (_, property) in child.objectValue ?? JSONObject() { keys(property, &found) }
        case "anyOf":
          for item in child.arrayValue ?? [] { keys(item, &found) }
        case "items", "additionalProperties":
          keys(child, &found)
        default:
          break
        }
      }
    }
    for text in schemas {
      var found = Set<String>()
      keys(GuidedToolCalls.decodingSchema(try JSONValue.parse(text)), &found)
      #expect(found.isSubset(of: accepted), "\(found.subtracting(accepted)) in the decoding schema of \(text)")
    }
  }

  @Test func requestBodyDescribesToolsInTheSystemMessageAndConstrainsTheReply() throws {
    var transcript = Transcript()
    transcript.entries = [
      .instructions(.init(text: "Be brief.")),
      .prompt(.init(text: "Weather in Boston?")),
      .toolCalls(.init(calls: [.init(id: "c1", toolName: "getWeather", arguments: ["city": "Boston"])])),
      .toolOutput(.init(callID: "c1", toolName: "getWeather", text: "{\"high\":13}")),
      .response(.init(text: "About 13 °C.")),
      .prompt(.init(text: "And Oslo?")),
    ]
    let request = ModelRequest(
      transcript: transcript, tools: [weather], toolChoice: .auto,
      options: GenerationOptions(temperature: 0))
    let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: true)
    #expect(body["tools"] == nil)
    #expect(body["tool_choice"] == nil)
    #expect(body["stream"] == true)
    #expect(body["temperature"] == .real(0))
    #expect(body["response_format"]?["type"] == "json_object")
    #expect(body["response_format"]?["schema"] == GuidedToolCalls.replySchema(tools: [weather], choice: .auto))
    let messages = try #require(body["messages"]?.arrayValue)
    #expect(
      messages.map { $0["role"]?.stringValue ?? "" } == ["system", "user", "assistant", "user", "assistant", "user"])
    let system = try #require(messages[0]["content"]?.stringValue)
    #expect(
      system.hasPrefix(
        "Be brief.\n\nYou can use these tools:\n- getWeather(city: string /^[A-Za-z ]+$/, month?: integer 1..12): "
          + "Climate normals for a city."
      ))
    #expect(messages[2]["content"] == "{\"calls\":[{\"tool\":\"getWeather\",\"arguments\":{\"city\":\"Boston\"}}]}")
    #expect(messages[3]["content"]?.stringValue?.hasPrefix("Result of getWeather:\n{\"high\":13}") == true)
    #expect(messages[4]["content"] == "{\"answer\":\"About 13 °C.\"}")
    // No message carries tool_calls or the tool role: every chat template renders these.
    #expect(messages.allSatisfy { $0["tool_calls"] == nil })

    let other = GuidedToolCalls.requestBody(for: request, model: "m", stream: false, format: .jsonSchema)
    #expect(other["response_format"]?["type"] == "json_schema")
    #expect(other["response_format"]?["json_schema"]?["schema"] != nil)
  }

  @Test func withoutToolsTheReplyIsPlainText() throws {
    var transcript = Transcript()
    transcript.entries = [.prompt(.init(text: "Hi")), .response(.init(text: "Hello")), .prompt(.init(text: "Bye"))]
    for request in [
      ModelRequest(transcript: transcript, tools: [], toolChoice: .auto),
      ModelRequest(transcript: transcript, tools: [weather], toolChoice: .none),
    ] {
      let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: false)
      #expect(body["response_format"] == nil)
      let messages = try #require(body["messages"]?.arrayValue)
      #expect(messages.first?["role"] == "user")
      #expect(messages[1]["content"] == "Hello")
    }
  }

  @Test func repliesBecomeCallsOrText() {
    let call = GuidedToolCalls.turn(
      fromReply: " {\"tool\": \"getWeather\", \"arguments\": {\"city\": \"Boston\"}}\n",
      base: ModelTurn(finishReason: "stop"), callID: "x")
    #expect(call.text == "")
    #expect(call.toolCalls == [.init(id: "x", toolName: "getWeather", arguments: ["city": "Boston"])])
    #expect(call.finishReason == "tool_calls")

    let fenced = GuidedToolCalls.turn(
      fromReply: "```json\n{\"tool\": \"getWeather\", \"arguments\": {}}\n```", callID: "y")
    #expect(fenced.toolCalls.first?.toolName == "getWeather")

    let answer = GuidedToolCalls.turn(
      fromReply: "{\"need\": \"sum\", \"tool\": \"none\", \"answer\": \"4\"}", callID: "z")
    #expect(answer.text == "4")
    #expect(answer.toolCalls.isEmpty)
    #expect(GuidedToolCalls.turn(fromReply: "{\"answer\": \"5\"}", callID: "z").text == "5")

    // Not the expected JSON: kept as text, nothing lost.
    for text in ["Just words.", "{\"other\": 1}", "{\"tool\": \"getWea"] {
      let turn = GuidedToolCalls.turn(fromReply: text, callID: "w")
      #expect(turn.text == text)
      #expect(turn.toolCalls.isEmpty)
    }

    // Arguments that are not an object reach the session as they are, to be reported back to the model.
    let bad = GuidedToolCalls.turn(fromReply: "{\"tool\": \"getWeather\", \"arguments\": [1]}", callID: "v")
    #expect(bad.toolCalls.first?.arguments == [1])
  }

  @Test(arguments: [1, 2, 3, 7])
  func answerStreamDecodesTheAnswerAsItArrives(chunkSize: Int) {
    let reply =
      "{ \"need\": \"a \\\"greeting\\\", answer\", \"tool\":\"none\", \"answer\" : \"Tr\\u00e8s \\\"bien\\\" \\ud83d\\ude00 — 13 °C\\nok\" }"
    var stream = GuidedAnswerStream()
    var out = ""
    let bytes = Array(reply.utf8)
    var i = 0
    while i < bytes.count {
      let end = min(i + chunkSize, bytes.count)
      // Chunks may split UTF-8 sequences: feed bytes as Latin-1-safe pieces only at character boundaries.
      var j = end
      while j < bytes.count, bytes[j] & 0xC0 == 0x80 { j += 1 }
      out += stream.feed(String(decoding: bytes[i..<j], as: UTF8.self))
      i = j
    }
    #expect(out == "Très \"bien\" 😀 — 13 °C\nok")
  }

  @Test func answerStreamStaysQuietForText() {
    var stream = GuidedAnswerStream()
    #expect(stream.feed("The answer is \"4\".") == "")
  }

  @Test func answerStreamStaysQuietForToolCalls() {
    var stream = GuidedAnswerStream()
    var out = ""
    for piece in [
      "{\"need\": \"the answer\", \"", "tool", "\": \"getWeather\", \"arguments\": {\"answer\": \"x\"}}",
    ] {
      out += stream.feed(piece)
    }
    #expect(out.isEmpty)
  }
}
