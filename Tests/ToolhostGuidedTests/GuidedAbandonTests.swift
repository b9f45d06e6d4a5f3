import Foundation
import Testing
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

@testable import ToolhostGuided
@testable import ToolhostOpenAI

/// A first decision to answer that the review would ask for again as a call is given up on while it is generated
/// (``GuidedToolCalls/Attempt/abandons(partialReply:for:)``): the rest of it would only cost time.
@Suite struct GuidedAbandonTests {
  let convert = Transcript.ToolDefinition(
    name: "convertUnits", description: "Converts a quantity between units of length, area, mass or temperature.",
    parameters: [
      "type": "object",
      "properties": ["value": ["type": "number"], "from": ["type": "string"], "to": ["type": "string"]],
      "required": ["value", "from", "to"],
    ])
  let weather = GuidedAnswerTests().weather

  func request(_ prompt: String, tools: [Transcript.ToolDefinition]) -> ModelRequest {
    ModelRequest(transcript: Transcript(entries: [.prompt(.init(text: prompt))]), tools: tools, toolChoice: .auto)
  }

  @Test func thePartialAnswerIsItsCompleteWords() {
    let partial = GuidedToolCalls.partialAnswer(in: #"{"need": "hectares to acres", "answer": "2 hectares is 4.9"#)
    #expect(partial?.need == "hectares to acres")
    #expect(partial?.words == "2 hectares is")
    #expect(GuidedToolCalls.partialAnswer(in: #"{"need": "x", "answer": "Fine"#)?.words == "")
    // Not an answer yet, a call, or a finished answer.
    #expect(GuidedToolCalls.partialAnswer(in: #"{"need": "hectares to"#) == nil)
    #expect(GuidedToolCalls.partialAnswer(in: #"{"need": "x", "answer"#) == nil)
    #expect(
      GuidedToolCalls.partialAnswer(in: #"{"need": "x", "calls": [{"tool": "convertUnits", "arguments": {"#) == nil)
    #expect(GuidedToolCalls.partialAnswer(in: #"{"need": "x", "answer": "It is 5."}"#) == nil)
  }

  @Test func anAnswerFromMemoryIsGivenUpOnAtItsFirstInventedFigure() {
    let asked = request("How many acres is 2 hectares?", tools: [convert])
    var attempt = GuidedToolCalls.Attempt()
    // "4.9" may still become "4.94": only whole words are judged.
    let atAPartialFigure = attempt.abandons(
      partialReply: #"{"need": "the area in acres", "answer": "2 hectares is 4.9"#, for: asked)
    #expect(!atAPartialFigure)
    #expect(!attempt.callRequired)
    let atTheWholeFigure = attempt.abandons(
      partialReply: #"{"need": "the area in acres", "answer": "2 hectares is 4.94 "#, for: asked)
    #expect(atTheWholeFigure)
    #expect(attempt.callRequired)
    // The second try is a call: it is never given up on.
    let onTheSecondTry = attempt.abandons(
      partialReply: #"{"need": "the area in acres", "answer": "2 hectares is 4.94 "#, for: asked)
    #expect(!onTheSecondTry)
  }

  @Test func aNeedThatNamesAToolIsEnoughToGiveUp() {
    var attempt = GuidedToolCalls.Attempt()
    let stopped = attempt.abandons(
      partialReply: #"{"need": "convert hectares to acres", "answer": ""#,
      for: request("How many acres is 2 hectares?", tools: [convert]))
    #expect(stopped)
    #expect(attempt.callRequired)
  }

  @Test func anAnswerThatMayStandIsReadToTheEnd() {
    var attempt = GuidedToolCalls.Attempt()
    let thanks = request("Thank you, that was helpful.", tools: [convert, weather])
    let atAReplyToThanks = attempt.abandons(
      partialReply: #"{"need": "a reply to thanks", "answer": "You're welcome! Anything "#, for: thanks)
    #expect(!atAReplyToThanks)
    #expect(attempt == GuidedToolCalls.Attempt())
  }

  /// Through the HTTP client: the answer from memory is streamed and never finished; the client hangs up on it at
  /// its invented figure and asks again, getting the call.
  @Test func theClientHangsUpOnAnAbandonedAnswer() async throws {
    func chunk(_ content: String) -> String {
      let delta: JSONValue = ["choices": [["index": 0, "delta": ["content": .string(content)]]]]
      return "data: " + delta.serialized()
    }
    let stop = #"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#
    let call =
      #"{"need": "convert hectares to acres", "calls": [{"tool": "convertUnits", "arguments": "#
      + #"{"value": 2, "from": "hectares", "to": "acres"}}]}"#
    let server = try ScriptedHTTPServer(replies: [
      .init(
        ScriptedHTTPServer.eventStream([
          chunk(#"{"need": "the area in acres", "answer": "2 hectares"#), chunk(" is 4.94 acres, "),
          chunk("which is"),
        ]), unfinished: true),
      .init(ScriptedHTTPServer.eventStream([chunk(call), stop, "data: [DONE]"])),
    ])
    defer { server.stop() }
    let configuration = OpenAIConfiguration(
      baseURL: server.baseURL, model: "m", maximumRetries: 0, toolCalling: .guided, guidedFollowUp: .results)
    let asked = request("How many acres is 2 hectares?", tools: [convert])
    let turn = try await OpenAIModel.withModel(configuration) { model in
      var finished: ModelTurn?
      for try await event in model.streamTurn(for: asked) {
        if case .finished(let turn) = event { finished = turn }
      }
      return finished
    }
    #expect(turn?.toolCalls.map(\.toolName) == ["convertUnits"])
    #expect(turn?.toolCalls.first?.arguments == ["value": 2, "from": "hectares", "to": "acres"])
    #expect(server.hungUp == [true])
    #expect(server.requestBodies.count == 2)
  }
}
