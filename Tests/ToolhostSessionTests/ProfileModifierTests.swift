import Synchronization
import Testing
import ToolhostCore
import ToolhostGeneration
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

extension SessionPropertyValues {
  @SessionPropertyEntry var addCalls: Int = 0
  @SessionPropertyEntry var lastTopic: String?
}

/// FoundationModels 27's sample shape: a property declared with `@SessionPropertyEntry`, `SessionProperty` and
/// `Profile` unqualified, a hook with no parameters.
struct CountingProfile: LanguageModelSession.DynamicProfile {
  @SessionProperty(\.addCalls) var addCalls

  var body: some LanguageModelSession.DynamicProfile {
    Profile { AddTool() }
      .toolCallingMode(addCalls < 1 ? .required : .allowed)
      .onToolCall { addCalls += 1 }
  }
}

/// Instructions of a type of its own, reading a session property, with one line per element of a list.
struct TopicInstructions: DynamicInstructions {
  @SessionProperty(\.lastTopic) var lastTopic
  let rules: [String]

  var body: some DynamicInstructions {
    Instructions("Be brief.")
    ForEach(rules, id: \.self) { rule in Instructions("Rule: \(rule)") }
    if let lastTopic { Instructions("The topic so far: \(lastTopic).") }
    if #available(macOS 15, *) { AddTool() }
  }
}

/// A modifier of one's own, made of the built-in ones.
struct Careful: LanguageModelSession.DynamicProfileModifier {
  func body(content: Content) -> some LanguageModelSession.DynamicProfile {
    content.temperature(0).maximumResponseTokens(64)
  }
}

/// Switches between two parts on a property, each telling when it starts and stops being used.
struct Phases: LanguageModelSession.DynamicProfile {
  @SessionProperty(\.addCalls) var addCalls
  let heard: Heard

  var body: some LanguageModelSession.DynamicProfile {
    if addCalls == 0 {
      Profile { AddTool() }
        .onActivate { [heard] in heard.append("adding on") }
        .onDeactivate { [heard] in heard.append("adding off") }
        .onToolCall { addCalls += 1 }
    } else {
      Profile { Instructions("Answer now.") }
        .onActivate { [heard] in heard.append("answering on") }
    }
  }
}

/// Keeps only the newest prompt of the history when a request starts, as a compacting profile does.
struct Compacting: LanguageModelSession.DynamicProfile {
  @SessionProperty(\.history) var history

  var body: some LanguageModelSession.DynamicProfile {
    Profile { Instructions("Be brief.") }
      .onPrompt {
        if let last = history.lastIndex(where: { $0.promptText != nil }) { history = history[last...] }
      }
  }
}

/// The modifiers and hooks of FoundationModels 27 beyond the tool-calling mode: the model, the history the model
/// sees, the failure policy, reasoning, a modifier of one's own, activation, and a hook that rewrites the history.
struct ProfileModifierTests {
  @Test func aCounterPropertyMakesTheFirstTurnCallAToolAndTheNextAnswer() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2], id: "c1")]), ModelTurn(text: "3"),
    ])
    let session = LanguageModelSession(model: model, profile: CountingProfile())
    #expect(try await session.respond(to: "1+2?").content == "3")
    #expect(model.requests.map(\.toolChoice) == [.required, .auto])
    #expect(session.properties.addCalls == 1)
  }

  @Test func theProfilesModelAnswersInsteadOfTheSessions() async throws {
    let unused = ScriptedModel(turns: [ModelTurn(text: "wrong model")])
    let chosen = ScriptedModel(turns: [ModelTurn(text: "right model")])
    let session = LanguageModelSession(
      model: unused, profile: LanguageModelSession.Profile { Instructions("Hi.") }.model(chosen))
    #expect(try await session.respond(to: "who?").content == "right model")
    #expect(unused.requests.isEmpty)
    #expect(chosen.requests.count == 1)
  }

  @Test func aHistoryTransformChangesWhatTheModelSeesNotTheTranscript() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "one"), ModelTurn(text: "two")])
    let profile = LanguageModelSession.Profile { Instructions("Be brief.") }
      .historyTransform { entries in
        entries.filter { if case .response = $0 { false } else { true } }
      }
    let session = LanguageModelSession(model: model, profile: profile)
    _ = try await session.respond(to: "first")
    _ = try await session.respond(to: "second")
    let seen = model.requests[1].transcript.entries
    #expect(!seen.contains { if case .response = $0 { true } else { false } })
    #expect(seen.count == 3)  // instructions and two prompts
    #expect(session.transcript.entries.count == 5)  // instructions, two prompts, two responses
  }

  @Test func aPreservingPolicyKeepsTheFailedRequestsEntries() async throws {
    let model = ScriptedModel(turns: [ModelTurn(toolCalls: [call("explode", [:], id: "c1")])])
    let profile = LanguageModelSession.Profile { FailingTool() }.transcriptErrorHandlingPolicy(.preserveTranscript)
    let session = LanguageModelSession(model: model, profile: profile)
    await #expect(throws: ToolCallError.self) { _ = try await session.respond(to: "boom") }
    #expect(session.transcript.entries.contains { if case .toolOutput = $0 { true } else { false } })

    let reverting = LanguageModelSession(
      model: ScriptedModel(turns: [ModelTurn(toolCalls: [call("explode", [:], id: "c1")])]),
      profile: LanguageModelSession.Profile { FailingTool() }.transcriptErrorHandlingPolicy(.revertTranscript))
    await #expect(throws: ToolCallError.self) { _ = try await reverting.respond(to: "boom") }
    #expect(reverting.transcript.isEmpty)
  }

  @Test func instructionsOfTheirOwnReadPropertiesAndRepeatForEachElement() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "ok")])
    let session = LanguageModelSession(
      model: model,
      profile: LanguageModelSession.Profile { TopicInstructions(rules: ["no guessing", "cite the tool"]) })
    session.properties.lastTopic = "sums"
    _ = try await session.respond(to: "hello")
    guard case .instructions(let instructions)? = model.requests[0].transcript.entries.first else {
      Issue.record("no instructions: \(model.requests[0].transcript.entries)")
      return
    }
    #expect(
      instructions.text
        == "Be brief.\n\nRule: no guessing\n\nRule: cite the tool\n\nThe topic so far: sums.")
    #expect(model.requests[0].tools.map(\.name) == ["add"])
  }

  @Test func aModifierOfOnesOwnAndTheReasoningLevelReachTheRequest() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "ok")])
    let profile = LanguageModelSession.Profile { Instructions("Hi.") }
      .modifier(Careful())
      .reasoningLevel(.deep)
    let session = LanguageModelSession(model: model, profile: profile)
    _ = try await session.respond(to: "hello")
    let options = model.requests[0].options
    #expect(options.temperature == 0)
    #expect(options.maximumResponseTokens == 64)
    #expect(options.additionalParameters["reasoning_effort"] == "high")
  }

  @Test func theSettingNearestTheProfileWinsAndTheRequestsOwnOverAll() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "ok")])
    let profile = LanguageModelSession.Profile { Instructions("Hi.") }
      .temperature(1.0).toolCallingMode(.disallowed)
      .temperature(0.5).maximumResponseTokens(10)
    let session = LanguageModelSession(model: model, profile: profile)
    _ = try await session.respond(to: "hello")
    _ = try await session.respond(to: "again", options: GenerationOptions(temperature: 0.1, toolCallingMode: .allowed))
    #expect(model.requests.map(\.options.temperature) == [1.0, 0.1])
    #expect(model.requests.map(\.options.toolCallingMode) == [.disallowed, .allowed])
    #expect(model.requests.map(\.options.maximumResponseTokens) == [10, 10])
  }

  @Test func partsAreActivatedAndDeactivatedAsTheProfileSwitches() async throws {
    let heard = Heard()
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("add", ["a": 2, "b": 2], id: "c1")]), ModelTurn(text: "4"),
    ])
    let session = LanguageModelSession(model: model, profile: Phases(heard: heard))
    _ = try await session.respond(to: "2+2")
    #expect(heard.all == ["adding on", "adding off", "answering on"])
    #expect(model.requests.map { $0.tools.map(\.name) } == [["add"], []])
  }

  @Test func aHookThatRewritesTheHistoryCompactsTheTranscript() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "one"), ModelTurn(text: "two")])
    let session = LanguageModelSession(model: model, profile: Compacting())
    _ = try await session.respond(to: "first")
    _ = try await session.respond(to: "second")
    // The second request's hook kept only the newest prompt: the first exchange is gone from what the model saw
    // and from the transcript.
    #expect(!model.requests[1].transcript.entries.contains { $0.promptText == "first" })
    #expect(session.transcript.entries.compactMap(\.promptText) == ["second"])
    #expect(session.transcript.entries.count == 3)  // instructions, the prompt, the response
  }
}

extension Transcript.Entry {
  /// The prompt's text, for a prompt.
  var promptText: String? {
    if case .prompt(let prompt) = self { prompt.text } else { nil }
  }
}

/// A session's transcript set from outside, as FoundationModels 27 allows: between requests it trims the chat; during
/// one it wins, and the request says its answer was not kept.
struct TranscriptAssignmentTests {
  @Test func aTranscriptSetBetweenRequestsIsWhatTheNextRequestContinues() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "one"), ModelTurn(text: "two")])
    let session = LanguageModelSession(model: model, tools: .empty, instructions: "Be brief.")
    _ = try await session.respond(to: "first")
    let entries = session.transcript
    session.transcript = Transcript(entries: [entries.first, entries.last].compactMap { $0 })
    _ = try await session.respond(to: "second")
    #expect(model.requests[1].transcript.entries.compactMap(\.promptText) == ["second"])
    #expect(session.transcript.history.count == 3)  // the kept response, the new prompt and its response
  }

  @Test func aTranscriptSetDuringARequestEndsItWithoutKeepingItsAnswer() async throws {
    let model = ScriptedModel([
      { _ in
        try await Task.sleep(for: .milliseconds(300))
        return ModelTurn(text: "late")
      }
    ])
    let session = LanguageModelSession(model: model, tools: .empty, instructions: "Be brief.")
    let request = Task { try await session.respond(to: "slow") }
    for _ in 0..<500 where !session.isResponding { try await Task.sleep(for: .milliseconds(10)) }
    #expect(session.isResponding)
    session.transcript = Transcript()
    await #expect(throws: LanguageModelSessionError.self) { _ = try await request.value }
    #expect(session.transcript.isEmpty)
  }
}
