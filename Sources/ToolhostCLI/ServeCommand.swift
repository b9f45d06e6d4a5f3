import ArgumentParser
import Foundation
import Toolhost
import ToolhostCommandLine
import ToolhostMCP

/// `toolhost serve --mcp`: the discovered plugins (MCP servers in plugin folders included) as an MCP stdio server.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serve the plugins to other programs: toolhost serve --mcp",
    discussion: """
      With --mcp, toolhost is an MCP server on stdin and stdout (one JSON-RPC message per line): tools/list gives \
      every discovered tool with its inputSchema, outputSchema and annotations; tools/call runs it with validation \
      and time limits, and failures come back as results with isError. Diagnostics go to stderr. It serves until \
      stdin ends, then stops the plugins it started. A server on stdio has no one to ask, so tools whose approval \
      is `ask` (see config.json; MCP tools and tools not marked read-only or non-destructive) are not served \
      unless --yes is given; `deny` tools never are.
      """)
  @OptionGroup var plugins: PluginOptions
  @Flag(help: "Speak the Model Context Protocol over stdio.") var mcp = false
  @Option(help: "Time limit in seconds for every call (overrides the manifests).") var timeout: Double?
  @Option(name: .customLong("max-output"), help: "Most stdout bytes a plugin may print.")
  var maxOutput: Int?
  @Flag(
    name: .customLong("yes"),
    help: "Serve the tools that would ask for approval too: every client may run them without asking anyone.")
  var yes = false

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
    let printer = Printer(raw: false)
    let catalog = try await plugins.catalog(startServers: true, printer: printer)
    for d in catalog.diagnostics { printer.warn("toolhost serve: \(d.isError ? "error" : "note"): \(d)") }
    let withheld = Self.withheld(catalog, yes: yes)
    if !withheld.isEmpty {
      let names = withheld.keys.sorted()
      printer.warn(
        "toolhost serve: \(names.count) tool\(names.count == 1 ? " is" : "s are") not served, because "
          + "\(names.count == 1 ? "it needs" : "they need") approval or \(names.count == 1 ? "is" : "are") denied: "
          + names.joined(separator: ", ")
          + (yes ? "" : " (serve --mcp --yes serves the ones that ask; \"auto\" in config.json serves one)"))
    }
    printer.warn("toolhost serve: serving \(catalog.entries.count - withheld.count) tools over MCP on stdio")
    let options = MCPServer.Options(
      timeout: timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }, outputLimit: maxOutput,
      withheld: withheld)
    let server = MCPServer(registry: catalog.registry(), options: options)
    _ = try await InterruptHandler.cancellingOnSignals { await server.serve() }
    await catalog.shutdown()
  }

  /// The tools not served, with what a client calling one is told: `deny` tools, and `ask` tools unless `yes`.
  static func withheld(_ catalog: PluginCatalog, yes: Bool) -> [String: String] {
    var out: [String: String] = [:]
    let config = catalog.trust.configuration
    for tool in catalog.tools {
      let decision = config.approval(for: tool)
      switch decision.mode {
      case .auto: continue
      case .deny: out[tool.name] = "\(tool.name) is not allowed to run (\(decision.reason))"
      case .ask where !yes:
        out[tool.name] =
          "\(tool.name) needs the user's approval (\(decision.reason)), which toolhost serve cannot ask for; the user "
          + "can serve it with `toolhost serve --mcp --yes`, or set \"\(tool.name)\": \"auto\" under approvals.tools in "
          + config.path
      case .ask: continue
      }
    }
    return out
  }
}
