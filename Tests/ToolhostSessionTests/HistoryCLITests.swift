import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

/// The chat history end to end: the real `toolhost ask`, `chat` and `chats` against fakellm, the database in the
/// test's own `$HOME/.local/share/toolhost`.
extension CLITests {
  var historyPath: String { work.path + "/.local/share/toolhost/history.sqlite" }

  /// `toolhost chats … --json` parsed.
  func chatsJSON(_ arguments: [String] = []) async throws -> [JSONValue] {
    let listed = try await toolhost(["chats"] + arguments + ["--json"])
    #expect(listed.status == 0, "\(listed.output)")
    return try JSONValue.parse(listed.stdout).arrayValue ?? []
  }

  @Test func askIsKeptWithItsToolCallsAndCanBeShownAndExported() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    try await FakeLLM.with(rules: Self.bostonRules) { server in
      let asked = try await toolhost(["ask"] + plugins + ["What is Boston like in April?"], server: server)
      #expect(asked.status == 0, "\(asked.output)")
    }
    var info = stat()
    #expect(stat(historyPath, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)

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
    #expect(shown.status == 0, "\(shown.output)")
    #expect(shown.stdout.contains("> What is Boston like in April?"), "\(shown.stdout)")
    #expect(shown.stdout.contains(#"→ getWeather {"city":"Boston","month":4}"#), "\(shown.stdout)")
    #expect(shown.stdout.contains("← getWeather ok "), "\(shown.stdout)")
    #expect(shown.stdout.contains("Boston averages a high of about 13 °C in April."), "\(shown.stdout)")

    let graph = try await toolhost(["chats", "show", String(id), "--graph"])
    #expect(graph.status == 0, "\(graph.output)")
    #expect(graph.stdout.contains("turn 1: > What is Boston like in April?"), "\(graph.stdout)")
    #expect(
      graph.stdout.contains("├─ round 1\n│  └─ getWeather {\"city\":\"Boston\",\"month\":4}  [ok, "), "\(graph.stdout)")
    #expect(graph.stdout.contains("└─ response: Boston averages a high"), "\(graph.stdout)")

    let detail = try JSONValue.parse(try await toolhost(["chats", "show", String(id), "--json"]).stdout)
    let entries = detail["entries"]?.arrayValue ?? []
    // No --instructions, so no instructions entry.
    #expect(entries.compactMap { $0["kind"]?.stringValue } == ["prompt", "toolCalls", "toolOutput", "response"])
    #expect(entries.first { $0["kind"] == "toolOutput" }?["status"] == "ok")
    #expect(entries.first { $0["kind"] == "toolOutput" }?["durationMs"]?.doubleValue != nil)

    let exported = try await toolhost(["chats", "export", String(id), "--jsonl"])
    #expect(exported.status == 0, "\(exported.output)")
    let lines = exported.stdout.split(separator: "\n")
    #expect(lines.count == 4)
    #expect(try JSONValue.parse(String(lines[0]))["text"] == "What is Boston like in April?")
  }

  @Test func chatsContinueResumeSearchAndDelete() async throws {
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
        - name: four
          when: {turn: 4, messages_contain: "Third answer"}
          respond: {content: "Fourth answer."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let chat = try await toolhost(
        ["chat", "--no-tools", "--no-stream"], server: server, stdin: "first question\nsecond question\n")
      #expect(chat.status == 0, "\(chat.output)")
      let continued = try await toolhost(["chat", "--no-tools", "--continue", "-p", "third question"], server: server)
      #expect(continued.status == 0, "\(continued.output)")
      #expect(continued.stdout == "Third answer, with the history.\n")
      let id = try #require(try await chatsJSON().first?["id"]?.integerValue)
      let resumed = try await toolhost(
        ["chat", "--no-tools", "--resume", String(id), "-p", "fourth question"], server: server)
      #expect(resumed.status == 0, "\(resumed.output)")
      #expect(resumed.stdout == "Fourth answer.\n")
      let unknown = try await toolhost(["chat", "--no-tools", "--resume", String(id + 7), "-p", "x"], server: server)
      #expect(unknown.status == 64, "\(unknown.output)")
      #expect(unknown.stderr.contains("no chat has the id \(id + 7): the nearest are \(id)"), "\(unknown.stderr)")
    }
    let chats = try await chatsJSON()
    #expect(chats.count == 1)
    #expect(chats.first?["turns"] == 4)
    #expect(chats.first?["title"] == "first question")
    #expect(try await chatsJSON(["search", "THIRD answer"]).count == 1)
    #expect(try await chatsJSON(["search", "fifth"]).isEmpty)
    let listed = try await toolhost(["chats"])
    #expect(listed.stdout.contains("first question"), "\(listed.stdout)")

    let removed = try await toolhost(["chats", "rm", "1"])
    #expect(removed.status == 0, "\(removed.output)")
    #expect(try await chatsJSON().isEmpty)
    let gone = try await toolhost(["chats", "show", "1"])
    #expect(gone.status == 64)
    #expect(gone.stderr.contains("no chat has the id 1: there are no chats yet"), "\(gone.stderr)")
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
      #expect(asked.status == 0, "\(asked.output)")
      #expect(!FileManager.default.fileExists(atPath: historyPath))
      // The configuration's "history": false is the same for every run.
      let config = work.path + "/.config/toolhost"
      try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
      FileManager.default.createFile(
        atPath: config + "/config.json", contents: Data(#"{"history": false}"#.utf8),
        attributes: [.posixPermissions: 0o600])
      let again = try await toolhost(["ask", "--no-tools", "hello"], server: server)
      #expect(again.status == 0, "\(again.output)")
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
      #expect(asked.status == 0, "\(asked.output)")
      #expect(asked.stdout == "Still here.\n")
      #expect(asked.stderr.contains("warning: chat history (\(historyPath)): the file is damaged"), "\(asked.stderr)")
      #expect(asked.stderr.split(separator: "\n").count == 1, "\(asked.stderr)")
    }
    #expect(FileManager.default.contents(atPath: historyPath) == garbage)
    let listed = try await toolhost(["chats"])
    #expect(listed.status == 1)
    #expect(listed.stderr.contains("the file is damaged or not a toolhost history"), "\(listed.stderr)")
  }
}
