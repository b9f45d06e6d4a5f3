import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

/// The real `toolhost` binary (`ask`, `chat -p`, `chat` on piped input) against fakellm with the example plugins.
@Suite(
  "toolhost ask and chat",
  .enabled(
    if: TestEnvironment.hasFakeLLM,
    "fakellm 0.3.5 is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"))
struct AskAndChatTests {
  let work: URL

  init() throws {
    _ = try ExamplePlugins.weatherBreadTodo.get()
    work = try TemporaryFolder.make(prefix: "toolhost-session-tests")
  }

  /// Runs toolhost in a scratch directory with a clean environment (no colours, no terminal).
  func toolhost(
    _ arguments: [String], server: FakeLLM? = nil, stdin: String? = nil, todoFile: String? = nil
  ) async throws -> Subprocess.Output {
    var env = fakeLLMEnvironment(home: work)
    if let todoFile { env["TOOLHOST_TODO_FILE"] = todoFile }
    return try await runToolhost(arguments, server: server, environment: env, in: work, stdin: stdin ?? "")
  }

  var plugins: [String] {
    ["--plugins", (try? ExamplePlugins.weatherBreadTodo.get().path) ?? "plugins"]
  }

  /// fakellm rules: a `getWeather` call for Boston in April, then an answer from its result.
  static let bostonRules = """
    rules:
      - name: call
        when: {turn: 1, messages_contain: "Boston"}
        respond:
          tool_calls:
            - {name: getWeather, arguments: {city: Boston, month: 4}}
      - name: answer
        when: {turn: 2, tool_result_contains: "Boston"}
        respond: {content: "Boston averages a high of about 13 °C in April."}
    """

  @Test func askAnswersWithAPluginTool() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    try await FakeLLM.with(rules: Self.bostonRules) { server in
      let result = try await toolhost(
        ["ask"] + plugins + ["What is Boston like in April?"], server: server)
      #expect(result.status == 0, "\(result.allText)\nserver:\n\(server.log)")
      #expect(result.stdoutText == "Boston averages a high of about 13 °C in April.\n")
      #expect(
        result.stderrText.contains("→ getWeather {\"city\":\"Boston\",\"month\":4}"), "\(result.stderrText)"
      )
      #expect(result.stderrText.contains("✓ getWeather ("), "\(result.stderrText)")
      #expect(result.stderrText.contains("Boston, United States — April normals"), "\(result.stderrText)")
      #expect(!result.allText.contains("\u{1B}["))  // no colours and no spinner without a terminal
      let requests = try server.requests()
      #expect(requests.count == 2)
      #expect((requests[0]["_headers"] as? [String: String])?["authorization"] == "Bearer cli-key")
      #expect(
        requests.allSatisfy {
          $0["stream"] as? Bool == true && $0["model"] as? String == "cli-model"
        })
    }
  }

  /// An answer given with tools offered and none called is the model's own: `ask` says so on stderr (and as an
  /// `unchecked` event with `--json`), and says nothing of the kind after a call.
  @Test func anAnswerNoToolCheckedIsMarkedAsTheModelsOwn() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: memory
          when: {messages_contain: "capital"}
          respond: {content: "The capital of Australia is Canberra."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let plain = try await toolhost(["ask"] + plugins + ["What is the capital of Australia?"], server: server)
      #expect(plain.status == 0, "\(plain.allText)")
      #expect(plain.stdoutText == "The capital of Australia is Canberra.\n")
      #expect(
        plain.stderrText.contains("(no tool was called: this answer is the model's own, not checked)"),
        "\(plain.stderrText)")
      let json = try await toolhost(
        ["ask", "--json"] + plugins + ["What is the capital of Australia?"], server: server)
      let events = try json.stdoutText.split(separator: "\n").map { try JSONValue.parse(String($0)) }
      #expect(events.map { $0["type"]?.stringValue }.last == "unchecked", "\(json.stdoutText)")
      let noTools = try await toolhost(["ask", "--no-tools", "What is the capital of Australia?"], server: server)
      #expect(!noTools.stderrText.contains("not checked"), "no tool was offered: \(noTools.stderrText)")
    }
    try await FakeLLM.with(rules: Self.bostonRules) { server in
      let called = try await toolhost(["ask"] + plugins + ["What is Boston like in April?"], server: server)
      #expect(called.status == 0, "\(called.allText)")
      #expect(!called.stderrText.contains("not checked"), "\(called.stderrText)")
    }
  }

  @Test func guidedToolCallingWorksWithAnyOpenAICompatibleServer() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: call
          when: {turn: 1, messages_contain: "Boston"}
          respond:
            content: '{"need": "typical weather", "calls": [{"tool": "getWeather", "arguments": {"city": "Boston", "month": 4}}]}'
        - name: answer
          when: {turn: 2, messages_contain: "Result of getWeather"}
          respond:
            content: '{"need": "an answer", "answer": "Boston averages a high of 13.6 \\u00b0C in April."}'
      """
    try await FakeLLM.with(rules: rules) { server in
      let result = try await toolhost(
        ["ask", "--tool-calling", "guided"] + plugins + ["What is Boston like in April?"], server: server)
      #expect(result.status == 0, "\(result.allText)\nserver:\n\(server.log)")
      #expect(result.stdoutText == "Boston averages a high of 13.6 °C in April.\n")
      #expect(result.stderrText.contains("→ getWeather {\"city\":\"Boston\",\"month\":4}"), "\(result.stderrText)")
      #expect(result.stderrText.contains("Boston, United States — April normals"), "\(result.stderrText)")
      let requests = try server.requests()
      #expect(requests.count == 2)
      for request in requests {
        // Guided: no native tools; the reply is constrained to a schema of tool calls or an answer.
        #expect(request["tools"] == nil)
        #expect(request["tool_choice"] == nil)
        let format = request["response_format"] as? [String: Any]
        #expect(format?["type"] as? String == "json_object")
        // One branch of one to four calls (each one of the tools), one of an answer.
        let branches = (format?["schema"] as? [String: Any])?["anyOf"] as? [[String: Any]]
        #expect(branches?.count == 2)
        let calls = (branches?.first?["properties"] as? [String: Any])?["calls"] as? [String: Any]
        #expect(((calls?["items"] as? [String: Any])?["anyOf"] as? [Any])?.count ?? 0 > 1)
        let messages = request["messages"] as? [[String: Any]] ?? []
        #expect(messages.allSatisfy { $0["role"] as? String != "tool" && $0["tool_calls"] == nil })
        let system = messages.first?["content"] as? String ?? ""
        #expect(system.contains("- getWeather(city: string, month?: integer 1..12"), "\(system)")
      }
      let second = requests[1]["messages"] as? [[String: Any]] ?? []
      // The result as the plugin rendered it, not raw JSON.
      #expect(
        (second.last?["content"] as? String)?.hasPrefix("Result of getWeather:\nBoston, United States — April normals")
          == true)
    }
  }

  @Test func askPrintsEventsAsNDJSON() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: call
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: searchBreadDatabase, arguments: {searchTerm: baguette, limit: 1}}
        - name: answer
          when: {turn: 2}
          respond: {content: "Bake a baguette."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let result = try await toolhost(
        ["ask", "--json", "--tool", "searchBreadDatabase", "--require-tool"] + plugins + ["bread?"],
        server: server)
      #expect(result.status == 0, "\(result.allText)")
      let events = try result.stdoutText.split(separator: "\n").map { try JSONValue.parse(String($0)) }
      let types = events.compactMap { $0["type"]?.stringValue }
      #expect(types.first == "request_started")
      #expect(types.last == "response")
      #expect(types.contains("text_delta"))
      let finished = try #require(events.first { $0["type"] == "tool_call_finished" })
      #expect(finished["tool"] == "searchBreadDatabase")
      #expect(finished["ok"] == true)
      #expect(finished["result"]?["count"] == 1)
      #expect(events.last?["text"] == "Bake a baguette.")
      // --tool offered only that tool and said so; --require-tool made the first turn required.
      let requests = try server.requests()
      #expect((requests[0]["tools"] as? [[String: Any]])?.count == 1)
      #expect(requests.map { $0["tool_choice"] as? String } == ["required", "auto"])
      let system = (requests[0]["messages"] as? [[String: Any]])?.first
      #expect(system?["role"] as? String == "system")
      #expect((system?["content"] as? String)?.contains("Use the tool searchBreadDatabase") == true)
    }
  }

  @Test func destructiveToolIsRefusedWithoutATerminalUnlessYes() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    // Where the to-do plugin's sandbox lets it write (HOME is `work`).
    let todo = work.appendingPathComponent(".local/share/toolhost-todo/todo.txt").path
    let added = try await toolhost(
      ["call"] + plugins + ["todoAdd", "--text", "Buy milk"], todoFile: todo)
    #expect(added.status == 0, "\(added.allText)")
    let rules = """
      rules:
        - name: clear
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: todoClear, arguments: {}}
        - name: refused
          when: {turn: 2, tool_result_contains: "refused"}
          respond: {content: "I may not clear your list without your confirmation."}
        - name: cleared
          when: {turn: 2}
          respond: {content: "Your list is clear."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let refused = try await toolhost(
        ["ask"] + plugins + ["Clear my list"], server: server, todoFile: todo)
      #expect(refused.status == 0, "\(refused.allText)")
      #expect(refused.stdoutText == "I may not clear your list without your confirmation.\n")
      #expect(
        refused.stderrText.contains("✗ todoClear: refused: the user has not approved running todoClear"),
        "\(refused.stderrText)")
      #expect(
        refused.stderrText.contains("todoClear needs approval and there is no terminal to ask on"),
        "\(refused.stderrText)")
      let still = try await toolhost(["call"] + plugins + ["todoList"], todoFile: todo)
      #expect(still.stdoutText.contains("Buy milk"), "\(still.allText)")

      // A new conversation (another first message) with --yes runs it.
      let allowed = try await toolhost(
        ["ask", "--yes"] + plugins + ["Clear my list now"], server: server, todoFile: todo)
      #expect(allowed.status == 0, "\(allowed.allText)")
      #expect(allowed.stdoutText == "Your list is clear.\n")
      let after = try await toolhost(["call"] + plugins + ["todoList"], todoFile: todo)
      #expect(!after.stdoutText.contains("Buy milk"), "\(after.allText)")
    }
  }

  @Test func chatReadsPromptsSavesAndResumes() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: one
          when: {turn: 1}
          respond: {content: "First answer."}
        - name: two
          when: {turn: 2}
          respond: {content: "Second answer."}
        - name: three
          when: {turn: 3, messages_contain: "Second answer."}
          respond: {content: "Third answer, with the history."}
      """
    let saved = work.appendingPathComponent("chat.jsonl").path
    try await FakeLLM.with(rules: rules) { server in
      let chat = try await toolhost(
        // No history here: the model's title request would be one more request to the server.
        ["chat", "--no-tools", "--no-stream", "--no-history", "--save", saved, "--instructions", "Be terse."],
        server: server,
        stdin: "first question\n\nsecond question\n")
      #expect(chat.status == 0, "\(chat.allText)")
      #expect(chat.stdoutText == "First answer.\nSecond answer.\n")
      let lines = try String(contentsOfFile: saved, encoding: .utf8).split(separator: "\n")
      #expect(lines.count == 5)

      let resumed = try await toolhost(
        ["chat", "--no-tools", "--no-history", "--resume", saved, "-p", "third question"], server: server)
      #expect(resumed.status == 0, "\(resumed.allText)")
      #expect(resumed.stdoutText == "Third answer, with the history.\n")
      #expect(try String(contentsOfFile: saved, encoding: .utf8).split(separator: "\n").count == 7)
      let last = try #require(try server.requests().last)
      #expect((last["messages"] as? [Any])?.count == 6)
      #expect(last["tools"] == nil)
    }
  }

  @Test func failuresExitWithAMessage() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: down
          respond: {status: 400, error: "model cli-model does not exist"}
      """
    try await FakeLLM.with(rules: rules) { server in
      // fakellm applies a rule's status only to replies that are not streamed.
      let result = try await toolhost(
        ["ask", "--no-tools", "--no-stream", "hello"], server: server)
      #expect(result.status == 1)
      #expect(result.stdoutText.isEmpty)
      #expect(result.stderrText.contains("HTTP 400"), "\(result.stderrText)")
      #expect(result.stderrText.contains("model cli-model does not exist"), "\(result.stderrText)")
    }
    let port = try ProcessProbe.freePort()
    let refused = try await toolhost([
      "ask", "--no-tools", "--base-url", "http://127.0.0.1:\(port)/v1", "hello",
    ])
    #expect(refused.status == 1)
    #expect(refused.stderrText.contains("connection refused"), "\(refused.stderrText)")
    let usage = try await toolhost(["ask", "--no-tools", "--tool", "getWeather", "hello"])
    #expect(usage.status == 64, "\(usage.allText)")
    let unknown = try await toolhost(["ask", "--tool", "getWeathr"] + plugins + ["hello"])
    #expect(unknown.status == 64)
    #expect(unknown.stderrText.contains("did you mean getWeather"), "\(unknown.stderrText)")
  }
}
