import Synchronization
public import ToolhostPlugins
public import ToolhostTools

/// What `toolhost serve --mcp` serves, assembled for any front end: the plugins' tools at once, the MCP servers'
/// tools once those servers have started (in the background, so a client gets answers meanwhile), and the tools the
/// user's approval rules withhold from clients.
///
/// ```swift
/// let quick = await PluginCatalog.discover(folders: folders, mcp: MCPPlugins.Loader(), startServers: false)
/// let served = MCPServedCatalog(quick: quick, servesAskTools: false) { event in print(event) }
/// let server = MCPServer(registry: served.registry, options: .init(withheld: served.withheld))
/// served.startServers(on: server) {
///   await PluginCatalog.discover(folders: folders, mcp: MCPPlugins.Loader())
/// }
/// await server.serve()
/// await served.shutdown()
/// ```
public final class MCPServedCatalog: Sendable {
  /// What happens while the catalog is assembled, for the front end to say.
  public enum Event: Sendable, Equatable {
    /// A plugin's problem or note (a server that has not started yet is not one).
    case diagnostic(PluginDiagnostic)
    /// Tools not served, with what a client calling one is told; for the quick catalog, then for the servers'
    /// tools once they start.
    case withheld([String: String])
    /// The MCP servers started; `served` tools are served in all.
    case serversStarted(served: Int)
  }

  /// The catalog of the plugins' tools, found without starting anything.
  public let quick: PluginCatalog
  /// Whether `ask` tools are served (`--yes`); `deny` tools never are.
  public let servesAskTools: Bool
  /// The quick catalog's withheld tools (``withheld(_:servesAskTools:)``).
  public let withheld: [String: String]
  private let onEvent: @Sendable (Event) -> Void
  /// Discovery with the servers started, once ``startServers(on:discover:)`` began it.
  private let servers = Mutex<Task<PluginCatalog?, Never>?>(nil)

  /// Takes the quick catalog and reports its diagnostics and withheld tools through `onEvent` at once.
  public init(quick: PluginCatalog, servesAskTools: Bool, onEvent: @escaping @Sendable (Event) -> Void) {
    self.quick = quick
    self.servesAskTools = servesAskTools
    self.onEvent = onEvent
    for d in quick.diagnostics where d.kind != .notStarted { onEvent(.diagnostic(d)) }
    withheld = Self.withheld(quick, servesAskTools: servesAskTools)
    if !withheld.isEmpty { onEvent(.withheld(withheld)) }
  }

  /// Whether the quick catalog has MCP servers still to start.
  public var hasServersToStart: Bool { quick.diagnostics.contains { $0.kind == .notStarted } }

  /// The tools served at once.
  public var registry: ToolRegistry { quick.registry() }

  /// The number of tools served at once.
  public var servedCount: Int { quick.entries.count - withheld.count }

  /// When there are servers to start, has `server` hold calls of tools it does not know yet, and runs `discover`
  /// (discovery that starts the servers) in the background; then serves the plugins' tools (the processes already
  /// serving) together with the servers' tools. When discovery fails, the quick catalog's tools are what is served.
  /// Without servers to start, does nothing.
  public func startServers(on server: MCPServer, discover: @escaping @Sendable () async -> PluginCatalog?) {
    guard hasServersToStart else { return }
    server.expectTools()
    let quick = self.quick
    let servesAskTools = self.servesAskTools
    let withheld = self.withheld
    let onEvent = self.onEvent
    let task = Task { () -> PluginCatalog? in
      guard let full = await discover() else {
        server.serveTools(quick.registry(), withheld: withheld)
        return nil
      }
      // Serving ended first (the address could not be bound, say): nothing to report or serve.
      if Task.isCancelled { return full }
      // Names are the same in both catalogs: plugins' tools take theirs first.
      let serverEntries = full.entries.filter { $0.tool.manifest.mcp != nil }
      let started = Set(serverEntries.map(\.tool.name))
      var merged = quick
      merged.entries += serverEntries
      for d in full.diagnostics where !quick.diagnostics.contains(d) { onEvent(.diagnostic(d)) }
      let all = Self.withheld(merged, servesAskTools: servesAskTools)
      let newlyWithheld = all.filter { name, _ in started.contains(name) }
      if !newlyWithheld.isEmpty { onEvent(.withheld(newlyWithheld)) }
      server.serveTools(merged.registry(), withheld: all)
      onEvent(.serversStarted(served: merged.entries.count - all.count))
      return full
    }
    servers.withLock { $0 = task }
  }

  /// Stops starting servers, and ends what the catalogs keep running (persistent plugins, MCP servers).
  public func shutdown() async {
    let task = servers.withLock { $0 }
    task?.cancel()
    if let full = await task?.value { await full.shutdown() }
    await quick.shutdown()
  }

  /// The tools not served, with what a client calling one is told (that the user did not allow it, and nothing of
  /// how to): `deny` tools, and `ask` tools unless `servesAskTools`.
  public static func withheld(_ catalog: PluginCatalog, servesAskTools: Bool) -> [String: String] {
    var out: [String: String] = [:]
    let config = catalog.trust.configuration
    for tool in catalog.tools {
      let decision = config.approval(for: tool)
      switch decision.mode {
      case .auto: continue
      // A client (often a model) is told only that the user did not allow it; how to allow it is for the user.
      case .deny: out[tool.name] = "the user does not allow \(tool.name) to run"
      case .ask where !servesAskTools:
        out[tool.name] = "the user running this server has not approved \(tool.name) for its clients"
      case .ask: continue
      }
    }
    return out
  }
}
