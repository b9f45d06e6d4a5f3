import Foundation
import Testing
import ToolhostJSON
import ToolhostSession

@testable import ToolhostGuided
@testable import ToolhostOpenAI

/// Answers about several results of one tool (comparisons, figures given for the wrong one), dates for a named
/// day, and when another tool is worth a try: the guided checks, without a model.
@Suite struct GuidedComparisonTests {
  let weather = Transcript.ToolDefinition(
    name: "getWeather",
    description: "Typical weather for a city in a month: the average high and low temperature and the average "
      + "monthly precipitation (rain and snow). Use it for how hot, cold or rainy a place is.",
    parameters: [
      "type": "object",
      "properties": ["city": ["type": "string"], "month": ["type": "integer", "minimum": 1, "maximum": 12]],
      "required": ["city"],
    ])
  let todoAdd = GuidedAnswerTests().todoAdd
  let units = GuidedAnswerTests().units

  /// The prompt, a round of getWeather calls for `cities` and their results (`averageHigh`, `averageLow`,
  /// `precipitation` each).
  func compared(_ prompt: String, _ cities: [(String, Double, Double, Int)]) -> Transcript {
    let calls = cities.enumerated().map { index, city in
      Transcript.ToolCall(id: "c\(index)", toolName: "getWeather", arguments: ["city": .string(city.0), "month": 3])
    }
    let outputs = cities.enumerated().map { index, city in
      Transcript.ToolOutput(
        callID: "c\(index)", toolName: "getWeather", text: "",
        value: [
          "city": .string(city.0), "month": 3, "averageHigh": .real(city.1), "averageLow": .real(city.2),
          "precipitation": .integer(Int64(city.3)),
        ],
        summary: "\(city.0): high \(city.1) °C, low \(city.2) °C, precipitation \(city.3) mm")
    }
    return Transcript(
      entries: [.prompt(.init(text: prompt)), .toolCalls(.init(calls: calls))] + outputs.map { .toolOutput($0) })
  }

  let madridAndAthens: [(String, Double, Double, Int)] = [("Madrid", 16.3, 5.1, 25), ("Athens", 16.6, 8.9, 41)]

  @Test func aComparisonTheResultsContradictIsWrong() {
    // Athens is the higher in every figure.
    let transcript = compared("Where is there more in March: Madrid or Athens?", madridAndAthens)
    #expect(
      GuidedToolCalls.answerProblem("Madrid gets more precipitation in March than Athens.", in: transcript)
        == "the answer says Madrid is more, which the results contradict")
    #expect(GuidedToolCalls.answerProblem("Athens gets more precipitation than Madrid.", in: transcript) == nil)
    #expect(GuidedToolCalls.answerProblem("Madrid gets less precipitation than Athens.", in: transcript) == nil)
    #expect(
      GuidedToolCalls.answerProblem("Athens gets less precipitation than Madrid.", in: transcript)
        == "the answer says Athens is less, which the results contradict")
    #expect(
      GuidedToolCalls.answerProblem("Madrid does not get more precipitation than Athens.", in: transcript) == nil,
      "a negation")
    // A figure given with a superlative that says its opposite.
    #expect(
      GuidedToolCalls.answerProblem(
        "In Madrid and Athens, the lowest precipitation is 41 mm.", in: transcript)
        == "the answer says Athens is lowest, which the results contradict")
    // Naming one is an answer to "which"; the question's word judges it.
    #expect(GuidedToolCalls.answerProblem("Athens", in: transcript) == nil)
    #expect(GuidedToolCalls.answerProblem("Madrid", in: transcript) == "the answer leaves out the result for Athens")
    #expect(
      GuidedToolCalls.answerProblem("Compared with Madrid (25 mm) Athens (41 mm) gets more.", in: transcript)
        == nil, "the subject is the one named last before the comparative")
    // A word of a topic ("warmer") says nothing the library could check: which figures it is about only the
    // tool's own words could say.
    #expect(GuidedToolCalls.answerProblem("Madrid is warmer in March than Athens.", in: transcript) == nil)
  }

  /// A choice no comparative of size or amount settles ("warmer"): the answer first says by which figure it
  /// chooses and which end, and is held to that.
  @Test func aChoiceTheLibraryCannotSettleIsMadeByAFigureTheModelNames() throws {
    let transcript = compared("Which is warmer in March, Madrid or Athens?", madridAndAthens)
    let schema = GuidedToolCalls.answerSchema(for: transcript)
    #expect(
      schema["properties"]?["figure"]?["enum"] == ["averageHigh", "averageLow", "precipitation"],
      "the figures the results differ in, and only those")
    #expect(schema["properties"]?["pick"]?["enum"] == ["highest", "lowest"])
    #expect(schema["required"] == ["figure", "pick", "answer"])
    let reply: JSONValue = ["figure": "averageHigh", "pick": "highest", "answer": "x"]
    #expect(
      GuidedToolCalls.answerProblem("In March Madrid is the warmer city.", in: transcript, reply: reply)
        == "the answer names Madrid first, but Athens has the highest averageHigh")
    #expect(GuidedToolCalls.answerProblem("In March Athens is the warmer city.", in: transcript, reply: reply) == nil)
    #expect(GuidedToolCalls.answerProblem("Athens", in: transcript, reply: reply) == nil, "naming the one is enough")
    let lowest: JSONValue = ["figure": "averageLow", "pick": "lowest", "answer": "x"]
    #expect(GuidedToolCalls.answerProblem("Madrid.", in: transcript, reply: lowest) == nil)
    // Without the reply's choice nothing judges the word, as before.
    #expect(
      GuidedToolCalls.answerProblem("In March Madrid is the warmer city, not Athens.", in: transcript) == nil)
    // A figure the results do not tell apart, or no figure at all, is no choice.
    #expect(
      GuidedToolCalls.answerProblem(
        "Madrid is the warmer city, Athens the cooler.", in: transcript, reply: ["figure": "month"])
        == nil)
    // An answer that names the one and gives no figure is shown with the figures, whichever the model judged by.
    #expect(
      GuidedToolCalls.showingTheChoice("Athens, Greece", in: transcript, reply: reply)
        == "Athens, Greece\nBy the results: average high Madrid 16.3, Athens 16.6; average low Madrid 5.1, "
        + "Athens 8.9; precipitation Madrid 25, Athens 41.")
    #expect(
      GuidedToolCalls.showingTheChoice("Athens (16.6 °C)", in: transcript, reply: reply) == "Athens (16.6 °C)")
    #expect(GuidedToolCalls.showingTheChoice("Athens", in: transcript, reply: nil) == "Athens", "no choice made")
    // The prompt asks for the choice first.
    let messages = GuidedToolCalls.messages(from: transcript, tools: [weather], choice: .auto, followUp: .answer)
    let last = try #require(messages.last?["content"]?.stringValue)
    #expect(last.contains("First say which figure decides the choice"))
  }

  /// A choice a comparative of amount settles, and a question that asks for none, keep the plain answer.
  @Test func aSettledChoiceOrNoChoiceKeepsThePlainAnswer() throws {
    let settled = compared("Which gets more precipitation in March, Madrid or Athens?", madridAndAthens)
    #expect(GuidedToolCalls.answerSchema(for: settled) == GuidedToolCalls.answerSchema)
    let none = compared("What is the weather in Madrid and Athens in March?", madridAndAthens)
    #expect(GuidedToolCalls.answerSchema(for: none) == GuidedToolCalls.answerSchema)
    let messages = GuidedToolCalls.messages(from: none, tools: [weather], choice: .auto, followUp: .answer)
    #expect(try #require(messages.last?["content"]?.stringValue).contains("First say") == false)
    // One result is nothing to choose among.
    let one = compared("Is Madrid warmer than usual in March?", [madridAndAthens[0]])
    #expect(GuidedToolCalls.answerSchema(for: one) == GuidedToolCalls.answerSchema)
  }

  @Test func aGenericComparativeIsJudgedByWhatItIsAbout() {
    // Madrid has the higher figures by day, but Athens has more precipitation: "more precipitation" is about that
    // figure only.
    let transcript = compared(
      "Which gets more precipitation in March, Madrid or Athens?",
      [("Madrid", 17.0, 9.0, 25), ("Athens", 16.6, 8.9, 41)])
    #expect(GuidedToolCalls.answerProblem("Athens gets more precipitation (41 mm).", in: transcript) == nil)
    #expect(
      GuidedToolCalls.answerProblem("Madrid gets more precipitation (25 mm) than Athens.", in: transcript)
        == "the answer says Madrid is more, which the results contradict")
    #expect(
      GuidedToolCalls.answerProblem(
        "Madrid has a higher averageHigh, but Athens gets more precipitation.", in: transcript)
        == nil, "each clause is judged by its own words")
  }

  @Test func aFigureGivenForTheWrongResultIsWrong() {
    let transcript = compared(
      "Which is rainier in March, Seattle or Denver?", [("Seattle", 12.0, 4.0, 95), ("Denver", 12.5, -2.0, 30)])
    #expect(
      GuidedToolCalls.answerProblem("Seattle gets 30 mm and Denver gets 95 mm.", in: transcript)
        == "the answer gives 30 for Seattle, which is another result's figure")
    #expect(GuidedToolCalls.answerProblem("Seattle gets 95 mm and Denver gets 30 mm.", in: transcript) == nil)
    #expect(
      GuidedToolCalls.answerProblem("Seattle is rainier: 95 mm against 30 mm in Denver.", in: transcript) == nil,
      "a clause naming both is not judged figure by figure")
  }

  @Test func theStatementAnswersTheComparisonFromTheResults() {
    let transcript = compared("Which has the higher average in March, Madrid or Athens?", madridAndAthens)
    let statement = GuidedToolCalls.statement(fromResultsIn: transcript)
    #expect(
      statement.hasPrefix(
        "By the results, Athens is higher (averageHigh: Madrid 16.3, Athens 16.6; "
          + "averageLow: Madrid 5.1, Athens 8.9)."))
    #expect(statement.contains("- Madrid: high 16.3 °C"))
    #expect(GuidedToolCalls.answerProblem(statement, in: transcript) == nil, "the statement passes its own checks")
    // Figures that disagree name no winner: the results side by side instead.
    let split = compared(
      "Which has the higher average in March, Madrid or Athens?",
      [("Madrid", 17.0, 5.1, 25), ("Athens", 16.6, 8.9, 41)])
    let sideBySide = GuidedToolCalls.statement(fromResultsIn: split)
    #expect(!sideBySide.contains("By the results"))
    #expect(sideBySide.contains("Compared:\naverageHigh: highest Madrid (17.0), lowest Athens (16.6)"))
  }

  @Test func comparativesAreTheSameTopicWord() {
    #expect(TopicWords.sameWord("rainier", "rain"))
    #expect(TopicWords.sameWord("hotter", "hot"))
    #expect(TopicWords.sameWord("coldest", "cold"))
    #expect(TopicWords.sameWord("cups", "cup"))
    #expect(!TopicWords.sameWord("hotel", "hot"))
    #expect(!TopicWords.sameWord("tender", "ten"))
    #expect(TopicWords(weather).relates("Is Singapore or Bangkok rainier in September?"))
  }

  @Test func aDateForANamedDayFallsOnThatDay() throws {
    let friday = try #require(ISO8601DateFormatter().date(from: "2026-11-27T12:00:00Z"))
    func pruned(_ prompt: String, _ due: String) -> JSONValue? {
      let call = Transcript.ToolCall(
        id: "c1", toolName: "todoAdd", arguments: ["text": "call mom", "due": .string(due)])
      let transcript = Transcript(entries: [.prompt(.init(text: prompt))])
      return GuidedToolCalls.withoutUngivenArguments(call, of: todoAdd, in: transcript, today: friday).arguments["due"]
    }
    #expect(pruned("Remind me to call mom on Sunday.", "2026-11-27T14:30:00Z") == "2026-11-29")
    #expect(pruned("Remind me to call mom on Sunday.", "2026-11-29") == "2026-11-29", "already right")
    #expect(pruned("Remind me to call mom tomorrow.", "2026-12-24") == "2026-11-28")
    #expect(pruned("Remind me to call mom on Friday.", "2026-11-27") == "2026-12-04", "the next Friday")
    #expect(pruned("Rappelle-moi d'appeler maman lundi.", "2026-11-27") == "2026-11-30")
    #expect(pruned("Remind me to call mom.", "2026-11-27") == nil, "no day named: an invented date goes")
    #expect(
      pruned("Remind me to call mom on Monday or Tuesday.", "2026-11-30") == "2026-11-30", "two days: left as given")
    #expect(pruned("Remind me to call mom on Friday the 11th.", "2026-12-11") == "2026-12-11", "the day the user gave")
    #expect(pruned("Rappelle-moi d'appeler mon frère.", "2026-11-27") == nil, "'mon' is no Monday")
    // A weekday in a tool's output names no day for the prompt.
    let call = Transcript.ToolCall(
      id: "c2", toolName: "todoAdd", arguments: ["text": "pay rent", "due": "2026-12-01"])
    let transcript = Transcript(entries: [
      .prompt(.init(text: "What day is it?")), .toolOutput(.init(callID: "t", toolName: "time", text: "Friday")),
      .prompt(.init(text: "Add 'pay rent' due 2026-12-01.")),
    ])
    #expect(
      GuidedToolCalls.withoutUngivenArguments(call, of: todoAdd, in: transcript, today: friday).arguments["due"]
        == "2026-12-01")
  }

  @Test func noOtherToolIsTriedWhenNoneIsAboutThePrompt() {
    let tools = [weather, todoAdd, units]
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Send an e-mail to my landlord saying the rent is late."))]),
      tools: tools, toolChoice: .auto)
    var turn = ModelTurn()
    turn.toolCalls = [.init(id: "c1", toolName: "getWeather", arguments: ["city": "London", "month": 10])]
    var attempt = GuidedToolCalls.Attempt()
    #expect(attempt.review(turn, reply: #"{"need": "an email to my landlord"}"#, for: request) == .retry)
    #expect(attempt.answerOnly, "the answer at once, not the next tool")
    #expect(attempt.excluded.isEmpty)
    // An answer that then gives figures guesses them.
    guard case .accept(let guess) = attempt.review(ModelTurn(text: "Done: rent is $1,200."), reply: "", for: request)
    else {
      Issue.record("an answer stands")
      return
    }
    #expect(guess.text.hasPrefix("I could not get that from my tools"))
    // A prompt another tool is about: that tool is tried.
    let remind = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Remind me to call mom on Sunday."))]), tools: tools,
      toolChoice: .auto)
    var second = GuidedToolCalls.Attempt()
    #expect(second.review(turn, reply: #"{"need": "a call to mom"}"#, for: remind) == .retry)
    #expect(!second.answerOnly)
    #expect(second.excluded == ["getWeather", "convertUnits"], "the unit tool shares no word with the prompt")
  }

  @Test func anAnswerClaimingWhatAToolDoesIsAskedForAsACall() {
    let todoDone = Transcript.ToolDefinition(
      name: "todoDone", description: "Marks a to-do item as done.",
      parameters: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]])
    let tools = [weather, todoAdd, todoDone, units]
    #expect(GuidedToolCalls.claimsAnAction("I've added 'comprare il pane' to my list.", tools))
    #expect(GuidedToolCalls.claimsAnAction("Marked as done.", tools))
    #expect(GuidedToolCalls.claimsAnAction("10 km converted is 6.2 miles.", tools))
    #expect(!GuidedToolCalls.claimsAnAction("You're welcome!", tools))
    #expect(!GuidedToolCalls.claimsAnAction("I've added it.", [weather]), "no tool adds anything")
    #expect(!GuidedToolCalls.claimsAnAction("Multiply by 9/5 and add 32.", tools), "the bare verb is no claim")
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Aggiungi 'comprare il pane' alla mia lista."))]),
      tools: tools, toolChoice: .auto)
    var attempt = GuidedToolCalls.Attempt()
    let claim = ModelTurn(text: "I've added 'comprare il pane' to my list.")
    #expect(attempt.review(claim, reply: #"{"need": "to add an item", "answer": "…"}"#, for: request) == .retry)
    #expect(attempt.callRequired)
  }

  @Test func optionalNumbersOfAClosedRangeNobodyGaveAreDropped() {
    let stats = GuidedAnswerTests().stats
    func pruned(_ prompt: String) -> JSONValue {
      let call = Transcript.ToolCall(
        id: "c1", toolName: "describeData",
        arguments: ["datasets": [["values": [12, 15, 9, 20]]], "percentiles": [1, 90]])
      return GuidedToolCalls.withoutUngivenArguments(
        call, of: stats, in: Transcript(entries: [.prompt(.init(text: prompt))])
      ).arguments
    }
    #expect(
      pruned("Calcule la moyenne et la médiane de 12, 15, 9 et 20.") == ["datasets": [["values": [12, 15, 9, 20]]]])
    #expect(pruned("The 90th percentile of 12, 15, 9 and 20?")["percentiles"] == [1, 90], "one was asked for")
  }

  @Test func figuresInWordsOfAToolsTopicAreAskedForAsACall() {
    let tools = [weather, todoAdd, units]
    #expect(
      GuidedToolCalls.inventsFiguresOnATopic(
        "The temperature of Dubay in July is 25°C.", prompt: "how hot is dubay in july", tools: tools))
    #expect(
      !GuidedToolCalls.inventsFiguresOnATopic(
        "$0.50", prompt: "How much does a kilo of flour cost at the supermarket?", tools: tools), "a bare figure")
    #expect(
      !GuidedToolCalls.inventsFiguresOnATopic(
        "The thermometer was invented in 1593 by Galileo.", prompt: "Who invented the thermometer?", tools: tools),
      "no tool is about the prompt")
    #expect(
      !GuidedToolCalls.inventsFiguresOnATopic("It is hot.", prompt: "how hot is dubay in july", tools: tools),
      "no figure")
  }

  let todoList = Transcript.ToolDefinition(
    name: "todoList", description: "Lists the user's to-do items with their ids.",
    parameters: ["type": "object", "properties": ["includeDone": ["type": "boolean"]]])
  let todoDone = Transcript.ToolDefinition(
    name: "todoDone", description: "Marks the to-do item with the given id as done.",
    parameters: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]])

  @Test func aFamilyMemberIsNamedByItsActionOrItsDescriptionsVerb() {
    let tools = [todoAdd, todoList, todoDone]
    let add = Transcript.ToolCall(id: "c1", toolName: "todoAdd", arguments: ["text": "Mark to-do 3 as complete."])
    #expect(GuidedToolCalls.picksTheWrongSibling(add, among: tools, prompt: "Mark to-do 3 as complete."))
    #expect(!GuidedToolCalls.picksTheWrongSibling(add, among: tools, prompt: "Add 'mark the boxes' to my list."))
    // A description's verb that is the family's own word names the family, not the member.
    let convertUnits = Transcript.ToolDefinition(
      name: "convertUnits", description: "Converts a quantity between units.", parameters: ["type": "object"])
    let convertTime = Transcript.ToolDefinition(
      name: "convert_time", description: "Convert time between timezones.", parameters: ["type": "object"])
    let time = Transcript.ToolCall(id: "c2", toolName: "convert_time", arguments: ["time": "15:00"])
    #expect(
      !GuidedToolCalls.picksTheWrongSibling(
        time, among: [convertUnits, convertTime], prompt: "Convert 15:00 from New York to Tokyo"))
  }

  @Test func anActionTheFirstRoundLeftUndoneIsTheNextCall() throws {
    let tools = [todoAdd, todoList, todoDone]
    let listed = Transcript(entries: [
      .prompt(.init(text: "Mark 'call the dentist' as done on my to-do list.")),
      .toolCalls(.init(calls: [.init(id: "c1", toolName: "todoList", arguments: [:])])),
      .toolOutput(.init(callID: "c1", toolName: "todoList", text: "#1 [ ] buy milk\n#2 [ ] call the dentist")),
    ])
    #expect(GuidedToolCalls.actionLeftUndone(listed, tools: tools)?.name == "todoDone")
    #expect(!GuidedToolCalls.answersResults(listed, tools: tools))
    let request = ModelRequest(transcript: listed, tools: tools, toolChoice: .auto)
    let body = GuidedToolCalls.requestBody(for: request, model: "m", stream: false, followUp: .answer)
    #expect(body["response_format"]?["schema"]?["anyOf"] != nil, "a call or the answer, not forced")
    let last = try #require(body["messages"]?.arrayValue?.last?["content"]?.stringValue)
    #expect(last.contains("The request also asks for what todoDone does."))
    // Once it is done, or when the prompt asks only for the list, the answer follows.
    let done = Transcript(
      entries: listed.entries + [
        .toolCalls(.init(calls: [.init(id: "c2", toolName: "todoDone", arguments: ["id": 2])])),
        .toolOutput(.init(callID: "c2", toolName: "todoDone", text: "Done: #2 [x] call the dentist")),
      ])
    #expect(GuidedToolCalls.actionLeftUndone(done, tools: tools) == nil)
    let onlyList = Transcript(entries: [.prompt(.init(text: "What's on my to-do list?"))] + listed.entries.dropFirst())
    #expect(GuidedToolCalls.actionLeftUndone(onlyList, tools: tools) == nil)
    // A flag set for what the prompt says covers the action it names: "including the done ones".
    func listing(_ prompt: String) -> Transcript {
      Transcript(entries: [
        .prompt(.init(text: prompt)),
        .toolCalls(.init(calls: [.init(id: "c1", toolName: "todoList", arguments: ["includeDone": true])])),
        .toolOutput(.init(callID: "c1", toolName: "todoList", text: "#1 [x] buy milk")),
      ])
    }
    #expect(
      GuidedToolCalls.actionLeftUndone(listing("Show all my to-dos, including the done ones."), tools: tools) == nil)
    #expect(
      GuidedToolCalls.actionLeftUndone(listing("Mark 'call the dentist' as done."), tools: tools)?.name == "todoDone")
  }

  @Test func aSecondTryAfterAWrongSiblingOffersTheNamedOne() {
    let tools = [todoAdd, todoList, todoDone, weather]
    #expect(
      GuidedToolCalls.unlikelyTools(tools, prompt: "done #2", need: "to-do item with id #2")
        == ["todoAdd", "todoList", "getWeather"])
    #expect(
      GuidedToolCalls.unlikelyTools(tools, prompt: "What's on my to-do list?", need: nil) == ["getWeather"],
      "no member named: only the tools the prompt is not about")
    #expect(GuidedToolCalls.unlikelyTools(tools, prompt: "Hi!", need: nil).isEmpty, "about none: none left out")
  }

  @Test func dataNobodyGaveIsInventedWhateverItsName() {
    let stats = GuidedAnswerTests().stats
    func invents(_ prompt: String, _ values: JSONValue) -> Bool {
      let call = Transcript.ToolCall(
        id: "c1", toolName: "describeData", arguments: ["datasets": [["name": "Tesla", "values": values]]])
      return GuidedToolCalls.inventsArguments(call, of: stats, in: Transcript(entries: [.prompt(.init(text: prompt))]))
    }
    #expect(invents("What's Tesla's stock price today?", [100, 200, 300]))
    #expect(!invents("Tesla closed at 250, 260 and 240 this week: the mean?", [250, 260, 240]))
  }
}
