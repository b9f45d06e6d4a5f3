import Foundation
import Synchronization

/// A fresh folder under the system's temporary directory that a test fills; removed when it is released.
public final class TemporaryFolder: Sendable {
  /// The folder's path.
  public let path: String

  /// Makes the folder, named `PREFIX-UUID`.
  public init(prefix: String = "toolhost-test") {
    path = Self.uniquePath(prefix: prefix)
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// The folder as a file URL.
  public var url: URL { URL(fileURLWithPath: path) }

  /// The path of `relative` inside the folder.
  public func file(_ relative: String) -> String { path + "/" + relative }

  /// Writes `text` to `relative` (making its folders), executable (0755) when asked; returns its path.
  @discardableResult
  public func write(_ relative: String, _ text: String, executable: Bool = false) -> String {
    let full = file(relative)
    try? FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    FileManager.default.createFile(
      atPath: full, contents: Data(text.utf8), attributes: executable ? [.posixPermissions: 0o755] : nil)
    return full
  }

  /// Writes a plugin `name/toolhost.json` with `manifest` and, when given, an executable `name/run`; returns the
  /// plugin's folder.
  @discardableResult
  public func plugin(_ name: String, manifest: String, script: String? = nil) -> String {
    if let script { write(name + "/run", script, executable: true) }
    write(name + "/toolhost.json", manifest)
    return file(name)
  }

  /// `base` with the user's folders in this one (`HOME`, `XDG_CONFIG_HOME` = `config`, `XDG_CACHE_HOME` = `cache`,
  /// `XDG_DATA_HOME` = `data`), so a `toolhost` run with it reads and writes no configuration, trust, cache or chat
  /// history of the real user.
  public func userEnvironment(_ base: [String: String]) -> [String: String] {
    var environment = base
    environment["HOME"] = path
    environment["XDG_CONFIG_HOME"] = file("config")
    environment["XDG_CACHE_HOME"] = file("cache")
    environment["XDG_DATA_HOME"] = file("data")
    return environment
  }

  /// A path `PREFIX-UUID` under the system's temporary directory, with nothing there yet.
  public static func uniquePath(prefix: String) -> String {
    NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
  }

  /// Makes a fresh folder `PREFIX-UUID` under the system's temporary directory; the caller removes it.
  public static func make(prefix: String = "toolhost-test") throws -> URL {
    let url = URL(fileURLWithPath: uniquePath(prefix: prefix))
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Removes `path` when the test process exits (for folders that static fixtures share between tests).
  public static func removeAtExit(_ path: String) {
    let first = foldersToRemoveAtExit.withLock { folders in
      folders.append(path)
      return folders.count == 1
    }
    if first {
      atexit {
        for folder in foldersToRemoveAtExit.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: folder) }
      }
    }
  }
}

/// The folders ``TemporaryFolder/removeAtExit(_:)`` removes when the test process exits.
private let foldersToRemoveAtExit = Mutex<[String]>([])
