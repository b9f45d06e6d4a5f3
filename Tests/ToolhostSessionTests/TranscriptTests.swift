import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

@Suite("Transcripts")
struct TranscriptTests {
  let transcript = Transcript(entries: [
    .instructions(
      Transcript.Instructions(
        text: "Be brief.",
        toolDefinitions: [
          Transcript.ToolDefinition(
            name: "add", description: "Adds.", parameters: ["type": "object"])
        ])),
    .prompt(Transcript.Prompt(text: "1+2? “quotes” and\nnewlines")),
    .toolCalls(
      Transcript.ToolCalls(
        calls: [
          call("add", ["a": 1, "b": 2.5], id: "c1"),
          Transcript.ToolCall(id: "c2", toolName: "x", rawArguments: "{bad"),
        ], text: "Let me add.")),
    .toolOutput(
      Transcript.ToolOutput(
        callID: "c1", toolName: "add", text: "{\"sum\":3.5}", value: ["sum": 3.5])),
    .toolOutput(
      Transcript.ToolOutput(
        callID: "c2", toolName: "x", text: "err", isError: true, charactersCut: 10)),
    .response(Transcript.Response(text: "3.5")),
  ])

  @Test func jsonlRoundTrip() throws {
    let text = transcript.jsonl()
    #expect(text.split(separator: "\n").count == 6)
    let first = try JSONValue.parse(String(text.split(separator: "\n")[0]))
    #expect(first["type"] == "instructions")
    #expect(try Transcript(jsonl: text) == transcript)
    #expect(try Transcript(jsonl: "\n" + text + "\n\n") == transcript)
  }

  @Test func codableWithFoundation() throws {
    let data = try JSONEncoder().encode(transcript)
    let decoded = try JSONDecoder().decode(Transcript.self, from: data)
    // Foundation's coders do not keep object key order, so compare as JSON, not member by member.
    #expect(decoded.count == transcript.count)
    for (a, b) in zip(decoded, transcript) {
      #expect(Transcript.json(of: a).jsonEquals(Transcript.json(of: b)), "\(a) != \(b)")
    }
  }

  @Test func fileRoundTripAndErrors() throws {
    let dir = try TemporaryFolder.make(prefix: "toolhost-session-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("t.jsonl").path
    try transcript.save(to: path)
    #expect(try Transcript.load(from: path) == transcript)

    try Data(
      "{\"type\":\"prompt\",\"id\":\"a\",\"text\":\"x\"}\n{\"type\":\"mystery\",\"id\":\"b\"}\n"
        .utf8
    )
    .write(to: URL(fileURLWithPath: path))
    let error = #expect(throws: TranscriptFileError.self) { try Transcript.load(from: path) }
    #expect(error?.line == 2)
    #expect(error?.description.contains("unknown transcript entry type mystery") == true)
    #expect(error?.description.hasPrefix(path + ":2: ") == true)

    #expect(throws: TranscriptFileError.self) { try Transcript(jsonl: "{\"type\":\"prompt\"}") }
    #expect(throws: TranscriptFileError.self) { try Transcript(jsonl: "not json") }
    #expect(throws: TranscriptFileError.self) {
      try Transcript.load(from: dir.appendingPathComponent("none").path)
    }
  }

  @Test func resumedSessionContinues() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "4")])
    let loaded = try Transcript(jsonl: transcript.jsonl())
    let session = LanguageModelSession(
      model: model, tools: try ToolRegistry([AddTool()]), transcript: loaded)
    _ = try await session.respond(to: "and 2+2?")
    #expect(model.requests[0].transcript.count == 7)
    #expect(session.transcript.count == 8)
    #expect(session.transcript.lastResponse == "4")
  }
}
