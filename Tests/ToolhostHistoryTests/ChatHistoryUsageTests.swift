import Foundation
import Testing
import ToolhostHistory
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// The token counts on transcript entries are kept in the history with the entries (inside their stored JSON).
@Suite("chat history token usage")
struct ChatHistoryUsageTests {
  let folder = TemporaryFolder(prefix: "toolhost-history-usage")

  @Test func usageIsKeptAndReadBack() throws {
    let history = try ChatHistory.open(at: folder.file("history.sqlite"))
    let recorder = try ChatRecorder(history: history, chat: .init(command: "ask", model: "m"))
    let call = Transcript.ToolCall(id: "call-1", toolName: "getWeather", arguments: ["city": "Oslo"])
    let transcript = Transcript(entries: [
      .prompt(.init(text: "Weather in Oslo?")),
      .toolCalls(.init(calls: [call], usage: TokenUsage(promptTokens: 300, completionTokens: 21))),
      .toolOutput(.init(callID: "call-1", toolName: "getWeather", text: #"{"high": 4}"#, value: ["high": 4])),
      .response(.init(text: "About 4 °C.", usage: TokenUsage(promptTokens: 340, completionTokens: 7))),
      .prompt(.init(text: "Thanks")),
      .response(.init(text: "You're welcome.")),
    ])
    try recorder.record(transcript)

    let chat = try ChatHistory.open(at: folder.file("history.sqlite")).chat(recorder.chatID)
    #expect(chat.transcript == transcript)
    guard case .response(let response)? = chat.entries[3].transcriptEntry else {
      Issue.record("no response: \(chat.entries)")
      return
    }
    #expect(response.usage == TokenUsage(promptTokens: 340, completionTokens: 7))
    #expect(chat.json["entries"]?[1]?["entry"]?["usage"] == ["promptTokens": 300, "completionTokens": 21])
    #expect(chat.json["entries"]?[5]?["entry"]?["usage"] == nil)
  }
}
