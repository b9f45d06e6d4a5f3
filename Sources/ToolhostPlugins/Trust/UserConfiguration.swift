public import Foundation
public import ToolhostJSON
import ToolhostSystem
import ToolhostTools

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
///   "history": true,
///   "allowUnconfined": false
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
  /// `allowUnconfined` (default `false`): where the kernel cannot confine plugins (no Landlock), run the ones that
  /// did not declare `"sandbox": "none"` unconfined anyway, instead of refusing them.
  public var allowUnconfined = false
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
    for key in o.keys where !["approvals", "environment", "strictModes", "history", "allowUnconfined"].contains(key) {
      throw fail(
        "unknown key \"\(key)\" (the keys are approvals, environment, strictModes, history and allowUnconfined)")
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
    if let allow = o["allowUnconfined"] {
      guard let b = allow.boolValue else { throw fail("\"allowUnconfined\" must be true or false") }
      config.allowUnconfined = b
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
