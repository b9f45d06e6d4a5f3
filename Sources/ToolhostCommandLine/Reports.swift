import Foundation
public import ToolhostJSON
public import ToolhostPlugins
import ToolhostSystem
public import ToolhostTools

/// One line of `toolhost batch` input: `{"tool": ..., "arguments": {...}, "timeout"?: seconds, "id"?: any}`.
public struct BatchRequest: Sendable {
  /// A line that is not a call.
  public struct Problem: Error, Sendable, Equatable {
    /// What is wrong with the line.
    public var message: String
  }

  /// The caller's id, echoed in the result.
  public var id: JSONValue?
  /// The call, or what is wrong with the line.
  public var request: Result<ToolCallRequest, Problem>

  /// Reads one NDJSON line. Never throws: a bad line becomes a ``Problem``.
  public static func parse(_ line: String) -> BatchRequest {
    let value: JSONValue
    do { value = try JSONValue.parse(line) } catch {
      return BatchRequest(id: nil, request: .failure(Problem(message: "not valid JSON: \(error.description)")))
    }
    let id = value["id"]
    func fail(_ m: String) -> BatchRequest { BatchRequest(id: id, request: .failure(Problem(message: m))) }
    guard let tool = value["tool"]?.stringValue else {
      return fail("each line needs \"tool\" (a string) and \"arguments\" (an object)")
    }
    let arguments = value["arguments"] ?? [:]
    guard arguments.objectValue != nil else { return fail("\"arguments\" must be an object") }
    var timeout: Duration?
    if let t = value["timeout"] {
      guard let s = t.doubleValue, s > 0 else { return fail("\"timeout\" must be a number of seconds above 0") }
      timeout = Duration(seconds: s)
    }
    return BatchRequest(id: id, request: .success(ToolCallRequest(tool: tool, arguments: arguments, timeout: timeout)))
  }
}

/// Text and JSON renderings of catalogs, tools and errors, shared by the CLI and library users.
public enum Report {
  /// The catalog as JSON: `{"folders": [...], "tools": [...], "diagnostics": [...], "untrusted": [...]}`.
  public static func catalogJSON(_ catalog: PluginCatalog) -> JSONValue {
    let tools = catalog.entries.map { toolJSON($0, configuration: catalog.trust.configuration) }
    let diagnostics: [JSONValue] = catalog.diagnostics.map { d in
      var o: JSONObject = [
        "kind": .string(d.kind.rawValue), "severity": .string(d.isError ? "error" : "note"), "path": .string(d.path),
      ]
      if let t = d.tool { o["tool"] = .string(t) }
      o["message"] = .string(d.message)
      return .object(o)
    }
    let untrusted: [JSONValue] = catalog.untrusted.map {
      ["folder": .string($0.path), "manifests": .integer(Int64($0.manifests))]
    }
    return [
      "folders": .array(catalog.folders.map { .string($0) }), "tools": .array(tools),
      "diagnostics": .array(diagnostics), "untrusted": .array(untrusted),
    ]
  }

  /// One line per untrusted project folder: what was left out and the command that trusts it.
  public static func untrustedNotices(_ catalog: PluginCatalog) -> [String] {
    catalog.untrusted.map { folder in
      let cwd = FileManager.default.currentDirectoryPath + "/"
      let shown = folder.path.hasPrefix(cwd) ? "./" + folder.path.dropFirst(cwd.count) : folder.path
      let n = folder.manifests
      return "\(shown) is not trusted, so its \(n) plugin\(n == 1 ? "" : "s") \(n == 1 ? "was" : "were") not loaded "
        + "(`toolhost trust \(shown)` shows \(n == 1 ? "it" : "them") and trusts the folder)"
    }
  }

  /// One tool as JSON: name, description, source, plugin, the environment variables it asks for, annotations, its
  /// approval under `configuration` (mode and why), schemas.
  public static func toolJSON(
    _ entry: PluginCatalog.Entry, configuration: UserConfiguration = UserConfiguration(path: "")
  ) -> JSONValue {
    let approval = configuration.approval(for: entry.tool)
    var o: JSONObject = [
      "name": .string(entry.tool.name), "description": .string(entry.tool.description),
      "manifest": .string(entry.tool.manifest.path), "folder": .string(entry.folder),
      "plugin": .string(entry.tool.pluginName),
      "environment": .array(entry.tool.manifest.requestedVariables.map { .string($0) }),
      "approval": ["mode": .string(approval.mode.rawValue), "reason": .string(approval.reason)],
      "annotations": entry.tool.annotations.json, "inputSchema": entry.tool.parameters,
    ]
    if let out = entry.tool.outputSchema { o["outputSchema"] = out }
    o["timeoutSeconds"] = .real(entry.tool.timeout.seconds)
    return .object(o)
  }

  /// A table of tools (name, description, source) followed by the diagnostics.
  public static func catalogTable(_ catalog: PluginCatalog, width: Int = 100) -> String {
    var out = ""
    if catalog.entries.isEmpty {
      out += "No tools found. Searched: \(catalog.folders.joined(separator: ", "))\n"
    } else {
      let nameWidth = min(28, catalog.entries.map(\.tool.name.count).max() ?? 4)
      let cwd = FileManager.default.currentDirectoryPath + "/"
      for e in catalog.entries {
        var source = (e.tool.manifest.directory)
        if source.hasPrefix(cwd) { source = String(source.dropFirst(cwd.count)) }
        let room = max(20, width - nameWidth - source.count - 6)
        var desc = e.tool.description.split(separator: "\n").first.map(String.init) ?? ""
        if desc.count > room { desc = String(desc.prefix(room - 1)) + "…" }
        out +=
          e.tool.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
          + desc.padding(toLength: room, withPad: " ", startingAt: 0) + "  " + source + "\n"
      }
    }
    if !catalog.diagnostics.isEmpty {
      out += "\n\(catalog.diagnostics.count) problem\(catalog.diagnostics.count == 1 ? "" : "s"):\n"
      for d in catalog.diagnostics { out += "  \(d.isError ? "error" : "note "): \(d)\n" }
    }
    return String(out.dropLast())
  }

  /// The CLI exit status for a failed call: ``ExitStatus/usage`` for invalid arguments or an unknown tool,
  /// ``ExitStatus/timedOut``, ``ExitStatus/cannotStart``, ``ExitStatus/interrupted`` when cancelled,
  /// ``ExitStatus/toolFailed`` otherwise.
  public static func exitStatus(_ error: ToolCallError) -> Int32 {
    switch error.failure {
    case .invalidArguments, .unknownTool: ExitStatus.usage
    case .timedOut: ExitStatus.timedOut
    case .launchFailed: ExitStatus.cannotStart
    case .cancelled: ExitStatus.interrupted
    default: ExitStatus.toolFailed
    }
  }
}

/// The exit statuses of the `toolhost` command, documented in docs/command-line.md.
public enum ExitStatus {
  /// The tool failed (or, for `doctor`, a plugin is broken; for `batch`, some call failed).
  public static let toolFailed: Int32 = 1
  /// A usage error: unknown tool or flag, missing or invalid argument; nothing was run.
  public static let usage: Int32 = 64
  /// The call timed out.
  public static let timedOut: Int32 = 124
  /// The plugin could not be started.
  public static let cannotStart: Int32 = 126
  /// Interrupted by Ctrl-C (or the call was cancelled).
  public static let interrupted: Int32 = 130
}
