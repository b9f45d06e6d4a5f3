import Synchronization
import Testing
import ToolhostCore
import ToolhostTestSupport

/// An MCP loader that starts nothing: it counts how often discovery asks it and lists one tool per server.
private final class CountingLoader: PluginServerLoader {
  let asked = Atomic<Int>(0)

  func loadTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>] {
    asked.add(1, ordering: .relaxed)
    return servers.map { _ in .failure(PluginServerLoadError(message: "not started by this test")) }
  }
}

/// `forUser(explicit:offering:)`: MCP servers start only when the tools to offer may be theirs.
@Suite struct UserCatalogTests {
  let home = TemporaryFolder(prefix: "toolhost-user-catalog")

  init() {
    home.plugin(
      "notes",
      manifest: """
        {"manifestVersion": 1, "command": "run",
         "tools": [{"name": "readNote", "description": "Reads a note.", "inputSchema": {"type": "object"}}]}
        """,
      script: "#!/bin/sh\necho {}\n")
    home.write("time/toolhost.json", #"{"manifestVersion": 1, "mcp": {"name": "time", "command": "/bin/cat"}}"#)
  }

  private func servers(offering names: [String]?) async throws -> Int {
    let loader = CountingLoader()
    let catalog = try await PluginCatalog.forUser(
      explicit: [home.path], offering: names,
      environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.file("config")], currentDirectory: home.path,
      mcp: loader)
    #expect(catalog.tools.map(\.name).contains("readNote"))
    return loader.asked.load(ordering: .relaxed)
  }

  @Test func everyToolStartsTheServers() async throws {
    #expect(try await servers(offering: nil) == 1)
  }

  @Test func aPluginsToolOrNoToolStartsNone() async throws {
    #expect(try await servers(offering: ["readNote"]) == 0)
    #expect(try await servers(offering: []) == 0)
  }

  @Test func aNameNoPluginHasAsksTheServers() async throws {
    #expect(try await servers(offering: ["get_current_time"]) == 1)
  }
}
