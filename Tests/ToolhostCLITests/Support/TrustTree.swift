// The fixture of the trust tests (TrustTests.swift, TrustOwnershipTests.swift): a temporary tree, its listings and
// manifests.
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The fixture

/// A temporary tree: `project/` (the working directory, whose `plugins` is the project folder), `config/`
/// (`$XDG_CONFIG_HOME`), `home/` (`$HOME`) and `home/markers/` (the plugins touch a file here when they run, as their
/// manifests' `"sandbox"` lets them: `~/markers`). Folders are
/// 0755, files 0644 and scripts 0755, whatever the umask. Removed at the end.
final class TrustTree {
  private let temp: TemporaryFolder
  let root: String
  let environment: [String: String]

  init() throws {
    let temp = TemporaryFolder(prefix: "toolhost-cli")
    self.temp = temp
    root = temp.path
    chmod(temp.path, 0o755)
    var env = ProcessInfo.processInfo.environment
    env["TOOLHOST_PLUGIN_PATH"] = nil
    env["XDG_CONFIG_HOME"] = root + "/config"
    env["HOME"] = root + "/home"
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    env["PATH"] = Hostile.Fixture.pathWithoutShims(env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
    environment = env
    for name in ["project", "config", "home", "home/markers"] { try folder(name) }
  }

  /// The absolute path of `relative` in the tree.
  func path(_ relative: String) -> String { relative.isEmpty ? root : root + "/" + relative }

  /// Makes a folder and the missing ones above it, each 0755.
  @discardableResult
  func folder(_ relative: String) throws -> String { try temp.folder(relative) }

  /// Writes a file (replacing it) with exactly this mode.
  @discardableResult
  func file(_ relative: String, _ text: String, mode: mode_t = 0o644) throws -> String {
    try temp.write(relative, text, mode: mode)
  }

  /// Writes an sh script, 0755.
  @discardableResult
  func script(_ relative: String, _ body: String) throws -> String {
    try file(relative, "#!/bin/sh\n" + body + "\n", mode: 0o755)
  }

  /// Writes `$XDG_CONFIG_HOME/toolhost/config.json`, 0600.
  func writeConfig(_ json: String) throws {
    try file("config/toolhost/config.json", json, mode: 0o600)
  }

  /// The permission bits of a file (not following a symbolic link), nil when it does not exist.
  func mode(_ relative: String) -> mode_t? { TemporaryFolder.permissions(path(relative)) }

  func exists(_ relative: String) -> Bool { mode(relative) != nil }

  // MARK: Markers

  /// A command that touches the marker `name`.
  func touch(_ name: String) -> String { "touch '\(path("home/markers/" + name))'" }

  /// The markers touched so far.
  var markers: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path("home/markers"))) ?? []).sorted()
  }

  func hasMarker(_ name: String) -> Bool { exists("home/markers/" + name) }

  func removeMarkers() {
    for name in markers { try? FileManager.default.removeItem(atPath: path("home/markers/" + name)) }
  }

  // MARK: Plugins

  /// A text plugin in `relative` (a plugin folder): tool `tool`, whose `run` touches the marker `marker` and
  /// prints `output`.
  func textPlugin(
    at relative: String, tool: String, marker: String, output: String,
    description: String = "A tool of the trust tests."
  ) throws {
    try file(relative + "/toolhost.json", TrustManifest.text(tool, description: description))
    try script(relative + "/run", "\(touch(marker))\necho '\(output)'")
  }

  /// An MCP server in `relative` (a plugin folder), named `clock`, with one tool `projectClock` that answers
  /// "tick"; its command touches the marker `clock` before it starts the server.
  func clockServer(at relative: String) throws {
    let server = try file(relative + "/server.py", TrustManifest.mcpServer)
    try file(relative + "/toolhost.json", TrustManifest.mcp(name: "clock"))
    try script(relative + "/run", "\(touch("clock"))\nexec python3 '\(server)'")
  }

  // MARK: Running toolhost

  /// Runs toolhost in `directory` (relative to the tree) with stdin `input`.
  func run(
    _ arguments: [String], in directory: String = "project", input: String = "", timeout: TimeInterval = 60
  ) throws -> Subprocess.Output {
    try ToolhostProcess.run(
      arguments, environment: environment, in: URL(fileURLWithPath: path(directory)), input: input, timeout: timeout)
  }

  /// Runs toolhost under a pseudo-terminal (stdin, stdout and stderr are the terminal; python3's pty module), so
  /// the output is what a terminal shows: stdout and stderr together, with `\r\n` line ends.
  func runInTerminal(_ arguments: [String], in directory: String = "project", timeout: TimeInterval = 60) throws
    -> Subprocess.Output
  {
    try Subprocess.run(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      arguments: Terminal.command([toolhostBinary.path] + arguments), environment: environment,
      workingDirectory: URL(fileURLWithPath: path(directory)), input: Data(), timeout: timeout)
  }

  /// `toolhost list --json ARGS`, parsed.
  func list(_ arguments: [String] = [], in directory: String = "project") throws -> TrustListing {
    let out = try run(["list", "--json"] + arguments, in: directory)
    guard out.status == 0, !out.timedOut, let json = try? JSONValue.parse(out.stdoutText) else {
      throw TestFailure(
        "list --json \(arguments.joined(separator: " ")): status \(out.status), stdout «\(out.stdoutText.prefix(800))», stderr «\(out.stderrText.prefix(800))»"
      )
    }
    return TrustListing(json: json, stderr: out.stderrText)
  }

  // MARK: Paths in output

  /// A path with its symbolic links resolved.
  func resolved(_ path: String) -> String {
    URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
  }

  /// Whether `text` names `path` (as given or resolved).
  func mentions(_ text: String, _ path: String) -> Bool {
    text.contains(path) || text.contains(resolved(path))
  }

  /// `text` without `path` (as given and resolved), to look at the rest of a line.
  func removing(_ path: String, from text: String) -> String {
    text.replacingOccurrences(of: path, with: "").replacingOccurrences(of: resolved(path), with: "")
  }
}

/// `toolhost list --json`: `{"folders", "tools", "diagnostics", "untrusted"?}`.
struct TrustListing {
  var json: JSONValue
  var stderr: String

  var tools: [JSONValue] { json["tools"]?.arrayValue ?? [] }
  var toolNames: [String] { tools.compactMap { $0["name"]?.stringValue } }
  func tool(_ name: String) -> JSONValue? { tools.first { $0["name"]?.stringValue == name } }
  var allDiagnostics: [JSONValue] { json["diagnostics"]?.arrayValue ?? [] }
  func diagnostics(_ kind: String) -> [JSONValue] { allDiagnostics.filter { $0["kind"]?.stringValue == kind } }
  var untrusted: [JSONValue] { json["untrusted"]?.arrayValue ?? [] }
  var summary: String { json.serialized() }

  /// A diagnostic's path and message.
  static func text(_ diagnostic: JSONValue) -> String {
    (diagnostic["path"]?.stringValue ?? "") + " " + (diagnostic["message"]?.stringValue ?? "")
  }

  static func isError(_ diagnostic: JSONValue) -> Bool { diagnostic["severity"]?.stringValue == "error" }
}

/// Manifests for the trust tests.
enum TrustManifest {
  /// A text plugin with one tool whose command is `command` (default `./run`).
  static func text(
    _ tool: String, description: String = "A tool of the trust tests.", properties: JSONValue = [:],
    annotations: JSONValue? = nil, env: [String] = [], command: String = "./run"
  ) -> String {
    var entry: JSONObject = [
      "name": .string(tool), "description": .string(description),
      "inputSchema": ["type": "object", "properties": properties],
    ]
    if let annotations { entry["annotations"] = annotations }
    var manifest: JSONObject = [
      "manifestVersion": 1, "command": .string(command), "output": "text", "tools": .array([.object(entry)]),
      "sandbox": ["write": ["~/markers"]],
    ]
    if !env.isEmpty { manifest["env"] = .array(env.map(JSONValue.string)) }
    return JSONValue.object(manifest).serialized()
  }

  /// An MCP server manifest whose command is `./run`.
  static func mcp(name: String) -> String {
    JSONValue.object([
      "manifestVersion": 1, "mcp": ["name": .string(name), "command": "./run", "startupTimeout": 20],
      "sandbox": ["write": ["~/markers"]],
    ]).serialized()
  }

  /// A minimal MCP stdio server (standard library only) with one tool, projectClock, that answers "tick".
  static let mcpServer = #"""
    import json, sys
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        id_ = message.get("id")
        if id_ is None:
            continue
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "clock", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "projectClock", "description": "Says tick.",
                                 "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "tick"}]}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}) + "\n")
        sys.stdout.flush()
    """#
}

/// Where a plugin folder tree is unsafe.
enum UnsafeSpot: String, CaseIterable, Sendable {
  case worldWritablePluginFolder, groupWritablePluginSubfolder, groupWritableManifest, worldWritableAncestor
  case groupWritableCommand

  /// The path (relative to the tree) made writable, and its new mode.
  var damage: (path: String, mode: mode_t) {
    switch self {
    case .worldWritablePluginFolder: return ("outer/plugs", 0o777)
    case .groupWritablePluginSubfolder: return ("outer/plugs/safe", 0o775)
    case .groupWritableManifest: return ("outer/plugs/safe/toolhost.json", 0o664)
    case .worldWritableAncestor: return ("outer", 0o777)
    case .groupWritableCommand: return ("outer/plugs/safe/run", 0o775)
    }
  }
}
