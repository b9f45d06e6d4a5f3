import Foundation
public import ToolhostJSON
import ToolhostSchema
public import ToolhostSystem
import ToolhostTools

/// A plugin manifest (`toolhost.json`): an executable and the tools it provides, or an MCP stdio server whose tools
/// are listed by the server. See `schemas/manifest.schema.json`.
public struct PluginManifest: Sendable {
  /// An MCP stdio server declared by a manifest's `"mcp"` object.
  public struct MCPServer: Sendable, Equatable {
    /// The server's name: the prefix of its tools' names when they collide (or always, with ``prefixTools``).
    public var name: String
    /// The command as written; resolved like a plugin's command.
    public var command: String
    /// The server's arguments.
    public var arguments: [String]
    /// Host environment variables the server may receive, on top of the base ones.
    public var environment: [String]
    /// Whether every tool is offered as `name.tool`, not only the ones whose names collide.
    public var prefixTools: Bool
    /// Seconds the server has to start and list its tools during discovery (10 when absent).
    public var startupTimeout: Double?
    /// Seconds a listing of the server's tools may be reused by later runs (`toolListTTL`), overriding the
    /// server's own `ttlMs`; `nil`: the server's.
    public var toolListTTL: Double?
    /// The endpoint of a remote server reached over Streamable HTTP (`url`), instead of a command; `nil` for a
    /// server on stdio.
    public var url: String?
    /// The host environment variable whose value is sent as the remote server's bearer token (`bearerTokenEnv`).
    public var bearerTokenEnv: String?
    /// The approval the manifest declares for the server's tools (`approvals`): a tool's name as toolhost lists it
    /// (before any `name.` prefix), or `*` for every tool not named → its mode. It counts only while the user trusts
    /// the manifest (``PluginManifest/isTrusted``), and after the user's own rules; see
    /// ``PluginManifest/declaredApproval(forServerTool:)``.
    public var approvals: [String: ApprovalMode] = [:]
  }

  /// How a plugin's stdout is read.
  public enum OutputMode: String, Sendable, Codable {
    /// One reply object as `schemas/reply.schema.json` says.
    case json
    /// Plain text; exit status 0 means success.
    case text
  }

  /// The manifest file.
  public var path: String
  /// The folder holding the manifest: the plugin's working directory.
  public var directory: String
  /// The command as written in the manifest.
  public var command: String
  /// Fixed arguments.
  public var arguments: [String]
  /// Default time limit in seconds.
  public var timeout: Double?
  /// The most seconds a call may take when it reports progress (`maxTimeout`): each report gives it another
  /// ``timeout`` from then on, up to this much in all. `nil`: no more than ``timeout``.
  public var maxTimeout: Double?
  /// Resource limits of each call (`"limits"`), over ``ResourceLimits/pluginDefaults``.
  public var limits = ResourceLimits()
  /// Host environment variables the plugin may receive.
  public var environment: [String]
  /// How stdout is read.
  public var output: OutputMode
  /// The tools, in manifest order (empty for an MCP server, whose tools the server lists).
  public var tools: [ToolDefinition]
  /// Whether the plugin stays running and answers one JSON request per line (`"persistent": true`).
  public var persistent: Bool = false
  /// How many processes of a persistent plugin may run at once (`"poolSize"`, 1 when absent).
  public var poolSize: Int = 1
  /// The MCP stdio server this manifest declares, if it declares one instead of tools.
  public var mcp: MCPServer?
  /// The SHA-256 (hex) of the manifest's bytes when discovery found it in a project folder, whose trust pins it;
  /// `nil` otherwise. An "always" answer for a project's tool is bound to it (``ToolSource/manifestDigest``).
  public var projectDigest: String?
  /// Whether the user trusts this manifest: discovery sets it for every manifest it loads (one in a folder of the
  /// user's own, or one of a project folder unchanged since the user pinned it with `toolhost trust`). What the
  /// manifest declares about approvals (``MCPServer/approvals``) counts only when it is set: `false` for a manifest
  /// read any other way.
  public var isTrusted = false
  /// What the plugin may reach (`"sandbox"`): ``PluginSandbox/standard`` when absent.
  public var sandbox = PluginSandbox.standard
  /// Whether the user allows plugins to run unconfined where the kernel cannot confine them (`allowUnconfined` in
  /// config.json): discovery sets it from the user's configuration; `false` for a manifest read any other way.
  public var unconfinedRunsAllowed = false

  /// The compiled manifest schema.
  static let schema: JSONSchema = {
    do { return try JSONSchema(JSONValue.parse(EmbeddedSchemas.manifest)) } catch {
      fatalError("toolhost: the embedded manifest schema is invalid: \(error)")
    }
  }()

  /// Reads and checks a manifest file against the manifest schema.
  ///
  /// The file must be a regular file of at most 1 MiB; it is opened without blocking. Does not check who owns it,
  /// that the command exists or that tool schemas compile (discovery does, as diagnostics).
  /// - Throws: ``ManifestError`` when the file cannot be read or is not a regular file of at most 1 MiB, is not
  ///   JSON (with line:column), or violates the schema (with the JSON path of each problem).
  public static func load(path: String) throws(ManifestError) -> PluginManifest {
    let bytes: [UInt8]
    do { bytes = try FileSafety.readRegularFile(path, user: nil) } catch {
      throw ManifestError(path: path, kind: .unreadable, message: error.description)
    }
    return try parse(bytes, path: path)
  }

  /// Parses and checks the bytes of the manifest at `path`.
  ///
  /// - Throws: ``ManifestError`` when the bytes are not JSON (with line:column) or violate the schema.
  public static func parse(_ bytes: [UInt8], path: String) throws(ManifestError) -> PluginManifest {
    let value: JSONValue
    do { value = try JSONValue.parse(bytes) } catch {
      throw ManifestError(path: path, kind: .invalidJSON, message: "not valid JSON: \(error.description)")
    }
    return try make(value, path: path)
  }

  /// The plugin's name: the MCP server's name, else its folder's name (or `NAME` of `NAME.toolhost.json`), with
  /// characters outside `A-Z a-z 0-9 _ -` replaced by `_`. A server's tools are prefixed with it when their names
  /// collide.
  public var name: String { mcp?.name ?? Self.defaultServerName(path: path) }

  /// The name approval and environment rules know the plugin by: its folder's name (or `NAME` of
  /// `NAME.toolhost.json`), with characters outside `A-Z a-z 0-9 _ -` replaced by `_`. Never a name the manifest
  /// chooses (an MCP server's `name` could claim another plugin's rules).
  public var folderName: String { Self.defaultServerName(path: path) }

  /// Where the plugin lives: its folder for `NAME/toolhost.json`, its manifest file for `NAME.toolhost.json`.
  public var location: String {
    path.hasSuffix("/toolhost.json") ? directory : path
  }

  /// Where its tools come from, as approvals see it: its ``location``, with ``projectDigest`` for a project's plugin.
  public var toolSource: ToolSource { ToolSource(location: location, manifestDigest: projectDigest) }

  /// Every host environment variable whose value leaves toolhost for this plugin: `env`, then a remote MCP
  /// server's `bearerTokenEnv` (sent to its URL).
  public var requestedVariables: [String] {
    guard let token = mcp?.bearerTokenEnv, !environment.contains(token) else { return environment }
    return environment + [token]
  }

  /// Checks a manifest value against the manifest schema and reads it.
  ///
  /// - Throws: ``ManifestError`` of kind `.schemaViolation` or `.badToolName`.
  public static func make(_ value: JSONValue, path: String) throws(ManifestError) -> PluginManifest {
    if let o = value.objectValue, let problem = combinationProblem(o) {
      throw ManifestError(path: path, kind: .schemaViolation, message: problem)
    }
    let issues = schema.isValid(value) ? [] : schema.validate(value)
    if !issues.isEmpty {
      // A bad tool name deserves its own words.
      if let nameIssue = issues.first(where: {
        $0.instanceLocation.hasPrefix("/tools/") && $0.instanceLocation.hasSuffix("/name") && $0.keyword == "pattern"
      }),
        let bad = JSONPointer.resolve(nameIssue.instanceLocation, in: value)?.stringValue
      {
        throw ManifestError(
          path: path, kind: .badToolName,
          message:
            "bad tool name \"\(bad)\" at \(nameIssue.instanceLocation): a name is 1 to 64 characters of A-Z a-z 0-9 _ . -"
        )
      }
      throw ManifestError(
        path: path, kind: .schemaViolation,
        message: "does not match the manifest schema: " + issues.prefix(5).map(\.description).joined(separator: "; "))
    }
    let o = value.objectValue!
    let tools = (o["tools"]?.arrayValue ?? []).map { t in
      ToolDefinition(
        name: t["name"]?.stringValue ?? "", title: t["title"]?.stringValue,
        description: t["description"]?.stringValue ?? "", inputSchema: t["inputSchema"] ?? [:],
        outputSchema: t["outputSchema"], arguments: t["args"]?.arrayValue?.compactMap(\.stringValue) ?? [],
        timeout: t["timeout"]?.doubleValue, annotations: ToolAnnotations(json: t["annotations"]),
        limits: ResourceLimits(manifestJSON: t["limits"]), display: t["display"],
        examples: ToolExample.examples(inManifest: t["examples"]))
    }
    var manifest = PluginManifest(
      path: path, directory: (path as NSString).deletingLastPathComponent, command: o["command"]?.stringValue ?? "",
      arguments: o["args"]?.arrayValue?.compactMap(\.stringValue) ?? [], timeout: o["timeout"]?.doubleValue,
      environment: o["env"]?.arrayValue?.compactMap(\.stringValue) ?? [],
      output: OutputMode(rawValue: o["output"]?.stringValue ?? "json") ?? .json, tools: tools)
    manifest.limits = ResourceLimits(manifestJSON: o["limits"])
    manifest.maxTimeout = o["maxTimeout"]?.doubleValue
    manifest.persistent = o["persistent"]?.boolValue ?? false
    manifest.poolSize = Int(o["poolSize"]?.integerValue ?? 1)
    manifest.sandbox = PluginSandbox(json: o["sandbox"])
    if let m = o["mcp"] {
      let server = MCPServer(
        name: m["name"]?.stringValue ?? defaultServerName(path: path), command: m["command"]?.stringValue ?? "",
        arguments: m["args"]?.arrayValue?.compactMap(\.stringValue) ?? [],
        environment: m["env"]?.arrayValue?.compactMap(\.stringValue) ?? [],
        prefixTools: m["prefixTools"]?.boolValue ?? false, startupTimeout: m["startupTimeout"]?.doubleValue,
        toolListTTL: m["toolListTTL"]?.doubleValue, url: m["url"]?.stringValue,
        bearerTokenEnv: m["bearerTokenEnv"]?.stringValue,
        approvals: (m["approvals"]?.objectValue ?? [:]).reduce(into: [:]) { modes, entry in
          modes[entry.key] = entry.value.stringValue.flatMap(ApprovalMode.init(rawValue:))
        })
      manifest.mcp = server
      // The server's command is resolved, and its environment filtered, like a plugin's.
      manifest.command = server.command
      manifest.arguments = server.arguments
      manifest.limits = ResourceLimits(manifestJSON: m["limits"] ?? o["limits"])
      manifest.environment = server.environment
    }
    return manifest
  }

  /// What the schema cannot say in plain words: combinations of keys that do not go together.
  static func combinationProblem(_ o: JSONObject) -> String? {
    if let m = o["mcp"] {
      if let approvals = m["approvals"], let problem = approvalsProblem(approvals) { return problem }
      if m["url"] != nil {
        if o["sandbox"] != nil {
          return "a remote MCP server (\"url\") runs nothing here, so its manifest cannot have \"sandbox\""
        }
        let local = ["command", "args", "env", "limits"].filter { m[$0] != nil }
        if !local.isEmpty {
          return "a remote MCP server (\"url\") runs nothing here, so \"mcp\" cannot also have "
            + local.map { "\"\($0)\"" }.joined(separator: ", ")
        }
        if let url = m["url"]?.stringValue, let problem = remoteURLProblem(url, token: m["bearerTokenEnv"] != nil) {
          return problem
        }
      } else if m["command"] == nil {
        return "\"mcp\" needs \"command\" (a server on stdio) or \"url\" (a remote server over HTTP)"
      } else if m["bearerTokenEnv"] != nil {
        return "\"bearerTokenEnv\" is for remote servers (\"url\"); a server on stdio gets variables through \"env\""
      }
      let extra = ["command", "args", "env", "tools", "output", "persistent", "poolSize"].filter { o[$0] != nil }
      if !extra.isEmpty {
        return "an MCP server manifest (\"mcp\") cannot also have "
          + extra.map { "\"\($0)\"" }.joined(separator: ", ")
          + ": the server lists its own tools; put command, args and env inside \"mcp\""
      }
      return nil
    }
    if o["persistent"]?.boolValue == true {
      if o["output"]?.stringValue == "text" {
        return
          "a persistent plugin answers with one JSON reply per line: \"output\": \"text\" cannot be used with \"persistent\": true"
      }
      if let t = o["tools"]?.arrayValue?.first(where: { $0["args"] != nil }) {
        return
          "tool \"\(t["name"]?.stringValue ?? "?")\" has \"args\", but a persistent plugin's process serves every tool: move the arguments to the manifest's \"args\""
      }
    } else if o["poolSize"] != nil {
      return "\"poolSize\" needs \"persistent\": true"
    }
    return nil
  }

  /// What is wrong with `mcp.approvals`, in words naming the entry and what it may be, or `nil`.
  static func approvalsProblem(_ value: JSONValue) -> String? {
    let modes = ApprovalMode.allCases.map { "\"\($0.rawValue)\"" }
    let allowed = modes.dropLast().joined(separator: ", ") + " or " + modes.last!
    guard let entries = value.objectValue else {
      return "\"mcp.approvals\" must be an object of the server's tool names (or \"*\") to \(allowed), not "
        + value.serialized()
    }
    for (name, mode) in entries {
      if name != "*", !ToolName.isValid(name) {
        return
          "\"mcp.approvals\" names \"\(name)\", which is not a tool name (1 to 64 characters of A-Z a-z 0-9 _ . -) "
          + "or \"*\""
      }
      guard let text = mode.stringValue, ApprovalMode(rawValue: text) != nil else {
        return "\"mcp.approvals\" gives \"\(name)\" \(mode.serialized()): a tool's approval is \(allowed)"
      }
    }
    return nil
  }

  /// The approval this manifest declares for its MCP server's tool `name` (the name as toolhost lists it, before any
  /// `server.` prefix): the tool's own entry in `mcp.approvals`, else the `*` entry.
  ///
  /// `nil` when the manifest is not trusted (``isTrusted``: a declaration counts only because the user chose this
  /// manifest as it is), declares no MCP server, or names neither the tool nor `*`. The user's own rules come before
  /// it (``UserConfiguration/approval(for:)``).
  public func declaredApproval(forServerTool name: String) -> DeclaredApproval? {
    guard isTrusted, let approvals = mcp?.approvals else { return nil }
    let key = approvals[name] != nil ? name : "*"
    return approvals[key].map { DeclaredApproval(mode: $0, key: key, manifest: path) }
  }

  /// Why `url` cannot be a remote server's endpoint, or `nil`: it must be `http` or `https` with a host, and a
  /// bearer token goes over plain `http` only to this machine (anyone on the way could read it otherwise).
  static func remoteURLProblem(_ url: String, token: Bool) -> String? {
    guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
      scheme == "http" || scheme == "https",
      let host = parsed.host, !host.isEmpty
    else {
      return "\"url\" must be an http or https URL with a host, like https://tools.example/mcp, not \(url)"
    }
    if token, scheme == "http", !Loopback.isHost(host) {
      return "a bearer token would cross the network in the clear: use https for \(url), or a server on this machine"
    }
    return nil
  }

  /// The default MCP server name: the plugin folder's name, or the file's name before `.toolhost.json`, with
  /// characters outside `A-Z a-z 0-9 _ -` replaced by `_`.
  static func defaultServerName(path: String) -> String {
    // Byte slicing: NSString's path methods cost several microseconds a call on Linux, and discovery names every
    // manifest's plugin.
    let bytes = Array(path.utf8)
    let slash = bytes.lastIndex(of: 0x2F)
    let file = slash.map { bytes[($0 + 1)...] } ?? bytes[...]
    let suffix = Array(".toolhost.json".utf8)
    let raw: ArraySlice<UInt8>
    if file.count > suffix.count, file.suffix(suffix.count).elementsEqual(suffix) {
      raw = file.dropLast(suffix.count)
    } else if let slash {
      let folder = bytes[..<slash]
      raw = folder.lastIndex(of: 0x2F).map { folder[($0 + 1)...] } ?? folder
    } else {
      raw = []
    }
    // Each character outside A-Z a-z 0-9 _ - becomes one `_` (a multi-byte one too), then the first 32.
    var cleaned: [UInt8] = []
    for scalar in String(decoding: raw, as: UTF8.self).unicodeScalars {
      if cleaned.count == 32 { break }
      switch scalar.value {
      case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x5F, 0x2D: cleaned.append(UInt8(scalar.value))
      default: cleaned.append(0x5F)
      }
    }
    return cleaned.isEmpty ? "mcp" : String(decoding: cleaned, as: UTF8.self)
  }

  /// Finds the executable: a path with a slash is relative to the manifest's folder; a bare name is looked up in
  /// the manifest's folder, then on `searchPath` (colon-separated).
  ///
  /// - Throws: ``ManifestError`` of kind `.commandMissing` or `.commandNotExecutable`, saying where it looked.
  public func resolveExecutable(searchPath: String?) throws(ManifestError) -> String {
    var candidates: [String] = []
    if command.hasPrefix("/") {
      candidates = [command]
    } else if command.contains("/") {
      candidates = [(directory as NSString).appendingPathComponent(command)]
    } else {
      candidates = [(directory as NSString).appendingPathComponent(command)]
      for dir in (searchPath ?? "").split(separator: ":") where !dir.isEmpty {
        candidates.append((String(dir) as NSString).appendingPathComponent(command))
      }
    }
    for c in candidates {
      let path = c.contains("/.") || c.contains("//") ? (c as NSString).standardizingPath : c
      // One stat: a regular file (or a link to one) with an execute bit that access(2) also allows.
      var info = stat()
      guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { continue }
      if info.st_mode & 0o111 != 0, access(path, X_OK) == 0 { return path }
      if candidates.count == 1 || c == candidates[0] {
        throw ManifestError(
          path: self.path, kind: .commandNotExecutable, message: "command \(path) is not executable (chmod +x \(path))")
      }
    }
    let whereLooked = command.contains("/") ? candidates[0] : "\(directory) and PATH"
    throw ManifestError(
      path: path, kind: .commandMissing,
      message: "command \"\(command)\" not found (looked in \(whereLooked)); build the plugin or fix \"command\"")
  }
}
