import Foundation
import Synchronization
import Testing
import ToolhostCore
import ToolhostHistory
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

extension ChatHistoryTests {
  @Test func theCallGraphDrawsRoundsParallelCallsAndOutputs() {
    let oslo = Transcript.ToolCall(id: "a", toolName: "getWeather", arguments: ["city": "Oslo"])
    let bergen = Transcript.ToolCall(id: "b", toolName: "getWeather", arguments: ["city": "Bergen"])
    let convert = Transcript.ToolCall(id: "c", toolName: "convertUnits", arguments: ["value": 4])
    let entries: [HistoryEntry] = [
      .init(.instructions(.init(text: "Be brief."))),
      .init(.prompt(.init(text: "Oslo or Bergen?"))),
      .init(.toolCalls(.init(calls: [oslo, bergen]))),
      // Outputs come in completion order, not the model's.
      .init(
        .toolOutput(.init(callID: "b", toolName: "getWeather", text: "timed out", isError: true)), durationMs: 2000,
        status: .error),
      .init(.toolOutput(.init(callID: "a", toolName: "getWeather", text: "4 °C")), durationMs: 12, status: .ok),
      .init(.toolCalls(.init(calls: [convert], text: "Converting."))),
      .init(.toolOutput(.init(callID: "c", toolName: "convertUnits", text: "39 °F")), durationMs: 3.4, status: .ok),
      .init(.response(.init(text: "Oslo: 4 °C."))),
      .init(.error("connection refused", prompt: "And Rome?")),
    ]
    let graph = CallGraph(entries: entries)
    #expect(graph.turns.count == 2)
    #expect(graph.turns[0].rounds.map(\.calls.count) == [2, 1])
    #expect(graph.turns[0].rounds[0].calls[1].status == .error)
    #expect(
      graph.lines() == [
        "instructions, 0 tools offered: Be brief.",
        "",
        "turn 1: > Oslo or Bergen?",
        "├─ round 1, 2 calls in parallel",
        "│  ├─ getWeather {\"city\":\"Oslo\"}  [ok, 12 ms]",
        "│  │  └─ 4 °C",
        "│  └─ getWeather {\"city\":\"Bergen\"}  [error, 2.0 s]",
        "│     └─ timed out",
        "├─ round 2",
        "│  ├─ model: Converting.",
        "│  └─ convertUnits {\"value\":4}  [ok, 3 ms]",
        "│     └─ 39 °F",
        "└─ response: Oslo: 4 °C.",
        "",
        "turn 2: > And Rome?",
        "└─ error: connection refused",
      ])
  }

  @Test func promptTitles() {
    #expect(ChatTitle.fromPrompt("Weather in Oslo?") == "Weather in Oslo?")
    #expect(ChatTitle.fromPrompt("\n  \nFirst line\nsecond") == "First line")
    #expect(ChatTitle.fromPrompt("one two three four five six seven eight") == "one two three four five six…")
    #expect(ChatTitle.fromPrompt(String(repeating: "x", count: 80)).count == 48)
    #expect(ChatTitle.fromPrompt("   ") == "(empty prompt)")
  }
}
