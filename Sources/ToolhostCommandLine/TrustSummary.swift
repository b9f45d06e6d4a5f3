public import Foundation
import ToolhostJSON
public import ToolhostPlugins
import ToolhostTools

/// What `toolhost trust` shows of a manifest before the user trusts it: what runs (each tool's whole command line,
/// its own `args` included), whether each tool will run without asking once a model calls it, where a remote
/// server's token goes, and the environment variables it asks for, with a warning for secrets the user has not
/// approved.
///
/// ```swift
/// for line in TrustSummary.lines(of: bytes, path: manifestPath, configuration: config) { print("  " + line) }
/// ```
public enum TrustSummary {
  /// The lines for the manifest `bytes` read from `path`, under the user's `configuration`.
  public static func lines(
    of bytes: [UInt8], path: String, configuration: UserConfiguration,
    searchPath: String? = ProcessInfo.processInfo.environment["PATH"]
  ) -> [String] {
    var manifest: PluginManifest
    do { manifest = try PluginManifest.parse(bytes, path: path) } catch {
      return ["problem: \(error.message) (it is pinned as it is, and stays broken until fixed and trusted again)"]
    }
    // The folder being trusted is a project's: its tools' "always" answers are bound to this manifest, and what it
    // declares is shown as it holds once trusted.
    manifest.projectDigest = TrustStore.digest(bytes)
    manifest.isTrusted = true
    var lines: [String] = []
    // The program as it resolves now (a bare name is looked for in the plugin's folder before PATH).
    let program = (try? manifest.resolveExecutable(searchPath: searchPath)) ?? manifest.command
    if let server = manifest.mcp, let url = server.url {
      lines.append("remote MCP server \(server.name): runs nothing here; reached at \(url)")
      if let token = server.bearerTokenEnv {
        lines.append("sends the value of \(token) to \(url) as its bearer token")
      }
      lines += serverApproval(manifest, configuration: configuration)
    } else if let server = manifest.mcp {
      lines.append(
        "MCP server \(server.name): runs \(commandLine([program] + manifest.arguments)); its tools are listed when it "
          + "starts")
      lines += serverApproval(manifest, configuration: configuration)
    } else {
      lines.append(
        "runs: \(commandLine([program] + manifest.arguments))\(manifest.persistent ? " (kept running)" : "")")
      for tool in manifest.tools {
        let decision = configuration.approval(for: ManifestTool(definition: tool, manifest: manifest))
        // A persistent plugin's process is started once with the manifest's arguments; a tool's own are for
        // one-shot calls.
        let own = manifest.persistent ? [] : tool.arguments
        let runs = own.isEmpty ? "" : "runs \(commandLine([program] + manifest.arguments + own)); "
        lines.append("tool \(tool.name): \(runs)\(words(decision.mode, decision.reason))")
      }
    }
    if manifest.mcp?.url == nil {
      manifest.unconfinedRunsAllowed = configuration.allowUnconfined
      var environment = ProcessInfo.processInfo.environment
      environment["PATH"] = searchPath
      lines.append(
        "reaches: " + PluginConfinement.reach(of: manifest, executable: program, hostEnvironment: environment))
    }
    let variables = manifest.requestedVariables
    if !variables.isEmpty {
      lines.append("environment: " + variables.joined(separator: ", "))
      let secret = configuration.unapprovedSecrets(of: manifest)
      if !secret.isEmpty {
        lines.append(
          "warning: it asks for \(secret.joined(separator: ", ")), which \(secret.count == 1 ? "is" : "are") or "
            + "look\(secret.count == 1 ? "s" : "") like \(secret.count == 1 ? "a secret" : "secrets") (approve with "
            + "\"environment\": {\"\(manifest.folderName)\": [...]} in \(configuration.displayPath))")
      }
    }
    return lines
  }

  /// Whether a call runs without asking, and why.
  static func words(_ mode: ApprovalMode, _ reason: String) -> String {
    switch mode {
    case .auto: "runs without asking when a model calls it (\(reason))"
    case .ask: "asks before it runs (\(reason))"
    case .deny: "never runs (\(reason))"
    }
  }

  /// What an MCP server's tools do when called: each tool the manifest names in `mcp.approvals` as declared, unless
  /// a rule of the user's says otherwise (one line each, with where its approval comes from); then the others: as a
  /// plugin rule of the user's says, else as the manifest's `*` declares, else they ask.
  static func serverApproval(_ manifest: PluginManifest, configuration: UserConfiguration) -> [String] {
    let declared = manifest.mcp?.approvals ?? [:]
    var lines = declared.keys.sorted().filter { $0 != "*" }.map { name in
      let decision = configuration.approval(for: ServerTool(name: name, manifest: manifest))
      return "tool \(name) (when the server lists it): \(words(decision.mode, decision.reason))"
    }
    let others = lines.isEmpty ? "its tools" : "its other tools"
    if let (mode, rule) = configuration.mode(forPlugin: manifest.folderName, location: manifest.location) {
      lines.append("\(others): " + words(mode, "set by \(rule)"))
    } else if let all = declared["*"] {
      let reason = DeclaredApproval(mode: all, key: "*", manifest: manifest.path).reason
      lines.append("\(others): " + words(all, reason) + ", unless a rule says otherwise")
    } else {
      lines.append(
        "\(others): ask before they run (an MCP server's hints are its own claims), unless a rule says otherwise")
    }
    return lines
  }

  /// Words as a shell would need them typed: each word with a space, quote or other special character in single
  /// quotes.
  public static func commandLine(_ words: [String]) -> String {
    words.map { word in
      let plain =
        !word.isEmpty
        && word.unicodeScalars.allSatisfy { s in
          s.properties.isAlphabetic || ("0"..."9").contains(s) || "-_./=:,+@%".unicodeScalars.contains(s)
        }
      return plain ? word : "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }.joined(separator: " ")
  }

  /// A manifest's tool as approvals see it, before anything is compiled or run.
  struct ManifestTool: ExternalTool {
    let definition: ToolDefinition
    let manifest: PluginManifest
    var name: String { definition.name }
    var description: String { definition.description }
    var parameters: JSONValue { definition.inputSchema }
    var annotations: ToolAnnotations { definition.annotations }
    var pluginName: String { manifest.folderName }
    var source: ToolSource { manifest.toolSource }
    var annotationsAreTrusted: Bool { true }
    func call(arguments: JSONValue) async throws -> String {
      throw ToolFailure.refused(reason: "\(name) is shown, not run, while its folder is being trusted")
    }
  }

  /// A tool an MCP server manifest names in `mcp.approvals`, as approvals will see it once the server lists it:
  /// its hints are the server's (not trusted), its manifest's declaration counts.
  struct ServerTool: ExternalTool {
    let name: String
    let manifest: PluginManifest
    var description: String { "" }
    var parameters: JSONValue { ["type": "object"] }
    var pluginName: String { manifest.folderName }
    var source: ToolSource { manifest.toolSource }
    var annotationsAreTrusted: Bool { false }
    var declaredApproval: DeclaredApproval? { manifest.declaredApproval(forServerTool: name) }
    func call(arguments: JSONValue) async throws -> String {
      throw ToolFailure.refused(reason: "\(name) is shown, not run, while its folder is being trusted")
    }
  }
}
