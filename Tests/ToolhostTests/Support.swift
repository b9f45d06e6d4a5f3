import Foundation
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

/// A temporary plugin folder that a test fills and that is removed at the end.
final class PluginFolder {
  private let folder = TemporaryFolder(prefix: "toolhost-test")
  var path: String { folder.path }

  /// Writes `DIR/name/toolhost.json` and an executable script `DIR/name/run`.
  @discardableResult
  func plugin(
    _ name: String, script: String?, manifest: String
  ) -> String {
    folder.plugin(name, manifest: manifest, script: script)
  }

  /// A one-tool manifest for `run` with the given input schema and options.
  static func manifest(
    tool: String, schema: String = #"{"type":"object"}"#, extra: String = "", toolExtra: String = ""
  ) -> String {
    """
    {"manifestVersion": 1, "command": "run" \(extra.isEmpty ? "" : ", " + extra),
     "tools": [{"name": "\(tool)", "description": "test tool \(tool)", "inputSchema": \(schema) \(toolExtra.isEmpty ? "" : ", " + toolExtra)}]}
    """
  }

  /// Adds a sh plugin with one tool whose script body is `body`.
  @discardableResult
  func shTool(
    _ tool: String, body: String, schema: String = #"{"type":"object"}"#, extra: String = "", toolExtra: String = ""
  ) -> String {
    plugin(
      tool, script: "#!/bin/sh\n\(body)\n",
      manifest: Self.manifest(tool: tool, schema: schema, extra: extra, toolExtra: toolExtra))
  }

  func catalog(environment: [String: String] = ProcessInfo.processInfo.environment) async -> PluginCatalog {
    await PluginCatalog.discover(folders: [path], environment: environment)
  }
}
