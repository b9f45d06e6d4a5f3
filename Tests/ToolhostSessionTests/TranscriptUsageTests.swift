import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// The token counts a backend reports for a turn stay in the transcript, on the entry the turn produced.
@Suite("Transcript token usage")
struct TranscriptUsageTests {
  @Test func theSessionKeepsEachTurnsUsageOnItsEntry() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(
        toolCalls: [call("add", ["a": 1, "b": 2], id: "c1")], finishReason: "tool_calls",
        usage: TokenUsage(promptTokens: 120, completionTokens: 18)),
      ModelTurn(text: "3", finishReason: "stop", usage: TokenUsage(promptTokens: 150, completionTokens: 2)),
    ])
    let session = try LanguageModelSession(model: model, tools: [AddTool()], instructions: "Be brief.")
    _ = try await session.respond(to: "1+2?")
    let entries = session.transcript.entries
    #expect(entries.map(\.type) == ["instructions", "prompt", "toolCalls", "toolOutput", "response"])
    guard case .toolCalls(let calls) = entries[2], case .response(let response) = entries[4] else {
      Issue.record("unexpected entries: \(entries)")
      return
    }
    #expect(calls.usage == TokenUsage(promptTokens: 120, completionTokens: 18))
    #expect(response.usage == TokenUsage(promptTokens: 150, completionTokens: 2))

    // JSONL keeps it, and reads it back.
    let jsonl = session.transcript.jsonl()
    let lines = jsonl.split(separator: "\n").map(String.init)
    #expect(lines[2].hasSuffix(#","usage":{"promptTokens":120,"completionTokens":18}}"#), "\(lines[2])")
    #expect(lines[4].hasSuffix(#","usage":{"promptTokens":150,"completionTokens":2}}"#), "\(lines[4])")
    #expect(try Transcript(jsonl: jsonl) == session.transcript)
  }

  @Test func aTurnWithoutUsageLeavesNone() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "hi", finishReason: "stop")])
    let session = try LanguageModelSession(model: model, tools: [])
    _ = try await session.respond(to: "hello")
    guard case .response(let response)? = session.transcript.entries.last else {
      Issue.record("no response")
      return
    }
    #expect(response.usage == nil)
    #expect(!session.transcript.jsonl().contains("usage"))
  }

  /// Lines written before usage was kept load as they are, and are written back byte for byte.
  @Test func linesWithoutUsageLoadAndAreWrittenBackUnchanged() throws {
    let old = """
      {"type":"prompt","id":"p1","text":"1+2?"}
      {"type":"toolCalls","id":"t1","calls":[{"id":"c1","toolName":"add","arguments":{"a":1,"b":2}}]}
      {"type":"toolOutput","id":"o1","callID":"c1","toolName":"add","text":"{\\"sum\\":3}","value":{"sum":3},\
      "isError":false}
      {"type":"response","id":"r1","text":"3"}

      """
    let transcript = try Transcript(jsonl: old)
    guard case .toolCalls(let calls) = transcript.entries[1], case .response(let response) = transcript.entries[3]
    else {
      Issue.record("unexpected entries: \(transcript.entries)")
      return
    }
    #expect(calls.usage == nil)
    #expect(response.usage == nil)
    #expect(transcript.jsonl() == old)
  }
}
