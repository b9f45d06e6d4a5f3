public import Foundation

/// A folder plugins are searched in, and why it is searched: the folders the user named or configured run at once;
/// a project's `./plugins` only once the user trusts it (``TrustStore``).
public struct PluginFolder: Sendable, Hashable {
  /// Where a folder comes from.
  public enum Origin: String, Sendable, Codable {
    /// Named on the command line (`--plugins DIR`) or by the program.
    case explicit
    /// `$TOOLHOST_PLUGIN_PATH`.
    case environment
    /// The user's own folder, `$XDG_CONFIG_HOME/toolhost/plugins`.
    case user
    /// `./plugins` of the current directory: used only when trusted.
    case project
  }

  /// The folder's absolute path.
  public var path: String
  /// Where it comes from.
  public var origin: Origin

  /// Makes a folder.
  public init(path: String, origin: Origin) {
    self.path = path
    self.origin = origin
  }
}

/// What discovery may trust: the project folders the user trusted, the user's settings (StrictModes, approved
/// environment variables) and who the user is.
public struct DiscoveryTrust: Sendable {
  /// The trusted project folders.
  public var store: TrustStore
  /// The user's settings.
  public var configuration: UserConfiguration
  /// The user that files must belong to (or root).
  public var user: uid_t

  /// Trusts no project folder; StrictModes on; the current user.
  public init(
    store: TrustStore = TrustStore(path: ""), configuration: UserConfiguration = UserConfiguration(path: ""),
    user: uid_t = getuid()
  ) {
    self.store = store
    self.configuration = configuration
    self.user = user
  }

  /// Reads the user's `config.json` and `trust.json`.
  ///
  /// - Throws: ``ConfigurationError`` when either cannot be used.
  public static func load(environment: [String: String] = ProcessInfo.processInfo.environment)
    throws(ConfigurationError) -> DiscoveryTrust
  {
    DiscoveryTrust(
      store: try TrustStore.load(environment: environment),
      configuration: try UserConfiguration.load(environment: environment))
  }

  /// How to turn the ownership check off, for messages.
  var override: String {
    "or, to turn the check off, set \"strictModes\": false in \(configuration.displayPath)"
  }
}
