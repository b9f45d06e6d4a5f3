import Foundation
import Testing
import ToolhostJSON
import ToolhostPlugins
import ToolhostTestSupport
import ToolhostTools

@testable import ToolhostMCP

/// MCP's naming rule, applied by the MCP loader and not by discovery: a server's tool is also known as
/// `server.tool`, offered by that name when the manifest asks for prefixes or when an earlier tool has its own.
@Suite("MCP tools' qualified names")
struct QualifiedNameTests {
  /// A plugin folder with a plugin whose tool is `echo`, and an MCP server manifest in `time-mcp`.
  func manifest(prefix: Bool) throws -> PluginManifest {
    try PluginManifest.parse(
      Array(
        #"{"manifestVersion": 1, "mcp": {"command": "srv", "name": "time", "prefixTools": \#(prefix)}}"#.utf8),
      path: "/nonexistent/time-mcp/toolhost.json")
  }

  func listed(_ names: [String], prefix: Bool) throws -> PluginServerTools {
    let server = PluginServer(
      manifest: try manifest(prefix: prefix), endpoint: .command(executable: "/bin/cat"), hostEnvironment: [:])
    let infos = try names.map { name in try MCPToolInfo(json: ["name": .string(name)]) }
    return try MCPPlugins.Loader().tools(infos, server: server).get()
  }

  @Test func theQualifiedNameIsServerDotToolFittedToTheLimit() {
    #expect(MCPPlugins.Loader.qualifiedName("echo", server: "time") == "time.echo")
    let server = String(repeating: "s", count: 32)
    let long = MCPPlugins.Loader.qualifiedName(String(repeating: "t", count: 40), server: server)
    #expect(long.count == 64 && long.hasPrefix(server + "."))
    #expect(long == MCPPlugins.Loader.qualifiedName(String(repeating: "t", count: 40), server: server))
  }

  @Test func withoutPrefixesEachToolKeepsItsNameAndCarriesItsQualifiedOne() throws {
    let tools = try listed(["echo", "now"], prefix: false)
    #expect(tools.tools.map(\.name) == ["echo", "now"])
    #expect(tools.qualifiedNames == ["echo": "time.echo", "now": "time.now"])
  }

  @Test func withPrefixesEachToolIsOfferedByItsQualifiedNameAndListedByItsOwn() throws {
    let tools = try listed(["echo"], prefix: true)
    #expect(tools.tools.map(\.name) == ["time.echo"])
    #expect(tools.tools.map(\.listedName) == ["echo"])
    #expect(tools.qualifiedNames.isEmpty)
  }

  /// Discovery picks the loader's qualified name for a tool whose name a plugin took, and says so.
  @Test func discoveryOffersTheQualifiedNameWhenAPluginHasTheToolsName() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-qualified")
    folder.plugin(
      "echo",
      manifest: #"{"manifestVersion": 1, "command": "/bin/cat", "output": "text", "tools": "#
        + #"[{"name": "echo", "description": "Echoes.", "inputSchema": {"type": "object"}}]}"#)
    folder.plugin("time-mcp", manifest: #"{"manifestVersion": 1, "mcp": {"command": "/bin/cat", "name": "time"}}"#)
    let catalog = await PluginCatalog.discover(folders: [folder.path], mcp: ListingLoader(names: ["echo", "now"]))
    #expect(catalog.tools.map(\.name).sorted() == ["echo", "now", "time.echo"], "\(catalog.diagnostics)")
    #expect(catalog.diagnostics.contains { $0.kind == .adjusted && $0.message.hasPrefix("offered as time.echo") })
    #expect(catalog.tools.first { $0.name == "time.echo" }?.endpoint == .command(executable: "/bin/cat"))
    #expect(catalog.tools.first { $0.name == "echo" }?.endpoint == nil)
  }

  /// A loader that starts nothing: each server lists `names`, through the MCP loader's naming.
  struct ListingLoader: PluginServerLoader {
    let names: [String]

    func loadTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>] {
      servers.map { server in
        let infos = names.compactMap { try? MCPToolInfo(json: ["name": .string($0)]) }
        return MCPPlugins.Loader().tools(infos, server: server)
      }
    }
  }
}
