public import ToolhostPlugins
public import ToolhostTools

/// Which of a catalog's tools a chat offers the model.
public enum ToolSelection: Sendable, Equatable {
  /// Every tool the user's approval rules do not deny: a tool that may never run is not offered, since the model
  /// would only spend a round on its refusal.
  case allowed
  /// No tool.
  case none
  /// These tools, in this order; the model is also told to use them (see ``ChatSetup/sessionInstructions``).
  case named([String])

  /// The tool names discovery has to find: `nil` for every tool, none for ``none``; pass it to
  /// `PluginCatalog.forUser(explicit:offering:)`, which starts MCP servers only when their tools may be offered.
  public var discoveryNames: [String]? {
    switch self {
    case .allowed: nil
    case .none: []
    case .named(let names): names
    }
  }

  /// The names the model is told to use: those of ``named(_:)``, else none.
  public var preferredNames: [String] {
    if case .named(let names) = self { return names }
    return []
  }

  /// The selected tools of `catalog`, under the approval rules it was discovered with
  /// (``DiscoveryTrust/configuration``).
  ///
  /// - Throws: ``ChatSetupError/missingTool(_:)`` for a name the catalog has no tool of, ``ChatSetupError/deniedTool(name:reason:)`` for a named tool the
  ///   rules deny. ``allowed`` and ``none`` do not throw.
  public func tools(from catalog: PluginCatalog) throws(ChatSetupError) -> [PluginTool] {
    let rules = catalog.trust.configuration
    switch self {
    case .none:
      return []
    case .allowed:
      return catalog.tools.filter { rules.approval(for: $0).mode != .deny }
    case .named(let names):
      return try names.map { name throws(ChatSetupError) in
        guard let entry = catalog.entries.first(where: { $0.tool.name == name }) else {
          throw .missingTool(catalog.missingTool(named: name))
        }
        let approval = rules.approval(for: entry.tool)
        if approval.mode == .deny { throw .deniedTool(name: name, reason: approval.reason) }
        return entry.tool
      }
    }
  }

  /// The selected tools of `catalog` in a registry, ready for a session.
  ///
  /// - Throws: what ``tools(from:)`` throws, and ``ChatSetupError/unusableTools(_:)`` when a tool's parameters
  ///   schema does not compile.
  public func registry(from catalog: PluginCatalog) throws(ChatSetupError) -> ToolRegistry {
    let tools = try tools(from: catalog)
    do { return try ToolRegistry(tools) } catch { throw .unusableTools(error) }
  }
}
