import Foundation
import ToolhostJSON

/// The user's settings in `$XDG_CONFIG_HOME/toolhost/config.json` (default `~/.config/toolhost/config.json`): which
/// tools run without asking, which environment variables that look like secrets the user lets plugins have, and
/// whether the ownership checks are on.
///
/// ```json
/// {
///   "approvals": {
///     "tools": {"getWeather": "auto", "todo*": "ask", "rm*": "deny"},
///     "plugins": {"time": "auto"}
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
  /// `approvals.plugins`, in file order.
  public var pluginRules: [Rule<ApprovalMode>] = []
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
      for key in a.keys where key != "tools" && key != "plugins" {
        throw fail("unknown key \"approvals.\(key)\" (approvals has tools and plugins)")
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
  /// plugin's, with where it was set; `nil` when no rule matches.
  public func mode(forTool name: String, plugin: String?) -> (mode: ApprovalMode, rule: String)? {
    if let rule = Self.bestMatch(name, toolRules) {
      return (rule.value, "approvals.tools \"\(rule.pattern)\" in \(path)")
    }
    if let plugin, let rule = Self.bestMatch(plugin, pluginRules) {
      return (rule.value, "approvals.plugins \"\(rule.pattern)\" in \(path)")
    }
    return nil
  }

  /// The environment variables the user approved for `plugin`.
  public func approvedEnvironment(plugin: String) -> Set<String> {
    Set(environmentRules.filter { glob($0.pattern, matches: plugin) }.flatMap(\.value))
  }

  /// The names of `environment` that look like secrets (``SecretNames``) and that the user has not approved for
  /// `plugin`, in order.
  public func unapprovedSecrets(_ environment: [String], plugin: String) -> [String] {
    let secret = environment.filter(SecretNames.looksSecret)
    guard !secret.isEmpty else { return [] }
    let approved = approvedEnvironment(plugin: plugin)
    return secret.filter { !approved.contains($0) }
  }

  /// The file's path for messages; "toolhost's config.json" for a configuration that names none.
  public var displayPath: String { path.isEmpty ? "toolhost's config.json" : path }

  /// Sets `approvals.tools[name]` and writes the file (mode 0600 when new, its mode kept otherwise).
  ///
  /// - Throws: ``ConfigurationError`` when the folder or file cannot be written.
  public mutating func remember(tool name: String, mode: ApprovalMode) throws(ConfigurationError) {
    // The file as it is now: another toolhost or an editor may have changed it since this one read it.
    if FileManager.default.fileExists(atPath: path) { self = try Self.read(path) }
    toolRules.removeAll { $0.pattern == name }
    toolRules.append(Rule(pattern: name, value: mode))
    var approvals = document["approvals"]?.objectValue ?? [:]
    var tools = approvals["tools"]?.objectValue ?? [:]
    tools[name] = .string(mode.rawValue)
    approvals["tools"] = .object(tools)
    document["approvals"] = .object(approvals)
    do {
      try FileSafety.makePrivateFolder((path as NSString).deletingLastPathComponent)
      try FileSafety.writeSecretFile(path, Array((JSONValue.object(document).serialized(.pretty) + "\n").utf8))
    } catch {
      throw ConfigurationError(path: path, message: "cannot write the file: \(error.localizedDescription)")
    }
  }

  /// The rule for `name`: an exact one, else the longest matching glob; of equally long globs the strictest
  /// (`deny`, then `ask`, then `auto`), so the order of the file never loosens a rule.
  static func bestMatch(_ name: String, _ rules: [Rule<ApprovalMode>]) -> Rule<ApprovalMode>? {
    if let exact = rules.first(where: { $0.pattern == name }) { return exact }
    let strictness: [ApprovalMode: Int] = [.auto: 0, .ask: 1, .deny: 2]
    return rules.filter { glob($0.pattern, matches: name) }.max {
      ($0.pattern.count, strictness[$0.value]!) < ($1.pattern.count, strictness[$1.value]!)
    }
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
  /// Whether a rule of the user's set the mode (rather than a default).
  public var isUserRule: Bool
}

/// A tool that comes from outside the program: a plugin or an MCP server. Approvals treat it by its origin.
public protocol ExternalTool: Tool {
  /// The plugin's name: its folder's name (or `NAME` of `NAME.toolhost.json`), or the MCP server's name.
  var pluginName: String { get }
  /// Whether the tool's annotations may set its default approval: `true` for plugins in folders the user trusts,
  /// `false` for tools an MCP server lists.
  var annotationsAreTrusted: Bool { get }
}

extension UserConfiguration {
  /// The approval of `tool`: the user's rule when one matches; else, for a tool whose annotations are trusted,
  /// `auto` when they say read-only or not destructive and `ask` otherwise; `ask` for every MCP server's tool.
  public func approval(for tool: any Tool) -> ApprovalDecision {
    let external = tool as? any ExternalTool
    if let (mode, rule) = mode(forTool: tool.name, plugin: external?.pluginName) {
      return ApprovalDecision(mode: mode, reason: "set by \(rule)", isUserRule: true)
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
