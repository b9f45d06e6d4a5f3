public import Foundation
public import ToolhostJSON
import ToolhostSystem
public import ToolhostTools

/// The user's settings in `$XDG_CONFIG_HOME/toolhost/config.json` (default `~/.config/toolhost/config.json`): which
/// tools run without asking, which environment variables that look like secrets the user lets plugins have, and
/// whether the ownership checks are on.
///
/// ```json
/// {
///   "approvals": {
///     "tools": {"getWeather": "auto", "todo*": "ask", "rm*": "deny"},
///     "plugins": {"time-mcp": "auto"},
///     "remembered": [{"tool": "cleanup", "from": "/home/me/.config/toolhost/plugins/cleaner", "mode": "auto"}]
///   },
///   "environment": {"weather": ["OPENWEATHER_API_KEY"]},
///   "strictModes": true,
///   "history": true
/// }
/// ```
///
/// ```swift
/// let config = try UserConfiguration.load()
/// let decision = config.approval(for: tool)   // .auto, .ask or .deny, and why
/// ```
public struct UserConfiguration: Sendable {
  /// One `"pattern": value` rule; patterns are globs (`*` any run of characters, `?` one).
  public struct Rule<Value: Sendable>: Sendable {
    /// The glob.
    public var pattern: String
    /// What it sets.
    public var value: Value

    /// Makes a rule.
    public init(pattern: String, value: Value) {
      self.pattern = pattern
      self.value = value
    }
  }

  /// The file it was read from (and is written back to).
  public var path: String
  /// `approvals.tools`, in file order.
  public var toolRules: [Rule<ApprovalMode>] = []
  /// `approvals.plugins`, in file order. A pattern names a plugin by its folder (``PluginManifest/folderName``), or,
  /// when it holds a `/`, by the folder's whole path (``PluginManifest/location``).
  public var pluginRules: [Rule<ApprovalMode>] = []
  /// `approvals.remembered`: the "always" answers, each bound to the tool's name and where it comes from.
  public var rememberedRules: [RememberedRule] = []
  /// `environment`: plugin glob → variable names the user approved for those plugins.
  public var environmentRules: [Rule<[String]>] = []
  /// `strictModes` (default `true`): refuse plugin folders, manifests and commands others could change.
  public var strictModes = true
  /// `history` (default `true`): keep every `chat` and `ask` in the chat history.
  public var history = true
  /// The whole file as read, so that writing one rule keeps the user's other settings as they are.
  private var document: JSONObject = [:]

  /// An empty configuration that would be written to `path`.
  public init(path: String) {
    self.path = path
  }

  /// toolhost's configuration folder: `$XDG_CONFIG_HOME/toolhost`, else `~/.config/toolhost`. A relative
  /// `XDG_CONFIG_HOME` is ignored, as the XDG specification says (it would make the current directory, perhaps a
  /// cloned repository, the home of toolhost's trust and approvals).
  public static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    let base =
      environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(".config")
    return (base as NSString).appendingPathComponent("toolhost")
  }

  /// Reads `config.json` from ``folder(environment:)``; a missing file is the default configuration.
  ///
  /// - Throws: ``ConfigurationError`` when the file cannot be read, is not JSON (with line and column), breaks the
  ///   format (saying which key), or another user could change it.
  public static func load(environment: [String: String] = ProcessInfo.processInfo.environment)
    throws(ConfigurationError) -> UserConfiguration
  {
    let path = (folder(environment: environment) as NSString).appendingPathComponent("config.json")
    guard FileManager.default.fileExists(atPath: path) else { return UserConfiguration(path: path) }
    return try read(path)
  }

  /// Reads and parses the file at `path`.
  static func read(_ path: String) throws(ConfigurationError) -> UserConfiguration {
    let bytes: [UInt8]
    do { bytes = try FileSafety.readRegularFile(path, user: getuid()) } catch {
      throw ConfigurationError(path: path, message: error.description)
    }
    let value: JSONValue
    do { value = try JSONValue.parse(bytes) } catch {
      throw ConfigurationError(path: path, message: "not valid JSON: \(error.description)")
    }
    return try parse(value, path: path)
  }

  /// Reads a configuration value.
  ///
  /// - Throws: ``ConfigurationError`` naming the key that is wrong and what it should be.
  public static func parse(_ value: JSONValue, path: String) throws(ConfigurationError) -> UserConfiguration {
    func fail(_ message: String) -> ConfigurationError { ConfigurationError(path: path, message: message) }
    guard let o = value.objectValue else { throw fail("the file must hold one JSON object") }
    var config = UserConfiguration(path: path)
    config.document = o
    for key in o.keys where !["approvals", "environment", "strictModes", "history"].contains(key) {
      throw fail("unknown key \"\(key)\" (the keys are approvals, environment, strictModes and history)")
    }
    if let approvals = o["approvals"] {
      guard let a = approvals.objectValue else { throw fail("\"approvals\" must be an object") }
      for key in a.keys where !["tools", "plugins", "remembered"].contains(key) {
        throw fail("unknown key \"approvals.\(key)\" (approvals has tools, plugins and remembered)")
      }
      func modes(_ key: String) throws(ConfigurationError) -> [Rule<ApprovalMode>] {
        guard let v = a[key] else { return [] }
        guard let rules = v.objectValue else { throw fail("\"approvals.\(key)\" must be an object of name: mode") }
        var out: [Rule<ApprovalMode>] = []
        for (pattern, mode) in rules {
          guard let s = mode.stringValue, let m = ApprovalMode(rawValue: s) else {
            throw fail("approvals.\(key).\(pattern) must be \"auto\", \"ask\" or \"deny\", not \(mode.serialized())")
          }
          out.append(Rule(pattern: pattern, value: m))
        }
        return out
      }
      config.toolRules = try modes("tools")
      config.pluginRules = try modes("plugins")
      if let remembered = a["remembered"] {
        config.rememberedRules = try RememberedRule.parseList(remembered, path: path)
      }
    }
    if let environment = o["environment"] {
      guard let e = environment.objectValue else {
        throw fail("\"environment\" must be an object of plugin: [variable names]")
      }
      for (pattern, names) in e {
        guard let list = names.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
          throw fail("environment.\(pattern) must be a list of variable names")
        }
        config.environmentRules.append(Rule(pattern: pattern, value: list.compactMap(\.stringValue)))
      }
    }
    if let strict = o["strictModes"] {
      guard let b = strict.boolValue else { throw fail("\"strictModes\" must be true or false") }
      config.strictModes = b
    }
    if let history = o["history"] {
      guard let b = history.boolValue else { throw fail("\"history\" must be true or false") }
      config.history = b
    }
    return config
  }

  /// The mode the user set for a tool: its own rule (an exact name before the longest matching glob), else its
  /// plugin's (by folder name, or by path for a pattern with a `/`), with where it was set; `nil` when no rule
  /// matches.
  public func mode(forTool name: String, plugin: String?, pluginLocation: String? = nil)
    -> (mode: ApprovalMode, rule: String)?
  {
    if let rule = Self.bestMatch(name, toolRules) {
      return (rule.value, "approvals.tools \"\(rule.pattern)\" in \(path)")
    }
    return mode(forPlugin: plugin, location: pluginLocation)
  }

  /// The mode a plugin rule sets for the plugin with this folder name (and location, for patterns with a `/`), with
  /// where it was set; `nil` when no plugin rule matches.
  public func mode(forPlugin folderName: String?, location: String?) -> (mode: ApprovalMode, rule: String)? {
    guard let rule = Self.bestPluginMatch(folderName: folderName, location: location, pluginRules) else { return nil }
    return (rule.value, "approvals.plugins \"\(rule.pattern)\" in \(path)")
  }

  /// The "always" answer remembered for the tool `name` from `source`, if any.
  public func remembered(tool name: String, from source: ToolSource) -> RememberedRule? {
    rememberedRules.last { $0.tool == name && source.matches($0.source) }
  }

  /// The environment variables the user approved for `plugin`.
  public func approvedEnvironment(plugin: String) -> Set<String> {
    Set(environmentRules.filter { glob($0.pattern, matches: plugin) }.flatMap(\.value))
  }

  /// The variables whose values `manifest` sends out that the user has not approved for its plugin (by folder
  /// name): the secret-looking names of its `env`, and a remote MCP server's `bearerTokenEnv` whatever its name,
  /// since its value is always sent as a credential.
  public func unapprovedSecrets(of manifest: PluginManifest) -> [String] {
    let approved = approvedEnvironment(plugin: manifest.folderName)
    var secret = manifest.environment.filter(SecretNames.looksSecret)
    if let token = manifest.mcp?.bearerTokenEnv, !secret.contains(token) { secret.append(token) }
    return secret.filter { !approved.contains($0) }
  }

  /// The file's path for messages; "toolhost's config.json" for a configuration that names none.
  public var displayPath: String { path.isEmpty ? "toolhost's config.json" : path }

  /// Remembers an "always" answer: `approvals.remembered` gets `{"tool", "from", "manifestSHA256"?, "mode"}` for
  /// `name` from `source` (replacing one for the same tool and source), and the file is written (mode 0600 when
  /// new, its mode kept otherwise). The rule matches only that tool from that source: a tool of the same name from
  /// another plugin folder or server still asks.
  ///
  /// - Throws: ``ConfigurationError`` when the folder or file cannot be written.
  public mutating func remember(tool name: String, from source: ToolSource, mode: ApprovalMode)
    throws(ConfigurationError)
  {
    // The file as it is now: another toolhost or an editor may have changed it since this one read it.
    if FileManager.default.fileExists(atPath: path) { self = try Self.read(path) }
    let rule = RememberedRule(tool: name, source: source, mode: mode)
    rememberedRules.removeAll { $0.tool == name && $0.source == source }
    rememberedRules.append(rule)
    var approvals = document["approvals"]?.objectValue ?? [:]
    approvals["remembered"] = .array(rememberedRules.map(\.json))
    document["approvals"] = .object(approvals)
    try write()
  }

  private func write() throws(ConfigurationError) {
    do {
      try FileSafety.makePrivateFolder((path as NSString).deletingLastPathComponent)
      try FileSafety.writeSecretFile(path, Array((JSONValue.object(document).serialized(.pretty) + "\n").utf8))
    } catch {
      throw ConfigurationError(path: path, message: "cannot write the file: \(error.localizedDescription)")
    }
  }

  /// The plugin rule for a plugin: a pattern with a `/` against its location, the others against its folder name;
  /// an exact pattern first, else the longest match, the strictest of equally long ones.
  static func bestPluginMatch(folderName: String?, location: String?, _ rules: [Rule<ApprovalMode>])
    -> Rule<ApprovalMode>?
  {
    let byName = rules.filter { !$0.pattern.contains("/") }
    let byPath = rules.filter { $0.pattern.contains("/") }
    let candidates = [
      location.flatMap { bestMatch($0, byPath) }, folderName.flatMap { bestMatch($0, byName) },
    ].compactMap { $0 }
    return candidates.max(by: isWeaker)
  }

  /// The rule for `name`: an exact one, else the longest matching glob; of equally long globs the strictest
  /// (`deny`, then `ask`, then `auto`), so the order of the file never loosens a rule.
  static func bestMatch(_ name: String, _ rules: [Rule<ApprovalMode>]) -> Rule<ApprovalMode>? {
    if let exact = rules.first(where: { $0.pattern == name }) { return exact }
    return rules.filter { glob($0.pattern, matches: name) }.max(by: isWeaker)
  }

  /// Whether matching rule `a` gives way to `b`: a shorter pattern to a longer one, and of equally long ones the
  /// looser mode to the stricter (`auto`, then `ask`, then `deny`).
  static func isWeaker(_ a: Rule<ApprovalMode>, _ b: Rule<ApprovalMode>) -> Bool {
    let strictness: [ApprovalMode: Int] = [.auto: 0, .ask: 1, .deny: 2]
    return (a.pattern.count, strictness[a.value]!) < (b.pattern.count, strictness[b.value]!)
  }
}

/// Whether `name` matches `pattern`: `*` stands for any run of characters, `?` for one, the rest for themselves.
public func glob(_ pattern: String, matches name: String) -> Bool {
  let p = Array(pattern)
  let n = Array(name)
  var pi = 0
  var ni = 0
  var star = -1
  var mark = 0
  while ni < n.count {
    if pi < p.count && (p[pi] == "?" || p[pi] == n[ni]) {
      pi += 1
      ni += 1
    } else if pi < p.count && p[pi] == "*" {
      star = pi
      mark = ni
      pi += 1
    } else if star >= 0 {
      pi = star + 1
      mark += 1
      ni = mark
    } else {
      return false
    }
  }
  while pi < p.count && p[pi] == "*" { pi += 1 }
  return pi == p.count
}

/// The configuration file cannot be used.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The file.
  public var path: String
  /// What is wrong and what to do.
  public var message: String

  /// `path: message`.
  public var description: String { "\(path): \(message)" }
}

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

/// Names of environment variables that usually hold secrets.
public enum SecretNames {
  /// Whether `name` looks like a secret: it ends in TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL(S), COOKIE,
  /// APIKEY, `_KEY` or `_PASS` (or is KEY or PASS), or is `SSH_AUTH_SOCK` or `GPG_AGENT_INFO`.
  public static func looksSecret(_ name: String) -> Bool {
    // Bytes, upper-cased as ASCII (variable names are ASCII): String's Unicode-aware hasSuffix and uppercased()
    // cost more than the rest of discovery's look at a manifest.
    let upper = name.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }
    if exact.contains(upper) { return true }
    return suffixes.contains { suffix in upper.count >= suffix.count && upper.suffix(suffix.count).elementsEqual(suffix)
    }
  }

  private static let exact: Set<[UInt8]> = Set(
    ["SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KEY", "PASS"].map { Array($0.utf8) })
  private static let suffixes: [[UInt8]] = [
    "_KEY", "APIKEY", "_PASS", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS", "COOKIE",
  ].map { Array($0.utf8) }
}
