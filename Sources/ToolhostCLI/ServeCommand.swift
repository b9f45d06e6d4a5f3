import ArgumentParser
import Foundation
import Toolhost
import ToolhostMCP

/// `toolhost serve --mcp`: the discovered plugins (MCP servers in plugin folders included) as an MCP stdio server.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serve the plugins to other programs: toolhost serve --mcp",
    discussion: """
      With --mcp, toolhost is an MCP server on stdin and stdout (one JSON-RPC message per line): tools/list gives \
      every discovered tool with its inputSchema, outputSchema and annotations; tools/call runs it with validation \
      and time limits, and failures come back as results with isError. Diagnostics go to stderr. It serves until \
      stdin ends, then stops the plugins it started.
      """)
  @OptionGroup var plugins: PluginOptions
  @Flag(help: "Speak the Model Context Protocol over stdio.") var mcp = false
  @Option(help: "Time limit in seconds for every call (overrides the manifests).") var timeout: Double?
  @Option(name: .customLong("max-output"), help: "Most stdout bytes a plugin may print.")
  var maxOutput: Int?

  func validate() throws {
    guard mcp else {
      throw ValidationError("say which protocol to serve: --mcp (the only one so far)")
    }
    if let timeout, timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds") }
    if let maxOutput, maxOutput <= 0 {
      throw ValidationError("--max-output must be more than 0 bytes")
    }
  }

  func run() async throws {
    MCPPlugins.install()
    let catalog = plugins.catalog()
    for d in catalog.diagnostics { warn("toolhost serve: \(d.isError ? "error" : "note"): \(d)") }
    warn("toolhost serve: serving \(catalog.entries.count) tools over MCP on stdio")
    let options = MCPServer.Options(
      timeout: timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }, outputLimit: maxOutput)
    let server = MCPServer(registry: catalog.registry(), options: options)
    _ = try await InterruptHandler.cancellingOnSignals { await server.serve() }
    await catalog.shutdown()
  }
}
