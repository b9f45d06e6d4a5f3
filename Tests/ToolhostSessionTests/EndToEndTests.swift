import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The session and the HTTP backend against a real OpenAI-compatible server: fakellm 0.3.5 from PyPI, started on
/// 127.0.0.1 by each test and stopped by PID (run through ToolhostTestSupport/Peers/run_fakellm.py, which also
/// captures the request bodies and can rewrite streamed deltas the way other servers send them).
@Suite(
  "End to end with fakellm",
  .enabled(
    if: TestEnvironment.hasFakeLLM,
    "fakellm 0.3.5 is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"))
struct EndToEndTests {
  /// A configuration for `server` with fast retries.
  func configuration(_ server: FakeLLM, retries: Int = 3) -> OpenAIConfiguration {
    OpenAIConfiguration(
      baseURL: server.baseURL, model: "test-model", apiKey: "test-key", readTimeout: .seconds(30),
      requestTimeout: .seconds(60), maximumRetries: retries, retryBaseDelay: .milliseconds(10))
  }

  func pluginRegistry() async throws -> ToolRegistry {
    let folder = try ExamplePlugins.weatherBreadTodo.get()
    let catalog = await PluginCatalog.discover(folders: [folder.path])
    #expect(!catalog.hasErrors, "\(catalog.diagnostics)")
    return catalog.registry()
  }

  static func outputs(_ entries: some Sequence<Transcript.Entry>) -> [Transcript.ToolOutput] {
    entries.compactMap { if case .toolOutput(let o) = $0 { o } else { nil } }
  }

  static func calls(_ entries: some Sequence<Transcript.Entry>) -> [Transcript.ToolCall] {
    entries.flatMap { e -> [Transcript.ToolCall] in
      if case .toolCalls(let c) = e { c.calls } else { [] }
    }
  }

  @Test func multiTurnSessionWithTwoParallelPluginCalls() async throws {
    let rules = """
      rules:
        - name: weather-calls
          when: {turn: 1, messages_contain: "Boston and Lisbon"}
          respond:
            tool_calls:
              - {name: getWeather, arguments: {city: Boston, month: 4}}
              - {name: getWeather, arguments: {city: Lisbon, month: 4, units: fahrenheit}}
        - name: weather-answer
          when: {turn: 2, tool_result_contains: "Portugal"}
          respond: {content: "In April Boston is colder than Lisbon."}
        - name: bread-call
          when: {turn: 3, messages_contain: "rye"}
          respond:
            tool_calls:
              - {name: searchBreadDatabase, arguments: {searchTerm: rye, limit: 2}}
        - name: bread-answer
          when: {turn: 4, tool_result_contains: "totalMatches"}
          respond: {content: "Try a rye bread."}
      """
    let registry = try await pluginRegistry()
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(
          model: model, tools: registry, instructions: "Answer with the tools.",
          policy: SessionPolicy(toolFailures: .reportToModel))
        let log = EventLog()
        _ = session.addObserver { log.append($0) }

        let first = try await session.respond(
          to: "Compare the weather in Boston and Lisbon in April")
        #expect(
          first.content == "In April Boston is colder than Lisbon.", "server log:\n\(server.log)")
        let calls = Self.calls(first.transcriptEntries)
        let outputs = Self.outputs(first.transcriptEntries)
        #expect(calls.map(\.toolName) == ["getWeather", "getWeather"])
        #expect(outputs.map(\.callID) == calls.map(\.id))  // the model's order
        #expect(outputs.map { $0.value?["city"] } == ["Boston", "Lisbon"])
        #expect(outputs[1].value?["temperatureUnit"] == "°F")
        #expect(outputs.allSatisfy { !$0.isError })

        let second = try await session.respond(to: "Now find me a rye bread")
        #expect(second.content == "Try a rye bread.")
        let bread = Self.outputs(second.transcriptEntries)
        #expect(bread.count == 1)
        #expect(bread[0].value?["count"] == 2)

        #expect(
          session.transcript.map(\.type) == [
            "instructions", "prompt", "toolCalls", "toolOutput", "toolOutput", "response", "prompt",
            "toolCalls",
            "toolOutput", "response",
          ])
        let finished = log.all.compactMap { e -> ToolCallRecord? in
          if case .toolCallFinished(let r) = e { r } else { nil }
        }
        #expect(finished.count == 3)
        #expect(finished.allSatisfy { $0.ran && $0.succeeded && $0.duration > .zero })

        // What went over the wire: four requests, the last carrying the whole conversation.
        let requests = try server.requests()
        #expect(requests.count == 4)
        let last = try #require(requests.last?["messages"] as? [[String: Any]])
        #expect(
          last.map { $0["role"] as? String } == [
            "system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant", "tool",
          ])
        #expect(last[2]["content"] as? String == "")
        #expect(
          (requests[0]["_headers"] as? [String: String])?["authorization"] == "Bearer test-key")
        #expect(requests.allSatisfy { $0["tool_choice"] as? String == "auto" })
        #expect(requests.allSatisfy { ($0["tools"] as? [Any])?.count == registry.tools.count })
      }
    }
  }

  @Test(
    .enabled(
      if: TestEnvironment.hasOpenAITypes,
      "the openai package is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"
    ))
  func requestBodiesMatchTheOpenAIPackagesTypes() async throws {
    let rules = """
      rules:
        - name: calls
          when: {turn: 1, messages_contain: "add things"}
          respond:
            tool_calls:
              - {name: add, arguments: {a: 1, b: 2}}
              - {name: addd, arguments: {a: 1}}
              - {name: explode, arguments: {}}
        - name: answer
          when: {turn_in: [2, 9]}
          respond: {content: "done"}
      """
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = try LanguageModelSession(
          model: model, tools: [AddTool(), FailingTool(), SleepTool()], instructions: "Use tools.",
          policy: SessionPolicy(toolFailures: .reportToModel))
        let options = GenerationOptions(
          temperature: 0.2, maximumResponseTokens: 200, toolCallingMode: .requiredUntilFirstCall,
          parallelToolCalls: true, topP: 0.9, seed: 1, stop: ["END"])
        _ = try await session.respond(to: "add things", options: options)
        _ = try await session.streamResponse(to: "and stream", options: options).collect()
        let noTools = LanguageModelSession(model: model, tools: try ToolRegistry([]))
        _ = try await noTools.respond(to: "plain")
      }
      let check = try await server.checkRequestsAgainstOpenAITypes()
      #expect(check.status == 0, "check_requests.py:\n\(check.allText)")
      #expect(check.stdoutText.contains("checked 4 requests: ok"), "\(check.allText)")
    }
  }

  @Test(arguments: [nil, "reuse-index", "omit-index", "no-ids"] as [String?])
  func streamingWithFragmentedToolCallArguments(mangle: String?) async throws {
    let rules = """
      rules:
        - name: calls
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: add, arguments: {a: 20, b: 22}}
              - {name: add, arguments: {a: 100, b: 900}}
              - {name: sleepy, arguments: {label: "a label with \\"quotes\\" and ünïcode", ms: 1}}
        - name: answer
          when: {turn: 2, tool_result_contains: "1000"}
          respond: {content: "The sums are 42 and 1000, and the sleeper woke up."}
      """
    try await FakeLLM.with(rules: rules, mangle: mangle) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = try LanguageModelSession(model: model, tools: [AddTool(), SleepTool()])
        var deltas: [String] = []
        var contents: [String] = []
        var response: LanguageModelSession.Response<String>?
        for try await snapshot in session.streamResponse(to: "sum up") {
          switch snapshot.event {
          case .textDelta(let d):
            deltas.append(d)
            contents.append(snapshot.content)
          case .response(let r): response = r
          default: break
          }
        }
        let r = try #require(response, "no response; server log:\n\(server.log)")
        #expect(r.content == "The sums are 42 and 1000, and the sleeper woke up.")
        #expect(deltas.count > 5)
        #expect(deltas.joined() == r.content)
        #expect(contents.last == r.content)
        let calls = Self.calls(r.transcriptEntries)
        #expect(
          calls.map(\.arguments) == [
            ["a": 20, "b": 22], ["a": 100, "b": 900],
            ["label": "a label with \"quotes\" and ünïcode", "ms": 1],
          ])
        #expect(Set(calls.map(\.id)).count == 3)
        #expect(
          Self.outputs(r.transcriptEntries).map(\.text) == [
            "{\"sum\":42}", "{\"sum\":1000}", "done a label with \"quotes\" and ünïcode",
          ])
        let requests = try server.requests()
        #expect(requests.allSatisfy { $0["stream"] as? Bool == true })
      }
    }
  }

  @Test func rateLimitIsRetriedHonouringRetryAfter() async throws {
    let rules = """
      rules:
        - name: limited
          when: {turn: 1}
          respond: {status: 429, error: "Rate limit exceeded (mock)"}
        - name: fine
          when: {turn: 2}
          respond: {content: "Worth the wait."}
      """
    try await FakeLLM.with(rules: rules, retryAfter: "1") { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(model: model, tools: try ToolRegistry([]))
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await session.respond(to: "hello?")
        let elapsed = clock.now - start
        #expect(response.content == "Worth the wait.")
        #expect(elapsed >= .milliseconds(950), "Retry-After: 1 was not honoured (\(elapsed))")
        #expect(elapsed < .seconds(10))
        #expect(try server.requests().count == 2)
      }
    }
  }

  @Test func retryAfterIsBounded() async throws {
    let rules = """
      rules:
        - name: limited
          when: {turn: 1}
          respond: {status: 429, error: "Rate limit exceeded (mock)"}
        - name: fine
          when: {turn: 2}
          respond: {content: "Quick."}
      """
    try await FakeLLM.with(rules: rules, retryAfter: "3600") { server in
      var configuration = configuration(server)
      configuration.maximumRetryDelay = .milliseconds(200)
      try await OpenAIModel.withModel(configuration) { model in
        let session = LanguageModelSession(model: model, tools: try ToolRegistry([]))
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await session.respond(to: "hello?").content == "Quick.")
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(190))
        #expect(elapsed < .seconds(5), "Retry-After: 3600 was not capped (\(elapsed))")
      }
    }
  }

  @Test(arguments: [(500, 3), (503, 3), (400, 1), (401, 1), (404, 1)])
  func errorStatusesFailCleanly(status: Int, attempts: Int) async throws {
    let rules = """
      rules:
        - name: broken
          respond: {status: \(status), error: "mock failure \(status)"}
      """
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server, retries: 2)) { model in
        let session = try LanguageModelSession(model: model, tools: [AddTool()], instructions: "i")
        let error = await #expect(throws: LanguageModelError.self) {
          try await session.respond(to: "hi")
        }
        #expect(error?.kind == .httpStatus(status))
        #expect(error?.attempts == attempts)
        #expect(error?.url == server.baseURL + "/chat/completions")
        let message = error?.description ?? ""
        #expect(message.contains("mock failure \(status)"), "\(message)")
        #expect(message.contains(server.baseURL + "/chat/completions"), "\(message)")
        #expect(message.contains("HTTP \(status)"), "\(message)")
        if status == 401 { #expect(message.contains("OPENAI_API_KEY")) }
        if attempts > 1 { #expect(message.contains("after \(attempts) attempts")) }
        #expect(session.transcript.map(\.type) == ["instructions"])
        #expect(!session.isResponding)
        #expect(try server.requests().count == attempts)
      }
    }
  }

  @Test func inventedToolAndArgumentsAreRepairedOverHTTP() async throws {
    let rules = """
      rules:
        - name: wrong
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: getWeathr, arguments: {city: Boston}}
              - {name: getWeather, arguments: {city: Boston, month: 13, when: now}}
        - name: corrected
          when: {turn: 2, tool_result_contains: "there is no tool named getWeathr"}
          respond:
            tool_calls:
              - {name: getWeather, arguments: {city: Boston, month: 4}}
        - name: answer
          when: {turn: 3, tool_result_contains: "averageHigh"}
          respond: {content: "Fixed it."}
      """
    let registry = try await pluginRegistry()
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(model: model, tools: registry)
        let log = EventLog()
        _ = session.addObserver { log.append($0) }
        let response = try await session.respond(to: "Weather in Boston?")
        #expect(response.content == "Fixed it.", "server log:\n\(server.log)")
        let records = log.all.compactMap { e -> ToolCallRecord? in
          if case .toolCallFinished(let r) = e { r } else { nil }
        }
        #expect(records.map(\.ran) == [false, false, true])
        #expect(records.map(\.succeeded) == [false, false, true])

        // The second request told the model exactly what was wrong.
        let requests = try server.requests()
        #expect(requests.count == 3)
        let messages = try #require(requests[1]["messages"] as? [[String: Any]])
        let toolTexts = messages.filter { $0["role"] as? String == "tool" }.compactMap {
          $0["content"] as? String
        }
        #expect(toolTexts.count == 2)
        #expect(
          toolTexts[0].contains("there is no tool named getWeathr; did you mean getWeather?"),
          "\(toolTexts[0])")
        #expect(
          toolTexts[1].contains("/month: 13 is greater than the maximum 12"), "\(toolTexts[1])")
        #expect(toolTexts[1].contains("property \\\"when\\\" is not allowed"), "\(toolTexts[1])")
      }
    }
  }

  @Test func eachToolCallingModeSendsItsToolChoice() async throws {
    let rules = """
      rules:
        - name: call-once
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: add, arguments: {a: 1, b: 1}}
        - name: answer
          respond: {content: "two"}
      """
    // fakellm does not enforce tool_choice, so every mode gets the same turns; what differs is what is sent.
    let expected: [(GenerationOptions.ToolCallingMode, [String])] = [
      (.allowed, ["auto", "auto"]), (.required, ["required", "required"]),
      (.disallowed, ["none", "none"]),
      (.requiredUntilFirstCall, ["required", "auto"]),
    ]
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        var seen = 0
        for (mode, choices) in expected {
          let session = try LanguageModelSession(
            model: model, tools: [AddTool()], policy: SessionPolicy(toolFailures: .reportToModel))
          // A different first message is a new fakellm conversation, so turn 1 calls the tool again.
          let response = try await session.respond(
            to: "one plus one, \(mode)", options: .init(toolCallingMode: mode))
          #expect(response.content == "two", "\(mode)")
          let requests = try server.requests().dropFirst(seen)
          seen += requests.count
          #expect(requests.map { $0["tool_choice"] as? String } == choices, "\(mode)")
          let outputs = Self.outputs(response.transcriptEntries)
          #expect(outputs.count == 1)
          // Disallowed: the model called anyway, and was told calls are not allowed instead of the tool running.
          #expect(outputs.first?.isError == (mode == .disallowed), "\(mode)")
        }
      }
    }
  }

  @Test func transcriptSavedAndResumedInANewSession() async throws {
    let rules = """
      rules:
        - name: first-call
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: add, arguments: {a: 2, b: 2}}
        - name: first-answer
          when: {turn: 2}
          respond: {content: "2+2 is 4."}
        - name: second-answer
          when: {turn: 3, messages_contain: "2+2 is 4"}
          respond: {content: "And doubled, 8."}
      """
    let dir = try TemporaryFolder.make(prefix: "toolhost-session-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("chat.jsonl").path
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = try LanguageModelSession(
          model: model, tools: [AddTool()], instructions: "Do maths.")
        _ = try await session.respond(to: "What is 2+2?")
        try session.transcript.save(to: path)
      }
      let saved = try String(contentsOfFile: path, encoding: .utf8)
      #expect(saved.split(separator: "\n").count == 5)
      try await OpenAIModel.withModel(configuration(server)) { model in
        let transcript = try Transcript.load(from: path)
        let resumed = LanguageModelSession(
          model: model, tools: try ToolRegistry([AddTool()]), transcript: transcript)
        let response = try await resumed.respond(to: "Double it.")
        #expect(response.content == "And doubled, 8.", "server log:\n\(server.log)")
        #expect(resumed.transcript.count == 7)
      }
      let last = try #require(try server.requests().last?["messages"] as? [[String: Any]])
      #expect(
        last.map { $0["role"] as? String } == [
          "system", "user", "assistant", "tool", "assistant", "user",
        ])
      #expect(last.first?["content"] as? String == "Do maths.")
    }
  }
}
