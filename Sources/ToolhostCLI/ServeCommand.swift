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
    // The plugins' tools at once, without starting anything; MCP servers start in the background, so a client gets
    // its answers while they do (a call of one of their tools waits for them).
    let quick = try await plugins.catalog(startServers: false, printer: printer)
    let serversToStart = quick.diagnostics.contains { $0.kind == .notStarted }
    for d in quick.diagnostics where d.kind != .notStarted {
      printer.warn("toolhost serve: \(d.isError ? "error" : "note"): \(d)")
    }
    let withheld = Self.withheld(quick, yes: yes)
    Self.reportWithheld(withheld, yes: yes, printer: printer)
    printer.warn(
      "toolhost serve: serving \(quick.entries.count - withheld.count) tools over MCP on stdio"
        + (serversToStart ? "; starting the MCP servers" : ""))
    let options = MCPServer.Options(
      timeout: timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }, outputLimit: maxOutput,
      withheld: withheld)
    let server = MCPServer(registry: quick.registry(), options: options)
    var servers: Task<PluginCatalog?, Never>?
    if serversToStart {
      server.expectTools()
      servers = Task { [plugins, yes] in
        guard let full = try? await plugins.catalog(startServers: true, printer: printer, quiet: true) else {
          server.serveTools(quick.registry(), withheld: withheld)
          return nil
        }
        // The plugins' tools stay those already served (their processes); the servers' tools join them. Names
        // are the same in both catalogs: plugins' tools take theirs first.
        let serverEntries = full.entries.filter { $0.tool.manifest.mcp != nil }
        let started = Set(serverEntries.map(\.tool.name))
        var merged = quick
        merged.entries += serverEntries
        for d in full.diagnostics where !quick.diagnostics.contains(d) {
          printer.warn("toolhost serve: \(d.isError ? "error" : "note"): \(d)")
        }
        let all = Self.withheld(merged, yes: yes)
        Self.reportWithheld(all.filter { name, _ in started.contains(name) }, yes: yes, printer: printer)
        server.serveTools(merged.registry(), withheld: all)
        printer.warn("toolhost serve: the MCP servers started; serving \(merged.entries.count - all.count) tools")
        return full
      }
    }
    _ = try await InterruptHandler.cancellingOnSignals { await server.serve() }
    servers?.cancel()
    if let full = await servers?.value { await full.shutdown() }
    await quick.shutdown()
  }

  /// Says on stderr which tools are not served, and why.
  static func reportWithheld(_ withheld: [String: String], yes: Bool, printer: Printer) {
    guard !withheld.isEmpty else { return }
    let names = withheld.keys.sorted()
    printer.warn(
      "toolhost serve: \(names.count) tool\(names.count == 1 ? " is" : "s are") not served, because "
        + "\(names.count == 1 ? "it needs" : "they need") approval or \(names.count == 1 ? "is" : "are") denied: "
        + names.joined(separator: ", ")
        + (yes ? "" : " (serve --mcp --yes serves the ones that ask; \"auto\" in config.json serves one)"))
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
