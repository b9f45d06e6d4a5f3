import Foundation
import Testing
import ToolhostJSON
import ToolhostSession
import ToolhostTools

@testable import ToolhostGuided
@testable import ToolhostOpenAI

/// Several calls in one reply, needless calls, arguments the user did not give, and answers checked against the
/// results: the guided checks, without a model.
@Suite struct GuidedAnswerTests {
  let weather = Transcript.ToolDefinition(
    name: "getWeather",
    description: "Typical weather for a major world city in a given month: the average high and low temperature.",
    parameters: [
      "type": "object",
      "properties": [
        "city": ["type": "string", "description": "City name, e.g. \"Boston\"."],
        "month": ["type": "integer", "minimum": 1, "maximum": 12, "description": "Month number, 1 = January."],
        "units": ["type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"],
      ],
      "required": ["city"],
    ])
  let bread = Transcript.ToolDefinition(
    name: "searchBreadDatabase", description: "Searches bread recipes by name, ingredient or country.",
    parameters: [
      "type": "object",
      "properties": [
        "searchTerm": ["type": "string"], "limit": ["type": "integer", "minimum": 1, "maximum": 6, "default": 3],
      ],
      "required": ["searchTerm"],
    ])
  let todoAdd = Transcript.ToolDefinition(
    name: "todoAdd", description: "Adds an item to the user's to-do list, to be reminded of it.",
    parameters: [
      "type": "object",
      "properties": ["text": ["type": "string"], "due": ["type": "string", "description": "A due date."]],
      "required": ["text"],
    ])
  let units = Transcript.ToolDefinition(
    name: "convertUnits", description: "Converts a quantity between units.",
    parameters: [
      "type": "object",
      "properties": ["value": ["type": "number"], "from": ["type": "string"], "to": ["type": "string"]],
      "required": ["value", "from", "to"],
    ])
  let stats = Transcript.ToolDefinition(
    name: "describeData", description: "Computes descriptive statistics of lists of numbers, such as prices.",
    parameters: [
      "type": "object",
      "properties": [
        "datasets": [
          "type": "array",
          "items": [
            "type": "object",
            "properties": ["name": ["type": "string"], "values": ["type": "array", "items": ["type": "number"]]],
          ],
        ],
        "percentiles": ["type": "array", "items": ["type": "number", "minimum": 0, "maximum": 100]],
      ],
      "required": ["datasets"],
    ])
  let todoClear = Transcript.ToolDefinition(
    name: "todoClear", description: "Deletes every item on the to-do list.",
    parameters: ["type": "object", "properties": ["onlyDone": ["type": "boolean", "default": false]]])

  func transcript(_ prompt: String, _ entries: [Transcript.Entry] = []) -> Transcript {
    Transcript(entries: [.prompt(.init(text: prompt))] + entries)
  }

  func call(_ tool: String, _ arguments: JSONValue, id: String = "c1") -> Transcript.ToolCall {
    Transcript.ToolCall(id: id, toolName: tool, arguments: arguments)
  }

  // MARK: Several calls in one reply

  @Test func aReplyCarriesSeveralCalls() {
    let reply = """
      {"need": "weather in two cities", "calls": [{"tool": "getWeather", "arguments": {"city": "Paris"}}, \
      {"tool": "getWeather", "arguments": {"city": "Rome"}}, {"tool": "getWeather", "arguments": {"city": "Paris"}}]}
      """
    let turn = GuidedToolCalls.turn(fromReply: reply, base: ModelTurn(finishReason: "stop"), callID: "k")
    #expect(turn.toolCalls.map(\.toolName) == ["getWeather", "getWeather"], "the repeated Paris call is made once")
    #expect(turn.toolCalls.map(\.arguments) == [["city": "Paris"], ["city": "Rome"]])
    #expect(turn.toolCalls.map(\.id) == ["k", "k_2"])
    #expect(turn.finishReason == "tool_calls")
    #expect(turn.text == "")
    // A round of several calls is shown back as one message, and their results as one.
    let history = transcript(
      "Paris or Rome?",
      [
        .toolCalls(.init(calls: turn.toolCalls)),
        .toolOutput(.init(callID: "k", toolName: "getWeather", text: "{}", value: ["high": 8])),
        .toolOutput(.init(callID: "k_2", toolName: "getWeather", text: "{}", value: ["high": 13])),
      ])
    let messages = GuidedToolCalls.messages(from: history, tools: [weather], choice: .auto, followUp: .answer)
    #expect(messages.map { $0["role"]?.stringValue ?? "" } == ["system", "user", "assistant", "user"])
    let results = messages[3]["content"]?.stringValue ?? ""
    #expect(
      results.hasPrefix(
        "Result of getWeather:\nhigh: 8\n\nResult of getWeather:\nhigh: 13\n\n"
          + "Compared:\nhigh: highest Rome (13), lowest Paris (8)\n\nNow answer"))
  }

  @Test func aCallForOneMemberOfAListIsMadeForEveryMember() {
    func completed(_ arguments: JSONValue, _ prompt: String) -> [JSONValue] {
      GuidedToolCalls.completingLists([call("getWeather", arguments)], prompt: prompt).map(\.arguments)
    }
    #expect(
      completed(["city": "Boston", "month": 7], "Is it hotter in Boston, Chicago, or Miami in July?") == [
        ["city": "Boston", "month": 7], ["city": "Chicago", "month": 7], ["city": "Miami", "month": 7],
      ])
    #expect(
      completed(["city": "Rome"], "Compare the weather in Paris and Rome") == [["city": "Rome"], ["city": "Paris"]])
    #expect(
      completed(["city": "Honolulu", "month": 1], "Is Honolulu warmer than Anchorage in January?") == [
        ["city": "Honolulu", "month": 1], ["city": "Anchorage", "month": 1],
      ])
    #expect(completed(["city": "New York"], "New York or São Paulo?") == [["city": "New York"], ["city": "São Paulo"]])
    #expect(
      GuidedToolCalls.completingLists([call("todoDone", ["id": 1])], prompt: "Mark 1 and 3 as done").map(\.arguments)
        == [["id": 1], ["id": 3]])
    #expect(
      GuidedToolCalls.completingLists([call("todoRemove", ["id": 2])], prompt: "Delete to-do items 2 and 3.").map(
        \.arguments) == [["id": 2], ["id": 3]], "a full stop ends the sentence, not the number")
    // Not lists of the value's kind: nothing added.
    #expect(completed(["city": "Paris"], "Weather in Paris and what time is it there?") == [["city": "Paris"]])
    #expect(completed(["city": "Paris"], "How warm is Paris in July?") == [["city": "Paris"]])
    #expect(completed(["city": "Lisbon"], "Weather in Lisboa and Madrid") == [["city": "Lisbon"]], "not in the prompt")
    // Calls the model made already are not made twice, and there are at most four.
    let both = GuidedToolCalls.completingLists(
      [call("getWeather", ["city": "Paris"]), call("getWeather", ["city": "Rome"], id: "c2")], prompt: "Paris or Rome?")
    #expect(both.count == 2)
    #expect(
      completed(["city": "A"], "A, B, C, D, E, F, G, H, I and J").count == GuidedToolCalls.maximumCallsPerReply)
  }

  @Test func listsOfSeveralArgumentsAreCombinedOrPairedRespectively() {
    func completed(_ arguments: JSONValue, _ prompt: String) -> [JSONValue] {
      GuidedToolCalls.completingLists([call("winRate", arguments)], prompt: prompt).map(\.arguments)
    }
    #expect(
      completed(["team": "Lakers", "season": 2018], "Winning percentage of the Lakers and Bulls in 2018 and 2020.") == [
        ["team": "Lakers", "season": 2018], ["team": "Lakers", "season": 2020], ["team": "Bulls", "season": 2018],
        ["team": "Bulls", "season": 2020],
      ])
    #expect(
      completed(
        ["artist": "Taylor Swift", "service": "Spotify"],
        "Play Taylor Swift and Coldplay on Spotify and Deezer respectively.") == [
          ["artist": "Taylor Swift", "service": "Spotify"], ["artist": "Coldplay", "service": "Deezer"],
        ])
  }

  @Test func aListWhoseMembersTheCallGivesRolesIsNotExpanded() {
    func completed(_ tool: String, _ arguments: JSONValue, _ prompt: String) -> [JSONValue] {
      GuidedToolCalls.completingLists([call(tool, arguments)], prompt: prompt).map(\.arguments)
    }
    // The other members are other arguments of the same call.
    #expect(
      completed("hypot", ["x": 4, "y": 5], "The hypotenuse of a right triangle with sides 4 and 5.") == [
        ["x": 4, "y": 5]
      ])
    #expect(
      completed("time", ["location": "Sydney", "country": "Australia"], "What time is it in Sydney, Australia?")
        == [["location": "Sydney", "country": "Australia"]])
    // Two names joined by a comma alone are a place and its region, not a list.
    #expect(
      completed("time", ["location": "Sydney"], "What time is it in Sydney, Australia?") == [["location": "Sydney"]])
    #expect(
      completed("events", ["museum": "Museum of Modern Art"], "Exhibitions at the Museum of Modern Art, New York.")
        == [["museum": "Museum of Modern Art"]])
    // A member the value itself holds is not another member; a possessive names its name.
    #expect(
      completed("shops", ["location": "Los Angeles, CA"], "Shops in Los Angeles, CA and Seattle").map {
        $0["location"]?.stringValue ?? ""
      } == ["Los Angeles, CA", "Seattle"])
    #expect(
      completed("stock", ["city": "Berlin"], "The price in Berlin and Madrid's music stores.") == [
        ["city": "Berlin"], ["city": "Madrid"],
      ])
    // A member another call holds already, in its own words, gets no second call.
    let made = GuidedToolCalls.completingLists(
      [call("weather", ["city": "Paris, France"]), call("weather", ["city": "Rome"], id: "c2")],
      prompt: "Paris or Rome?")
    #expect(made.count == 2)
  }

  @Test func whatTheFirstRoundLeftUncoveredMayGetASecondRound() throws {
    let convert = call("convertUnits", ["value": 10, "from": "km", "to": "mi"])
    #expect(
      GuidedToolCalls.uncoveredParts(of: "Convert 10 km to miles and 20 kg to pounds", by: [convert], tools: [])
        == ["20 kg to pounds"])
    let rye = call("searchBreadDatabase", ["searchTerm": "rye", "limit": 2])
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "Two rye recipes and the weather in Berlin", by: [rye], tools: [bread, weather])
        == ["the weather in Berlin"])
    let oslo = call("getWeather", ["city": "Oslo", "month": 1])
    #expect(
      GuidedToolCalls.uncoveredParts(of: "What's the weather in Oslo in January?", by: [oslo], tools: [weather]).isEmpty
    )
    let london = call("getWeather", ["city": "London"])
    #expect(GuidedToolCalls.uncoveredParts(of: "Il fait combien à Londres ?", by: [london], tools: [weather]).isEmpty)
    let first = transcript(
      "Two rye recipes and the weather in Berlin",
      [.toolCalls(.init(calls: [rye])), .toolOutput(.init(callID: "c1", toolName: "searchBreadDatabase", text: "{}"))])
    #expect(!GuidedToolCalls.answersResults(first, tools: [bread, weather]))
    let last = GuidedToolCalls.messages(from: first, tools: [bread, weather], choice: .auto, followUp: .answer).last
    #expect(last?["content"]?.stringValue?.contains("The request also asks: \"the weather in Berlin\"") == true)
  }

  @Test func aQuestionWithFiguresAboutAToolIsNotAnsweredFromMemory() {
    let units = Transcript.ToolDefinition(
      name: "convertUnits", description: "Converts a quantity between units of length, mass or temperature.",
      parameters: ["type": "object", "properties": ["value": ["type": "number"]]])
    let convert = transcript("Convert 10 km to miles and 20 kg to pounds")
    #expect(
      GuidedToolCalls.answersFromMemory(
        "10 km = 6.28 miles, 20 kg = 45.35 pounds", need: "conversions", in: convert, tools: [units, weather]))
    #expect(
      !GuidedToolCalls.answersFromMemory("4", need: nil, in: transcript("What is 2+2?"), tools: [units, weather]))
    #expect(
      !GuidedToolCalls.answersFromMemory(
        "Alexander Fleming, in 1928.", need: "the discoverer of penicillin",
        in: transcript("Who discovered penicillin?"),
        tools: [units, weather]))
    #expect(
      !GuidedToolCalls.answersFromMemory(
        "Sure, 10 km.", need: "a conversion", in: convert, tools: [units]), "no figure of its own")
    let request = ModelRequest(transcript: convert, tools: [units, weather], toolChoice: .auto)
    var attempt = GuidedToolCalls.Attempt()
    #expect(
      attempt.review(
        ModelTurn(text: "6.28 miles"), reply: #"{"need": "a unit conversion", "answer": "6.28 miles"}"#, for: request)
        == .retry)
    #expect(attempt.callRequired)
    let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: false, callRequired: true)
    #expect(body["response_format"]?["schema"]?["anyOf"] == nil, "only calls")
  }

  // MARK: Results as the model reads them

  @Test func resultsAreShownAsCompactLines() {
    let value: JSONValue = [
      "city": "Oslo", "averageHigh": -0.9, "precipitation": 57, "note": "",
      "source": .string(String(repeating: "a long provenance note ", count: 10)),
      "recipes": [["name": "Rye", "ingredients": [["name": "rye flour", "grams": 300]]]],
    ]
    #expect(
      GuidedToolCalls.digest(of: value)
        == "city: Oslo\naverageHigh: -0.9\nprecipitation: 57\nrecipes:\n  1. {name: Rye, ingredients: [{name: rye flour, grams: 300}]}"
    )
    let output = Transcript.ToolOutput(
      callID: "c", toolName: "getWeather", text: value.serialized(), value: ["high": 1], summary: "Oslo: high 1 °C")
    #expect(GuidedToolCalls.resultText(output) == "Oslo: high 1 °C", "what the rendering shows is not repeated")
    let more = Transcript.ToolOutput(
      callID: "c", toolName: "getWeather", text: "", value: ["high": 1, "month": 7, "city": "Oslo"],
      summary: "Oslo: high 1 °C")
    #expect(GuidedToolCalls.resultText(more) == "Oslo: high 1 °C", "no records: the rendering alone")
    let recipes = Transcript.ToolOutput(
      callID: "c", toolName: "searchBreadDatabase", text: "",
      value: ["query": "rye", "count": 1, "recipes": [["name": "Rye", "grams": 300]]],
      summary: "1 recipe matching rye: Rye")
    #expect(
      GuidedToolCalls.resultText(recipes)
        == "1 recipe matching rye: Rye\nDetails:\nrecipes:\n  1. {name: Rye, grams: 300}")
    let failure = Transcript.ToolOutput(callID: "c", toolName: "getWeather", text: "unknown city", isError: true)
    #expect(GuidedToolCalls.resultText(failure) == "unknown city")
  }

  @Test func aSearchThatFoundNothingMayBeFollowedByOneMoreCall() throws {
    let nothing = Transcript.ToolOutput(
      callID: "c1", toolName: "searchBreadDatabase", text: "{}", value: ["count": 0, "recipes": []])
    let found = Transcript.ToolOutput(
      callID: "c1", toolName: "searchBreadDatabase", text: "{}", value: ["count": 1, "recipes": [["name": "Rye"]]])
    #expect(GuidedToolCalls.foundNothing(nothing))
    #expect(!GuidedToolCalls.foundNothing(found))
    let first = transcript(
      "Rye bread recipe?",
      [.toolCalls(.init(calls: [call("searchBreadDatabase", ["searchTerm": "rye breads"])])), .toolOutput(nothing)])
    #expect(!GuidedToolCalls.answersResults(first), "one more call is allowed")
    let message = GuidedToolCalls.messages(from: first, tools: [bread], choice: .auto, followUp: .answer).last
    #expect(message?["content"]?.stringValue?.contains("Call the tool once more with a broader argument") == true)
    let second = Transcript(
      entries: first.entries + [
        .toolCalls(.init(calls: [call("searchBreadDatabase", ["searchTerm": "rye"], id: "c2")])),
        .toolOutput(.init(callID: "c2", toolName: "searchBreadDatabase", text: "{}", value: ["recipes": []])),
      ])
    #expect(GuidedToolCalls.answersResults(second), "only once: then the answer")
    #expect(GuidedToolCalls.answersResults(transcript("Rye?", [.toolCalls(.init(calls: [])), .toolOutput(found)])))
  }

  // MARK: Follow-ups

  /// A short follow-up keeps what the conversation fixed: the month asked before goes into the call that names only
  /// the new place.
  @Test func aFollowUpKeepsTheArgumentsTheConversationFixed() {
    let tides = Transcript.ToolDefinition(
      name: "tideTable", description: "High and low tides of a harbour on a day of the year.",
      parameters: [
        "type": "object",
        "properties": ["harbour": ["type": "string"], "month": ["type": "integer"], "day": ["type": "integer"]],
        "required": ["harbour"],
      ])
    func conversation(_ followUp: String, earlierFailed: Bool = false) -> Transcript {
      Transcript(entries: [
        .prompt(.init(text: "When is high tide in Brest on the 3rd of May?")),
        .toolCalls(.init(calls: [call("tideTable", ["harbour": "Brest", "month": 5, "day": 3], id: "a")])),
        .toolOutput(
          .init(
            callID: "a", toolName: "tideTable", text: earlierFailed ? "{\"error\": {}}" : "{\"high\": \"06:12\"}",
            value: earlierFailed ? nil : ["high": "06:12"], isError: earlierFailed)),
        .response(.init(text: "At 06:12.")),
        .prompt(.init(text: followUp)),
      ])
    }
    let cadiz = call("tideTable", ["harbour": "Cádiz"], id: "b")
    let kept = GuidedToolCalls.keepingWhatTheConversationFixed(cadiz, of: tides, in: conversation("And in Cádiz?"))
    #expect(kept.arguments.jsonEquals(["harbour": "Cádiz", "month": 5, "day": 3]))
    let ownDay = call("tideTable", ["harbour": "Cádiz", "day": 4], id: "b")
    #expect(
      GuidedToolCalls.keepingWhatTheConversationFixed(ownDay, of: tides, in: conversation("And Cádiz the day after?"))
        .arguments.jsonEquals(["harbour": "Cádiz", "month": 5, "day": 4]), "what the call gives stands")
    #expect(
      GuidedToolCalls.keepingWhatTheConversationFixed(
        cadiz, of: tides, in: conversation("Tell me everything you know about the harbour of Cádiz in Spain.")
      )
      .arguments.jsonEquals(["harbour": "Cádiz"]), "a question of its own is not a follow-up")
    #expect(
      GuidedToolCalls.keepingWhatTheConversationFixed(
        cadiz, of: tides, in: conversation("And in Cádiz?", earlierFailed: true)
      ).arguments == ["harbour": "Cádiz"], "a failed call fixed nothing")
    #expect(
      GuidedToolCalls.keepingWhatTheConversationFixed(cadiz, of: tides, in: transcript("And in Cádiz?")).arguments
        .jsonEquals(["harbour": "Cádiz"]), "nothing before")
  }

  // MARK: Needless calls

  /// A call that changes something stands on the user's words alone: the model's reason for it does not count.
  @Test func aWriteTheUserDidNotAskForIsNeedlessWhateverTheModelsReason() {
    func bookmarks(_ annotations: ToolAnnotations) -> Transcript.ToolDefinition {
      Transcript.ToolDefinition(
        name: "saveBookmark", description: "Saves a web page's address among the user's bookmarks.",
        parameters: [
          "type": "object",
          // A parameter's words are not what the tool is for: "short" does not make a poem a bookmark.
          "properties": [
            "title": ["type": "string", "description": "A short name for the page."],
            "address": ["type": "string", "format": "uri"],
          ],
        ], annotations: annotations)
    }
    let writer = bookmarks(ToolAnnotations(readOnlyHint: false))
    let reader = bookmarks(ToolAnnotations(readOnlyHint: true))
    let poem = transcript("Write a short poem about the sea.")
    let save = call("saveBookmark", ["title": "a short poem about the sea"])
    #expect(GuidedToolCalls.servesNoNeed(save, of: writer, need: "save the poem as a bookmark", in: poem))
    #expect(GuidedToolCalls.changesUnasked(writer, in: poem))
    #expect(
      !GuidedToolCalls.servesNoNeed(save, of: reader, need: "save the poem as a bookmark", in: poem),
      "a read-only tool's call may stand on the model's reason")
    #expect(
      !GuidedToolCalls.servesNoNeed(save, of: bookmarks(ToolAnnotations()), need: "save the poem", in: poem),
      "a tool without hints is not taken as a writer")
    #expect(
      GuidedToolCalls.changesUnasked(bookmarks(ToolAnnotations(readOnlyHint: true, destructiveHint: true)), in: poem),
      "a destructive tool changes things whatever else it says")
    let asked = transcript("Bookmark https://swift.org as Swift, please.")
    #expect(
      !GuidedToolCalls.servesNoNeed(
        call("saveBookmark", ["title": "Swift", "address": "https://swift.org"]), of: writer,
        need: "a bookmark of swift.org", in: asked))
  }

  @Test func aCallWithInventedArgumentsOrNoBearingOnTheQuestionIsNeedless() {
    let stock = transcript("What's the stock price of Apple?")
    #expect(
      GuidedToolCalls.servesNoNeed(
        call("getWeather", ["city": "New York"]), of: weather, need: "the stock price of Apple", in: stock))
    let penicillin = transcript("Who discovered penicillin?")
    #expect(
      GuidedToolCalls.servesNoNeed(
        call("searchBreadDatabase", ["searchTerm": "penicillin"]), of: bread, need: "the discoverer of penicillin",
        in: penicillin))
    // Calls the question asks for.
    let described = Transcript.ToolDefinition(
      name: "getWeather",
      description:
        "Typical weather. Use it for questions like \"what is the weather usually like in Lisbon in April?\".",
      parameters: ["type": "object", "properties": ["city": ["type": "string", "description": "e.g. \"Boston\"."]]])
    #expect(
      GuidedToolCalls.servesNoNeed(
        call("getWeather", ["city": "Boston"]), of: described, need: "a cheap flight from Boston to Lisbon in April",
        in: transcript("Find me a cheap flight from Boston to Lisbon in April.")), "sample questions are not the topic")
    let coat = transcript("Will I need a coat in Oslo in January?")
    #expect(
      !GuidedToolCalls.servesNoNeed(
        call("getWeather", ["city": "Oslo", "month": 1]), of: weather, need: "a coat for Oslo in January", in: coat))
    let french = transcript("Quel temps fait-il à Londres en juillet ?")
    #expect(
      !GuidedToolCalls.servesNoNeed(
        call("getWeather", ["city": "London", "month": 7]), of: weather, need: "the weather in London in July",
        in: french), "a translated name is the user's")
    let sum = transcript("What is 2+2?")
    #expect(
      GuidedToolCalls.servesNoNeed(
        call("searchBreadDatabase", ["searchTerm": "2+2"]), of: bread, need: "the sum of 2 and 2", in: sum),
      "a prompt with no word to judge by is judged by its need")
    let rye = transcript("Any rye recipes?")
    #expect(
      !GuidedToolCalls.servesNoNeed(
        call("searchBreadDatabase", ["searchTerm": "rye"]), of: bread, need: "rye recipes", in: rye))
  }

  @Test func argumentsTheUserDidNotGiveAreLeftOut() {
    func pruned(_ tool: Transcript.ToolDefinition, _ arguments: JSONValue, _ prompt: String) -> JSONValue {
      GuidedToolCalls.withoutUngivenArguments(call(tool.name, arguments), of: tool, in: transcript(prompt)).arguments
    }
    #expect(
      pruned(todoAdd, ["text": "buy eggs", "due": "2023-10-05"], "Add buy eggs to my list") == ["text": "buy eggs"])
    #expect(
      pruned(todoAdd, ["text": "buy eggs", "due": "2026-12-03"], "Add buy eggs due 2026-12-03")
        == ["text": "buy eggs", "due": "2026-12-03"], "a date the user wrote as it is")
    let wednesday = Date(timeIntervalSince1970: 1_795_600_000)  // 25 November 2026
    #expect(
      GuidedToolCalls.withoutUngivenArguments(
        call("todoAdd", ["text": "call mum", "due": "2026-11-27"]), of: todoAdd,
        in: transcript("Remind me to call mum on Friday"), today: wednesday
      ).arguments == ["text": "call mum", "due": "2026-11-27"], "a date the model worked out from a weekday")
    #expect(pruned(weather, ["city": "Paris", "month": 1], "Weather in Paris?") == ["city": "Paris"])
    #expect(pruned(weather, ["city": "Paris", "month": 7], "Paris in July?") == ["city": "Paris", "month": 7])
    #expect(pruned(weather, ["city": "Paris", "month": 7], "Paris en juillet ?") == ["city": "Paris", "month": 7])
    #expect(pruned(weather, ["city": "Paris", "units": "celsius"], "Paris in °C?") == ["city": "Paris"], "the default")
    #expect(
      pruned(weather, ["city": "Paris", "units": "fahrenheit"], "Paris in Fahrenheit?")
        == ["city": "Paris", "units": "fahrenheit"])
    #expect(pruned(weather, ["city": "Paris", "units": "fahrenheit"], "Paris?") == ["city": "Paris"])
    #expect(pruned(bread, ["searchTerm": "rye", "limit": 2], "Two rye recipes") == ["searchTerm": "rye", "limit": 2])
    #expect(pruned(bread, ["searchTerm": "rye", "limit": 1], "A rye recipe") == ["searchTerm": "rye", "limit": 1])
    #expect(pruned(bread, ["searchTerm": "rye", "limit": 5], "rye recipes") == ["searchTerm": "rye"])
    #expect(pruned(todoClear, ["onlyDone": true], "Clear my whole list") == [:])
    #expect(
      pruned(
        stats, ["datasets": [["name": "data", "values": [12, 15, 9]], ["name": "weights", "values": [1, 1, 1]]]],
        "Mean of 12, 15 and 9") == ["datasets": [["name": "data", "values": [12, 15, 9]]]])
    let time = Transcript.ToolDefinition(
      name: "get_current_time", description: "Current time.",
      parameters: [
        "type": "object",
        "properties": ["timezone": ["type": "string", "description": "IANA timezone name (e.g., 'Europe/London')."]],
        "required": ["timezone"],
      ])
    #expect(pruned(time, ["timezone": "Berlin"], "Time in Berlin?") == ["timezone": "Europe/Berlin"])
    #expect(pruned(time, ["timezone": "new york"], "Time in New York?") == ["timezone": "America/New_York"])
    #expect(pruned(time, ["timezone": "Asia/Tokyo"], "Time in Tokyo?") == ["timezone": "Asia/Tokyo"])
    #expect(pruned(time, ["timezone": "Atlantis"], "Time in Atlantis?") == ["timezone": "Atlantis"])
    #expect(pruned(time, ["timezone": "Australia/London"], "Time in London?") == ["timezone": "Europe/London"])
    #expect(pruned(todoClear, ["onlyDone": true], "Clear the done items") == ["onlyDone": true])
  }

  // MARK: Answers checked against the results

  func answered(_ prompt: String, _ value: JSONValue, summary: String? = nil, isError: Bool = false) -> Transcript {
    transcript(
      prompt,
      [
        .toolCalls(.init(calls: [call("getWeather", ["city": "Oslo"])])),
        .toolOutput(
          .init(
            callID: "c1", toolName: "getWeather", text: isError ? "unknown city" : value.serialized(),
            value: isError ? nil : value, isError: isError, summary: summary)),
      ])
  }

  @Test func anAnswerMustStateTheResultsFigures() {
    let oslo = answered(
      "What's the weather in Oslo in January?", ["averageHigh": -0.9, "averageLow": -6.2, "precipitation": 57],
      summary: "Oslo — January normals: high -0.9 °C, low -6.2 °C, precipitation 57 mm (1991–2020 normals)")
    #expect(GuidedToolCalls.answerProblem("Highs of −0.9 °C, lows of -6.2 °C and 57 mm of rain.", in: oslo) == nil)
    #expect(GuidedToolCalls.answerProblem("About -1 °C by day and -6 °C at night.", in: oslo) == nil, "rounded")
    #expect(GuidedToolCalls.answerProblem("It is 12 °C.", in: oslo) == "the figure 12 is in no result")
    #expect(GuidedToolCalls.answerProblem("", in: oslo) == "the answer is empty")
    #expect(
      GuidedToolCalls.answerProblem("Now answer the user's request with these results.", in: oslo)
        == "the answer repeats the instructions")
    #expect(
      GuidedToolCalls.answerProblem("The weather in Oslo in January?", in: oslo) == "the answer repeats the question")
    let refused = answered("Please delete to-do #3, I don't need it anymore.", [:], isError: true)
    #expect(
      GuidedToolCalls.answerProblem("Please delete to-do #3, I don't need it anymore.", in: refused)
        == "the answer repeats the question", "also with a figure")
    let units = answered("Convert 10 km to miles", ["value": 6.21371, "unit": "mi"])
    #expect(GuidedToolCalls.answerProblem("10 km is 6.21 miles.", in: units) == nil)
    #expect(GuidedToolCalls.answerProblem("10 km is 6,2 miles.", in: units) == nil, "a decimal comma")
    #expect(GuidedToolCalls.answerProblem("10 km is 16.09 miles.", in: units) == "the figure 16.09 is in no result")
    let list = answered("My to-dos?", ["items": [["id": 1, "text": "buy milk"]]])
    #expect(GuidedToolCalls.answerProblem("Your list:\n1. buy milk\n2) nothing else", in: list) == nil, "markers")
    let failed = answered("Weather in Atlantis?", [:], isError: true)
    #expect(GuidedToolCalls.answerProblem("It is sunny in Atlantis.", in: failed) != nil)
    #expect(GuidedToolCalls.answerProblem("Sorry, I could not find Atlantis.", in: failed) == nil)
    // An answer with no call made for the prompt is not checked here.
    #expect(GuidedToolCalls.answerProblem("It is 12 °C.", in: transcript("Hi")) == nil)
  }
}
