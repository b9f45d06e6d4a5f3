import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostSession

/// Keeping long conversations within a small context: dropping answered turns' tool calls, a rolling window.
@Suite("transcript transforms")
struct TranscriptTransformTests {
  /// `turns` turns of a prompt, one tool call with a long output, and a response; then a last prompt.
  static func conversation(turns: Int, outputSize: Int = 600) -> Transcript {
    var t = Transcript(entries: [.instructions(.init(text: "Be brief."))])
    for i in 0..<turns {
      t.append(.prompt(.init(text: "question \(i)")))
      t.append(.toolCalls(.init(calls: [.init(id: "c\(i)", toolName: "search", arguments: ["q": .string("\(i)")])])))
      t.append(.toolOutput(.init(callID: "c\(i)", toolName: "search", text: String(repeating: "x", count: outputSize))))
      t.append(.response(.init(text: "answer \(i)")))
    }
    t.append(.prompt(.init(text: "last question")))
    return t
  }

  static func total(_ t: Transcript) -> Int { t.entries.map(Transcript.estimatedTokens).reduce(0, +) }

  @Test func answeredTurnsLoseTheirToolCallsAndTheCurrentTurnKeepsThem() {
    var t = Self.conversation(turns: 2)
    t.append(.toolCalls(.init(calls: [.init(id: "now", toolName: "search", arguments: [:])])))
    t.append(.toolOutput(.init(callID: "now", toolName: "search", text: "fresh")))
    let light = t.droppingCompletedToolCalls()
    #expect(
      light.map(\.type) == [
        "instructions", "prompt", "response", "prompt", "response", "prompt", "toolCalls", "toolOutput",
      ])
    // Entries keep their ids: a backend's cache and the session's records still match them.
    #expect(light.entries.last?.id == t.entries.last?.id)
  }

  @Test func aConversationThatFitsIsSentAsItIs() {
    let t = Self.conversation(turns: 2)
    #expect(t.fitted(toTokens: 10_000) == t)
  }

  @Test func aLongConversationKeepsItsInstructionsAndLatestTurnsWithinTheBudget() {
    let t = Self.conversation(turns: 200, outputSize: 60)
    let fitted = t.fitted(toTokens: 1000)
    #expect(Self.total(fitted) <= 1000)
    #expect(fitted.entries.first?.type == "instructions")
    #expect(fitted.lastPrompt == "last question")
    // Whole turns, from the newest back: the one before the last prompt is the newest answered one.
    #expect(fitted.lastResponse == "answer 199")
    #expect(!fitted.contains { $0.type == "toolCalls" || $0.type == "toolOutput" })
    let prompts = fitted.compactMap { e -> String? in if case .prompt(let p) = e { p.text } else { nil } }
    #expect(prompts.count > 5 && prompts.count < 200)
    #expect(prompts.suffix(2) == ["question 199", "last question"])
  }

  @Test func dropTheToolCallsFirstAndOnlyThenWholeTurns() {
    // 10 turns with big outputs: dropping the outputs is enough, so every prompt stays.
    let t = Self.conversation(turns: 10, outputSize: 900)
    let fitted = t.fitted(toTokens: 600)
    #expect(fitted.filter { $0.type == "prompt" }.count == 11)
    #expect(Self.total(fitted) <= 600)
  }

  @Test func theCurrentTurnIsKeptEvenWhenItAloneIsTooLong() {
    let t = Transcript(entries: [.prompt(.init(text: String(repeating: "long ", count: 2000)))])
    #expect(t.fitted(toTokens: 100) == t)
  }
}
