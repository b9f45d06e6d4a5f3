/// Trust (issue 11), through the real binary: an untrusted `./plugins` runs nothing until `toolhost trust`, a changed
/// or added manifest is held back, the user's folder beats the project's, one value per `TOOLHOST_ARG_*` variable,
/// control characters made visible on a terminal, StrictModes-like ownership checks, manifests that are not small
/// regular files, requested secret environment variables, and an invalid config.json.
///
/// Every test builds its own tree in a temporary folder (a project folder, `$XDG_CONFIG_HOME`, a folder of marker
/// files the plugins touch when they run), with explicit modes whatever the umask, and removes it at the end.
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The fixture

/// A temporary tree: `project/` (the working directory, whose `plugins` is the project folder), `config/`
/// (`$XDG_CONFIG_HOME`), `home/` (`$HOME`) and `markers/` (the plugins touch a file here when they run). Folders are
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
    for name in ["project", "config", "home", "markers"] { try folder(name) }
  }

  /// The absolute path of `relative` in the tree.
  func path(_ relative: String) -> String { relative.isEmpty ? root : root + "/" + relative }

  /// Makes a folder and the missing ones above it, each 0755.
  @discardableResult
  func folder(_ relative: String) throws -> String {
    var current = root
    for part in relative.split(separator: "/") {
      current += "/" + part
      var isDirectory: ObjCBool = false
      if !FileManager.default.fileExists(atPath: current, isDirectory: &isDirectory) {
        try FileManager.default.createDirectory(atPath: current, withIntermediateDirectories: false)
        chmod(current, 0o755)
      }
    }
    return current
  }

  /// Writes a file (replacing it) with exactly this mode.
  @discardableResult
  func file(_ relative: String, _ text: String, mode: mode_t = 0o644) throws -> String {
    try folder((relative as NSString).deletingLastPathComponent)
    let full = path(relative)
    try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    chmod(full, mode)
    return full
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
  func mode(_ relative: String) -> mode_t? {
    var info = stat()
    guard lstat(path(relative), &info) == 0 else { return nil }
    return info.st_mode & 0o7777
  }

  func exists(_ relative: String) -> Bool { mode(relative) != nil }

  // MARK: Markers

  /// A command that touches the marker `name`.
  func touch(_ name: String) -> String { "touch '\(path("markers/" + name))'" }

  /// The markers touched so far.
  var markers: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path("markers"))) ?? []).sorted() }

  func hasMarker(_ name: String) -> Bool { exists("markers/" + name) }

  func removeMarkers() {
    for name in markers { try? FileManager.default.removeItem(atPath: path("markers/" + name)) }
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
    try Subprocess.run(
      executable: toolhostBinary, arguments: arguments, environment: environment,
      workingDirectory: URL(fileURLWithPath: path(directory)), input: Data(input.utf8), timeout: timeout)
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
    ]
    if !env.isEmpty { manifest["env"] = .array(env.map(JSONValue.string)) }
    return JSONValue.object(manifest).serialized()
  }

  /// An MCP server manifest whose command is `./run`.
  static func mcp(name: String) -> String {
    JSONValue.object([
      "manifestVersion": 1, "mcp": ["name": .string(name), "command": "./run", "startupTimeout": 20],
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

// MARK: - The tests

// The tests block while the binary runs; on the main actor they keep Swift's two pool threads free for the async tests
// running beside them.
@MainActor
@Suite("trust", .serialized)
struct TrustTests {
  // MARK: 1. Folders and trust

  /// The project's plugins: a text plugin (projectEcho) and an MCP server (clock, tool projectClock).
  private func makeProject(_ tree: TrustTree) throws {
    try tree.textPlugin(at: "project/plugins/echo", tool: "projectEcho", marker: "echo", output: "project echo ran")
    try tree.clockServer(at: "project/plugins/clock")
  }

  @Test func anUntrustedProjectFolderRunsNothingUntilTrusted() throws {
    let tree = try TrustTree()
    try makeProject(tree)
    let plugins = tree.path("project/plugins")

    // Untrusted: every command says so in one line, and nothing of the folder runs.
    let commands: [(arguments: [String], input: String, status: Int32?)] = [
      (["list"], "", 0),
      (["list", "--json"], "", 0),
      (["describe", "projectEcho"], "", 64),
      (["doctor"], "", nil),
      (["call", "noSuchTool"], "", 64),
      (["call", "projectEcho"], "", 64),
      (["call", "projectClock"], "", 64),
      (["batch"], #"{"id": "a", "tool": "projectEcho", "arguments": {}}"# + "\n", nil),
      (["serve", "--mcp"], "", nil),
    ]
    for (arguments, input, status) in commands {
      let label = arguments.joined(separator: " ")
      let out = try tree.run(arguments, input: input)
      #expect(!out.timedOut, "\(label) did not finish")
      if let status {
        #expect(out.status == status, "\(label): status \(out.status), stderr: \(out.stderrText)")
      }
      #expect(
        out.stderrText.contains("not trusted") && out.stderrText.contains("toolhost trust"),
        "\(label) does not say ./plugins is not trusted: \(out.stderrText)")
      #expect(!out.stdoutText.contains("project echo ran"), "\(label): \(out.stdoutText)")
      #expect(tree.markers.isEmpty, "\(label) ran a plugin of the untrusted folder: \(tree.markers)")
    }
    let untrustedList = try tree.run(["list"])
    #expect(!untrustedList.stdoutText.contains("projectEcho"), "\(untrustedList.stdoutText)")
    let untrusted = try tree.list()
    #expect(!untrusted.toolNames.contains("projectEcho"))
    #expect(untrusted.untrusted.count == 1, "\(untrusted.summary)")
    #expect(untrusted.untrusted.first?["manifests"]?.integerValue == 2, "\(untrusted.summary)")
    let folder = untrusted.untrusted.first?["folder"]?.stringValue ?? ""
    #expect(tree.resolved(folder) == tree.resolved(plugins), "untrusted folder \(folder), expected \(plugins)")

    // toolhost trust shows the manifests, starts nothing and records the folder in a 0600 trust.json.
    let trust = try tree.run(["trust"])
    #expect(trust.status == 0, "\(trust.stdoutText)\(trust.stderrText)")
    #expect(trust.stdoutText.contains("echo/toolhost.json"), "\(trust.stdoutText)")
    #expect(trust.stdoutText.contains("clock/toolhost.json"), "\(trust.stdoutText)")
    #expect(trust.stdoutText.contains("projectEcho"), "\(trust.stdoutText)")
    #expect(tree.markers.isEmpty, "toolhost trust ran something: \(tree.markers)")
    #expect(
      tree.mode("config/toolhost/trust.json") == 0o600,
      "trust.json: mode \(String(describing: tree.mode("config/toolhost/trust.json")))")

    // Trusted: the tools load; list, describe and doctor start no server.
    let trusted = try tree.list()
    #expect(trusted.toolNames.contains("projectEcho"), "\(trusted.summary)")
    #expect(!trusted.stderr.contains("not trusted"), "\(trusted.stderr)")
    #expect(trusted.untrusted.isEmpty, "\(trusted.summary)")
    #expect(trusted.allDiagnostics.filter(TrustListing.isError).isEmpty, "\(trusted.summary)")
    #expect(!trusted.diagnostics("not_started").isEmpty, "no not_started note for the MCP server: \(trusted.summary)")
    let describe = try tree.run(["describe", "projectEcho"])
    #expect(describe.status == 0, "\(describe.stderrText)")
    #expect(describe.stdoutText.contains("A tool of the trust tests."), "\(describe.stdoutText)")
    #expect(try tree.run(["doctor"]).status == 0)
    #expect(tree.markers.isEmpty, "list, describe or doctor ran something: \(tree.markers)")

    // --start-servers starts the server and lists its tool.
    let started = try tree.list(["--start-servers"])
    #expect(tree.hasMarker("clock"), "list --start-servers did not start the server")
    #expect(started.toolNames.contains("projectClock"), "\(started.summary)")
    tree.removeMarkers()

    // Calls: a plain plugin's tool starts no server; a name no plain plugin has starts the servers to find it.
    let echo = try tree.run(["call", "projectEcho"])
    #expect(echo.status == 0, "\(echo.stderrText)")
    #expect(echo.stdoutText.contains("project echo ran"), "\(echo.stdoutText)")
    #expect(tree.hasMarker("echo"))
    #expect(!tree.hasMarker("clock"), "calling a plain plugin's tool started the MCP server")
    let clock = try tree.run(["call", "projectClock"])
    #expect(clock.status == 0, "\(clock.stderrText)")
    #expect(clock.stdoutText.contains("tick"), "\(clock.stdoutText)")
    #expect(tree.hasMarker("clock"))
    tree.removeMarkers()

    // trust --list: the folder, its two manifests, ok.
    let listed = try tree.run(["trust", "--list"])
    #expect(listed.status == 0, "\(listed.stderrText)")
    let line = listed.stdoutText.split(separator: "\n").map(String.init).first { tree.mentions($0, plugins) }
    let rest = line.map { tree.removing(plugins, from: $0) } ?? ""
    #expect(line != nil, "trust --list does not show \(plugins): \(listed.stdoutText)")
    #expect(rest.contains("ok") && rest.contains("2"), "trust --list: \(listed.stdoutText)")

    // A manifest changed since trusting is held back; the others still load.
    try tree.file(
      "project/plugins/echo/toolhost.json", TrustManifest.text("projectEcho", description: "Changed after trusting."))
    let changed = try tree.list()
    #expect(!changed.toolNames.contains("projectEcho"), "\(changed.summary)")
    let changedNotes = changed.diagnostics("untrusted")
    #expect(changedNotes.count == 1, "\(changed.summary)")
    if let note = changedNotes.first {
      let text = TrustListing.text(note)
      #expect(TrustListing.isError(note), "\(note.serialized())")
      #expect(text.contains("echo/toolhost.json"), "\(text)")
      #expect(text.contains("changed since"), "\(text)")
      #expect(text.contains("toolhost trust"), "\(text)")
    }
    #expect(
      !changed.diagnostics("not_started").isEmpty, "the MCP server's manifest should still load: \(changed.summary)")
    #expect(try tree.run(["doctor"]).status == 1)
    let changedCall = try tree.run(["call", "projectEcho"])
    #expect(changedCall.status != 0)
    #expect(!tree.hasMarker("echo"), "the changed manifest's plugin ran")
    let changedList = try tree.run(["trust", "--list"])
    #expect(changedList.stdoutText.contains("changed"), "\(changedList.stdoutText)")

    // A manifest added since trusting is held back too.
    try tree.file("project/plugins/added.toolhost.json", TrustManifest.text("projectAdded", command: "./added.sh"))
    try tree.script("project/plugins/added.sh", "\(tree.touch("added"))\necho added")
    let added = try tree.list()
    #expect(!added.toolNames.contains("projectAdded"), "\(added.summary)")
    let addedNotes = added.diagnostics("untrusted").filter { TrustListing.text($0).contains("added.toolhost.json") }
    #expect(addedNotes.count == 1, "\(added.summary)")
    if let note = addedNotes.first {
      #expect(TrustListing.isError(note))
      #expect(TrustListing.text(note).contains("added since"), "\(TrustListing.text(note))")
    }
    #expect(try tree.run(["call", "projectAdded"]).status != 0)
    // (The call looked for the name in the trusted MCP server too, so "clock" may have run: that is trusted.)
    #expect(!tree.hasMarker("added"), "a manifest added since trusting ran: \(tree.markers)")

    // Trusting again takes the changes; trust.json stays 0600.
    let again = try tree.run(["trust"])
    #expect(again.status == 0, "\(again.stdoutText)\(again.stderrText)")
    #expect(tree.mode("config/toolhost/trust.json") == 0o600)
    let retrusted = try tree.list()
    #expect(retrusted.toolNames.contains("projectEcho") && retrusted.toolNames.contains("projectAdded"))
    #expect(retrusted.diagnostics("untrusted").isEmpty, "\(retrusted.summary)")

    // Revoking makes the folder untrusted again; revoking twice is a usage error.
    let revoke = try tree.run(["trust", "--revoke"])
    #expect(revoke.status == 0, "\(revoke.stdoutText)\(revoke.stderrText)")
    let revoked = try tree.run(["list"])
    #expect(revoked.stderrText.contains("not trusted"), "\(revoked.stderrText)")
    #expect(!revoked.stdoutText.contains("projectEcho"), "\(revoked.stdoutText)")
    let revokedCall = try tree.run(["call", "projectEcho"])
    #expect(revokedCall.status == 64)
    #expect(!tree.hasMarker("echo"))
    let afterList = try tree.run(["trust", "--list"])
    #expect(!tree.mentions(afterList.stdoutText, plugins), "\(afterList.stdoutText)")
    let twice = try tree.run(["trust", "--revoke"])
    #expect(twice.status == 64, "\(twice.stdoutText)\(twice.stderrText)")
    #expect(twice.stderrText.contains("not trusted"), "\(twice.stderrText)")
  }

  @Test func trustNeedsManifestsAndSafeFolders() throws {
    let tree = try TrustTree()
    let empty = try tree.folder("project/empty")
    let none = try tree.run(["trust", empty])
    #expect(none.status == 64, "\(none.stdoutText)\(none.stderrText)")
    #expect(none.stderrText.contains("no plugins"), "\(none.stderrText)")

    try tree.textPlugin(at: "project/plugins/echo", tool: "projectEcho", marker: "echo", output: "project echo ran")
    chmod(tree.path("project/plugins"), 0o777)
    let unsafe = try tree.run(["trust"])
    #expect(unsafe.status == 1, "\(unsafe.stdoutText)\(unsafe.stderrText)")
    #expect((unsafe.stdoutText + unsafe.stderrText).contains("chmod"), "\(unsafe.stdoutText)\(unsafe.stderrText)")
    let listed = try tree.run(["trust", "--list"])
    #expect(!tree.mentions(listed.stdoutText, tree.path("project/plugins")), "\(listed.stdoutText)")
    #expect(tree.markers.isEmpty)

    let revoke = try tree.run(["trust", "--revoke", tree.path("project/plugins")])
    #expect(revoke.status == 64, "\(revoke.stdoutText)\(revoke.stderrText)")
    #expect(revoke.stderrText.contains("not trusted"), "\(revoke.stderrText)")
  }

  @Test func listDescribeAndDoctorStartNoServersWithoutStartServers() throws {
    let tree = try TrustTree()
    try tree.clockServer(at: "servers/clock")
    let servers = tree.path("servers")
    for arguments in [["list"], ["list", "--json"], ["describe", "projectClock"], ["doctor"]] {
      let out = try tree.run(arguments + ["--plugins", servers])
      let label = arguments.joined(separator: " ")
      #expect(!out.timedOut, "\(label) did not finish")
      #expect(!tree.hasMarker("clock"), "\(label) started the MCP server")
    }
    let listing = try tree.list(["--plugins", servers])
    #expect(!tree.hasMarker("clock"))
    let notes = listing.diagnostics("not_started")
    #expect(notes.count == 1, "\(listing.summary)")
    if let note = notes.first {
      #expect(!TrustListing.isError(note), "\(note.serialized())")
      #expect(TrustListing.text(note).contains("--start-servers"), "\(TrustListing.text(note))")
    }
    let started = try tree.list(["--plugins", servers, "--start-servers"])
    #expect(tree.hasMarker("clock"), "list --start-servers did not start the server")
    #expect(started.toolNames.contains("projectClock"), "\(started.summary)")
    #expect(started.diagnostics("not_started").isEmpty, "\(started.summary)")
  }

  @Test func theUserFolderBeatsTheProjectFolder() throws {
    let tree = try TrustTree()
    try tree.textPlugin(
      at: "project/plugins/dup", tool: "dupTool", marker: "project", output: "from the project folder")
    try tree.textPlugin(
      at: "config/toolhost/plugins/dup", tool: "dupTool", marker: "user", output: "from the user folder")
    let trust = try tree.run(["trust"])
    #expect(trust.status == 0, "\(trust.stdoutText)\(trust.stderrText)")

    let call = try tree.run(["call", "dupTool"])
    #expect(call.status == 0, "\(call.stderrText)")
    #expect(call.stdoutText.contains("from the user folder"), "\(call.stdoutText)")
    #expect(!call.stdoutText.contains("from the project folder"), "\(call.stdoutText)")
    #expect(call.stderrText.contains("shadows"), "no note that the tool shadows another: \(call.stderrText)")
    #expect(tree.hasMarker("user") && !tree.hasMarker("project"), "\(tree.markers)")

    let listing = try tree.list()
    let manifest = listing.tool("dupTool")?["manifest"]?.stringValue ?? ""
    #expect(tree.mentions(manifest, tree.path("config/toolhost/plugins")), "dupTool comes from \(manifest)")
    #expect(!listing.diagnostics("shadowed").isEmpty, "\(listing.summary)")
  }

  // MARK: 2. One value per variable

  @Test func twoArgumentsForOneVariableAreInvalid() throws {
    let tree = try TrustTree()
    let properties: JSONValue = ["path": ["type": "string"]]
    try tree.file(
      "plugins/dump/toolhost.json",
      TrustManifest.text("envDump", properties: properties, annotations: ["readOnlyHint": true]))
    try tree.script("plugins/dump/run", "\(tree.touch("dump"))\nenv | grep '^TOOLHOST_ARG_' | sort\necho ---\ncat")
    let plugins = tree.path("plugins")

    let clash = try tree.run(["call", "--plugins", plugins, "envDump", "--json", #"{"path": "safe", "Path": "x"}"#])
    #expect(clash.status == 64, "\(clash.stdoutText)\(clash.stderrText)")
    #expect(clash.stderrText.contains("TOOLHOST_ARG_PATH"), "\(clash.stderrText)")
    #expect(clash.stderrText.contains("Path"), "\(clash.stderrText)")
    #expect(!tree.hasMarker("dump"), "the plugin ran with two values for TOOLHOST_ARG_PATH")

    let clashJSON = try tree.run([
      "call", "--json", "--plugins", plugins, "envDump", "--json", #"{"path": "safe", "Path": "x"}"#,
    ])
    #expect(clashJSON.status == 64)
    let error = try? JSONValue.parse(clashJSON.stdoutText)
    #expect(error?["error"]?["code"]?.stringValue == "invalid_arguments", "\(clashJSON.stdoutText)")
    #expect(!tree.hasMarker("dump"))

    // An undeclared property reaches the plugin on stdin only.
    let extra = try tree.run(["call", "--plugins", plugins, "envDump", "--json", #"{"path": "a", "extra": "b"}"#])
    #expect(extra.status == 0, "\(extra.stderrText)")
    #expect(extra.stdoutText.contains("TOOLHOST_ARG_PATH=a"), "\(extra.stdoutText)")
    #expect(!extra.stdoutText.contains("TOOLHOST_ARG_EXTRA"), "\(extra.stdoutText)")
    #expect(extra.stdoutText.contains(#""extra":"b""#), "stdin lost the undeclared argument: \(extra.stdoutText)")
    tree.removeMarkers()

    // batch: the clashing line fails with invalid_arguments, the other runs.
    let batch = try tree.run(
      ["batch", "--plugins", plugins],
      input: #"""
        {"id": "clash", "tool": "envDump", "arguments": {"path": "safe", "Path": "x"}}
        {"id": "fine", "tool": "envDump", "arguments": {"path": "b"}}

        """#)
    #expect(batch.status == 1, "\(batch.stderrText)")
    let lines = batch.stdoutText.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    #expect(lines.count == 2, "\(batch.stdoutText)")
    let clashLine = lines.first { $0["id"]?.stringValue == "clash" }
    #expect(clashLine?["ok"] == false, "\(batch.stdoutText)")
    #expect(clashLine?["error"]?["code"]?.stringValue == "invalid_arguments", "\(batch.stdoutText)")
    #expect(clashLine?["error"]?["message"]?.stringValue?.contains("TOOLHOST_ARG_PATH") == true)
    let fineLine = lines.first { $0["id"]?.stringValue == "fine" }
    #expect(fineLine?["ok"] == true, "\(batch.stdoutText)")
    #expect(fineLine?.serialized().contains("TOOLHOST_ARG_PATH=b") == true, "\(batch.stdoutText)")

    // serve --mcp: an error result, and the plugin does not run.
    tree.removeMarkers()
    let fixture = try Hostile.Fixture()
    let server = try Hostile.serve(plugins: plugins, fixture: fixture)
    defer { server.blockingStop() }
    try server.blockingInitialize()
    try server.sendCall(id: 1, "envDump", ["path": "safe", "Path": "x"])
    let response = server.blockingResponse(to: 1, within: 30)
    #expect(response?["result"]?["isError"] == true, "\(response?.serialized() ?? "no answer; \(server.log)")")
    let text = response?["result"]?["content"]?[0]?["text"]?.stringValue ?? ""
    #expect(text.contains("TOOLHOST_ARG_PATH"), "\(text)")
    #expect(!tree.hasMarker("dump"), "serve --mcp ran the plugin with two values for TOOLHOST_ARG_PATH")
  }

  // MARK: 4. Terminal-safe output

  @Test func controlCharactersAreVisibleOnATerminal() throws {
    let tree = try TrustTree()
    try tree.file(
      "plugins/shout/toolhost.json",
      TrustManifest.text("shout", description: "Prints \u{1B}[31mred\u{1B}[0m text."))
    try tree.script("plugins/shout/run", #"printf '\033]0;pwned\007 hi \033[2J \342\200\256\n'"#)
    let plugins = tree.path("plugins")
    let exact = "\u{1B}]0;pwned\u{07} hi \u{1B}[2J \u{202E}"
    let visible = "^[]0;pwned^G hi ^[[2J <U+202E>"

    let terminal = try tree.runInTerminal(["call", "--plugins", plugins, "shout"])
    #expect(!terminal.timedOut)
    #expect(terminal.status == 0, "\(terminal.stdoutText)")
    #expect(terminal.stdoutText.contains(visible), "\(terminal.stdoutText.debugDescription)")
    #expect(!terminal.stdoutText.contains("\u{1B}]0;pwned"), "\(terminal.stdoutText.debugDescription)")
    #expect(!terminal.stdoutText.contains("\u{1B}[2J"), "\(terminal.stdoutText.debugDescription)")
    #expect(!terminal.stdoutText.contains("\u{202E}"), "\(terminal.stdoutText.debugDescription)")

    let raw = try tree.runInTerminal(["call", "--raw", "--plugins", plugins, "shout"])
    #expect(raw.status == 0, "\(raw.stdoutText)")
    #expect(raw.stdoutText.contains(exact), "--raw: \(raw.stdoutText.debugDescription)")

    let piped = try tree.run(["call", "--plugins", plugins, "shout"])
    #expect(piped.status == 0, "\(piped.stderrText)")
    #expect(piped.stdoutText.contains(exact), "a pipe: \(piped.stdoutText.debugDescription)")

    let describe = try tree.runInTerminal(["describe", "--plugins", plugins, "shout"])
    #expect(describe.status == 0, "\(describe.stdoutText)")
    #expect(describe.stdoutText.contains("^[[31mred^[[0m"), "\(describe.stdoutText.debugDescription)")
    #expect(!describe.stdoutText.contains("\u{1B}[31m"), "\(describe.stdoutText.debugDescription)")
    let list = try tree.runInTerminal(["list", "--plugins", plugins])
    #expect(list.stdoutText.contains("^[[31m"), "\(list.stdoutText.debugDescription)")
    #expect(!list.stdoutText.contains("\u{1B}[31m"), "\(list.stdoutText.debugDescription)")
    let rawDescribe = try tree.runInTerminal(["describe", "--raw", "--plugins", plugins, "shout"])
    #expect(rawDescribe.stdoutText.contains("\u{1B}[31mred"), "\(rawDescribe.stdoutText.debugDescription)")
    let pipedDescribe = try tree.run(["describe", "--plugins", plugins, "shout"])
    #expect(pipedDescribe.stdoutText.contains("\u{1B}[31mred"), "\(pipedDescribe.stdoutText.debugDescription)")
  }

  // MARK: 6. Ownership

  /// A tree with one plugin, safeTool, in `outer/plugs/safe`.
  private func safePlugin() throws -> TrustTree {
    let tree = try TrustTree()
    try tree.textPlugin(at: "outer/plugs/safe", tool: "safeTool", marker: "safe", output: "safe ran")
    return tree
  }

  /// Expects the plugin refused with an unsafe_permissions error naming `path` and `fix`, and `doctor` to fail; then
  /// with `"strictModes": false` the tool to load and run.
  private func expectRefused(_ tree: TrustTree, naming path: String, fix: String, _ label: String) throws {
    let plugins = tree.path("outer/plugs")
    let listing = try tree.list(["--plugins", plugins])
    #expect(!listing.toolNames.contains("safeTool"), "\(label): the tool loaded: \(listing.summary)")
    let unsafe = listing.diagnostics("unsafe_permissions")
    #expect(!unsafe.isEmpty, "\(label): no unsafe_permissions diagnostic: \(listing.summary)")
    #expect(unsafe.allSatisfy(TrustListing.isError), "\(label): \(listing.summary)")
    if let named = unsafe.first(where: { tree.mentions(TrustListing.text($0), path) }) {
      let text = TrustListing.text(named)
      #expect(text.contains(fix), "\(label): the message does not say \(fix): \(text)")
      #expect(text.contains("strictModes"), "\(label): the message does not mention strictModes: \(text)")
    } else {
      Issue.record("\(label): no unsafe_permissions diagnostic names \(path): \(listing.summary)")
    }
    let doctor = try tree.run(["doctor", "--plugins", plugins])
    #expect(doctor.status == 1, "\(label): doctor exited \(doctor.status)")
    let call = try tree.run(["call", "--plugins", plugins, "safeTool"])
    #expect(call.status != 0, "\(label): the refused tool ran")
    #expect(!tree.hasMarker("safe"), "\(label): the refused plugin ran")

    try tree.writeConfig(#"{"strictModes": false}"#)
    let relaxed = try tree.list(["--plugins", plugins])
    #expect(relaxed.toolNames.contains("safeTool"), "\(label), strictModes false: \(relaxed.summary)")
    #expect(
      !relaxed.diagnostics("unsafe_permissions").contains(where: TrustListing.isError),
      "\(label), strictModes false: \(relaxed.summary)")
    let ran = try tree.run(["call", "--plugins", plugins, "safeTool"])
    #expect(ran.status == 0, "\(label), strictModes false: \(ran.stderrText)")
    #expect(ran.stdoutText.contains("safe ran"))
  }

  @Test(arguments: UnsafeSpot.allCases)
  func writablePluginFilesAreRefused(_ spot: UnsafeSpot) throws {
    let tree = try safePlugin()
    let (relative, mode) = spot.damage
    chmod(tree.path(relative), mode)
    #expect(tree.mode(relative) == mode)
    try expectRefused(tree, naming: tree.path(relative), fix: "chmod", spot.rawValue)
  }

  @Test(.enabled(if: getuid() == 0, "only root can give a manifest to another user"))
  func aManifestOwnedBySomeoneElseIsRefused() throws {
    let tree = try safePlugin()
    let manifest = tree.path("outer/plugs/safe/toolhost.json")
    #expect(chown(manifest, 65534, 65534) == 0, "chown failed: errno \(errno)")
    try expectRefused(tree, naming: manifest, fix: "chown", "owned by uid 65534")
  }

  @Test func aStickyWorldWritableAncestorIsFine() throws {
    let tree = try safePlugin()
    chmod(tree.path("outer"), 0o1777)
    let listing = try tree.list(["--plugins", tree.path("outer/plugs")])
    #expect(listing.toolNames.contains("safeTool"), "\(listing.summary)")
    #expect(listing.diagnostics("unsafe_permissions").isEmpty, "\(listing.summary)")
  }

  @Test func manifestsThatAreNotSmallRegularFilesAreUnreadableAtOnce() throws {
    let tree = try safePlugin()
    try tree.folder("outer/plugs/zero")
    try FileManager.default.createSymbolicLink(
      atPath: tree.path("outer/plugs/zero/toolhost.json"), withDestinationPath: "/dev/zero")
    try tree.folder("outer/plugs/fifo")
    #expect(mkfifo(tree.path("outer/plugs/fifo/toolhost.json"), 0o644) == 0, "mkfifo failed: errno \(errno)")
    chmod(tree.path("outer/plugs/fifo/toolhost.json"), 0o644)
    try tree.file("outer/plugs/big/toolhost.json", "{" + String(repeating: " ", count: 2 << 20) + "}")
    let plugins = tree.path("outer/plugs")

    for arguments in [["list", "--json"], ["doctor"], ["describe", "safeTool"]] {
      let start = Date()
      let out = try tree.run(arguments + ["--plugins", plugins], timeout: 30)
      let seconds = Date().timeIntervalSince(start)
      let label = arguments.joined(separator: " ")
      #expect(!out.timedOut && seconds < 10, "\(label) took \(seconds) s")
      if arguments == ["doctor"] { #expect(out.status == 1, "doctor exited \(out.status)") }
      if arguments == ["describe", "safeTool"] { #expect(out.status == 0, "\(out.stderrText)") }
      guard arguments == ["list", "--json"] else { continue }
      guard let json = try? JSONValue.parse(out.stdoutText) else {
        Issue.record("list --json printed no JSON: \(out.stdoutText.prefix(500)) \(out.stderrText.prefix(500))")
        continue
      }
      let listing = TrustListing(json: json, stderr: out.stderrText)
      #expect(listing.toolNames.contains("safeTool"), "\(listing.summary)")
      for name in ["zero", "fifo", "big"] {
        let found = listing.allDiagnostics.filter { TrustListing.text($0).contains("/\(name)/toolhost.json") }
        #expect(
          found.contains { $0["kind"]?.stringValue == "unreadable" && TrustListing.isError($0) },
          "\(name): \(found.map { $0.serialized() })")
      }
    }
  }

  // MARK: 7. Requested environment

  @Test func requestedSecretsAreNotedUntilApproved() throws {
    let tree = try TrustTree()
    let requested = ["SSH_AUTH_SOCK", "MY_API_KEY", "LANGUAGE_HINT"]
    try tree.file("plugs/envplug/toolhost.json", TrustManifest.text("envTool", env: requested))
    try tree.script("plugs/envplug/run", "echo env")
    let plugins = tree.path("plugs")

    let describe = try tree.run(["describe", "--plugins", plugins, "envTool"])
    #expect(describe.status == 0, "\(describe.stderrText)")
    let environmentLine = describe.stdoutText.split(separator: "\n").first { $0.contains("environment:") }
    #expect(environmentLine != nil, "describe shows no environment line: \(describe.stdoutText)")
    for name in requested {
      #expect(environmentLine?.contains(name) == true, "\(name) is missing: \(describe.stdoutText)")
    }

    let listing = try tree.list(["--plugins", plugins])
    let environment = listing.tool("envTool")?["environment"]?.arrayValue?.compactMap(\.stringValue) ?? []
    #expect(environment.sorted() == requested.sorted(), "\(listing.summary)")
    let secrets = listing.diagnostics("secret_environment")
    #expect(secrets.count == 2, "\(listing.summary)")
    #expect(secrets.allSatisfy { !TrustListing.isError($0) }, "\(listing.summary)")
    for name in ["SSH_AUTH_SOCK", "MY_API_KEY"] {
      #expect(secrets.contains { TrustListing.text($0).contains(name) }, "no note for \(name): \(listing.summary)")
    }
    #expect(!secrets.contains { TrustListing.text($0).contains("LANGUAGE_HINT") }, "\(listing.summary)")
    let doctor = try tree.run(["doctor", "--plugins", plugins])
    #expect(doctor.status == 0, "notes must not fail doctor: \(doctor.stdoutText)\(doctor.stderrText)")
    #expect((doctor.stdoutText + doctor.stderrText).contains("MY_API_KEY"), "\(doctor.stdoutText)")

    try tree.writeConfig(#"{"environment": {"envplug": ["MY_API_KEY"]}}"#)
    let approved = try tree.list(["--plugins", plugins])
    let remaining = approved.diagnostics("secret_environment")
    #expect(remaining.count == 1, "\(approved.summary)")
    #expect(remaining.first.map { TrustListing.text($0).contains("SSH_AUTH_SOCK") } == true, "\(approved.summary)")
  }

  // MARK: Config

  @Test func anInvalidConfigFileIsAUsageError() throws {
    let tree = try TrustTree()
    try tree.textPlugin(at: "plugs/safe", tool: "safeTool", marker: "safe", output: "safe ran")
    let plugins = tree.path("plugs")
    let configs = [
      #"{"strictModes": tru"#,
      #"{"strictModes": "yes"}"#,
      #"{"approvals": {"tools": {"safeTool": "sometimes"}}}"#,
      #"["not", "an", "object"]"#,
    ]
    for config in configs {
      try tree.writeConfig(config)
      for arguments in [["list"], ["doctor"], ["call", "safeTool"]] {
        let out = try tree.run(arguments + ["--plugins", plugins])
        let label = "\(arguments.joined(separator: " ")) with \(config)"
        #expect(out.status == 64, "\(label): status \(out.status)")
        #expect(out.stderrText.contains("config.json"), "\(label): \(out.stderrText)")
      }
    }
    #expect(!tree.hasMarker("safe"), "a plugin ran despite an invalid config.json")
  }
}
