import CToolhostSupport

/// toolhost's version, and the commit it was built from: shown by `toolhost --version` and `doctor`, sent as the
/// User-Agent of its HTTP requests and as the version in MCP's `clientInfo` and `serverInfo`.
public enum ToolhostVersion {
  /// The release version (semantic versioning); the one place it is written.
  public static let version = "0.1.0"

  /// The git commit the program was built from (SwiftPM's `Context.gitInformation`, through Package.swift), or `nil`
  /// when it was built outside a git checkout. SwiftPM reads git only when it evaluates the manifest again, which
  /// it skips while Package.swift is unchanged: an incremental `swift build` may name an earlier commit, while
  /// `scripts/install` makes it read git afresh (`--manifest-cache none` after touching Package.swift).
  public static var commit: String? {
    let commit = String(cString: toolhost_build_commit())
    return commit.isEmpty ? nil : commit
  }

  /// Whether the checkout had uncommitted changes when the program was built.
  public static var hadUncommittedChanges: Bool { toolhost_build_uncommitted_changes() != 0 }

  /// The value of the `User-Agent` header of toolhost's HTTP requests: `toolhost/VERSION`.
  public static var userAgent: String { "toolhost/\(version)" }

  /// The commit in words: its first 12 digits, with "and uncommitted changes" when there were any; "unknown commit"
  /// for a build outside git.
  public static var commitDescription: String {
    guard let commit else { return "unknown commit" }
    return "commit \(commit.prefix(12))" + (hadUncommittedChanges ? " and uncommitted changes" : "")
  }

  /// What `toolhost --version` prints: `toolhost 0.1.0 (commit 0123456789ab)`.
  public static var summary: String { "toolhost \(version) (\(commitDescription))" }
}
