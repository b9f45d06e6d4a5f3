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

/// Keeps the history from the newest prompt on, once a tool has answered.
struct CompactingOnOutput: LanguageModelSession.DynamicProfile {
  @SessionProperty(\.history) var history

  var body: some LanguageModelSession.DynamicProfile {
    Profile { AddTool() }
      .onToolOutput {
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

  @Test func historyTransformsSeeTheHistoryWithoutTheInstructionsInTheOrderWritten() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "one"), ModelTurn(text: "two")])
    let profile = LanguageModelSession.Profile { Instructions("Be brief.") }
      .historyTransform { Array($0.suffix(2)) }
      .historyTransform { $0 + $0 }
    let session = LanguageModelSession(model: model, profile: profile)
    _ = try await session.respond(to: "first")
    _ = try await session.respond(to: "second")
    let seen = model.requests[1].transcript.entries
    // Instructions stay first; then the last two entries of the history ("one", "second"), twice. The other order
    // (twice, then the last two) would leave two.
    guard case .instructions? = seen.first else {
      Issue.record("the instructions were transformed away: \(seen)")
      return
    }
    #expect(seen.count == 5, "\(seen)")
    #expect(seen.compactMap(\.promptText) == ["second", "second"])
  }

  @Test func aHistoryCompactedWhenAToolAnswersKeepsThatCallAndItsOutput() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(text: "earlier"), ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2], id: "c1")]), ModelTurn(text: "3"),
    ])
    let session = LanguageModelSession(model: model, profile: CompactingOnOutput())
    _ = try await session.respond(to: "hello")
    _ = try await session.respond(to: "1+2?")
    let seen = model.requests[2].transcript.entries
    #expect(!seen.contains { $0.promptText == "hello" }, "the history was compacted: \(seen)")
    #expect(seen.contains { if case .toolCalls = $0 { true } else { false } }, "\(seen)")
    #expect(seen.contains { if case .toolOutput = $0 { true } else { false } }, "\(seen)")
    #expect(model.requests.count == 3)
  }

  @Test func aHistoryWrittenBetweenRequestsKeepsTheNextPrompt() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "one"), ModelTurn(text: "two")])
    let session = LanguageModelSession(model: model, profile: LanguageModelSession.Profile { Instructions("Hi.") })
    _ = try await session.respond(to: "first")
    session.properties.history = []
    _ = try await session.respond(to: "second")
    #expect(model.requests[1].transcript.entries.compactMap(\.promptText) == ["second"])
    #expect(session.transcript.history.count == 2)
  }

  @Test func aPreservingPolicyKeepsTheFailedRequestsEntries() async throws {
    let model = ScriptedModel(turns: [ModelTurn(toolCalls: [call("explode", [:], id: "c1")])])
    let profile = LanguageModelSession.Profile { FailingTool() }.transcriptErrorHandlingPolicy(.preserveTranscript)
    let session = LanguageModelSession(model: model, profile: profile)
    await #expect(throws: ToolCallError.self) { _ = try await session.respond(to: "boom") }
    #expect(session.transcript.entries.contains { if case .toolOutput = $0 { true } else { false } })

    // The profile's policy wins over the session's own.
    let reverting = LanguageModelSession(
      model: ScriptedModel(turns: [ModelTurn(toolCalls: [call("explode", [:], id: "c1")])]),
      profile: LanguageModelSession.Profile { FailingTool() }.transcriptErrorHandlingPolicy(.revertTranscript),
      policy: SessionPolicy(toolFailures: .throwAndPreserve))
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
    await #expect {
      _ = try await request.value
    } throws: { error in
      guard case .transcriptMutationWhileResponding = error as? LanguageModelSessionError else { return false }
      return true
    }
    #expect(session.transcript.isEmpty)
  }
}

/// A book on a shelf, each with the identity FoundationModels gives generated values.
@Generable
struct Book {
  var id: GenerationID
  var title: String
}

@Generable
struct Shelf {
  var id: GenerationID
  var books: [Book]
}

/// `GenerationID`s stay the same across a stream's snapshots and its answer, for the value and what is inside it.
struct GenerationIdentityTests {
  @Test func theSameBookHasTheSameIdentityInEverySnapshotAndTheAnswer() async throws {
    let model = ScriptedModel(
      turns: [ModelTurn(text: #"{"books": [{"title": "Emma"}, {"title": "Persuasion"}]}"#)], streamPiece: 5)
    let session = LanguageModelSession(model: model, tools: .empty)
    let stream = session.streamResponse(to: "Two books", generating: Shelf.self)
    var firstBook: Set<GenerationID> = []
    var shelves: Set<GenerationID> = []
    for try await snapshot in stream {
      shelves.insert(snapshot.content.id)
      if let book = snapshot.content.books?.first { firstBook.insert(book.id) }
    }
    let answer = try await stream.collect().content
    #expect(shelves.count == 1)
    #expect(firstBook.count == 1)
    #expect(shelves.first == answer.id)
    #expect(firstBook.first == answer.books[0].id)
    #expect(answer.books[0].id != answer.books[1].id)
    // The identity goes with the value's content.
    #expect(try Shelf(answer.generatedContent).books[1].id == answer.books[1].id)
  }
}

extension SessionPropertyValues {
  @SessionPropertyEntry var sumsDone: Int = 0
}

/// Adds two numbers and counts the sums in the session it runs for.
struct CountingAdder: Tool {
  let name = "add"
  let description = "Adds two integers."
  let parameters: JSONValue = [
    "type": "object", "required": ["a", "b"],
    "properties": ["a": ["type": "integer"], "b": ["type": "integer"]],
  ]
  @SessionProperty(\.sumsDone) var sumsDone

  func call(arguments: JSONValue) async throws -> String {
    sumsDone += 1
    return "\((arguments["a"]?.integerValue ?? 0) + (arguments["b"]?.integerValue ?? 0))"
  }
}

/// `@SessionProperty` reads the session whose request runs: in a tool, and in one profile two sessions share.
struct SessionPropertyScopeTests {
  @Test func aToolWritesTheSessionItRunsFor() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2], id: "c1")]), ModelTurn(text: "3"),
    ])
    let session = LanguageModelSession(model: model, profile: LanguageModelSession.Profile { CountingAdder() })
    _ = try await session.respond(to: "1+2?")
    #expect(session.properties.sumsDone == 1)
    // Outside a request the property reads its default.
    #expect(CountingAdder().sumsDone == 0)
  }

  @Test func aProfileTwoSessionsShareReadsEachSessionsOwn() async throws {
    let profile = CountingProfile()
    let first = LanguageModelSession(
      model: ScriptedModel(turns: [
        ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2], id: "c1")]), ModelTurn(text: "3"),
      ]),
      profile: profile)
    let second = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("add", ["a": 2, "b": 2], id: "c1")]), ModelTurn(text: "4"),
    ])
    let other = LanguageModelSession(model: second, profile: profile)
    _ = try await first.respond(to: "1+2?")
    _ = try await other.respond(to: "2+2?")
    // The second session's first turn is required too: it does not see the first session's count.
    #expect(second.requests.map(\.toolChoice) == [.required, .auto])
    #expect(first.properties.addCalls == 1)
    #expect(other.properties.addCalls == 1)
  }
}
