import Foundation
import Testing
import ToolhostChat
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// The session loop against a scripted in-process model: no server, every branch deterministic.
@Suite("Session loop")
struct SessionLoopTests {
  func answer(_ text: String) -> ModelTurn { ModelTurn(text: text, finishReason: "stop") }
  func calls(_ calls: Transcript.ToolCall...) -> ModelTurn {
    ModelTurn(toolCalls: calls, finishReason: "tool_calls")
  }

  @Test func answersWithoutTools() async throws {
    let model = ScriptedModel(turns: [answer("Hello!")])
    let session = try LanguageModelSession(
      model: model, tools: [AddTool()], instructions: "Be kind.")
    let response = try await session.respond(to: "Hi")
    #expect(response.content == "Hello!")
    #expect(session.transcript.map(\.type) == ["instructions", "prompt", "response"])
    #expect(response.transcriptEntries.map(\.type) == ["prompt", "response"])
    #expect(model.requests[0].toolChoice == .auto)
    #expect(model.requests[0].tools.map(\.name) == ["add"])
  }

  @Test func prewarmHandsTheModelTheSessionsPrefix() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "Hi.")])
    let session = try LanguageModelSession(model: model, tools: [AddTool()], instructions: "Be brief.")
    await session.warmUp()
    let request = try #require(model.prewarms.first)
    #expect(request.tools.map(\.name) == ["add"])
    #expect(request.toolChoice == .auto)
    #expect(request.transcript.entries.first.map { if case .instructions = $0 { true } else { false } } == true)
    #expect(model.requests.isEmpty)  // nothing was asked, and the transcript is as it was
    #expect(session.transcript.entries.count == 1)
    // A model with nothing to load gets the protocol's default, which does nothing.
    struct Plain: LanguageModel {
      let displayName = "plain"
      func turn(for request: ModelRequest) async throws -> ModelTurn { ModelTurn(text: "") }
    }
    await (try LanguageModelSession(model: Plain())).warmUp()
  }

  @Test func parallelCallsRunAtOnceAndOutputsKeepTheModelsOrder() async throws {
    let model = ScriptedModel(turns: [
      calls(
        call("sleepy", ["label": "slow", "ms": 600], id: "a"),
        call("sleepy", ["label": "fast", "ms": 300], id: "b"),
        call("add", ["a": 2, "b": 3], id: "c")),
      answer("All done."),
    ])
    let overlap = Overlap()
    let session = try LanguageModelSession(
      model: model, tools: [SleepTool(overlap: overlap), AddTool()])
    let log = EventLog()
    _ = session.addObserver { log.append($0) }
    let response = try await session.respond(to: "go")
    #expect(response.content == "All done.")
    // Both sleepers had started before the first of them finished: they ran at once.
    #expect(overlap.runningWhenFirstFinished == 2)

    let outputs = session.transcript.compactMap { e -> Transcript.ToolOutput? in
      if case .toolOutput(let o) = e { return o } else { return nil }
    }
    #expect(outputs.map(\.callID) == ["a", "b", "c"])
    #expect(outputs.map(\.text) == ["done slow", "done fast", "{\"sum\":5}"])
    #expect(outputs[2].value == ["sum": 5])
    // Finished events arrive as calls end: the fast ones before the slow one.
    let finished = log.all.compactMap { e -> String? in
      if case .toolCallFinished(let r) = e { return r.call.id } else { return nil }
    }
    #expect(finished.last == "a")
    #expect(log.types.first == "request_started")
    #expect(log.types.filter { $0 == "tool_call_started" }.count == 3)
    #expect(log.types.last == "response")
    // The second model turn saw the outputs.
    let second = model.requests[1].transcript
    #expect(
      second.map(\.type) == ["prompt", "toolCalls", "toolOutput", "toolOutput", "toolOutput"])
  }

  @Test func offeredToolsNarrowOneRequestAndSteerIt() async throws {
    let model = ScriptedModel(turns: [
      calls(call("sleepy", ["label": "x", "ms": 0], id: "a")),
      calls(call("add", ["a": 1, "b": 2], id: "b")),
      answer("3"),
      answer("plain"),
    ])
    let session = try LanguageModelSession(
      model: model, tools: [AddTool(), SleepTool()], instructions: "Be brief.")
    let response = try await session.respond(to: "1+2?", options: GenerationOptions(offeredTools: ["add", "nope"]))
    #expect(response.content == "3")
    let first = try #require(model.requests.first)
    #expect(first.tools.map(\.name) == ["add"])
    guard case .instructions(let sent) = first.transcript.entries.first else {
      Issue.record("no instructions sent")
      return
    }
    #expect(sent.text.hasPrefix("Be brief.\n\nUse the tool add to answer"), "\(sent.text)")
    // A tool the request did not offer is not run: the model hears it is unknown and which ones it has.
    let outputs = session.transcript.compactMap { e -> Transcript.ToolOutput? in
      if case .toolOutput(let o) = e { return o } else { return nil }
    }
    #expect(try JSONValue.parse(outputs[0].text)["error"]?["code"] == "unknown_tool")
    #expect(outputs[1].text == "{\"sum\":3}")
    // The transcript keeps the session's own instructions, and the next request offers every tool again.
    guard case .instructions(let kept) = session.transcript.entries.first else {
      Issue.record("no instructions kept")
      return
    }
    #expect(kept.text == "Be brief.")
    _ = try await session.respond(to: "again")
    #expect(model.requests.last?.tools.map(\.name) == ["add", "sleepy"])
  }

  @Test func inventedToolAndArgumentsAreRepaired() async throws {
    let model = ScriptedModel(turns: [
      calls(
        call("addd", ["a": 1, "b": 2], id: "x"),
        call("add", ["a": "one", "b": 2000, "c": 1], id: "y")),
      calls(Transcript.ToolCall(id: "z", toolName: "add", rawArguments: "{\"a\": 1, \"b\": }")),
      calls(call("add", ["a": 1, "b": 2], id: "w")),
      answer("3"),
    ])
    let session = try LanguageModelSession(model: model, tools: [AddTool()])
    let response = try await session.respond(to: "1+2?")
    #expect(response.content == "3")
    let outputs = session.transcript.compactMap { e -> Transcript.ToolOutput? in
      if case .toolOutput(let o) = e { return o } else { return nil }
    }
    #expect(outputs.count == 4)
    let unknown = try JSONValue.parse(outputs[0].text)
    #expect(unknown["error"]?["code"] == "unknown_tool")
    #expect(
      unknown["error"]?["message"]?.stringValue
        == "there is no tool named addd; did you mean add?; the tools are: add")
    let invalid = try JSONValue.parse(outputs[1].text)
    #expect(invalid["error"]?["code"] == "invalid_arguments")
    let message = invalid["error"]?["message"]?.stringValue ?? ""
    #expect(message.contains("/a:"), "\(message)")
    #expect(message.contains("/b: 2000 is greater than the maximum 1000"), "\(message)")
    #expect(outputs[1].isError)
    let broken = try JSONValue.parse(outputs[2].text)
    #expect(broken["error"]?["message"]?.stringValue?.contains("not valid JSON") == true)
    #expect(outputs[3].text == "{\"sum\":3}")
  }

  @Test func repairsAreBounded() async throws {
    let model = ScriptedModel(turns: [calls(call("nope", [:], id: "x"))])
    var policy = SessionPolicy()
    policy.maximumRepairs = 2
    let session = try LanguageModelSession(model: model, tools: [AddTool()], policy: policy)
    let error = await #expect(throws: LanguageModelSessionError.self) {
      try await session.respond(to: "hi")
    }
    guard case .repairLimitReached(let limit, let problem)? = error else {
      Issue.record("wrong error \(String(describing: error))")
      return
    }
    #expect(limit == 2)
    #expect(problem.toolName == "nope")
    #expect(model.requests.count == 3)
    #expect(session.transcript.isEmpty)  // reverted
    #expect(error?.description.contains("3 times") == true)
  }

  @Test func toolRoundLimit() async throws {
    let model = ScriptedModel(turns: [calls(call("add", ["a": 1, "b": 1], id: "x"))])
    var policy = SessionPolicy()
    policy.maximumToolRounds = 3
    let session = try LanguageModelSession(
      model: model, tools: [AddTool()], instructions: "i", policy: policy)
    let error = await #expect(throws: LanguageModelSessionError.self) {
      try await session.respond(to: "loop")
    }
    #expect(error?.description.contains("3 rounds") == true)
    // The repeated call was not run: the model was asked for its answer once (tool choice none), ignored that, and
    // went on until the limit.
    #expect(model.requests.count == 5)
    #expect(model.requests.map(\.toolChoice) == [.auto, .auto, .none, .none, .none])
    #expect(session.transcript.map(\.type) == ["instructions"])
  }

  @Test func aRepeatedOrThirdCallAsksForTheAnswerInstead() async throws {
    // The same call again: not run, the model is asked to answer.
    let same = ScriptedModel(turns: [
      calls(call("add", ["a": 1, "b": 1], id: "x")), calls(call("add", ["a": 1, "b": 1], id: "y")), answer("2"),
    ])
    let session = try LanguageModelSession(model: same, tools: [AddTool()])
    let response = try await session.respond(to: "1+1")
    #expect(response.content == "2")
    #expect(same.requests.map(\.toolChoice) == [.auto, .auto, .none])
    #expect(session.transcript.filter { $0.type == "toolOutput" }.count == 1)

    // A third call of one tool, with new arguments each time: the same.
    let third = ScriptedModel(turns: [
      calls(call("add", ["a": 1, "b": 1], id: "x")), calls(call("add", ["a": 2, "b": 2], id: "y")),
      calls(call("add", ["a": 3, "b": 3], id: "z")), answer("done"),
    ])
    let other = try LanguageModelSession(model: third, tools: [AddTool()])
    #expect(try await other.respond(to: "sums").content == "done")
    #expect(third.requests.map(\.toolChoice) == [.auto, .auto, .auto, .none])
    #expect(other.transcript.filter { $0.type == "toolOutput" }.count == 2)
  }

  @Test func toolFailureThrowsAndRevertsByDefault() async throws {
    let model = ScriptedModel(turns: [calls(call("explode", [:], id: "x")), answer("unreachable")])
    let session = try LanguageModelSession(model: model, tools: [FailingTool()])
    let error = await #expect(throws: ToolCallError.self) { try await session.respond(to: "boom") }
    #expect(error?.toolName == "explode")
    #expect(
      error?.failure == .toolReported(message: "the fuse is wet", code: "wet_fuse", data: nil))
    #expect(session.transcript.isEmpty)
    #expect(!session.isResponding)
  }

  @Test func toolFailureThrowsAndPreserves() async throws {
    let model = ScriptedModel(turns: [calls(call("explode", [:], id: "x"))])
    let session = try LanguageModelSession(
      model: model, tools: [FailingTool()], policy: SessionPolicy(toolFailures: .throwAndPreserve))
    await #expect(throws: ToolCallError.self) { try await session.respond(to: "boom") }
    #expect(session.transcript.map(\.type) == ["prompt", "toolCalls", "toolOutput"])
  }

  @Test func toolFailureReportedToTheModel() async throws {
    let model = ScriptedModel(turns: [
      calls(call("explode", [:], id: "x")), answer("It failed: wet fuse."),
    ])
    let session = try LanguageModelSession(
      model: model, tools: [FailingTool()], policy: SessionPolicy(toolFailures: .reportToModel))
    let response = try await session.respond(to: "boom")
    #expect(response.content == "It failed: wet fuse.")
    guard case .toolOutput(let output) = session.transcript[2] else {
      Issue.record("no tool output")
      return
    }
    #expect(output.isError)
    let json = try JSONValue.parse(output.text)
    #expect(json["error"]?["code"] == "tool_error")
    #expect(json["error"]?["message"] == "the fuse is wet [wet_fuse]")
  }

  @Test func outputSentToTheModelIsCapped() async throws {
    let model = ScriptedModel(turns: [calls(call("long", ["n": 5000], id: "x")), answer("ok")])
    let session = try LanguageModelSession(
      model: model, tools: [LongTool()], policy: SessionPolicy(toolOutputLimit: 200))
    _ = try await session.respond(to: "long please")
    guard case .toolOutput(let output) = session.transcript[2] else {
      Issue.record("no tool output")
      return
    }
    #expect(output.charactersCut == 4800)
    #expect(output.text.contains("[… toolhost cut 4800 of 5000 characters here …]"))
    #expect(output.text.hasPrefix(String(repeating: "abcdefghij", count: 10)))
    // The model saw the capped text.
    guard case .toolOutput(let sent) = model.requests[1].transcript[2] else { return }
    #expect(sent.text == output.text)
  }

  @Test(arguments: GenerationOptions.ToolCallingMode.allCases)
  func toolCallingModes(mode: GenerationOptions.ToolCallingMode) async throws {
    let model = ScriptedModel(turns: [calls(call("add", ["a": 1, "b": 1], id: "x")), answer("2")])
    let session = try LanguageModelSession(
      model: model, tools: [AddTool()], policy: SessionPolicy(toolFailures: .reportToModel))
    _ = try await session.respond(to: "1+1", options: GenerationOptions(toolCallingMode: mode))
    let choices = model.requests.map(\.toolChoice)
    switch mode {
    case .allowed: #expect(choices == [.auto, .auto])
    case .required: #expect(choices == [.required, .required])
    case .disallowed: #expect(choices == [.none, .none])
    case .requiredUntilFirstCall: #expect(choices == [.required, .auto])
    }
    if mode == .disallowed {
      // The scripted model called a tool anyway: it was refused, not run.
      guard case .toolOutput(let output) = session.transcript[2] else { return }
      #expect(output.text.contains("not allowed"))
    }
  }

  @Test func concurrentRequestsAreRefused() async throws {
    let gate = CallCounter()
    let model = ScriptedModel([
      { _ in
        try await waitUntil { gate.count > 0 }
        return ModelTurn(text: "slow")
      }
    ])
    let session = try LanguageModelSession(model: model)
    async let first = session.respond(to: "one")
    try await waitUntil { session.isResponding }
    await #expect(throws: LanguageModelSessionError.self) { try await session.respond(to: "two") }
    var streamed = session.streamResponse(to: "three").makeAsyncIterator()
    await #expect(throws: LanguageModelSessionError.self) { _ = try await streamed.next() }
    gate.increment()
    #expect(try await first.content == "slow")
    #expect(try await session.respond(to: "four").content == "slow")
  }

  @Test func cancellationStopsToolsAndRevertsTheTranscript() async throws {
    let model = ScriptedModel(turns: [
      calls(call("sleepy", ["label": "x", "ms": 10_000], id: "a")), answer("no"),
    ])
    let session = try LanguageModelSession(model: model, tools: [SleepTool()], instructions: "i")
    let log = EventLog()
    _ = session.addObserver { log.append($0) }
    let task = Task { try await session.respond(to: "wait") }
    try await waitUntil { log.types.contains("tool_call_started") }
    let clock = ContinuousClock()
    let start = clock.now
    task.cancel()
    let result = await task.result
    #expect(clock.now - start < .seconds(2))
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(session.transcript.map(\.type) == ["instructions"])
    #expect(!session.isResponding)
  }

  @Test func cancellingACollectReturnsOnlyWhenTheSessionIsFreeAgain() async throws {
    let model = ScriptedModel(turns: [
      calls(call("sleepy", ["label": "x", "ms": 10_000], id: "a")), answer("no"),
    ])
    let session = try LanguageModelSession(model: model, tools: [SleepTool()])
    let log = EventLog()
    _ = session.addObserver { log.append($0) }
    let task = Task { try await session.streamResponse(to: "wait").collect() }
    try await waitUntil { log.types.contains("tool_call_started") }
    task.cancel()
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(!session.isResponding)
    #expect(session.transcript.isEmpty)
    // The cancelled call was reported before collect returned.
    #expect(log.types.last == "tool_call_finished")
    #expect(try await session.respond(to: "again").content == "no")
  }

  @Test func callsTheRulesDoNotAllowAreRefused() async throws {
    let counter = CallCounter()
    let model = ScriptedModel(turns: [
      calls(call("wipe", [:], id: "a"), call("add", ["a": 1, "b": 2], id: "b")), answer("ok"),
    ])
    var policy = SessionPolicy(toolFailures: .reportToModel)
    let asked = CallCounter()
    var rules = UserConfiguration(path: "/nonexistent/config.json")
    rules.toolRules = [.init(pattern: "a*", value: .auto)]  // add; wipe keeps its default, ask
    let approver = ToolApprover(configuration: rules, ask: nil)
    policy.approveCall = { call, tool in
      let approval = await approver.decide(call, tool: tool)
      if approval != .allow { asked.increment() }
      return approval
    }
    let session = try LanguageModelSession(
      model: model, tools: [WipeTool(calls: counter), AddTool()], policy: policy)
    _ = try await session.respond(to: "wipe it")
    #expect(asked.count == 1)  // only the destructive one; the read-only add runs
    #expect(counter.count == 0)
    guard case .toolOutput(let refused) = session.transcript[2],
      case .toolOutput(let added) = session.transcript[3]
    else {
      Issue.record("no outputs")
      return
    }
    let json = try JSONValue.parse(refused.text)
    #expect(json["error"]?["code"] == "refused")
    // The model is told only that the user did not approve: no file, no rule, no option.
    #expect(json["error"]?["message"]?.stringValue?.contains("the user has not approved running wipe") == true)
    #expect(json["error"]?["message"]?.stringValue?.contains("config.json") == false)
    #expect(json["error"]?["message"]?.stringValue?.contains("--") == false)
    #expect(added.text == "{\"sum\":3}")
  }

  @Test func streamingYieldsSnapshots() async throws {
    let model = ScriptedModel(turns: [
      calls(call("add", ["a": 1, "b": 2], id: "a")), answer("three"),
    ])
    let session = try LanguageModelSession(model: model, tools: [AddTool()])
    var events: [String] = []
    var final: LanguageModelSession.Response<String>?
    for try await snapshot in session.streamResponse(to: "1+2") {
      events.append(snapshot.event.json["type"]?.stringValue ?? "?")
      if case .response(let r) = snapshot.event { final = r }
    }
    #expect(final?.content == "three")
    #expect(
      events == [
        "request_started", "model_turn_started", "tool_call_started", "tool_call_finished",
        "model_turn_started",
        "text_delta", "response",
      ])
  }

  @Test func instructionsPreferringTools() {
    #expect(SessionInstructions.preferring(tools: [], base: "b") == "b")
    let one = SessionInstructions.preferring(tools: ["getWeather"], base: nil) ?? ""
    #expect(one.hasPrefix("Use the tool getWeather to answer"))
    let two = SessionInstructions.preferring(tools: ["a", "b", "c"], base: "Be brief.") ?? ""
    #expect(two.hasPrefix("Be brief.\n\nUse the tools a, b and c to answer: call them"))
  }
}
