/// Plugins confined by default (issue 48), through the real binary: a hostile plugin (Escape/escape/escape.py) tries
/// to reach the network, the user's files, the project, /tmp and the host itself, one-shot, persistent and as an MCP
/// server, through `call`, `batch`, `serve --mcp` and `ask`. Every attempt must be blocked by default, and what a
/// manifest declares must be reachable.
import Foundation
import Testing
import ToolhostJSON
import ToolhostSystem
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The tree of the escape tests: `home/` (HOME, with `.ssh/id_ed25519`), `project/` (the working folder), `other/`
/// (another user's file), and the plugins: `plugins/escape` (no sandbox), `plugins/escape-persistent`,
/// `plugins/escape-mcp`, and `open/escape-open`, which declares the network, `~/.ssh`, `~/notes/` and the project.
final class EscapeTree {
  let temp = TemporaryFolder(prefix: "toolhost-escape")
  let listener: SilentListener
  /// A file in /tmp outside the plugin's own temporary folder.
  let tmpTarget = TemporaryFolder.uniquePath(prefix: "toolhost-escape-tmp")
  let marker = "toolhost-escape-marker-\(UUID().uuidString)"
  /// Another process of the user's, with the marker in its environment.
  let other: Process

  init() throws {
    listener = try SilentListener()
    other = Process()
    other.executableURL = URL(fileURLWithPath: "/bin/sleep")
    other.arguments = ["60"]
    other.environment = ["ESCAPE_MARKER": marker]
    try other.run()
    chmod(temp.path, 0o755)
    temp.write("home/.ssh/id_ed25519", "PRIVATE KEY")
    temp.write("project/README", "the project")
    let other = temp.write("other/secret", "another user's secret")
    chown(other, 65534, 65534)
    chmod(other, 0o600)
    let source = TestPackage.root.appendingPathComponent("Tests/ToolhostCLITests/Escape/escape/escape.py").path
    let script = try String(contentsOfFile: source, encoding: .utf8)
    func tool(_ name: String) -> JSONValue {
      [
        "name": .string(name), "description": "Tries to reach something a plugin should not.",
        "inputSchema": [
          "type": "object", "required": ["what", "target"],
          "properties": ["what": ["type": "string"], "target": ["type": "string"]],
        ],
      ]
    }
    func plugin(_ folder: String, _ manifest: JSONObject) {
      temp.write(folder + "/escape.py", script, executable: true)
      temp.write(folder + "/toolhost.json", JSONValue.object(manifest).serialized())
    }
    let base: JSONObject = ["manifestVersion": 1, "command": "./escape.py", "timeout": 10, "tools": [tool("attempt")]]
    plugin("plugins/escape", base)
    var persistent = base
    persistent["persistent"] = true
    persistent["tools"] = [tool("attemptPersistent")]
    plugin("plugins/escape-persistent", persistent)
    plugin(
      "plugins/escape-mcp",
      [
        "manifestVersion": 1, "timeout": 10,
        "mcp": ["name": "escapemcp", "command": "./escape.py", "args": ["--mcp"], "prefixTools": true],
      ])
    var open = base
    open["tools"] = [tool("attemptOpen")]
    open["sandbox"] = ["network": true, "read": ["~/.ssh"], "write": ["~/notes/", "../../project"]]
    plugin("open/escape-open", open)
    symlink(temp.file("other/secret"), temp.file("plugins/escape/link"))
    symlink(temp.file("home/.ssh/id_ed25519"), temp.file("plugins/escape/key"))
  }

  deinit {
    try? FileManager.default.removeItem(atPath: tmpTarget)
    kill(other.processIdentifier, SIGKILL)
    other.waitUntilExit()
  }

  /// The attempts every confined plugin must be refused, by name → (what, target).
  var hostile: [(String, String, String)] {
    [
      ("a listener on 127.0.0.1", "connect", "127.0.0.1:\(listener.port)"),
      ("another address", "connect", "192.0.2.1:80"),
      ("a name lookup", "lookup", "127.0.0.1:53"),
      ("a Unix socket", "unix", "/run/dbus/system_bus_socket"),
      ("~/.ssh/id_ed25519", "read", temp.file("home/.ssh/id_ed25519")),
      ("another user's file", "read", temp.file("other/secret")),
      ("a link out of its folder", "read", "link"),
      ("a link to the key", "read", "key"),
      ("a write in $HOME", "write", temp.file("home/.bashrc")),
      ("a write in the project", "write", temp.file("project/README")),
      ("a write in /tmp", "write", tmpTarget),
      ("the host's environment", "environ", marker),
      ("another process's environment", "environ-of", "\(other.processIdentifier):\(marker)"),
      ("ptrace of the host", "ptrace", ""),
      ("a signal to the host", "signal", ""),
    ]
  }

  var environment: [String: String] {
    var environment = Subprocess.cleanEnvironment(home: temp.file("home"))
    environment["XDG_CONFIG_HOME"] = temp.file("config")
    environment["XDG_CACHE_HOME"] = temp.file("cache")
    environment["TOOLHOST_API_KEY"] = "cli-key"
    // In toolhost's environment only: no plugin is given it.
    environment["TOOLHOST_ESCAPE_SECRET"] = marker
    return environment
  }

  var project: URL { URL(fileURLWithPath: temp.file("project")) }

  func toolhost(_ arguments: [String], input: String = "") async throws -> Subprocess.Output {
    try await ToolhostProcess.finish(arguments, environment: environment, in: project, input: input)
  }

  /// Whether `toolhost call` of `tool` in `plugins` was blocked doing `what` on `target`; the run's text when the
  /// call itself failed.
  func blocked(_ tool: String, plugins: String, _ what: String, _ target: String) async throws -> Bool? {
    let run = try await toolhost(
      ["call", "--json", "--plugins", temp.file(plugins), tool, "--what", what, "--target", target])
    guard let reply = try? JSONValue.parse(run.stdoutText) else {
      Issue.record("\(tool) \(what) \(target): \(run.allText)")
      return nil
    }
    let result = reply["result"]?["blocked"] ?? reply["result"]?["structuredContent"]?["blocked"]
    guard let value = result?.boolValue else {
      Issue.record("\(tool) \(what) \(target): no verdict in \(run.allText)")
      return nil
    }
    return value
  }
}

@Suite(
  "plugins confined by default: the escape suite",
  .enabled(
    if: ConfinementSupport.current.problem(for: Confinement(network: .tcpPorts([1]))) == nil,
    "this kernel cannot confine plugins: \(ConfinementSupport.current)"))
struct EscapeTests {
  @Test func aPluginWithoutASandboxReachesNothing() async throws {
    let tree = try EscapeTree()
    for (name, what, target) in tree.hostile {
      let blocked = try await tree.blocked("attempt", plugins: "plugins", what, target)
      #expect(blocked == true, "one-shot: \(name) was not blocked")
    }
    #expect(!FileManager.default.fileExists(atPath: tree.tmpTarget))
    #expect(!FileManager.default.fileExists(atPath: tree.temp.file("home/.bashrc")))
    #expect(try String(contentsOfFile: tree.temp.file("project/README"), encoding: .utf8) == "the project")
  }

  @Test func persistentPluginsAndMCPServersAreConfinedToo() async throws {
    let tree = try EscapeTree()
    for (name, what, target) in tree.hostile where what != "read" || target.hasPrefix("/") {
      let persistent = try await tree.blocked("attemptPersistent", plugins: "plugins", what, target)
      #expect(persistent == true, "persistent: \(name) was not blocked")
      let server = try await tree.blocked("escapemcp.attempt", plugins: "plugins", what, target)
      #expect(server == true, "MCP server: \(name) was not blocked")
    }
  }

  @Test func whatAManifestDeclaresIsReachable() async throws {
    let tree = try EscapeTree()
    let reachable = [
      ("connect", "127.0.0.1:\(tree.listener.port)"), ("lookup", "127.0.0.1:53"),
      ("read", tree.temp.file("home/.ssh/id_ed25519")), ("write", tree.temp.file("home/notes/today")),
      ("write", tree.temp.file("project/README")),
    ]
    for (what, target) in reachable {
      let blocked = try await tree.blocked("attemptOpen", plugins: "open", what, target)
      #expect(blocked == false, "declared: \(what) \(target) was blocked")
    }
    // What it did not declare stays out of reach.
    for (what, target) in [("read", tree.temp.file("other/secret")), ("write", tree.tmpTarget)] {
      let blocked = try await tree.blocked("attemptOpen", plugins: "open", what, target)
      #expect(blocked == true, "declared: \(what) \(target) was not blocked")
    }
    #expect(FileManager.default.fileExists(atPath: tree.temp.file("home/notes/today")))
  }

  @Test func batchAndServeRunTheSameConfinement() async throws {
    let tree = try EscapeTree()
    let lines = tree.hostile.enumerated().map { index, attempt in
      JSONValue.object([
        "id": .string("\(index)"), "tool": "attempt",
        "arguments": ["what": .string(attempt.1), "target": .string(attempt.2)],
      ]).serialized()
    }
    let batch = try await tree.toolhost(
      ["batch", "--plugins", tree.temp.file("plugins")], input: lines.joined(separator: "\n") + "\n")
    let replies = batch.stdoutText.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    #expect(replies.count == tree.hostile.count, "\(batch.allText)")
    for reply in replies {
      let index = Int(reply["id"]?.stringValue ?? "") ?? -1
      #expect(reply["result"]?["blocked"]?.boolValue == true, "batch: \(tree.hostile[index].0): \(reply)")
    }

    let server = try MCPServeProcess(
      binary: try TestPackage.requireToolhostBinary(),
      arguments: ["serve", "--mcp", "--yes", "--plugins", tree.temp.file("plugins")], environment: tree.environment,
      workingDirectory: tree.project, logPath: tree.temp.file("serve.log"))
    try await server.initialize()
    for (index, attempt) in tree.hostile.enumerated() where attempt.2.hasPrefix("/") {
      let result = try await server.call(
        id: Int64(10 + index), "attempt", ["what": .string(attempt.1), "target": .string(attempt.2)])
      #expect(result["structuredContent"]?["blocked"]?.boolValue == true, "serve: \(attempt.0): \(result)")
    }
    await server.stop()
  }

  @Test(.enabled(if: TestEnvironment.hasFakeLLM, "fakellm 0.3.5 is not installed"))
  func aModelsCallIsConfinedAsAUsersIs() async throws {
    let tree = try EscapeTree()
    let key = tree.temp.file("home/.ssh/id_ed25519")
    let rules = """
      rules:
        - name: steal
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: attempt, arguments: {what: read, target: "\(key)"}}
        - name: blocked
          when: {turn: 2, tool_result_contains: "PermissionError"}
          respond: {content: "The key was out of reach."}
        - name: read
          when: {turn: 2}
          respond: {content: "The key was read."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let run = try await tree.toolhost([
        "ask", "--yes", "--no-history", "--plugins", tree.temp.file("plugins"), "--base-url", server.baseURL,
        "--model", "cli-model", "Read my key.",
      ])
      #expect(run.stdoutText == "The key was out of reach.\n", "\(run.allText)\nserver:\n\(server.log)")
    }
  }

  @Test func trustAndDescribeShowWhatAPluginMayReach() async throws {
    let tree = try EscapeTree()
    let described = try await tree.toolhost(["describe", "--plugins", tree.temp.file("open"), "attemptOpen"])
    #expect(
      described.stdoutText.contains(
        "reaches: confined: network: any host and port, and local services (D-Bus, a container engine's socket); reads its folder, the system"
      ))
    #expect(described.stdoutText.contains("~/.ssh"), "\(described.allText)")
    #expect(described.stdoutText.contains("writes its temporary folder, ~/notes, "), "\(described.allText)")
    let plain = try await tree.toolhost(["describe", "--plugins", tree.temp.file("plugins"), "attempt"])
    #expect(
      plain.stdoutText.contains("reaches: confined: no network; reads its folder, the system"), "\(plain.allText)")
    let doctor = try await tree.toolhost(["doctor", "--plugins", tree.temp.file("plugins")])
    #expect(doctor.stdoutText.contains("confinement: files (Landlock ABI"), "\(doctor.allText)")
  }
}
