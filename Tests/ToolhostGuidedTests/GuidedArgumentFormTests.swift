import Foundation
import Testing
import ToolhostJSON
import ToolhostSession

@testable import ToolhostGuided
@testable import ToolhostOpenAI

/// Arguments put in the form their schema asks for before the call (a clock time as 24-hour `HH:MM`), and calls
/// judged by the user's words as the user wrote them: a city's short name, a question in Italian.
@Suite struct GuidedArgumentFormTests {
  let convertTime = Transcript.ToolDefinition(
    name: "convert_time", description: "Convert time between timezones",
    parameters: [
      "type": "object",
      "properties": [
        "source_timezone": ["type": "string", "description": "Source IANA timezone name."],
        "time": ["type": "string", "description": "Time to convert in 24-hour format (HH:MM)"],
        "target_timezone": ["type": "string", "description": "Target IANA timezone name."],
      ],
      "required": ["source_timezone", "time", "target_timezone"],
    ])

  @Test func clockTimesBecomeTwentyFourHourTimes() {
    #expect(GuidedToolCalls.twentyFourHourTime("8:00 AM") == "08:00")
    #expect(GuidedToolCalls.twentyFourHourTime("8 pm") == "20:00")
    #expect(GuidedToolCalls.twentyFourHourTime("12 a.m.") == "00:00")
    #expect(GuidedToolCalls.twentyFourHourTime("12:30 PM") == "12:30")
    #expect(GuidedToolCalls.twentyFourHourTime("9:30") == "09:30")
    #expect(GuidedToolCalls.twentyFourHourTime("16:00") == nil, "already HH:MM")
    for other in ["8", "13 pm", "8:0", "25:00", "8:60", "noon", "", "2026-11-27"] {
      #expect(GuidedToolCalls.twentyFourHourTime(other) == nil, "\(other)")
    }
  }

  @Test func aCallGetsTheTimeItsSchemaAsksFor() {
    let call = Transcript.ToolCall(
      id: "c1", toolName: "convert_time",
      arguments: ["source_timezone": "America/New_York", "time": "8:00 AM", "target_timezone": "Asia/Singapore"])
    let transcript = Transcript(entries: [.prompt(.init(text: "Convert 8:00 New York time to Singapore time."))])
    let fixed = GuidedToolCalls.withoutUngivenArguments(call, of: convertTime, in: transcript)
    #expect(fixed.arguments["time"] == "08:00")
    #expect(fixed.arguments["source_timezone"] == "America/New_York")
    // A property whose description asks for no such form keeps what it was given.
    var other = convertTime
    other.parameters = ["type": "object", "properties": ["time": ["type": "string"]], "required": ["time"]]
    #expect(GuidedToolCalls.withoutUngivenArguments(call, of: other, in: transcript).arguments["time"] == "8:00 AM")
  }

  @Test func aZoneNamedByItsCitysShortNameIsNotInvented() {
    let time = Transcript.ToolDefinition(
      name: "get_current_time", description: "Get current time in a specific timezone",
      parameters: [
        "type": "object", "properties": ["timezone": ["type": "string", "description": "IANA timezone name."]],
        "required": ["timezone"],
      ])
    let call = Transcript.ToolCall(id: "c1", toolName: "get_current_time", arguments: ["timezone": "America/New_York"])
    let nyc = Transcript(entries: [.prompt(.init(text: "time in nyc"))])
    #expect(!GuidedToolCalls.servesNoNeed(call, of: time, need: "the current time in NYC", in: nyc))
    let apple = Transcript(entries: [.prompt(.init(text: "What's the stock price of Apple?"))])
    #expect(GuidedToolCalls.servesNoNeed(call, of: time, need: "the stock price of Apple", in: apple))
  }

  @Test func aQuestionInAnotherLanguageIsAboutTheToolItsWordsName() {
    let weather = GuidedComparisonTests().weather  // "… how hot, cold or rainy a place is."
    let call = Transcript.ToolCall(id: "c1", toolName: "getWeather", arguments: ["city": "Vienna", "month": 2])
    // The library knows no tool's words in other languages: the need, which the model writes in English, tells.
    let italian = Transcript(entries: [.prompt(.init(text: "Fa freddo a Vienna a febbraio?"))])
    #expect(!GuidedToolCalls.servesNoNeed(call, of: weather, need: "whether Vienna is cold in February", in: italian))
    #expect(GuidedToolCalls.servesNoNeed(call, of: weather, need: "a reply to Vienna a febbraio", in: italian))
    // Without a word of the weather's topic, the same call is needless: a novel set in Vienna.
    let novel = Transcript(entries: [.prompt(.init(text: "Recommend a novel set in Vienna in February."))])
    #expect(GuidedToolCalls.servesNoNeed(call, of: weather, need: "a novel set in Vienna", in: novel))
  }

  @Test func aYesOrNoFromMemoryOnAToolsTopicIsAskedForAsACall() {
    let weather = [GuidedComparisonTests().weather]
    let prompt = "Is Nairobi hot in February?"
    #expect(GuidedToolCalls.judgesFromMemory("No, Nairobi is not hot in February.", prompt: prompt, tools: weather))
    // Not a yes or no, nothing named, or no tool's topic: the answer stands.
    #expect(!GuidedToolCalls.judgesFromMemory("Nairobi is mild.", prompt: prompt, tools: weather))
    #expect(!GuidedToolCalls.judgesFromMemory("No.", prompt: "Is it hot in summer?", tools: weather))
    #expect(!GuidedToolCalls.judgesFromMemory("Yes.", prompt: "Is Paris the capital of France?", tools: weather))
  }

  @Test func halfIsAFigureTheUserGave() {
    #expect(GuidedToolCalls.spelledNumbers(in: "How many tablespoons are in half a cup?") == [0.5])
    let units = GuidedAnswerTests().units
    let transcript = Transcript(entries: [.prompt(.init(text: "How many tablespoons are in half a cup?"))])
    #expect(
      GuidedToolCalls.answersFromMemory(
        "1.5", need: "convert half a cup to tablespoons", in: transcript, tools: [units]))
  }

  /// A value the model wrapped whole in the user's quote marks is the text inside them; quotes within a value, two
  /// quotations, and values of other types stay as they are.
  @Test func quoteMarksCopiedAroundAValueGo() {
    let call = Transcript.ToolCall(
      id: "c1", toolName: "play",
      arguments: [
        "query": "'Shape of You'", "device": "\u{201C}JBL Flip 4\u{201D}", "paper": "«Le Monde»",
        "phrase": "say 'hi' twice", "two": "'a' and 'b'", "empty": "''", "count": 2,
        "tags": ["\"rock\"", "pop"], "nested": ["name": "\u{2018}Emma\u{2019}"],
      ])
    let arguments = GuidedToolCalls.withoutQuoteMarks(call).arguments
    #expect(arguments["query"] == "Shape of You")
    #expect(arguments["device"] == "JBL Flip 4")
    #expect(arguments["paper"] == "Le Monde")
    #expect(arguments["phrase"] == "say 'hi' twice")
    #expect(arguments["two"] == "'a' and 'b'")
    #expect(arguments["empty"] == "''")
    #expect(arguments["count"] == 2)
    #expect(arguments["tags"] == ["rock", "pop"])
    #expect(arguments["nested"]?["name"] == "Emma")
    let plain = Transcript.ToolCall(id: "c2", toolName: "play", arguments: ["query": "Shape of You"])
    #expect(GuidedToolCalls.withoutQuoteMarks(plain) == plain)
  }
}
