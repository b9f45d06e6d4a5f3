import Foundation
import Testing
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession

@testable import ToolhostGuided

@Suite struct GuidedReplyRepairTests {
  @Test func rawLineBreaksInStringsAreAccepted() {
    let turn = GuidedToolCalls.turn(
      fromReply: "{\"need\": \"a poem\", \"tool\": \"none\", \"answer\": \"line one\nline\ttwo\"}", callID: "a")
    #expect(turn.text == "line one\nline\ttwo")
  }

  @Test func anAnswerCutOffKeepsItsText() {
    let turn = GuidedToolCalls.turn(
      fromReply: "{\"need\": \"a story\", \"tool\": \"none\", \"answer\": \"Once upon a ti",
      base: ModelTurn(finishReason: "length"), callID: "a")
    #expect(turn.text == "Once upon a ti")
    #expect(turn.finishReason == "length")
  }
}

@Suite struct GuidedSecondTryTests {
  let units = Transcript.ToolDefinition(
    name: "convertUnits", description: "Converts a quantity between units, e.g. 5 mi to km, 350 °F to °C.",
    parameters: [
      "type": "object",
      "properties": [
        "value": ["type": "number"],
        "from": ["type": "string", "description": "The unit of value, e.g. \"mi\" or \"celsius\"."],
        "to": ["type": "string", "description": "The unit to convert to, e.g. \"km\" or \"fahrenheit\"."],
      ],
      "required": ["value", "from", "to"],
    ])
  let weather = Transcript.ToolDefinition(
    name: "getWeather",
    description: "Typical weather for a city in a month: its temperature, how warm or cold, e.g. \"Boston\".",
    parameters: [
      "type": "object",
      "properties": [
        "city": ["type": "string"], "month": ["type": "integer", "minimum": 1, "maximum": 12],
        "units": ["enum": ["celsius", "fahrenheit"]],
      ],
    ])
  let time = Transcript.ToolDefinition(
    name: "get_current_time", description: "Current time in an IANA timezone, such as Europe/London.",
    parameters: ["type": "object", "properties": ["timezone": ["type": "string"]]])

  func copies(_ tool: Transcript.ToolDefinition, _ arguments: JSONValue, after prompt: String) -> Bool {
    GuidedToolCalls.copiesDescription(
      .init(id: "c", toolName: tool.name, arguments: arguments), of: tool,
      in: Transcript(entries: [.prompt(.init(text: prompt))]))
  }

  @Test func callsFilledWithTheDescriptionsExamplesAreCopies() {
    // What the default local model did with weather questions.
    #expect(copies(units, ["value": 25, "from": "celsius", "to": "fahrenheit"], after: "Temperature in Tokyo?"))
    #expect(
      copies(units, ["value": 350, "from": "Celsius", "to": "Fahrenheit"], after: "Lisbon in April, in Fahrenheit?"))
  }

  @Test func callsFromTheConversationAreNotCopies() {
    // "mi" begins "miles"; "km" is nowhere, but two of three arguments are mentioned.
    #expect(!copies(units, ["value": 5, "from": "mi", "to": "km"], after: "Convert 5 miles to kilometers."))
    #expect(!copies(units, ["value": 100, "from": "fahrenheit", "to": "celsius"], after: "100 °F in Celsius?"))
    // The user's figure, with units named as the description names them.
    #expect(!copies(units, ["value": 350, "from": "fahrenheit", "to": "celsius"], after: "350F to C"))
    // Listed and bounded values are choices: Sydney's month and units are not counted.
    #expect(!copies(weather, ["city": "Sydney", "month": 12, "units": "celsius"], after: "Sydney in December?"))
    // Unmentioned but not in the description: what the model knows, not a copy.
    #expect(!copies(time, ["timezone": "America/New_York"], after: "What time is it in the Big Apple?"))
    // An unmentioned value that the description holds, beside mentioned ones, is not enough.
    #expect(!copies(weather, ["city": "Boston"], after: "Weather in Boston?"))
    #expect(copies(weather, ["city": "Boston"], after: "How warm is it?"))
    #expect(!copies(units, [:], after: "anything"))
  }

  @Test func wordsMatchByTheirBeginnings() {
    let search = Transcript.ToolDefinition(
      name: "searchBreadDatabase", description: "Searches bread recipes: baguette, flatbreads, rye breads.",
      parameters: ["type": "object", "properties": ["searchTerm": ["type": "string"]]])
    #expect(!copies(search, ["searchTerm": "flatbreads"], after: "Show me two flatbread recipes."))
    #expect(copies(search, ["searchTerm": "baguette"], after: "Do you have a sourdough recipe?"))
    // Three letters are too few to begin a longer word: "rye" does not stand for "ryebreads".
    #expect(copies(search, ["searchTerm": "rye breads"], after: "Any bre?"))
  }

  @Test func toolOutputsAndInstructionsCountAsTheConversation() {
    let call = Transcript.ToolCall(
      id: "c2", toolName: "convertUnits", arguments: ["value": 350, "from": "mi", "to": "km"])
    let transcript = Transcript(entries: [
      .instructions(.init(text: "The user's car does 350 miles on a tank.")),
      .prompt(.init(text: "How far is that in kilometres?")),
    ])
    #expect(!GuidedToolCalls.copiesDescription(call, of: units, in: transcript))
  }

  func request(_ prompt: String, tools: [Transcript.ToolDefinition], then entries: [Transcript.Entry] = [])
    -> ModelRequest
  {
    ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: prompt))] + entries), tools: tools, toolChoice: .auto,
      options: GenerationOptions())
  }

  func turn(_ tool: String, _ arguments: JSONValue) -> ModelTurn {
    var turn = ModelTurn()
    turn.toolCalls = [.init(id: "x", toolName: tool, arguments: arguments)]
    return turn
  }

  /// The tools a request body's reply schema lets the model call.
  func callable(_ body: JSONValue) throws -> [String] {
    let replies = try #require(body["response_format"]?["schema"]?["anyOf"]?.arrayValue)
    let items = try #require(replies[0]["properties"]?["calls"]?["items"])
    return (items["anyOf"]?.arrayValue ?? [items]).compactMap { $0["properties"]?["tool"]?["const"]?.stringValue }
  }

  @Test func aCopiedCallIsAskedAgainWithoutItsTool() throws {
    let request = request("Tell me the temperature in Tokyo.", tools: [units, weather, time])
    var attempt = GuidedToolCalls.Attempt()
    let copied = turn("convertUnits", ["value": 25, "from": "celsius", "to": "fahrenheit"])
    #expect(attempt.review(copied, reply: "", for: request) == .retry)
    // Without it, and without the tools the prompt shares no word with.
    #expect(attempt.excluded == ["convertUnits", "get_current_time"])
    #expect(!attempt.answerOnly)
    let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: false, excluding: attempt.excluded)
    #expect(try callable(body) == ["getWeather"])
    // The messages stay the same, so the server's prompt cache holds.
    #expect(body["messages"] == GuidedToolCalls.requestBody(for: request, model: "m", stream: false)["messages"])
    // The right call stands; an answer always does.
    let right = turn("getWeather", ["city": "Tokyo"])
    #expect(attempt.review(right, reply: "", for: request) == .accept(right))
    let answer = ModelTurn(text: "It is mild.")
    #expect(attempt.review(answer, reply: "", for: request) == .accept(answer))
  }

  @Test func atMostTwoToolsAreLeftOutThenOnlyAnAnswer() {
    // A prompt each tool may be about, so that each is worth a try.
    let request = request("How warm is it at this time of year?", tools: [units, weather, time])
    var attempt = GuidedToolCalls.Attempt()
    #expect(
      attempt.review(turn("convertUnits", ["value": 5, "from": "mi", "to": "km"]), reply: "", for: request) == .retry)
    #expect(attempt.review(turn("getWeather", ["city": "Boston"]), reply: "", for: request) == .retry)
    #expect(attempt.excluded == ["convertUnits", "getWeather"])
    #expect(!attempt.answerOnly)
    // A third needless call: no more tools are left out; the answer is asked for.
    #expect(attempt.review(turn("get_current_time", ["timezone": "Europe/London"]), reply: "", for: request) == .retry)
    #expect(attempt.answerOnly)
    #expect(attempt.excluded == ["convertUnits", "getWeather"])
  }

  @Test func aRepeatedCallIsAskedAgainAsAnAnswer() {
    let call = Transcript.ToolCall(id: "c1", toolName: "getWeather", arguments: ["city": "Oslo"])
    let request = request(
      "Weather in Oslo?", tools: [weather],
      then: [.toolCalls(.init(calls: [call])), .toolOutput(.init(callID: "c1", toolName: "getWeather", text: "{}"))])
    var attempt = GuidedToolCalls.Attempt()
    #expect(attempt.review(turn("getWeather", ["city": "Oslo"]), reply: "", for: request) == .retry)
    #expect(attempt.answerOnly)
    #expect(attempt.review(turn("getWeather", ["city": "Oslo"]), reply: "", for: request) != .retry)
  }

  @Test func answerFollowUpAsksForTheAnswerOnceResultsAreIn() throws {
    let call = Transcript.ToolCall(id: "c1", toolName: "getWeather", arguments: ["city": "Oslo"])
    let asked = request("Weather in Oslo?", tools: [weather], then: [.toolCalls(.init(calls: [call]))])
    let answered = request(
      "Weather in Oslo?", tools: [weather],
      then: [.toolCalls(.init(calls: [call])), .toolOutput(.init(callID: "c1", toolName: "getWeather", text: "{}"))])
    let failed = request(
      "Weather in Oslo?", tools: [weather],
      then: [
        .toolCalls(.init(calls: [call])),
        .toolOutput(.init(callID: "c1", toolName: "getWeather", text: "unknown city", isError: true)),
      ])
    #expect(!GuidedToolCalls.answersResults(asked.transcript))
    #expect(GuidedToolCalls.answersResults(answered.transcript))
    #expect(!GuidedToolCalls.answersResults(failed.transcript))
    let answerSchema = GuidedToolCalls.answerSchema
    #expect(answerSchema["required"] == ["answer"])
    func schema(_ r: ModelRequest, _ followUp: GuidedFollowUp) -> JSONValue? {
      GuidedToolCalls.requestBody(for: r, model: "m", stream: false, followUp: followUp)["response_format"]?["schema"]
    }
    #expect(schema(answered, .answer) == answerSchema)
    #expect(schema(answered, .answerOrCall) != answerSchema)
    // After a failure the model may still fix the call.
    #expect(schema(failed, .answer) != answerSchema)
    let last = try #require(
      GuidedToolCalls.requestBody(for: answered, model: "m", stream: false, followUp: .answer)["messages"]?
        .arrayValue?.last?["content"]?.stringValue)
    #expect(
      last.hasSuffix(
        "Now answer the user's request (\"Weather in Oslo?\") with these results, in plain words; give their figures "
          + "as they are, with their units."))
  }
}
