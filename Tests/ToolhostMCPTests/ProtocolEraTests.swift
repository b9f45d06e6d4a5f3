import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostMCP

/// MCP 2026-07-28 (no handshake, an envelope on every request) and the `initialize` era before it, both ways,
/// against the official Python SDK (Support/mcp_eras_peer.py).
@Suite(
  "MCP protocol eras with the official Python SDK",
  .enabled(if: Peers.pythonMCPClient, "\(Peers.missingMessage)")
)
struct ProtocolEraTests {
  /// A connection to the SDK's server: `modern` speaks only 2026-07-28, `dual` both eras.
  func sdkServer(_ kind: String) -> MCPServerConnection {
    MCPServerConnection(
      MCPServerConfiguration(
        name: "eras", executable: Peers.python3 ?? "/usr/bin/python3", arguments: [Paths.erasPeer, "server", kind],
        environment: PluginTool.baseEnvironment(hostEnvironment, allowed: []), startupTimeout: .seconds(20)))
  }

  @Test(arguments: ["modern", "dual"])
  func toolhostSpeaks2026ToAServerThatDoes(kind: String) async throws {
    let connection = sdkServer(kind)
    let info = try await connection.start()
    #expect(info.protocolVersion == "2026-07-28")
    #expect(info.name == "eras-peer")
    let tools = try await connection.listTools()
    #expect(tools.map(\.name) == ["echo"])
    let output = try await connection.callTool("echo", arguments: ["text": "hi"], timeout: .seconds(10))
    #expect(output.value?["echoed"] == "hi")
    // 2026-07-28 has no ping; the health check asks server/discover instead, and it answers.
    try await connection.ping()
    let pid = connection.processID ?? -1
    await connection.shutdown()
    await expectGroupsToEnd([pid])
  }

  @Test func aServerBeforeServerDiscoverGetsInitialize() async throws {
    let fake = FakeServer()
    let info = try await fake.connection.start()
    #expect(info.protocolVersion == "2025-11-25")
    let output = try await fake.call("echo", ["text": "old"])
    #expect(output.value?[path: "echo", "text"] == "old")
    // Read after the call: the server handles its input in order, so the handshake's lines are logged by now.
    let methods = fake.received.compactMap { $0["method"]?.stringValue }
    #expect(methods.prefix(3) == ["server/discover", "initialize", "notifications/initialized"])
    // Requests of the older era carry no envelope.
    let call = fake.received.first { $0["method"] == "tools/call" }
    #expect(call?[path: "params", "_meta", "io.modelcontextprotocol/protocolVersion"] == nil)
    await fake.shutDownAndCheck([fake.connection.processID ?? -1])
  }

  /// The SDK's client in each mode against the real `toolhost serve --mcp`.
  @Test(
    .enabled(if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)"),
    arguments: ["2026-07-28", "legacy", "auto"])
  func clientsOfEitherEraUseServe(mode: String) async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let python = try #require(Peers.python3)
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    try ExamplePlugins.link(["weather"], into: folder.url)
    let outcome = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: python,
        arguments: [Paths.erasPeer, "client", mode, binary, "serve", "--mcp", "--plugins", folder.path],
        environment: hostEnvironment, workingDirectory: folder.path, timeout: .seconds(120)))
    let stdout = String(decoding: outcome.stdout, as: UTF8.self)
    #expect(outcome.termination == .exited(0), "stdout: \(stdout)\nstderr: \(outcome.stderrText)")
    let report = try JSONValue.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(report["failure"] == nil, "\(report)")
    #expect(report["negotiated"]?.stringValue == (mode == "legacy" ? "2025-11-25" : "2026-07-28"))
    #expect(report["tools"] == ["getWeather"])
    #expect(report["isError"] == false)
    #expect(report[path: "structured", "city"] == "Boston")
    if mode != "legacy" {
      #expect(report["ttlMs"] == 300_000 && report["cacheScope"] == "public")
    }
    try await Task.sleep(for: .milliseconds(300))
    let leftovers = ProcessProbe.processes { $0.contains(folder.path) }
    #expect(leftovers.isEmpty, "processes left: \(leftovers)")
  }
}
