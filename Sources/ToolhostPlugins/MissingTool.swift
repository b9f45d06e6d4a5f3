import ToolhostTools

/// Why a catalog has no tool by a name: a broken plugin declares it, or no plugin does.
///
/// Every front end that looks a tool up by name (`call`, `describe`, `chat --tool`) says the same thing; a program adds
/// how its user fixes it.
public enum MissingTool: Error, Sendable, Equatable, CustomStringConvertible {
  /// A plugin declares `name` but is broken, so the tool is not in the catalog; `diagnostic` says why.
  case broken(name: String, diagnostic: PluginDiagnostic)
  /// No plugin declares `name`; `suggestions` are the catalog's nearest names, best first.
  case unknown(name: String, suggestions: [String])

  /// The name that was looked up.
  public var name: String {
    switch self {
    case .broken(let name, _), .unknown(let name, _): name
    }
  }

  /// `tool NAME is broken: ...` or `no tool named NAME (did you mean A, B?)`.
  public var description: String {
    switch self {
    case .broken(let name, let diagnostic): "tool \(name) is broken: \(diagnostic)"
    case .unknown(let name, let suggestions): "no tool named \(name)\(didYouMean(suggestions))"
    }
  }
}

extension PluginCatalog {
  /// Why this catalog has no tool `name`: the error of a broken plugin that declares it, or else the nearest names.
  ///
  /// Does not check that `name` is missing; call it when a lookup found nothing.
  public func missingTool(named name: String) -> MissingTool {
    if let broken = diagnostics.first(where: { $0.tool == name && $0.isError }) {
      return .broken(name: name, diagnostic: broken)
    }
    return .unknown(name: name, suggestions: nearestNames(to: name, in: entries.map(\.tool.name)))
  }
}
