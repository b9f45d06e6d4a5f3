public import ToolhostJSON
public import ToolhostTools

// The approval modes and decisions, the tools they apply to, what a trusted manifest declares, and the rules the
// user remembered: what UserConfiguration's approval rules are made of.

/// Whether a tool runs when a model (or an MCP client) calls it.
public enum ApprovalMode: String, Sendable, Codable, CaseIterable {
  /// It runs.
  case auto
  /// The user is asked first; without anyone to ask (no terminal, no `--yes`) the call is refused.
  case ask
  /// It never runs.
  case deny
}

/// The mode of one tool and why it has that mode.
public struct ApprovalDecision: Sendable, Equatable {
  /// The mode.
  public var mode: ApprovalMode
  /// Why, in words ("marked destructive", "approvals.tools \"rm*\" in …/config.json", …).
  public var reason: String
  /// Whether a rule of the user's set the mode (rather than a default or a trusted manifest's declaration).
  public var isUserRule: Bool
}

/// A tool that comes from outside the program: a plugin or an MCP server. Approvals treat it by its origin.
public protocol ExternalTool: Tool {
  /// The name plugin rules know it by: its plugin's folder name (or `NAME` of `NAME.toolhost.json`); for an MCP
  /// server connected by the program, the name the program gave it.
  var pluginName: String { get }
  /// Where it comes from, to which an "always" answer is bound.
  var source: ToolSource { get }
  /// Whether the tool's annotations may set its default approval: `true` for plugins in folders the user trusts,
  /// `false` for tools an MCP server lists.
  var annotationsAreTrusted: Bool { get }
  /// The approval its manifest declares for it (an MCP server manifest's `mcp.approvals`), which counts only when
  /// the user trusts that manifest (``PluginManifest/declaredApproval(forServerTool:)``); `nil` for none, the
  /// default. The user's own rules come first (``UserConfiguration/approval(for:)``).
  var declaredApproval: DeclaredApproval? { get }
}

extension ExternalTool {
  /// No declaration: a tool's approval comes from the user's rules and its annotations alone.
  public var declaredApproval: DeclaredApproval? { nil }
}

/// The approval a trusted manifest declares for one of its MCP server's tools (`"mcp": {"approvals": {…}}`).
///
/// The user pinned the manifest (or keeps it in a folder of their own), so what it declares is the user's choice as
/// much as the command it runs; what the server says about its tools (their annotations) still counts for nothing.
public struct DeclaredApproval: Sendable, Equatable {
  /// The mode declared.
  public var mode: ApprovalMode
  /// The entry that declares it: the tool's name, or `*`.
  public var key: String
  /// The manifest's path.
  public var manifest: String

  /// Makes a declaration.
  public init(mode: ApprovalMode, key: String, manifest: String) {
    self.mode = mode
    self.key = key
    self.manifest = manifest
  }

  /// Where it comes from, in words: `declared by the trusted manifest PATH, mcp.approvals "KEY"`.
  public var reason: String { "declared by the trusted manifest \(manifest), mcp.approvals \"\(key)\"" }
}

extension UserConfiguration {
  /// The approval of `tool`, the first of:
  ///
  /// 1. an "always" answer remembered for it from its source, unless a rule of the user's denies it;
  /// 2. the user's rule by the tool's name, then by its plugin (`approvals.tools`, `approvals.plugins`), whatever its
  ///    mode: the user's rule replaces what a manifest declares, so a user's `deny` or `ask` always holds;
  /// 3. what its trusted manifest declares for it (``ExternalTool/declaredApproval``, an MCP server manifest's
  ///    `mcp.approvals` entry for the tool or `*`): the user pinned that manifest, so the declaration is theirs;
  /// 4. for a tool whose annotations are trusted (a plugin's), `auto` when they say read-only or not destructive,
  ///    `ask` otherwise; `ask` for every MCP server's tool, whatever the server says of it.
  ///
  /// So a manifest can loosen only a tool no rule of the user's covers, and nothing the server itself reports ever
  /// loosens one.
  public func approval(for tool: any Tool) -> ApprovalDecision {
    let external = tool as? any ExternalTool
    let source = external?.source ?? .inProcess
    let byRule = mode(
      forTool: tool.name, plugin: external?.pluginName,
      pluginLocation: external.map { _ in source.location })
    if let remembered = remembered(tool: tool.name, from: source), byRule?.mode != .deny {
      return ApprovalDecision(
        mode: remembered.mode,
        reason: "answered \"always\" for \(tool.name) from \(source.location) (approvals.remembered in \(path))",
        isUserRule: true)
    }
    if let (mode, rule) = byRule {
      return ApprovalDecision(mode: mode, reason: "set by \(rule)", isUserRule: true)
    }
    if let declared = external?.declaredApproval {
      return ApprovalDecision(mode: declared.mode, reason: declared.reason, isUserRule: false)
    }
    if let external, !external.annotationsAreTrusted {
      return ApprovalDecision(
        mode: .ask, reason: "a tool of the MCP server \(external.pluginName), whose hints toolhost does not trust",
        isUserRule: false)
    }
    let a = tool.annotations
    if a.destructiveHint == true {
      return ApprovalDecision(mode: .ask, reason: "marked destructive", isUserRule: false)
    }
    if a.readOnlyHint == true {
      return ApprovalDecision(mode: .auto, reason: "marked read-only", isUserRule: false)
    }
    if a.destructiveHint == false {
      return ApprovalDecision(mode: .auto, reason: "marked not destructive", isUserRule: false)
    }
    return ApprovalDecision(
      mode: .ask, reason: "not marked read-only or non-destructive, so it may change things", isUserRule: false)
  }
}

/// An "always" answer in `approvals.remembered`: the tool's name, where it comes from, and the mode.
///
/// ```json
/// {"tool": "cleanup", "from": "/home/me/src/app/plugins/cleaner", "manifestSHA256": "9f86…", "mode": "auto"}
/// ```
public struct RememberedRule: Sendable, Equatable {
  /// The tool's name.
  public var tool: String
  /// Where it comes from (``ToolSource/location``, and the manifest's digest for a project folder's plugin).
  public var source: ToolSource
  /// The mode answered.
  public var mode: ApprovalMode

  /// Makes a rule.
  public init(tool: String, source: ToolSource, mode: ApprovalMode) {
    self.tool = tool
    self.source = source
    self.mode = mode
  }

  /// The rule as it is written in `config.json`.
  public var json: JSONValue {
    var o: JSONObject = ["tool": .string(tool), "from": .string(source.location)]
    if let digest = source.manifestDigest { o["manifestSHA256"] = .string(digest) }
    o["mode"] = .string(mode.rawValue)
    return .object(o)
  }

  /// Reads `approvals.remembered`.
  ///
  /// - Throws: ``ConfigurationError`` naming the entry and key that are wrong.
  static func parseList(_ value: JSONValue, path: String) throws(ConfigurationError) -> [RememberedRule] {
    func fail(_ message: String) -> ConfigurationError { ConfigurationError(path: path, message: message) }
    let format = "{\"tool\": NAME, \"from\": PLUGIN FOLDER OR SERVER, \"mode\": \"auto\"}"
    guard let list = value.arrayValue else { throw fail("\"approvals.remembered\" must be a list of \(format)") }
    var out: [RememberedRule] = []
    for (i, entry) in list.enumerated() {
      guard let o = entry.objectValue, let tool = o["tool"]?.stringValue, let from = o["from"]?.stringValue,
        let modeText = o["mode"]?.stringValue
      else { throw fail("approvals.remembered[\(i)] must be \(format)") }
      for key in o.keys where !["tool", "from", "manifestSHA256", "mode"].contains(key) {
        throw fail("unknown key \"approvals.remembered[\(i)].\(key)\" (tool, from, manifestSHA256, mode)")
      }
      guard let mode = ApprovalMode(rawValue: modeText) else {
        throw fail("approvals.remembered[\(i)].mode must be \"auto\", \"ask\" or \"deny\", not \"\(modeText)\"")
      }
      if let digest = o["manifestSHA256"], digest.stringValue == nil {
        throw fail("approvals.remembered[\(i)].manifestSHA256 must be a string")
      }
      out.append(
        RememberedRule(
          tool: tool, source: ToolSource(location: from, manifestDigest: o["manifestSHA256"]?.stringValue), mode: mode))
    }
    return out
  }
}
