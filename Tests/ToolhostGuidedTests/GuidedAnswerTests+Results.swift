import Foundation
import Testing
import ToolhostJSON
import ToolhostSession

@testable import ToolhostGuided
@testable import ToolhostOpenAI

extension GuidedAnswerTests {
  @Test func anUntrustworthyAnswerIsAskedForAgainThenReplacedByTheResults() throws {
    let oslo = answered(
      "What's the weather in Oslo in January?", ["averageHigh": -0.9], summary: "Oslo — January: high -0.9 °C")
    let request = ModelRequest(transcript: oslo, tools: [weather], toolChoice: .auto)
    var attempt = GuidedToolCalls.Attempt()
    #expect(attempt.review(ModelTurn(text: "It is 57 °C."), reply: "", for: request) == .retry)
    #expect(attempt.strict && attempt.answerOnly)
    let body = GuidedToolCalls.requestBody(
      for: request, model: "m", stream: false, followUp: .answer, strict: attempt.strict)
    let last = try #require(body["messages"]?.arrayValue?.last?["content"]?.stringValue)
    #expect(last.contains("using only what these results say"))
    let verdict = attempt.review(ModelTurn(text: "Still 57 °C."), reply: "", for: request)
    #expect(verdict == .accept(ModelTurn(text: "Here is what getWeather returned:\nOslo — January: high -0.9 °C")))
    var fresh = GuidedToolCalls.Attempt()
    let good = ModelTurn(text: "About -0.9 °C.")
    #expect(fresh.review(good, reply: "", for: request) == .accept(good))
  }

  @Test func aNeedlessCallAmongGoodOnesIsDropped() {
    let request = ModelRequest(
      transcript: transcript("Weather in Paris and the stock price of Apple?"), tools: [weather, bread],
      toolChoice: .auto)
    var turn = ModelTurn()
    turn.toolCalls = [
      call("getWeather", ["city": "Paris", "month": 3]),
      call("getWeather", ["city": "New York"], id: "c2"),
    ]
    var attempt = GuidedToolCalls.Attempt()
    var expected = ModelTurn()
    expected.toolCalls = [call("getWeather", ["city": "Paris"])]
    #expect(attempt.review(turn, reply: #"{"need": "weather and a price"}"#, for: request) == .accept(expected))
  }

  @Test func todaysDateIsInTheInstructions() {
    let date = Date(timeIntervalSince1970: 1_795_600_000)  // a Wednesday in November 2026
    let today = GuidedToolCalls.today(date)
    #expect(today.hasSuffix("November 2026"))
    let text = GuidedToolCalls.toolInstructions(tools: [weather], choice: .auto, today: today)
    #expect(text.contains("Today is \(today)."))
  }
}
