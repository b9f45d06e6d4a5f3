public import Foundation

extension PluginCatalog {
  /// Discovers the plugins a user of the command line has: the folders of
  /// ``pluginFolders(explicit:environment:currentDirectory:)`` (the `explicit` ones must exist), the project folder
  /// only if trusted, under the user's `config.json` and `trust.json`.
  ///
  /// - Parameter startServers: whether MCP servers are started to list their tools; `false` starts no process.
  /// - Throws: ``ConfigurationError`` when `config.json` or `trust.json` cannot be used. Plugin problems are
  ///   diagnostics, never thrown.
  public static func forUser(
    explicit: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    currentDirectory: String = FileManager.default.currentDirectoryPath, startServers: Bool = true,
    mcp: (any PluginServerLoader)? = nil
  ) async throws(ConfigurationError) -> PluginCatalog {
    let trust = try DiscoveryTrust.load(environment: environment)
    let folders = pluginFolders(explicit: explicit, environment: environment, currentDirectory: currentDirectory)
    let required = Set(folders.filter { $0.origin == .explicit }.map(\.path))
    var catalog = await discover(
      in: folders, trust: trust, required: required, environment: environment, mcp: mcp, startServers: startServers)
    catalog.trust = trust
    return catalog
  }

  /// The user's catalog for offering the tools `names` (`nil`: every tool): what
  /// ``forUser(explicit:environment:currentDirectory:startServers:mcp:)`` finds, with MCP servers started only when
  /// their tools may be offered.
  ///
  /// For every tool, the servers start. For named tools they start only when a name is not a plugin's and there are
  /// servers to ask; `[]` starts none. When they must start after all, discovery runs a second time (the first
  /// started no process).
  ///
  /// - Throws: ``ConfigurationError`` when `config.json` or `trust.json` cannot be used. Plugin problems are
  ///   diagnostics, never thrown; a name found nowhere is not an error here (``missingTool(named:)`` says why).
  public static func forUser(
    explicit: [String], offering names: [String]?,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    currentDirectory: String = FileManager.default.currentDirectoryPath, mcp: (any PluginServerLoader)? = nil
  ) async throws(ConfigurationError) -> PluginCatalog {
    func discover(startServers: Bool) async throws(ConfigurationError) -> PluginCatalog {
      try await forUser(
        explicit: explicit, environment: environment, currentDirectory: currentDirectory, startServers: startServers,
        mcp: mcp)
    }
    guard let names else { return try await discover(startServers: true) }
    let quick = try await discover(startServers: false)
    let found = Set(quick.entries.map(\.tool.name))
    if names.allSatisfy(found.contains) || !quick.diagnostics.contains(where: { $0.kind == .notStarted }) {
      return quick
    }
    return try await discover(startServers: true)
  }

  /// The shadowing notes about `tool`: each earlier tool of its name that it hides, as
  /// `getWeather (from A) shadows the tool of the same name in B`.
  public func shadowNotes(for tool: String) -> [String] {
    guard let entry = entries.first(where: { $0.tool.name == tool }) else { return [] }
    return diagnostics.filter { $0.kind == .shadowed && $0.tool == tool }.map {
      "\(tool) from \(entry.tool.manifest.path) shadows the tool of the same name in \($0.path)"
    }
  }
}
