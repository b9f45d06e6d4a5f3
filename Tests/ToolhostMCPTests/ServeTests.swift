import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@Suite(
  "toolhost serve --mcp with the official Python MCP client",
  .enabled(if: Peers.pythonMCPClient, "\(Peers.missingMessage)"),
  .enabled(
    if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)")
)
struct ServeTests {
  /// Runs Support/mcp_client_check.py against the real binary serving the example plugins.
  @Test func initializeListCallAndErrors() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let python = try #require(Peers.python3)
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    // The weather plugin (Python) and the persistent units plugin; the real plugins/ folder would also start
    // mcp-server-time, which the time tests cover.
    try ExamplePlugins.link(["weather", "units"], into: folder.url)
    let outcome = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: python, arguments: [Paths.clientCheck, binary, folder.path],
        environment: hostEnvironment,
        workingDirectory: folder.path, timeout: .seconds(120)))
    let stdout = String(decoding: outcome.stdout, as: UTF8.self)
    #expect(
      outcome.stopReason == nil,
      "the client check was stopped: \(String(describing: outcome.stopReason))")
    #expect(outcome.termination == .exited(0), "stdout: \(stdout)\nstderr: \(outcome.stderrText)")
    let report = try JSONValue.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(report["failures"] == [])
    #expect(report[path: "seen", "protocolVersion"] == "2025-11-25")
    #expect(report[path: "seen", "tools"] == ["convertUnits", "getWeather"])
    #expect(report[path: "seen", "boston", "city"] == "Boston")
    #expect(report[path: "seen", "unknownTool"]?.stringValue?.contains("unknown tool") == true)
    // Nothing the server started is left: its process group ended when the client closed its stdin.
    try await Task.sleep(for: .milliseconds(300))
    let leftovers = ProcessProbe.processes { $0.contains(folder.path) }
    #expect(leftovers.isEmpty, "processes left: \(leftovers)")
  }

  /// A client may close its input right after its last request: the calls still running finish and are answered.
  @Test func theEndOfInputWaitsForRunningCalls() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin(
      "slow",
      manifest: """
        {"manifestVersion": 1, "command": "run", "timeout": 10,
         "tools": [{"name": "slowAnswer", "description": "Answers after a second.", "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": true}}]}
        """,
      script: "#!/bin/sh\nsleep 1\necho '{\"result\": {\"done\": true}}'\n")
    var environment = hostEnvironment
    environment["HOME"] = folder.path
    environment["XDG_CONFIG_HOME"] = folder.file("config")
    let server = try MCPServeProcess(
      binary: binary, arguments: ["serve", "--mcp", "--plugins", folder.path], environment: environment,
      workingDirectory: folder.url, logPath: folder.file("serve.log"))
    try await server.initialize()
    try server.sendCall(id: 7, "slowAnswer", [:])
    try await Task.sleep(for: .milliseconds(200))  // the call is running
    server.closeInput()
    let response = await server.response(to: 7, within: 15)
    #expect(response?[path: "result", "isError"] == false, "log: \(server.log)")
    #expect(response?[path: "result", "structuredContent", "done"] == true)
    await server.stop()
    #expect(server.process.terminationStatus == 0, "log: \(server.log)")
  }

  /// `tools/list` is answered at once with the plugins' tools while an MCP server starts; a call of one of the
  /// server's tools waits for it; then the list has them too.
  @Test func theServersStartInTheBackground() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let python = try #require(Peers.python3)
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin(
      "quick",
      manifest: """
        {"manifestVersion": 1, "command": "run",
         "tools": [{"name": "quickAnswer", "description": "Answers at once.", "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": true}}]}
        """,
      script: "#!/bin/sh\necho '{\"result\": {\"quick\": true}}'\n")
    folder.plugin(
      "slowserver",
      manifest: """
        {"manifestVersion": 1, "timeout": 10,
         "mcp": {"command": "\(python)", "args": ["\(Paths.fakeServer)", "--startup-delay", "2"], "startupTimeout": 20}}
        """)
    var environment = hostEnvironment
    environment["HOME"] = folder.path
    environment["XDG_CONFIG_HOME"] = folder.file("config")
    let server = try MCPServeProcess(
      binary: binary, arguments: ["serve", "--mcp", "--yes", "--plugins", folder.path], environment: environment,
      workingDirectory: folder.url, logPath: folder.file("serve.log"))
    try await server.initialize()
    // The server sleeps two seconds before it reads anything: this list cannot wait for it.
    let first = try await server.toolNames(id: 1)
    #expect(first == ["quickAnswer"], "log: \(server.log)")
    let echoed = try await server.call(id: 2, "echo", ["text": "late"])
    #expect(echoed[path: "structuredContent", "echo", "text"] == "late", "log: \(server.log)")
    let later = try await server.toolNames(id: 3)
    #expect(later.first == "quickAnswer" && later.contains("echo") && later.contains("pid"))
    await server.stop()
    #expect(server.process.terminationStatus == 0, "log: \(server.log)")
    try await Task.sleep(for: .milliseconds(300))
    #expect(ProcessProbe.processes { $0.contains(folder.path) }.isEmpty)
  }
}
