import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

/// The chat history end to end: the real `toolhost ask`, `chat` and `chats` against fakellm, the database in the
/// test's own `$HOME/.local/share/toolhost`.
extension AskAndChatTests {
  var historyPath: String { work.path + "/.local/share/toolhost/history.sqlite" }

  /// `toolhost chats … --json` parsed.
  func chatsJSON(_ arguments: [String] = []) async throws -> [JSONValue] {
    let listed = try await toolhost(["chats"] + arguments + ["--json"])
    #expect(listed.status == 0, "\(listed.allText)")
    return try JSONValue.parse(listed.stdoutText).arrayValue ?? []
  }

  @Test func askIsKeptWithItsToolCallsAndCanBeShownAndExported() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    try await FakeLLM.with(rules: Self.bostonRules) { server in
      let asked = try await toolhost(["ask"] + plugins + ["What is Boston like in April?"], server: server)
      #expect(asked.status == 0, "\(asked.allText)")
    }
    #expect(TemporaryFolder.permissions(historyPath) == 0o600)

    let chats = try await chatsJSON()
    #expect(chats.count == 1)
    let chat = try #require(chats.first)
    #expect(chat["command"] == "ask")
    #expect(chat["model"]?.stringValue?.contains("cli-model") == true, "\(chat)")
    #expect(chat["turns"] == 1)
    #expect(chat["toolCalls"] == 1)
    #expect(chat["title"] == "What is Boston like in April?")
    #expect(chat["titleSource"] == "prompt")
    let id = try #require(chat["id"]?.integerValue)

    let shown = try await toolhost(["chats", "show", String(id)])
    #expect(shown.status == 0, "\(shown.allText)")
    #expect(shown.stdoutText.contains("> What is Boston like in April?"), "\(shown.stdoutText)")
    #expect(shown.stdoutText.contains(#"→ getWeather {"city":"Boston","month":4}"#), "\(shown.stdoutText)")
    #expect(shown.stdoutText.contains("← getWeather ok "), "\(shown.stdoutText)")
    #expect(shown.stdoutText.contains("Boston averages a high of about 13 °C in April."), "\(shown.stdoutText)")

    let graph = try await toolhost(["chats", "show", String(id), "--graph"])
    #expect(graph.status == 0, "\(graph.allText)")
    #expect(graph.stdoutText.contains("turn 1: > What is Boston like in April?"), "\(graph.stdoutText)")
    #expect(
      graph.stdoutText.contains("├─ round 1\n│  └─ getWeather {\"city\":\"Boston\",\"month\":4}  [ok, "),
      "\(graph.stdoutText)")
    #expect(graph.stdoutText.contains("└─ response: Boston averages a high"), "\(graph.stdoutText)")

    let detail = try JSONValue.parse(try await toolhost(["chats", "show", String(id), "--json"]).stdoutText)
    let entries = detail["entries"]?.arrayValue ?? []
    // No --instructions, so no instructions entry.
    #expect(entries.compactMap { $0["kind"]?.stringValue } == ["prompt", "toolCalls", "toolOutput", "response"])
    #expect(entries.first { $0["kind"] == "toolOutput" }?["status"] == "ok")
    #expect(entries.first { $0["kind"] == "toolOutput" }?["durationMs"]?.doubleValue != nil)

    let page = work.path + "/chat.html"
    let html = try await toolhost(["chats", "export", String(id), "--html", "-o", page])
    #expect(html.status == 0, "\(html.allText)")
    #expect(TemporaryFolder.permissions(page) == 0o600)
    let text = try String(contentsOfFile: page, encoding: .utf8)
    #expect(text.contains(#"<li class="call ok" data-tool="getWeather">"#), "\(text)")
    #expect(text.contains("Content-Security-Policy"))
    #expect(try await toolhost(["chats", "show", String(id), "--html"]).stdoutText == text)

    let exported = try await toolhost(["chats", "export", String(id), "--jsonl"])
    #expect(exported.status == 0, "\(exported.allText)")
    let lines = exported.stdoutText.split(separator: "\n")
    #expect(lines.count == 4)
    #expect(try JSONValue.parse(String(lines[0]))["text"] == "What is Boston like in April?")
  }

  @Test func chatsContinueResumeSearchAndDelete() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: title
          when: {messages_contain: "You write titles"}
          respond: {content: "Four Questions"}
        - name: one
          when: {turn: 1}
          respond: {content: "First answer."}
        - name: two
          when: {turn: 2}
          respond: {content: "Second answer."}
        - name: three
          when: {turn: 3, messages_contain: "Second answer."}
          respond: {content: "Third answer, with the history."}
        - name: four
          when: {turn: 4, messages_contain: "Third answer"}
          respond: {content: "Fourth answer."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let chat = try await toolhost(
        ["chat", "--no-tools", "--no-stream"], server: server, stdin: "first question\nsecond question\n")
      #expect(chat.status == 0, "\(chat.allText)")
      let continued = try await toolhost(["chat", "--no-tools", "--continue", "-p", "third question"], server: server)
      #expect(continued.status == 0, "\(continued.allText)")
      #expect(continued.stdoutText == "Third answer, with the history.\n")
      let id = try #require(try await chatsJSON().first?["id"]?.integerValue)
      let resumed = try await toolhost(
        ["chat", "--no-tools", "--resume", String(id), "-p", "fourth question"], server: server)
      #expect(resumed.status == 0, "\(resumed.allText)")
      #expect(resumed.stdoutText == "Fourth answer.\n")
      let unknown = try await toolhost(["chat", "--no-tools", "--resume", String(id + 7), "-p", "x"], server: server)
      #expect(unknown.status == 64, "\(unknown.allText)")
      #expect(
        unknown.stderrText.contains("no chat has the id \(id + 7): the nearest are \(id)"), "\(unknown.stderrText)")
    }
    let chats = try await chatsJSON()
    #expect(chats.count == 1)
    #expect(chats.first?["turns"] == 4)
    #expect(chats.first?["title"] == "Four Questions")
    #expect(chats.first?["titleSource"] == "model")
    #expect(try await chatsJSON(["search", "THIRD answer"]).count == 1)
    #expect(try await chatsJSON(["search", "fifth"]).isEmpty)
    let listed = try await toolhost(["chats"])
    #expect(listed.stdoutText.contains("Four Questions"), "\(listed.stdoutText)")

    let removed = try await toolhost(["chats", "rm", "1"])
    #expect(removed.status == 0, "\(removed.allText)")
    #expect(try await chatsJSON().isEmpty)
    let gone = try await toolhost(["chats", "show", "1"])
    #expect(gone.status == 64)
    #expect(gone.stderrText.contains("no chat has the id 1: there are no chats yet"), "\(gone.stderrText)")
  }

  @Test func noHistoryKeepsNothing() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules = """
      rules:
        - name: any
          respond: {content: "Fine."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let asked = try await toolhost(["ask", "--no-tools", "--no-history", "hello"], server: server)
      #expect(asked.status == 0, "\(asked.allText)")
      #expect(!FileManager.default.fileExists(atPath: historyPath))
      // The configuration's "history": false is the same for every run.
      let config = work.path + "/.config/toolhost"
      try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
      FileManager.default.createFile(
        atPath: config + "/config.json", contents: Data(#"{"history": false}"#.utf8),
        attributes: [.posixPermissions: 0o600])
      let again = try await toolhost(["ask", "--no-tools", "hello"], server: server)
      #expect(again.status == 0, "\(again.allText)")
      #expect(!FileManager.default.fileExists(atPath: historyPath))
    }
  }

  @Test func aDamagedHistoryIsAWarningAndTheAnswerStillComes() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    try FileManager.default.createDirectory(
      atPath: (historyPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let garbage = Data(String(repeating: "garbage ", count: 1000).utf8)
    FileManager.default.createFile(atPath: historyPath, contents: garbage, attributes: [.posixPermissions: 0o600])
    let rules = """
      rules:
        - name: any
          respond: {content: "Still here."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let asked = try await toolhost(["ask", "--no-tools", "hello"], server: server)
      #expect(asked.status == 0, "\(asked.allText)")
      #expect(asked.stdoutText == "Still here.\n")
      #expect(
        asked.stderrText.contains("warning: chat history (\(historyPath)): the file is damaged"), "\(asked.stderrText)")
      #expect(asked.stderrText.split(separator: "\n").count == 1, "\(asked.stderrText)")
    }
    #expect(FileManager.default.contents(atPath: historyPath) == garbage)
    let listed = try await toolhost(["chats"])
    #expect(listed.status == 1)
    #expect(listed.stderrText.contains("the file is damaged or not a toolhost history"), "\(listed.stderrText)")
  }
}

/// The chat's own lines: `/tools`, `@TOOL message`, `/clear`, `/help`, `/quit`, and hints for the rest.
extension AskAndChatTests {
  @Test func chatCommandsPickAToolClearAndQuit() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let rules =
      Self.bostonRules + "\n"
        + """
          - name: again
            when: {messages_contain: "hello again"}
            respond: {content: "Hi again."}
        """
    let lines = [
      "/tools weather", "/help", "@getWeather What is Boston like in April?", "/bogus", "@getWeathr hi", "@getWeather",
      "/clear", "hello again", "/quit", "never sent",
    ]
    try await FakeLLM.with(rules: rules) { server in
      let chat = try await toolhost(
        ["chat", "--no-stream"] + plugins, server: server, stdin: lines.joined(separator: "\n") + "\n")
      #expect(chat.status == 0, "\(chat.allText)\nserver:\n\(server.log)")
      #expect(chat.stdoutText == "Boston averages a high of about 13 °C in April.\nHi again.\n")
      // /tools weather: the matching tools, name and summary.
      #expect(chat.stderrText.contains("getWeather  "), "\(chat.stderrText)")
      #expect(!chat.stderrText.contains("todoList  "), "\(chat.stderrText)")
      #expect(chat.stderrText.contains("/clear  start a new conversation"), "\(chat.stderrText)")
      #expect(chat.stderrText.contains("toolhost: /bogus is not a command"), "\(chat.stderrText)")
      #expect(chat.stderrText.contains("no tool is called getWeathr: did you mean @getWeather?"), "\(chat.stderrText)")
      #expect(chat.stderrText.contains("write the message after the tool's name: @getWeather"), "\(chat.stderrText)")
      #expect(chat.stderrText.contains("a new conversation (the last one is kept as chat 1)"), "\(chat.stderrText)")

      // The model's title requests for the two chats aside.
      let requests = try server.requests().filter { !"\($0)".contains("You write titles") }
      #expect(requests.count == 3, "\(requests)")
      // The picked message: only that tool offered, and the model told to use it.
      let picked = try #require(requests.first)
      let offered = (picked["tools"] as? [[String: Any]])?.compactMap {
        ($0["function"] as? [String: Any])?["name"] as? String
      }
      #expect(offered == ["getWeather"])
      let system = ((picked["messages"] as? [[String: Any]])?.first?["content"] as? String) ?? ""
      #expect(system.contains("Use the tool getWeather"), "\(picked)")
      // After /clear the conversation starts again, with every tool and no steering.
      let fresh = try #require(requests.last)
      let messages = fresh["messages"] as? [[String: Any]] ?? []
      #expect(messages.count == 1, "\(messages)")
      #expect((fresh["tools"] as? [Any])?.count ?? 0 > 1)
      let sent = requests.map { "\($0)" }.joined()
      #expect(!sent.contains("bogus") && !sent.contains("never sent") && !sent.contains("getWeathr"))
    }
    let chats = try await chatsJSON()
    #expect(chats.map { $0["title"]?.stringValue } == ["hello again", "What is Boston like in April?"])
  }
}

/// `toolhost chat` on a terminal: the line editor completes tool names with Tab.
extension AskAndChatTests {
  @Test func onATerminalTabCompletesAToolName() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    try await FakeLLM.with(rules: Self.bostonRules) { server in
      let chat = try await Subprocess.runWithoutBlocking(
        executable: URL(fileURLWithPath: "/usr/bin/env"),
        arguments: Terminal.command(
          [
            try TestPackage.requireToolhostBinary(), "chat", "--no-stream", "--base-url", server.baseURL, "--model",
            "cli-model",
          ] + plugins,
          typing: [
            // "@getW" + Tab completes to "@getWeather "; the rest of the message, then Enter.
            ("you› ", "@getW\tWhat is Boston like in April?\r"),
            // The answer, then Ctrl-D at the next prompt ends the chat (the line's own redraws show the prompt
            // too, so the answer is waited for first).
            ("13 °C in April.", ""), ("you› ", "\u{04}"),
          ]),
        environment: fakeLLMEnvironment(home: work), workingDirectory: work, timeout: 120
      ).finished()
      #expect(chat.status == 0, "\(chat.allText)\nserver:\n\(server.log)")
      #expect(chat.stdoutText.contains("Boston averages a high of about 13 °C in April."), "\(chat.allText)")
      let first = try #require(try server.requests().first)
      let offered = (first["tools"] as? [[String: Any]])?.compactMap {
        ($0["function"] as? [String: Any])?["name"] as? String
      }
      #expect(offered == ["getWeather"], "\(first)")
      let prompt = ((first["messages"] as? [[String: Any]])?.last?["content"] as? String) ?? ""
      #expect(prompt == "What is Boston like in April?")
    }
  }
}

/// Titles made by the chat's model after the first answer.
extension AskAndChatTests {
  @Test func chatIsTitledByItsModelUnlessTheModelAnswersInstead() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    for (reply, expected, source) in [
      ("Boston Weather In April", "Boston Weather In April", "model"),
      ("Boston is mild in April, around 13 °C, so pack a light jacket.", "What is Boston like in April?", "prompt"),
    ] {
      try? FileManager.default.removeItem(atPath: historyPath)
      let rules = """
        rules:
          - name: title
            when: {messages_contain: "You write titles"}
            respond: {content: "\(reply)"}
          - name: answer
            respond: {content: "Mild."}
        """
      try await FakeLLM.with(rules: rules) { server in
        let chat = try await toolhost(
          ["chat", "--no-tools", "--no-stream"], server: server, stdin: "What is Boston like in April?\n")
        #expect(chat.status == 0, "\(chat.allText)")
        #expect(chat.stdoutText == "Mild.\n")
        let titleRequests = try server.requests().filter { "\($0)".contains("You write titles") }
        #expect(titleRequests.count == (source == "model" ? 1 : 2))
      }
      let chats = try await chatsJSON()
      #expect(chats.first?["title"]?.stringValue == expected)
      #expect(chats.first?["titleSource"]?.stringValue == source)
    }
  }
}
