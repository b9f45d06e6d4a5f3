import Foundation
import Testing
import ToolhostJSON
import ToolhostSession

@testable import ToolhostGuided
@testable import ToolhostOpenAI

@Suite struct GuidedSecondOpinionTests {
  let tools = [
    Transcript.ToolDefinition(name: "getWeather", description: "Typical weather.", parameters: ["type": "object"]),
    Transcript.ToolDefinition(name: "todoDone", description: "Marks an item done.", parameters: ["type": "object"]),
    Transcript.ToolDefinition(
      name: "searchBreadDatabase", description: "Bread recipes.", parameters: ["type": "object"]),
    Transcript.ToolDefinition(name: "todoList", description: "Lists to-dos.", parameters: ["type": "object"]),
  ]

  @Test func aNeedThatNamesAToolAsksForACall() {
    #expect(GuidedToolCalls.needNamesATool("the weather in Berlin in December", tools))
    #expect(GuidedToolCalls.needNamesATool("mark task 1 as done", tools))
    #expect(GuidedToolCalls.needNamesATool("my to-do list", tools))
    #expect(!GuidedToolCalls.needNamesATool("a list of novels set in Rome", tools))
    #expect(!GuidedToolCalls.needNamesATool("a search for cheap flights", tools))
    let todoAdd = Transcript.ToolDefinition(
      name: "todoAdd", description: "Adds a to-do.", parameters: ["type": "object"])
    #expect(!GuidedToolCalls.needNamesATool("add 2 and 2", [todoAdd]), "a sum is not a to-do")
    #expect(!GuidedToolCalls.needNamesATool(nil, tools))
  }

  @Test func theFirstReplysCallsAreCompletedWithTheCallsForWhatTheyLeaveUndone() throws {
    let units = GuidedAnswerTests().units
    let prompt = "Convert 10 km to miles and 20 kg to pounds"
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: prompt))]), tools: [units], toolChoice: .auto)
    var first = ModelTurn()
    first.toolCalls = [.init(id: "a", toolName: "convertUnits", arguments: ["value": 10, "from": "km", "to": "miles"])]
    var attempt = GuidedToolCalls.Attempt()
    #expect(attempt.review(first, reply: "", for: request) == .retry)
    let continuation = try #require(attempt.continuation)
    #expect(continuation.parts == ["20 kg to pounds"])
    #expect(attempt.callRequired)
    let body = GuidedToolCalls.requestBody(
      for: request, model: "m", stream: false, callRequired: true, continuing: continuation)
    let messages = try #require(body["messages"]?.arrayValue)
    #expect(messages.suffix(2).map { $0["role"]?.stringValue ?? "" } == ["assistant", "user"])
    #expect(messages.last?["content"]?.stringValue?.contains("\"20 kg to pounds\"") == true)
    var second = ModelTurn()
    second.toolCalls = [
      .init(id: "b", toolName: "convertUnits", arguments: ["value": 20, "from": "kg", "to": "pounds"])
    ]
    guard case .accept(let turn) = attempt.review(second, reply: "", for: request) else {
      Issue.record("the second reply should stand")
      return
    }
    #expect(
      turn.toolCalls.map(\.arguments) == [
        ["value": 10, "from": "km", "to": "miles"], ["value": 20, "from": "kg", "to": "pounds"],
      ])
    // Parts already covered: nothing to continue.
    #expect(GuidedToolCalls.uncoveredParts(of: prompt, by: turn.toolCalls, tools: [units]).isEmpty)
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "What's on my to-do list, and what's the weather in Dublin in June?",
        by: [.init(id: "c", toolName: "todoList", arguments: [:])], tools: tools) == [
          "what's the weather in Dublin in June"
        ])
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "How many kilometers is 26.2 miles, and how many liters is one gallon?",
        by: [.init(id: "c", toolName: "convertUnits", arguments: ["value": 26.2, "from": "mi", "to": "km"])],
        tools: [units]) == ["how many liters is one gallon"], "a number written as a word")
    #expect(GuidedToolCalls.spelledNumbers(in: "Ajoute une tâche et deux autres") == [2])
    #expect(GuidedToolCalls.spelledNumbers(in: "Show all my to-dos").isEmpty, "not 'dos', two in Spanish")
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "What's on my to-do list, and what's the weather in Dublin in June?",
        by: [.init(id: "c", toolName: "getWeather", arguments: ["city": "Dublin", "month": 6])],
        tools: [
          .init(
            name: "getWeather", description: "Typical weather for a city; see the list of known cities.",
            parameters: ["type": "object"])
        ] + tools.dropFirst()) == ["What's on my to-do list"],
      "a clause more about a tool not called than about the called one")
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "Add 'book the vet' and 'renew my passport' to my to-do list.",
        by: [.init(id: "c", toolName: "todoAdd", arguments: ["text": "book the vet"])], tools: tools)
        == ["'renew my passport' to my to-do list"])
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "What time is it right now in Sydney and in London?",
        by: [.init(id: "c", toolName: "get_current_time", arguments: ["timezone": "Australia/Sydney"])], tools: tools)
        == ["in London"], "a clause of names only continues the list")
    #expect(
      GuidedToolCalls.uncoveredParts(
        of: "Which is warmer in March, Madrid or Athens?",
        by: [
          .init(id: "c", toolName: "getWeather", arguments: ["city": "Madrid", "month": 3]),
          .init(id: "d", toolName: "getWeather", arguments: ["city": "Athens", "month": 3]),
        ], tools: tools
      ).isEmpty)
  }

  @Test func aReplyThatTookNothingFromThePromptIsReplacedByTheCallsThatDo() throws {
    let intID: JSONValue = ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]]
    let todo = [
      Transcript.ToolDefinition(
        name: "todoList", description: "Lists the to-do items.",
        parameters: ["type": "object", "properties": ["includeDone": ["type": "boolean"]]]),
      Transcript.ToolDefinition(name: "todoDone", description: "Marks a to-do item done.", parameters: intID),
    ]
    let prompt = "Item 1 on my to-do list is done."
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: prompt))]), tools: todo, toolChoice: .auto)
    var first = ModelTurn()
    first.toolCalls = [.init(id: "a", toolName: "todoList", arguments: ["includeDone": true])]
    var attempt = GuidedToolCalls.Attempt()
    #expect(attempt.review(first, reply: "", for: request) == .retry)
    let continuation = try #require(attempt.continuation)
    #expect(continuation.replaces, "todoList took nothing from the prompt")
    // The same call again: asked once more without its tool.
    #expect(attempt.review(first, reply: "", for: request) == .retry)
    #expect(attempt.excluded == ["todoList"])
    var second = ModelTurn()
    second.toolCalls = [.init(id: "b", toolName: "todoDone", arguments: ["id": 1])]
    guard case .accept(let turn) = attempt.review(second, reply: "", for: request) else {
      Issue.record("the call that does what was asked should stand")
      return
    }
    #expect(turn.toolCalls.map(\.toolName) == ["todoDone"], "the first call is replaced, not joined")
    #expect(GuidedToolCalls.takesNothing(from: prompt, .init(id: "c", toolName: "todoList", arguments: [:])))
    #expect(!GuidedToolCalls.takesNothing(from: prompt, .init(id: "c", toolName: "todoDone", arguments: ["id": 1])))
  }

  @Test func aCallForAnotherMemberOfAToolFamilyThanThePromptNamesIsAWrongChoice() {
    let names = ["todoAdd", "todoList", "todoDone", "todoRemove", "todoClear", "getWeather", "get_current_time"]
    let family = names.map { Transcript.ToolDefinition(name: $0, description: "", parameters: ["type": "object"]) }
    func wrong(_ tool: String, _ prompt: String) -> Bool {
      GuidedToolCalls.picksTheWrongSibling(
        .init(id: "c", toolName: tool, arguments: [:]), among: family, prompt: prompt)
    }
    #expect(wrong("todoRemove", "done #2"))
    #expect(wrong("todoAdd", "Mark 'call the dentist' as done on my to-do list."))
    #expect(!wrong("todoDone", "done #2"))
    #expect(!wrong("todoAdd", "Put 'pick up the dry cleaning' on my list."), "'list' is what the family is about")
    #expect(!wrong("todoList", "Item 1 on my to-do list is done."), "its own action is named")
    #expect(!wrong("getWeather", "What is the current time in Oslo?"), "'get' makes no family")
  }

  @Test func aFailureThatSaysWhatWouldWorkAsksForOneMoreCall() {
    func transcript(_ error: String, rounds: Int = 1) -> Transcript {
      var entries: [Transcript.Entry] = [.prompt(.init(text: "how hot is dubay in july"))]
      for round in 1...rounds {
        entries.append(
          .toolCalls(.init(calls: [.init(id: "c\(round)", toolName: "getWeather", arguments: ["city": "Dubay"])])))
        entries.append(.toolOutput(.init(callID: "c\(round)", toolName: "getWeather", text: error, isError: true)))
      }
      return Transcript(entries: entries)
    }
    let suggestion = #"{"error": {"message": "Unknown city \"Dubay\". Did you mean Dubai?"}}"#
    #expect(GuidedToolCalls.failureSuggestsAFix(transcript(suggestion)))
    #expect(!GuidedToolCalls.failureSuggestsAFix(transcript(#"{"error": {"message": "timed out"}}"#)))
    #expect(!GuidedToolCalls.failureSuggestsAFix(transcript(suggestion, rounds: 2)), "one retry, not more")
    let request = ModelRequest(transcript: transcript(suggestion), tools: tools, toolChoice: .auto)
    let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: false, followUp: .answer)
    #expect(body["response_format"]?["schema"]?["anyOf"] == nil, "a call, not an answer")
    #expect(GuidedToolCalls.statement(fromResultsIn: transcript(suggestion)).contains("failed: Unknown city"))
  }

  @Test func digitsAndLettersWrittenTogetherAreTwoWords() {
    #expect(GroundingText.words(of: "350f to c") == ["350", "f", "to", "c"])
    let call: Transcript.ToolCall = .init(
      id: "c", toolName: "convertUnits", arguments: ["value": 350, "from": "F", "to": "C"])
    let units = Transcript.ToolDefinition(
      name: "convertUnits", description: "Converts units.",
      parameters: [
        "type": "object",
        "properties": ["value": ["type": "number"], "from": ["type": "string"], "to": ["type": "string"]],
      ])
    #expect(
      !GuidedToolCalls.inventsArguments(call, of: units, in: Transcript(entries: [.prompt(.init(text: "350F to C"))])))
  }

  @Test func aCallForAListGoesToTheToolThatFitsTheRequestBest() {
    let weather = Transcript.ToolDefinition(
      name: "getWeather", description: "Average high and low temperature of a city.", parameters: ["type": "object"])
    let bread = Transcript.ToolDefinition(
      name: "searchBreadDatabase", description: "Bread recipes.", parameters: ["type": "object"])
    let transcript = Transcript(entries: [.prompt(.init(text: "Is it hotter in Boston, Chicago, or Miami in July?"))])
    let need = "the temperature in Boston, Chicago, or Miami in July"
    func better(_ tool: String) -> Bool {
      GuidedToolCalls.anotherToolFitsBetter(
        .init(id: "c", toolName: tool, arguments: [:]), among: [weather, bread], need: need, in: transcript)
    }
    #expect(better("searchBreadDatabase"))
    #expect(!better("getWeather"))
  }

  @Test func aPluralIsTheSameWord() {
    #expect(TopicWords.sameWord("todos", "todo"))
    #expect(TopicWords.sameWord("cups", "cup"))
    #expect(TopicWords.sameWord("recipes", "recipe"))
    #expect(!TopicWords.sameWord("cut", "cup"))
    #expect(!TopicWords.sameWord("as", "a"))
  }

  @Test func severalResultsOfOneToolAreComparedAndAnAnswerMustCoverEach() throws {
    let calls: [Transcript.ToolCall] = [
      .init(id: "a", toolName: "getWeather", arguments: ["city": "Madrid", "month": 3]),
      .init(id: "b", toolName: "getWeather", arguments: ["city": "Athens", "month": 3]),
    ]
    let outputs: [Transcript.ToolOutput] = [
      .init(
        callID: "a", toolName: "getWeather", text: "", value: ["averageHigh": 16.3, "precipitation": 35, "month": 3]),
      .init(
        callID: "b", toolName: "getWeather", text: "", value: ["averageHigh": 16.6, "precipitation": 41, "month": 3]),
    ]
    let compared = try #require(GuidedToolCalls.comparison(of: outputs, calls: calls))
    #expect(compared.contains("averageHigh: highest Athens (16.6), lowest Madrid (16.3)"))
    #expect(!compared.contains("month"), "a number they all share tells nothing")
    #expect(GuidedToolCalls.comparison(of: Array(outputs.prefix(1)), calls: calls) == nil)
    let transcript = Transcript(
      entries: [
        .prompt(.init(text: "Which is warmer in March, Madrid or Athens?")), .toolCalls(.init(calls: calls)),
      ] + outputs.map { .toolOutput($0) })
    let messages = GuidedToolCalls.messages(from: transcript, tools: tools, choice: .auto)
    #expect(messages.last?["content"]?.stringValue?.contains("highest Athens") == true)
    #expect(
      GuidedToolCalls.answerProblem("Madrid has a high of 16.3 °C in March.", in: transcript)
        == "the answer leaves out the result for Athens", "naming one answers which only when it is the warmer")
    #expect(
      GuidedToolCalls.answerProblem("Athens has a high of 16.6 °C in March.", in: transcript)
        == "the answer leaves out the result for Madrid",
      "which one is warmer is not the library's to judge, so an answer names both")
    #expect(GuidedToolCalls.answerProblem("Athens (16.6 °C) is warmer than Madrid (16.3 °C).", in: transcript) == nil)
  }

  @Test func anAnswerThatOnlyRestatesTheRequestIsAnEcho() {
    let prompt = "Mark items 1 and 3 on my to-do list as done."
    #expect(
      GuidedToolCalls.echoes("Marked items 1 and 3 on my to-do list as done.", prompt, results: "Done: #1 buy milk"))
    #expect(!GuidedToolCalls.echoes("Done: 1 buy milk and 3 water the plants.", prompt, results: "Done: #1 buy milk"))
    #expect(!GuidedToolCalls.echoes("Yes.", prompt))
  }

  @Test func figuresGuessedForAQuestionNoToolServesAreDeclined() {
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "What's Tesla's stock price today?"))]), tools: tools,
      toolChoice: .auto)
    var guess = ModelTurn()
    guess.text = "Tesla's stock price today is $39.00."
    var attempt = GuidedToolCalls.Attempt()
    #expect(attempt.review(guess, reply: #"{"need": "Tesla's stock price"}"#, for: request) == .retry)
    #expect(attempt.callRequired)
    // A needless call (no argument from the question), and no other tool is about a price: an answer only.
    var needless = ModelTurn()
    needless.toolCalls = [.init(id: "x", toolName: "getWeather", arguments: ["city": "New York"])]
    #expect(attempt.review(needless, reply: #"{"need": "a price"}"#, for: request) == .retry)
    #expect(attempt.answerOnly)
    guard case .accept(let turn) = attempt.review(guess, reply: "", for: request) else {
      Issue.record("an answer stands")
      return
    }
    #expect(turn.text.hasPrefix("I could not get that from my tools"))
    var plain = ModelTurn()
    plain.text = "I can't look up stock prices."
    #expect(attempt.review(plain, reply: "", for: request) == .accept(plain), "an answer without figures stands")
  }

  @Test func aRepeatedCallThatFailedWithASuggestionIsMadeWithIt() {
    let failed: Transcript.ToolCall = .init(id: "a", toolName: "getWeather", arguments: ["city": "Dubay", "month": 7])
    let error =
      #"{"error": {"message": "Unknown city \"Dubay\". Did you mean Dubai?", "data": {"suggestions": ["Dubai"]}}}"#
    let transcript = Transcript(entries: [
      .prompt(.init(text: "how hot is dubay in july")), .toolCalls(.init(calls: [failed])),
      .toolOutput(.init(callID: "a", toolName: "getWeather", text: error, isError: true)),
    ])
    let request = ModelRequest(transcript: transcript, tools: tools, toolChoice: .auto)
    var again = ModelTurn()
    again.toolCalls = [.init(id: "b", toolName: "getWeather", arguments: ["city": "Dubay", "month": 7])]
    var attempt = GuidedToolCalls.Attempt()
    guard case .accept(let turn) = attempt.review(again, reply: "", for: request) else {
      Issue.record("the call with the suggestion should stand")
      return
    }
    #expect(turn.toolCalls.map(\.arguments) == [["city": "Dubai", "month": 7]])
    // Without a suggestion, a repeated call is asked for again as an answer.
    let plain = Transcript(entries: [
      .prompt(.init(text: "how hot is dubay in july")), .toolCalls(.init(calls: [failed])),
      .toolOutput(.init(callID: "a", toolName: "getWeather", text: "timed out", isError: true)),
    ])
    var second = GuidedToolCalls.Attempt()
    #expect(
      second.review(again, reply: "", for: ModelRequest(transcript: plain, tools: tools, toolChoice: .auto)) == .retry)
    #expect(second.answerOnly)
  }
}
