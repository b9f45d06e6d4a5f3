/// Approvals and secret files (issue 11), through the real binary: which tool calls a model (`toolhost ask`, against
/// fakellm) or an MCP client (`toolhost serve --mcp`) may make without a person saying yes, how config.json's
/// `approvals` decide it, and that `--save` transcripts are 0600 and keep their mode when rewritten.
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - toolhost ask

@Suite(
  "approvals: toolhost ask",
  .enabled(
    if: TestEnvironment.hasFakeLLM,
    "fakellm 0.3.5 is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"))
struct ApprovalCLITests {
  /// Turn 1: readNote when the prompt says PLEASE-READ, else appendNote with text "hello". Turn 2: whether the tool
  /// ran, from its result.
  static let rules = """
    rules:
      - name: read
        when: {turn: 1, messages_contain: "PLEASE-READ"}
        respond:
          tool_calls:
            - {name: readNote, arguments: {}}
      - name: append
        when: {turn: 1}
        respond:
          tool_calls:
            - {name: appendNote, arguments: {text: hello}}
      - name: saved
        when: {turn: 2, tool_result_contains: "appended"}
        respond: {content: "The note is saved."}
      - name: read
        when: {turn: 2, tool_result_contains: "nothing to read"}
        respond: {content: "Nothing to read."}
      - name: not-saved
        when: {turn: 2}
        respond: {content: "The note was not saved."}
    """

  @Test func anUnannotatedToolIsRefusedWithoutATerminalUnlessYes() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await FakeLLM.with(rules: Self.rules) { server in
      let refused = try await fixture.toolhost(
        ["ask", "--plugins", fixture.tools, "Note one: hello"], server: server)
      #expect(refused.status == 0, "\(refused.allText)\nserver:\n\(server.log)")
      #expect(refused.stdoutText == "The note was not saved.\n", "\(refused.allText)")
      #expect(refused.stderrText.contains("--yes"), "the refusal does not name --yes: \(refused.stderrText)")
      #expect(fixture.notesText == nil, "appendNote ran without approval")

      let allowed = try await fixture.toolhost(
        ["ask", "--yes", "--plugins", fixture.tools, "Note two: hello"], server: server)
      #expect(allowed.status == 0, "\(allowed.allText)")
      #expect(allowed.stdoutText == "The note is saved.\n", "\(allowed.allText)")
      #expect(fixture.notesText == "hello\n", "notes: \(fixture.notesText ?? "none")")
    }
    // toolhost call is the user's own: it never asks.
    fixture.removeOutputs()
    let call = try await fixture.toolhost(["call", "--plugins", fixture.tools, "appendNote", "--text", "by hand"])
    #expect(call.status == 0, "\(call.allText)")
    #expect(fixture.notesText == "by hand\n", "notes: \(fixture.notesText ?? "none")")
  }

  @Test func aReadOnlyToolRunsWithoutYes() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await FakeLLM.with(rules: Self.rules) { server in
      let result = try await fixture.toolhost(
        ["ask", "--plugins", fixture.tools, "PLEASE-READ my notes"], server: server)
      #expect(result.status == 0, "\(result.allText)\nserver:\n\(server.log)")
      #expect(result.stdoutText == "Nothing to read.\n", "\(result.allText)")
      #expect(fixture.readerRan, "readNote (readOnlyHint) did not run")
      #expect(!result.stderrText.contains("refused"), "\(result.stderrText)")
    }
  }

  /// A config.json, whether `--yes` is given, and whether appendNote then runs.
  struct RuleCase: Sendable, CustomTestStringConvertible {
    var config: String
    var yes: Bool
    var runs: Bool
    var testDescription: String { "\(config)\(yes ? " --yes" : "")" }
  }

  static let ruleCases: [RuleCase] = [
    // deny beats --yes.
    RuleCase(config: #"{"approvals": {"tools": {"appendNote": "deny"}}}"#, yes: true, runs: false),
    // auto needs no --yes.
    RuleCase(config: #"{"approvals": {"tools": {"appendNote": "auto"}}}"#, yes: false, runs: true),
    // A plugin rule (the plugin folder's name).
    RuleCase(config: #"{"approvals": {"plugins": {"appender": "auto"}}}"#, yes: false, runs: true),
    RuleCase(config: #"{"approvals": {"plugins": {"appender": "deny"}}}"#, yes: true, runs: false),
    // A tool rule beats a plugin rule, a glob too.
    RuleCase(
      config: #"{"approvals": {"tools": {"append*": "deny"}, "plugins": {"appender": "auto"}}}"#, yes: false,
      runs: false),
    // The exact name beats a glob.
    RuleCase(
      config: #"{"approvals": {"tools": {"append*": "auto", "appendNote": "deny"}}}"#, yes: true, runs: false),
    // The longest matching glob wins.
    RuleCase(config: #"{"approvals": {"tools": {"*": "deny", "append*": "auto"}}}"#, yes: false, runs: true),
    RuleCase(config: #"{"approvals": {"tools": {"app?ndNote": "auto"}}}"#, yes: false, runs: true),
    // ask: as without a rule, refused without a terminal.
    RuleCase(config: #"{"approvals": {"tools": {"appendNote": "ask"}}}"#, yes: false, runs: false),
  ]

  @Test(arguments: ApprovalCLITests.ruleCases)
  func configRulesDecide(_ rule: RuleCase) async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try fixture.writeConfig(rule.config)
    try await FakeLLM.with(rules: Self.rules) { server in
      let result = try await fixture.toolhost(
        ["ask"] + (rule.yes ? ["--yes"] : []) + ["--plugins", fixture.tools, "Note this: hello"], server: server)
      #expect(result.status == 0, "\(result.allText)\nserver:\n\(server.log)")
      if rule.runs {
        #expect(result.stdoutText == "The note is saved.\n", "\(result.allText)")
        #expect(fixture.notesText == "hello\n", "notes: \(fixture.notesText ?? "none")")
      } else {
        #expect(result.stdoutText == "The note was not saved.\n", "\(result.allText)")
        #expect(fixture.notesText == nil, "appendNote ran")
        if rule.config.contains("deny") {
          // A denied tool is not even offered: the model's request lists no appendNote, and its call of it is an
          // unknown tool.
          let offered = try server.requests().first?["tools"] as? [[String: Any]] ?? []
          let names = offered.compactMap { ($0["function"] as? [String: Any])?["name"] as? String }
          #expect(!names.contains("appendNote"), "a denied tool was offered: \(names)")
          #expect(names.contains("readNote"), "\(names)")
        } else {
          #expect(result.stderrText.contains("--yes"), "the refusal does not say why: \(result.stderrText)")
        }
      }
    }
  }

  @Test(.enabled(if: ApprovalFixture.hasTimeServer, "mcp-server-time is not on PATH (pip install mcp-server-time)"))
  func mcpToolsAskWhateverTheirAnnotations() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    // plugins/time-mcp's manifest without the approvals it declares, in a folder of its own (the server declares
    // readOnlyHint: true, which toolhost must not trust).
    try fixture.write("time-plugins/time-mcp/toolhost.json", try ApprovalFixture.timeManifest(approvals: nil))
    let plugins = fixture.path("time-plugins")
    let rules = """
      rules:
        - name: call
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: get_current_time, arguments: {timezone: UTC}}
        - name: ran
          when: {turn: 2, tool_result_contains: "datetime"}
          respond: {content: "It ran."}
        - name: refused
          when: {turn: 2}
          respond: {content: "It did not run."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let refused = try await fixture.toolhost(["ask", "--plugins", plugins, "What time is it? (1)"], server: server)
      #expect(refused.status == 0, "\(refused.allText)\nserver:\n\(server.log)")
      #expect(refused.stdoutText == "It did not run.\n", "\(refused.allText)")
      #expect(refused.stderrText.contains("--yes"), "\(refused.stderrText)")

      let allowed = try await fixture.toolhost(
        ["ask", "--yes", "--plugins", plugins, "What time is it? (2)"], server: server)
      #expect(allowed.stdoutText == "It ran.\n", "\(allowed.allText)")

      // A plugin rule names the folder, not the name the manifest gives its server ("time"): a manifest cannot
      // claim another plugin's rule by naming its server after it.
      try fixture.writeConfig(#"{"approvals": {"plugins": {"time": "auto"}}}"#)
      let claimed = try await fixture.toolhost(["ask", "--plugins", plugins, "What time is it? (3)"], server: server)
      #expect(claimed.stdoutText == "It did not run.\n", "\(claimed.allText)")

      try fixture.writeConfig(#"{"approvals": {"plugins": {"time-mcp": "auto"}}}"#)
      let auto = try await fixture.toolhost(["ask", "--plugins", plugins, "What time is it? (4)"], server: server)
      #expect(auto.stdoutText == "It ran.\n", "\(auto.allText)")
    }
  }

  /// fakellm rules for the time server's tools: turn 1 calls convert_time when the prompt says CONVERT, else
  /// get_current_time; turn 2 says whether the tool ran, from its result.
  static let timeRules = """
    rules:
      - name: convert
        when: {turn: 1, messages_contain: "CONVERT"}
        respond:
          tool_calls:
            - {name: convert_time, arguments: {source_timezone: UTC, time: "12:00", target_timezone: Asia/Tokyo}}
      - name: now
        when: {turn: 1}
        respond:
          tool_calls:
            - {name: get_current_time, arguments: {timezone: Asia/Tokyo}}
      - name: ran
        when: {turn: 2, tool_result_contains: "datetime"}
        respond: {content: "It ran."}
      - name: refused
        when: {turn: 2}
        respond: {content: "It did not run."}
    """

  /// Issue 30: the example time server's tools work from `ask` with no terminal and no --yes, because the manifest
  /// the user trusted declares them `auto`; a tool it does not declare still asks, and the user's rules still win.
  @Test(.enabled(if: ApprovalFixture.hasTimeServer, "mcp-server-time is not on PATH (pip install mcp-server-time)"))
  func aTrustedManifestsDeclaredApprovalLetsItsServersToolsRun() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    // plugins/time-mcp as shipped, as a project's ./plugins, pinned with toolhost trust.
    let shipped = try String(
      contentsOf: TestPackage.plugins.appendingPathComponent("time-mcp/toolhost.json"), encoding: .utf8)
    try fixture.write("plugins/time-mcp/toolhost.json", shipped)
    let trust = try await fixture.toolhost(["trust"])
    #expect(trust.status == 0, "\(trust.allText)")
    #expect(
      trust.stdoutText.contains(
        "tool get_current_time (when the server lists it): runs without asking when a model calls "
          + "it (declared by the trusted manifest"), "\(trust.allText)")
    try await FakeLLM.with(rules: Self.timeRules) { server in
      let now = try await fixture.toolhost(["ask", "What time is it in Tokyo? (1)"], server: server)
      #expect(now.status == 0, "\(now.allText)\nserver:\n\(server.log)")
      #expect(now.stdoutText == "It ran.\n", "\(now.allText)")
      #expect(!now.stderrText.contains("needs approval"), "\(now.stderrText)")
      let convert = try await fixture.toolhost(["ask", "CONVERT noon UTC to Tokyo time (2)"], server: server)
      #expect(convert.stdoutText == "It ran.\n", "\(convert.allText)")

      // A manifest that declares get_current_time only: convert_time asks, so without a terminal it is refused.
      try fixture.write(
        "partial/time-mcp/toolhost.json", try ApprovalFixture.timeManifest(approvals: ["get_current_time": "auto"]))
      let partial = fixture.path("partial")
      let declared = try await fixture.toolhost(
        ["ask", "--plugins", partial, "What time is it in Tokyo? (3)"], server: server)
      #expect(declared.stdoutText == "It ran.\n", "\(declared.allText)")
      let undeclared = try await fixture.toolhost(
        ["ask", "--plugins", partial, "CONVERT noon UTC to Tokyo time (4)"], server: server)
      #expect(undeclared.status == 0, "\(undeclared.allText)")
      #expect(undeclared.stdoutText == "It did not run.\n", "\(undeclared.allText)")
      #expect(
        undeclared.stderrText.contains("convert_time needs approval and there is no terminal to ask on"),
        "\(undeclared.stderrText)")

      // The user's own rules win over the declaration: ask asks (refused here), deny is never offered.
      try fixture.writeConfig(#"{"approvals": {"tools": {"get_current_time": "ask"}}}"#)
      let ask = try await fixture.toolhost(["ask", "What time is it in Tokyo? (5)"], server: server)
      #expect(ask.stdoutText == "It did not run.\n", "\(ask.allText)")
      #expect(ask.stderrText.contains("get_current_time needs approval"), "\(ask.stderrText)")
      try fixture.writeConfig(#"{"approvals": {"plugins": {"time-mcp": "deny"}}}"#)
      let deny = try await fixture.toolhost(["ask", "What time is it in Tokyo? (6)"], server: server)
      #expect(deny.stdoutText == "It did not run.\n", "\(deny.allText)")
      let offered = try server.requests().last?["tools"] as? [[String: Any]] ?? []
      #expect(!offered.contains { ($0["function"] as? [String: Any])?["name"] as? String == "get_current_time" })
      try fixture.writeConfig("{}")

      // A changed manifest is not the one the user pinned: not loaded, so nothing it declares counts.
      try fixture.write("plugins/time-mcp/toolhost.json", shipped.replacingOccurrences(of: "\"UTC\"", with: "\"UTC\" "))
      let changed = try await fixture.toolhost(["ask", "What time is it in Tokyo? (7)"], server: server)
      #expect(changed.stdoutText == "It did not run.\n", "\(changed.allText)")
      #expect(changed.stderrText.contains("broken plugin left out"), "\(changed.stderrText)")
    }
  }

  // MARK: 5. Secret files

  @Test func transcriptsAreSavedPrivateAndKeepTheirMode() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    let rules = """
      rules:
        - name: one
          when: {turn: 1}
          respond: {content: "First answer."}
        - name: two
          when: {turn: 2}
          respond: {content: "Second answer."}
        - name: three
          when: {turn: 3}
          respond: {content: "Third answer."}
      """
    let saved = fixture.path("chat.jsonl")
    func size() -> Int { (try? Data(contentsOf: URL(fileURLWithPath: saved)).count) ?? 0 }
    try await FakeLLM.with(rules: rules) { server in
      let first = try await fixture.toolhost(
        ["chat", "--no-tools", "--no-stream", "--save", saved, "-p", "first question"], server: server)
      #expect(first.status == 0, "\(first.allText)\nserver:\n\(server.log)")
      #expect(first.stdoutText == "First answer.\n")
      #expect(
        TemporaryFolder.permissions(saved) == 0o600,
        "a new transcript is \(String(describing: TemporaryFolder.permissions(saved)))")
      let afterFirst = size()

      let second = try await fixture.toolhost(
        ["chat", "--no-tools", "--no-stream", "--resume", saved, "-p", "second question"], server: server)
      #expect(second.status == 0, "\(second.allText)")
      #expect(second.stdoutText == "Second answer.\n")
      #expect(TemporaryFolder.permissions(saved) == 0o600)
      let afterSecond = size()
      #expect(afterSecond > afterFirst, "--resume did not save the conversation back")

      chmod(saved, 0o640)
      let third = try await fixture.toolhost(
        ["chat", "--no-tools", "--no-stream", "--resume", saved, "-p", "third question"], server: server)
      #expect(third.status == 0, "\(third.allText)")
      #expect(third.stdoutText == "Third answer.\n")
      #expect(
        TemporaryFolder.permissions(saved) == 0o640,
        "a 0640 transcript became \(String(describing: TemporaryFolder.permissions(saved)))")
      #expect(size() > afterSecond, "--resume did not save the conversation back")
    }
  }

  @Test func aTerminalAsksShowsWhatWouldRunAndRemembersAlways() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    // The model's arguments carry an escape sequence and a right-to-left override: the prompt shows them, never
    // obeys them.
    let rules = ApprovalFixture.appendNoteRules(text: "hi \\u001b[2J \\u202e")
    try await FakeLLM.with(rules: rules) { server in
      func onTerminal(answer: String, typeAhead: String? = nil, tools: String? = nil, _ prompt: String) async throws
        -> Subprocess.Output
      {
        let command = [
          try TestPackage.requireToolhostBinary(), "ask", "--plugins", tools ?? fixture.tools, "--base-url",
          server.baseURL, "--model", "cli-model", prompt,
        ]
        let typed = (after: "always (run it from now on)", text: answer)
        return try await Subprocess.runWithoutBlocking(
          executable: URL(fileURLWithPath: "/usr/bin/env"),
          arguments: typeAhead.map { Terminal.command(command, typeAhead: $0, answer: typed) }
            ?? Terminal.command(command, answer: typed),
          environment: fixture.environment, workingDirectory: fixture.work, timeout: 120
        ).finished()
      }
      let declined = try await onTerminal(answer: "n", "Note one")
      #expect(
        declined.stdoutText.contains("Run appendNote? [y]es, [n]o, always (run it from now on): "),
        "\(declined.allText)")
      #expect(
        declined.stdoutText.contains("appendNote from \(fixture.tools)/appender asks before it runs"),
        "\(declined.allText)")
      // What it may reach: its folder and the system, and the fixture's folder its manifest declares.
      #expect(
        declined.stdoutText.contains("  reaches: confined: no network; reads its folder, the system"),
        "\(declined.allText)")
      // The arguments are shown as JSON (ESC escaped as \u001B) with the bidi override made visible.
      #expect(declined.stdoutText.contains("<U+202E>"), "\(declined.allText)")
      #expect(
        !declined.stdoutText.contains("\u{1B}[2J") && !declined.stdoutText.contains("\u{202E}"), "\(declined.allText)")
      #expect(declined.stdoutText.contains("The note was not saved."), "\(declined.allText)")
      #expect(fixture.notesText == nil, "the tool ran although the user said no")

      // "a" alone is not "always": the call is refused and nothing is remembered.
      let short = try await onTerminal(answer: "a", "Note two")
      #expect(short.stdoutText.contains("The note was not saved."), "\(short.allText)")
      #expect(fixture.notesText == nil, "the tool ran on a bare 'a'")

      // A line typed while the model works is thrown away before the question, so it cannot answer it.
      let typedAhead = try await onTerminal(answer: "n", typeAhead: "always\n", "Note three")
      #expect(typedAhead.stdoutText.contains("The note was not saved."), "\(typedAhead.allText)")
      #expect(fixture.notesText == nil, "type-ahead answered the approval")
      let config = fixture.path(".config/toolhost/config.json")
      #expect(!FileManager.default.fileExists(atPath: config), "type-ahead was remembered")

      let always = try await onTerminal(answer: "always", "Note four")
      #expect(always.stdoutText.contains("The note is saved."), "\(always.allText)")
      #expect(fixture.notesText != nil)
      #expect(TemporaryFolder.permissions(config) == 0o600)
      let saved = try JSONValue.parse(String(contentsOfFile: config, encoding: .utf8))
      // Remembered for appendNote from that plugin folder, not for every tool of that name.
      #expect(saved["approvals"]?["tools"] == nil, "\(saved)")
      #expect(saved["approvals"]?["remembered"]?[0]?["tool"] == "appendNote", "\(saved)")
      #expect(
        saved["approvals"]?["remembered"]?[0]?["from"]?.stringValue == fixture.tools + "/appender", "\(saved)")

      // Remembered: the next conversation runs it without asking, even without a terminal.
      fixture.removeOutputs()
      let remembered = try await fixture.toolhost(
        ["ask", "--plugins", fixture.tools, "Note five"], server: server)
      #expect(remembered.stdoutText == "The note is saved.\n", "\(remembered.allText)")
      #expect(!remembered.allText.contains("always (run it from now on)"))

      // A tool of the same name from another plugin folder still asks.
      fixture.removeOutputs()
      try fixture.write("other/appender/toolhost.json", ApprovalFixture.manifest(tool: "appendNote", annotations: nil))
      try fixture.write(
        "other/appender/run", "#!/bin/sh\nprintf '%s\\n' \"$TOOLHOST_ARG_TEXT\" >> '\(fixture.notes)'\necho appended\n",
        mode: 0o755)
      let other = try await fixture.toolhost(["ask", "--plugins", fixture.path("other"), "Note six"], server: server)
      #expect(other.stdoutText == "The note was not saved.\n", "\(other.allText)")
      #expect(fixture.notesText == nil, "another folder's appendNote ran on the first one's \"always\"")
    }
  }
}

// MARK: - toolhost serve --mcp
