import Foundation
import ToolhostJSON

@testable import Toolhost

/// A temporary plugin folder that a test fills and that is removed at the end.
final class PluginFolder {
  let path: String

  init() {
    path = NSTemporaryDirectory() + "toolhost-test-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// Writes `DIR/name/toolhost.json` and an executable script `DIR/name/run`.
  @discardableResult
  func plugin(
    _ name: String, script: String?, manifest: String
  ) -> String {
    let dir = (path as NSString).appendingPathComponent(name)
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    if let script {
      let exe = (dir as NSString).appendingPathComponent("run")
      FileManager.default.createFile(atPath: exe, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
    }
    FileManager.default.createFile(
      atPath: (dir as NSString).appendingPathComponent("toolhost.json"), contents: Data(manifest.utf8))
    return dir
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

/// The package root, found from this file's path.
let packageRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()
