/// Where a tool comes from, as approvals see it: an "always" answer is remembered for a tool of this name from this
/// source only, so a tool of the same name from another plugin folder or MCP server still asks.
///
/// ```swift
/// let source = (tool as? any ExternalTool)?.source ?? .inProcess
/// config.remembered(tool: tool.name, from: source)   // the "always" answer for it, if any
/// ```
public struct ToolSource: Sendable, Hashable, CustomStringConvertible {
  /// The plugin's folder (or its `NAME.toolhost.json`), an MCP server's URL or command line, or `in-process`.
  public var location: String
  /// The SHA-256 (hex) of the manifest, for a plugin of a project folder: a project's manifest that changes is
  /// another source, as it is another trust. `nil` for the user's own folders, which only the user can change.
  public var manifestDigest: String?

  /// Makes a source.
  public init(location: String, manifestDigest: String? = nil) {
    self.location = location
    self.manifestDigest = manifestDigest
  }

  /// The source of a tool the program itself provides (a Swift `Tool`).
  public static let inProcess = ToolSource(location: "in-process")

  /// The location, for messages.
  public var description: String { location }

  /// Whether a rule remembered for `rule` applies to a tool from this source: the same location and, when the rule
  /// pinned a manifest, the same manifest.
  public func matches(_ rule: ToolSource) -> Bool {
    location == rule.location && (rule.manifestDigest == nil || rule.manifestDigest == manifestDigest)
  }
}
