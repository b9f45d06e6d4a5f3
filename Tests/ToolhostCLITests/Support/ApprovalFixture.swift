// The scratch folder of the approval tests (ApprovalCLITests.swift, ServeApprovalTests.swift).
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
/// out/notes.txt) and reader (tool readNote, `readOnlyHint: true`, so it runs; appends a line to out/read.txt). Folders are
/// 0755 and files 0644 (scripts 0755) whatever the umask. The caller removes it (else it goes with the last copy).
struct ApprovalFixture: Sendable {
  let scratch = TemporaryFolder(prefix: "toolhost-session-tests")
  var work: URL { scratch.url }

  var tools: String { path("tools") }
  var notes: String { path("out/notes.txt") }
  var reads: String { path("out/read.txt") }
  var notesText: String? { try? String(contentsOfFile: notes, encoding: .utf8) }
  var readerRan: Bool { FileManager.default.fileExists(atPath: reads) }

  init() throws {
    chmod(scratch.path, 0o755)
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
    // It writes its note (or that it ran) in the fixture's `out`, beside the plugins' folder.
    return JSONValue.object([
      "manifestVersion": 1, "command": "./run", "output": "text", "tools": .array([.object(entry)]),
      "sandbox": ["write": ["../../out/"]],
    ]).serialized()
  }

  /// Writes a file (replacing it) with exactly this mode; missing folders are made 0755.
  func write(_ relative: String, _ text: String, mode: mode_t = 0o644) throws {
    try scratch.write(relative, text, mode: mode)
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

  /// toolhost's environment: a clean one (no colours, no terminal), HOME the scratch folder.
  var environment: [String: String] { fakeLLMEnvironment(home: work) }

  /// Runs toolhost in the scratch folder, stdin a pipe (not a terminal), against `server` when given.
  func toolhost(_ arguments: [String], server: FakeLLM? = nil) async throws -> Subprocess.Output {
    try await runToolhost(arguments, server: server, environment: environment, in: work)
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
