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

/// A scratch folder for one test: `$HOME` (so config.json is `HOME/.config/toolhost/config.json`) and a plugin folder
/// `tools` with two text plugins: appender (tool appendNote, no annotations, so it asks; appends its `text` to
/// notes.txt) and reader (tool readNote, `readOnlyHint: true`, so it runs; appends a line to read.txt). Folders are
/// 0755 and files 0644 (scripts 0755) whatever the umask. The caller removes it.
struct ApprovalFixture: Sendable {
  let work: URL

  var tools: String { path("tools") }
  var notes: String { path("notes.txt") }
  var reads: String { path("read.txt") }
  var notesText: String? { try? String(contentsOfFile: notes, encoding: .utf8) }
  var readerRan: Bool { FileManager.default.fileExists(atPath: reads) }

  init() throws {
    work = try TemporaryFolder.make(prefix: "toolhost-session-tests")
    chmod(work.path, 0o755)
    try write("tools/appender/toolhost.json", Self.manifest(tool: "appendNote", annotations: nil))
    try write(
      "tools/appender/run", "#!/bin/sh\nprintf '%s\\n' \"$TOOLHOST_ARG_TEXT\" >> '\(notes)'\necho appended\n",
      mode: 0o755)
    try write("tools/reader/toolhost.json", Self.manifest(tool: "readNote", annotations: ["readOnlyHint": true]))
    try write("tools/reader/run", "#!/bin/sh\necho read >> '\(reads)'\necho 'nothing to read'\n", mode: 0o755)
  }

  func path(_ relative: String) -> String { work.path + "/" + relative }

  func remove() { try? FileManager.default.removeItem(at: work) }

  /// A text plugin manifest with one tool taking an optional string `text`.
  static func manifest(tool: String, annotations: JSONValue?) -> String {
    var entry: JSONObject = [
      "name": .string(tool), "description": "A tool of the approval tests.",
      "inputSchema": ["type": "object", "properties": ["text": ["type": "string"]]],
    ]
    if let annotations { entry["annotations"] = annotations }
    return JSONValue.object([
      "manifestVersion": 1, "command": "./run", "output": "text", "tools": .array([.object(entry)]),
    ]).serialized()
  }

  /// Writes a file (replacing it) with exactly this mode; missing folders are made 0755.
  func write(_ relative: String, _ text: String, mode: mode_t = 0o644) throws {
    var current = work.path
    for part in (relative as NSString).deletingLastPathComponent.split(separator: "/") {
      current += "/" + part
      if !FileManager.default.fileExists(atPath: current) {
        try FileManager.default.createDirectory(atPath: current, withIntermediateDirectories: false)
        chmod(current, 0o755)
      }
    }
    let full = path(relative)
    try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    chmod(full, mode)
  }

  /// fakellm rules: the first turn calls appendNote with `text` (YAML-escaped already), the second answers "The note
  /// is saved." when it ran and "The note was not saved." otherwise.
  static func appendNoteRules(text: String) -> String {
    """
    rules:
      - name: append
        when: {turn: 1}
        respond:
          tool_calls:
            - {name: appendNote, arguments: {text: "\(text)"}}
      - name: saved
        when: {turn: 2, tool_result_contains: "appended"}
        respond: {content: "The note is saved."}
      - name: not-saved
        when: {turn: 2}
        respond: {content: "The note was not saved."}
    """
  }

  /// Writes `HOME/.config/toolhost/config.json`, 0600.
  func writeConfig(_ json: String) throws {
    try write(".config/toolhost/config.json", json, mode: 0o600)
  }

  func removeOutputs() {
    try? FileManager.default.removeItem(atPath: notes)
    try? FileManager.default.removeItem(atPath: reads)
  }

  /// The permission bits of a file, nil when it does not exist.
  static func mode(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return mode_t(info.st_mode) & 0o7777
  }

  /// toolhost's environment: a clean one (no colours, no terminal), HOME the scratch folder.
  var environment: [String: String] {
    var environment = Subprocess.cleanEnvironment(home: work.path)
    environment["TOOLHOST_API_KEY"] = "cli-key"
    return environment
  }

  /// Runs toolhost in the scratch folder, stdin a file (not a terminal), against `server` when given.
  func toolhost(_ arguments: [String], server: FakeLLM? = nil) async throws -> TestEnvironment.Finished {
    var args = arguments
    if let server { args += ["--base-url", server.baseURL, "--model", "cli-model"] }
    return try await TestEnvironment.run(
      ["/usr/bin/env", "-C", work.path, try TestPackage.requireToolhostBinary()] + args, environment: environment,
      stdin: "",
      timeout: 120)
  }

  /// Runs `body` with `toolhost ARGUMENTS` (a `serve --mcp`) started and initialized; stops it afterwards, also when
  /// `body` throws.
  func withServe(_ arguments: [String], _ body: (MCPServeProcess) async throws -> Void) async throws {
    let server = try MCPServeProcess(
      binary: try TestPackage.requireToolhostBinary(), arguments: arguments, environment: environment,
      workingDirectory: work,
      logPath: path("serve-\(UUID().uuidString).log"))
    do {
      try await server.initialize()
      try await body(server)
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
  }

  /// Whether `mcp-server-time` (PyPI mcp-server-time, plugins/time-mcp) is on PATH.
  static let hasTimeServer = TestPackage.which("mcp-server-time") != nil

  /// plugins/time-mcp's manifest with `mcp.approvals` replaced by `approvals` (left out when `nil`).
  static func timeManifest(approvals: JSONValue?) throws -> String {
    let shipped = try JSONValue.parse(
      String(contentsOf: TestPackage.plugins.appendingPathComponent("time-mcp/toolhost.json"), encoding: .utf8))
    guard var manifest = shipped.objectValue, var server = manifest["mcp"]?.objectValue else {
      throw TestFailure("plugins/time-mcp/toolhost.json has no \"mcp\" object: \(shipped)")
    }
    server["approvals"] = approvals
    manifest["mcp"] = .object(server)
    return JSONValue.object(manifest).serialized()
  }
}

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
      #expect(refused.status == 0, "\(refused.output)\nserver:\n\(server.log)")
      #expect(refused.stdout == "The note was not saved.\n", "\(refused.output)")
      #expect(refused.stderr.contains("--yes"), "the refusal does not name --yes: \(refused.stderr)")
      #expect(fixture.notesText == nil, "appendNote ran without approval")

      let allowed = try await fixture.toolhost(
        ["ask", "--yes", "--plugins", fixture.tools, "Note two: hello"], server: server)
      #expect(allowed.status == 0, "\(allowed.output)")
      #expect(allowed.stdout == "The note is saved.\n", "\(allowed.output)")
      #expect(fixture.notesText == "hello\n", "notes: \(fixture.notesText ?? "none")")
    }
    // toolhost call is the user's own: it never asks.
    fixture.removeOutputs()
    let call = try await fixture.toolhost(["call", "--plugins", fixture.tools, "appendNote", "--text", "by hand"])
    #expect(call.status == 0, "\(call.output)")
    #expect(fixture.notesText == "by hand\n", "notes: \(fixture.notesText ?? "none")")
  }

  @Test func aReadOnlyToolRunsWithoutYes() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await FakeLLM.with(rules: Self.rules) { server in
      let result = try await fixture.toolhost(
        ["ask", "--plugins", fixture.tools, "PLEASE-READ my notes"], server: server)
      #expect(result.status == 0, "\(result.output)\nserver:\n\(server.log)")
      #expect(result.stdout == "Nothing to read.\n", "\(result.output)")
      #expect(fixture.readerRan, "readNote (readOnlyHint) did not run")
      #expect(!result.stderr.contains("refused"), "\(result.stderr)")
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
      #expect(result.status == 0, "\(result.output)\nserver:\n\(server.log)")
      if rule.runs {
        #expect(result.stdout == "The note is saved.\n", "\(result.output)")
        #expect(fixture.notesText == "hello\n", "notes: \(fixture.notesText ?? "none")")
      } else {
        #expect(result.stdout == "The note was not saved.\n", "\(result.output)")
        #expect(fixture.notesText == nil, "appendNote ran")
        if rule.config.contains("deny") {
          // A denied tool is not even offered: the model's request lists no appendNote, and its call of it is an
          // unknown tool.
          let offered = try server.requests().first?["tools"] as? [[String: Any]] ?? []
          let names = offered.compactMap { ($0["function"] as? [String: Any])?["name"] as? String }
          #expect(!names.contains("appendNote"), "a denied tool was offered: \(names)")
          #expect(names.contains("readNote"), "\(names)")
        } else {
          #expect(result.stderr.contains("--yes"), "the refusal does not say why: \(result.stderr)")
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
      #expect(refused.status == 0, "\(refused.output)\nserver:\n\(server.log)")
      #expect(refused.stdout == "It did not run.\n", "\(refused.output)")
      #expect(refused.stderr.contains("--yes"), "\(refused.stderr)")

      let allowed = try await fixture.toolhost(
        ["ask", "--yes", "--plugins", plugins, "What time is it? (2)"], server: server)
      #expect(allowed.stdout == "It ran.\n", "\(allowed.output)")

      // A plugin rule names the folder, not the name the manifest gives its server ("time"): a manifest cannot
      // claim another plugin's rule by naming its server after it.
      try fixture.writeConfig(#"{"approvals": {"plugins": {"time": "auto"}}}"#)
      let claimed = try await fixture.toolhost(["ask", "--plugins", plugins, "What time is it? (3)"], server: server)
      #expect(claimed.stdout == "It did not run.\n", "\(claimed.output)")

      try fixture.writeConfig(#"{"approvals": {"plugins": {"time-mcp": "auto"}}}"#)
      let auto = try await fixture.toolhost(["ask", "--plugins", plugins, "What time is it? (4)"], server: server)
      #expect(auto.stdout == "It ran.\n", "\(auto.output)")
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
    #expect(trust.status == 0, "\(trust.output)")
    #expect(
      trust.stdout.contains(
        "tool get_current_time (when the server lists it): runs without asking when a model calls "
          + "it (declared by the trusted manifest"), "\(trust.output)")
    try await FakeLLM.with(rules: Self.timeRules) { server in
      let now = try await fixture.toolhost(["ask", "What time is it in Tokyo? (1)"], server: server)
      #expect(now.status == 0, "\(now.output)\nserver:\n\(server.log)")
      #expect(now.stdout == "It ran.\n", "\(now.output)")
      #expect(!now.stderr.contains("needs approval"), "\(now.stderr)")
      let convert = try await fixture.toolhost(["ask", "CONVERT noon UTC to Tokyo time (2)"], server: server)
      #expect(convert.stdout == "It ran.\n", "\(convert.output)")

      // A manifest that declares get_current_time only: convert_time asks, so without a terminal it is refused.
      try fixture.write(
        "partial/time-mcp/toolhost.json", try ApprovalFixture.timeManifest(approvals: ["get_current_time": "auto"]))
      let partial = fixture.path("partial")
      let declared = try await fixture.toolhost(
        ["ask", "--plugins", partial, "What time is it in Tokyo? (3)"], server: server)
      #expect(declared.stdout == "It ran.\n", "\(declared.output)")
      let undeclared = try await fixture.toolhost(
        ["ask", "--plugins", partial, "CONVERT noon UTC to Tokyo time (4)"], server: server)
      #expect(undeclared.status == 0, "\(undeclared.output)")
      #expect(undeclared.stdout == "It did not run.\n", "\(undeclared.output)")
      #expect(
        undeclared.stderr.contains("convert_time needs approval and there is no terminal to ask on"),
        "\(undeclared.stderr)")

      // The user's own rules win over the declaration: ask asks (refused here), deny is never offered.
      try fixture.writeConfig(#"{"approvals": {"tools": {"get_current_time": "ask"}}}"#)
      let ask = try await fixture.toolhost(["ask", "What time is it in Tokyo? (5)"], server: server)
      #expect(ask.stdout == "It did not run.\n", "\(ask.output)")
      #expect(ask.stderr.contains("get_current_time needs approval"), "\(ask.stderr)")
      try fixture.writeConfig(#"{"approvals": {"plugins": {"time-mcp": "deny"}}}"#)
      let deny = try await fixture.toolhost(["ask", "What time is it in Tokyo? (6)"], server: server)
      #expect(deny.stdout == "It did not run.\n", "\(deny.output)")
      let offered = try server.requests().last?["tools"] as? [[String: Any]] ?? []
      #expect(!offered.contains { ($0["function"] as? [String: Any])?["name"] as? String == "get_current_time" })
      try fixture.writeConfig("{}")

      // A changed manifest is not the one the user pinned: not loaded, so nothing it declares counts.
      try fixture.write("plugins/time-mcp/toolhost.json", shipped.replacingOccurrences(of: "\"UTC\"", with: "\"UTC\" "))
      let changed = try await fixture.toolhost(["ask", "What time is it in Tokyo? (7)"], server: server)
      #expect(changed.stdout == "It did not run.\n", "\(changed.output)")
      #expect(changed.stderr.contains("broken plugin left out"), "\(changed.stderr)")
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
      #expect(first.status == 0, "\(first.output)\nserver:\n\(server.log)")
      #expect(first.stdout == "First answer.\n")
      #expect(
        ApprovalFixture.mode(saved) == 0o600, "a new transcript is \(String(describing: ApprovalFixture.mode(saved)))")
      let afterFirst = size()

      let second = try await fixture.toolhost(
        ["chat", "--no-tools", "--no-stream", "--resume", saved, "-p", "second question"], server: server)
      #expect(second.status == 0, "\(second.output)")
      #expect(second.stdout == "Second answer.\n")
      #expect(ApprovalFixture.mode(saved) == 0o600)
      let afterSecond = size()
      #expect(afterSecond > afterFirst, "--resume did not save the conversation back")

      chmod(saved, 0o640)
      let third = try await fixture.toolhost(
        ["chat", "--no-tools", "--no-stream", "--resume", saved, "-p", "third question"], server: server)
      #expect(third.status == 0, "\(third.output)")
      #expect(third.stdout == "Third answer.\n")
      #expect(
        ApprovalFixture.mode(saved) == 0o640,
        "a 0640 transcript became \(String(describing: ApprovalFixture.mode(saved)))")
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
        -> TestEnvironment.Finished
      {
        let command = [
          try TestPackage.requireToolhostBinary(), "ask", "--plugins", tools ?? fixture.tools, "--base-url",
          server.baseURL, "--model", "cli-model", prompt,
        ]
        let typed = (after: "or always (run it from now on): ", text: answer)
        return try await TestEnvironment.run(
          ["/usr/bin/env", "-C", fixture.work.path]
            + (typeAhead.map { Terminal.command(command, typeAhead: $0, answer: typed) }
              ?? Terminal.command(command, answer: typed)),
          environment: fixture.environment, stdin: "", timeout: 120)
      }
      let declined = try await onTerminal(answer: "n", "Note one")
      #expect(declined.stdout.contains("Run appendNote? [y]es, [n]o, or always"), "\(declined.output)")
      #expect(
        declined.stdout.contains("appendNote from \(fixture.tools)/appender asks before it runs"), "\(declined.output)")
      // The arguments are shown as JSON (ESC escaped as \u001B) with the bidi override made visible.
      #expect(declined.stdout.contains("<U+202E>"), "\(declined.output)")
      #expect(!declined.stdout.contains("\u{1B}[2J") && !declined.stdout.contains("\u{202E}"), "\(declined.output)")
      #expect(declined.stdout.contains("The note was not saved."), "\(declined.output)")
      #expect(fixture.notesText == nil, "the tool ran although the user said no")

      // "a" alone is not "always": the call is refused and nothing is remembered.
      let short = try await onTerminal(answer: "a", "Note two")
      #expect(short.stdout.contains("The note was not saved."), "\(short.output)")
      #expect(fixture.notesText == nil, "the tool ran on a bare 'a'")

      // A line typed while the model works is thrown away before the question, so it cannot answer it.
      let typedAhead = try await onTerminal(answer: "n", typeAhead: "always\n", "Note three")
      #expect(typedAhead.stdout.contains("The note was not saved."), "\(typedAhead.output)")
      #expect(fixture.notesText == nil, "type-ahead answered the approval")
      let config = fixture.path(".config/toolhost/config.json")
      #expect(!FileManager.default.fileExists(atPath: config), "type-ahead was remembered")

      let always = try await onTerminal(answer: "always", "Note four")
      #expect(always.stdout.contains("The note is saved."), "\(always.output)")
      #expect(fixture.notesText != nil)
      #expect(ApprovalFixture.mode(config) == 0o600)
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
      #expect(remembered.stdout == "The note is saved.\n", "\(remembered.output)")
      #expect(!remembered.output.contains("or always"))

      // A tool of the same name from another plugin folder still asks.
      fixture.removeOutputs()
      try fixture.write("other/appender/toolhost.json", ApprovalFixture.manifest(tool: "appendNote", annotations: nil))
      try fixture.write(
        "other/appender/run", "#!/bin/sh\nprintf '%s\\n' \"$TOOLHOST_ARG_TEXT\" >> '\(fixture.notes)'\necho appended\n",
        mode: 0o755)
      let other = try await fixture.toolhost(["ask", "--plugins", fixture.path("other"), "Note six"], server: server)
      #expect(other.stdout == "The note was not saved.\n", "\(other.output)")
      #expect(fixture.notesText == nil, "another folder's appendNote ran on the first one's \"always\"")
    }
  }

  @Test func theModelIsToldOnlyThatTheUserDidNotApprove() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    let rules = ApprovalFixture.appendNoteRules(text: "hello")
    try await FakeLLM.with(rules: rules) { server in
      let refused = try await fixture.toolhost(["ask", "--plugins", fixture.tools, "Note it"], server: server)
      #expect(refused.status == 0, "\(refused.output)\nserver:\n\(server.log)")
      // The user is told how to allow it ...
      #expect(refused.stderr.contains("--yes") && refused.stderr.contains("config.json"), "\(refused.stderr)")
      // ... the model only that the user did not approve.
      let requests = try server.requests()
      let toolMessages = requests.last.flatMap { $0["messages"] as? [[String: Any]] }?.filter {
        $0["role"] as? String == "tool"
      }
      let told = toolMessages?.compactMap { $0["content"] as? String }.joined() ?? ""
      #expect(told.contains("the user has not approved running appendNote"), "\(told)")
      #expect(!told.contains("config.json") && !told.contains("\"auto\"") && !told.contains("--yes"), "\(told)")
    }
  }
}

// MARK: - toolhost serve --mcp

@Suite("approvals: toolhost serve --mcp")
struct ServeApprovalTests {
  /// The text of an MCP tool result.
  static func text(_ result: JSONValue) -> String { result["content"]?[0]?["text"]?.stringValue ?? result.serialized() }

  @Test func askModeToolsAreWithheldWithoutYes() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await fixture.withServe(["serve", "--mcp", "--plugins", fixture.tools]) { server in
      let names = try await server.toolNames(id: 1)
      #expect(names.contains("readNote"), "\(names); log: \(server.log)")
      #expect(!names.contains("appendNote"), "an ask-mode tool is listed: \(names)")

      let refused = try await server.call(id: 2, "appendNote", ["text": "hello"])
      #expect(refused["isError"] == true, "\(refused.serialized())")
      // The client is told only that the user did not approve; the user is told how (on the server's stderr).
      #expect(Self.text(refused).contains("has not approved appendNote"), "\(Self.text(refused))")
      #expect(!Self.text(refused).contains("config.json") && !Self.text(refused).contains("--yes"))
      #expect(server.log.contains("serve --mcp --yes serves the ones that ask"), "\(server.log)")
      #expect(fixture.notesText == nil, "appendNote ran without approval")

      let read = try await server.call(id: 3, "readNote", [:])
      #expect(read["isError"] != true, "\(read.serialized()); log: \(server.log)")
      #expect(fixture.readerRan, "readNote did not run")
    }
  }

  @Test func yesServesAskModeTools() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await fixture.withServe(["serve", "--mcp", "--yes", "--plugins", fixture.tools]) { server in
      let names = try await server.toolNames(id: 1)
      #expect(names.contains("appendNote") && names.contains("readNote"), "\(names); log: \(server.log)")
      let result = try await server.call(id: 2, "appendNote", ["text": "hello"])
      #expect(result["isError"] != true, "\(result.serialized()); log: \(server.log)")
      #expect(fixture.notesText == "hello\n", "notes: \(fixture.notesText ?? "none")")
    }
  }

  @Test func denyToolsAreNeverServed() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try fixture.writeConfig(#"{"approvals": {"tools": {"appendNote": "deny"}}}"#)
    try await fixture.withServe(["serve", "--mcp", "--yes", "--plugins", fixture.tools]) { server in
      let names = try await server.toolNames(id: 1)
      #expect(names.contains("readNote"), "\(names); log: \(server.log)")
      #expect(!names.contains("appendNote"), "a deny tool is listed: \(names)")
      let refused = try await server.call(id: 2, "appendNote", ["text": "hello"])
      #expect(refused["isError"] == true, "\(refused.serialized())")
      #expect(fixture.notesText == nil, "a deny tool ran")
    }
  }
}
