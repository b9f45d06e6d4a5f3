import Foundation
import Synchronization
import Testing
import ToolhostJSON
import ToolhostMCP
import ToolhostPlugins
import ToolhostTestSupport
import ToolhostTools

/// What `serve --mcp` serves, assembled by MCPServedCatalog: the plugins' tools at once, the MCP servers' tools when
/// they have started, and the tools the approval rules withhold.
@Suite("served catalog")
struct ServedCatalogTests {
  /// Runs nothing: these tests serve tools, they do not call them.
  struct UnusedBackend: PluginToolBackend {
    func call(_ tool: PluginTool, arguments: JSONValue, context: ToolCallContext) async throws -> ToolOutput {
      throw ToolFailure.refused(reason: "not run by this test")
    }
    func shutdown() async {}
  }

  /// An MCP loader whose every server lists `names`, and which keeps no listing (a server not started has none).
  struct ListingLoader: PluginServerLoader {
    let names: [String]
    func loadTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>] {
      servers.map { server in
        do {
          let tools = try names.map { name in
            try PluginTool(
              definition: ToolDefinition(name: name, description: "d", inputSchema: ["type": "object"]),
              manifest: server.manifest, endpoint: .command(executable: "/bin/cat"), backend: UnusedBackend())
          }
          return .success(PluginServerTools(tools: tools))
        } catch {
          return .failure(PluginServerLoadError(message: "\(error)"))
        }
      }
    }
  }

  @Test func thePluginsAreServedAtOnceAndTheServersToolsJoinThemWithTheirApprovals() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-served")
    folder.write(
      "plugins/echo/toolhost.json",
      #"{"manifestVersion": 1, "command": "/bin/cat", "tools": [{"name": "echo", "description": "Echoes.", "#
        + #""inputSchema": {"type": "object"}}]}"#)
    folder.write(
      "plugins/time-mcp/toolhost.json",
      #"{"manifestVersion": 1, "mcp": {"name": "time", "command": "/bin/cat", "#
        + #""approvals": {"get_current_time": "auto", "set_time": "ask", "wipe": "deny"}}}"#)
    let plugins = ToolhostPlugins.PluginFolder(path: folder.file("plugins"), origin: .explicit)
    let loader = ListingLoader(names: ["get_current_time", "set_time", "wipe"])
    // The user lets echo run for clients; a tool with no rule and no declaration asks.
    let rules = try UserConfiguration.parse(
      JSONValue.parse(#"{"approvals": {"tools": {"echo": "auto"}}}"#), path: folder.file("config.json"))
    let trust = DiscoveryTrust(configuration: rules)
    // As UserCatalog does: the catalog carries the rules it was found under.
    var quick = await PluginCatalog.discover(in: [plugins], trust: trust, mcp: loader, startServers: false)
    quick.trust = trust

    let events = Mutex<[MCPServedCatalog.Event]>([])
    let served = MCPServedCatalog(quick: quick, servesAskTools: false) { e in events.withLock { $0.append(e) } }
    #expect(served.hasServersToStart)
    #expect(served.registry.tools.map(\.name) == ["echo"])
    #expect(served.servedCount == 1)
    #expect(events.withLock { $0 }.isEmpty, "the quick catalog has nothing to report or withhold")

    let server = MCPServer(registry: served.registry, options: .init(withheld: served.withheld))
    served.startServers(on: server) {
      var full = await PluginCatalog.discover(in: [plugins], trust: trust, mcp: loader)
      full.trust = trust
      return full
    }
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline,
      !events.withLock({ $0.contains { if case .serversStarted = $0 { true } else { false } } })
    {
      try await Task.sleep(for: .milliseconds(10))
    }
    let seen = events.withLock { $0 }
    #expect(seen.last == .serversStarted(served: 2), "\(seen)")
    guard case .withheld(let withheld) = seen.first else {
      Issue.record("no tools were withheld: \(seen)")
      return
    }
    #expect(withheld.keys.sorted() == ["set_time", "wipe"])
    #expect(withheld["wipe"] == "the user does not allow wipe to run")
    #expect(withheld["set_time"]?.contains("has not approved") == true)
    await served.shutdown()
  }

  @Test func withYesTheToolsThatAskAreServedButDeniedOnesNever() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-served")
    folder.write(
      "plugins/time-mcp/toolhost.json",
      #"{"manifestVersion": 1, "mcp": {"name": "time", "command": "/bin/cat", "#
        + #""approvals": {"set_time": "ask", "wipe": "deny"}}}"#)
    let plugins = ToolhostPlugins.PluginFolder(path: folder.file("plugins"), origin: .explicit)
    let full = await PluginCatalog.discover(in: [plugins], mcp: ListingLoader(names: ["set_time", "wipe"]))
    #expect(MCPServedCatalog.withheld(full, servesAskTools: true).keys.sorted() == ["wipe"])
    #expect(MCPServedCatalog.withheld(full, servesAskTools: false).keys.sorted() == ["set_time", "wipe"])
    let served = MCPServedCatalog(quick: full, servesAskTools: true) { _ in }
    #expect(!served.hasServersToStart)
    #expect(served.servedCount == 1)
    await served.shutdown()
  }
}
