public import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

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

  /// Makes the folder `relative` and the missing ones above it, each 0755 whatever the umask; returns its path.
  @discardableResult
  public func folder(_ relative: String) throws -> String {
    var current = path
    for part in relative.split(separator: "/") {
      current += "/" + part
      if !FileManager.default.fileExists(atPath: current) {
        try FileManager.default.createDirectory(atPath: current, withIntermediateDirectories: false)
        chmod(current, 0o755)
      }
    }
    return current
  }

  /// Writes `text` to `relative` (replacing it) with exactly `mode` whatever the umask, its missing folders made 0755
  /// (``folder(_:)``); returns its path. For tests of what toolhost makes of modes (trust, secret files).
  @discardableResult
  public func write(_ relative: String, _ text: String, mode: mode_t) throws -> String {
    try folder((relative as NSString).deletingLastPathComponent)
    let full = file(relative)
    try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    chmod(full, mode)
    return full
  }

  /// The permission bits of the file at `path` (not following a symbolic link), nil when there is none.
  public static func permissions(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return mode_t(info.st_mode) & 0o7777
  }

  /// Writes a plugin `name/toolhost.json` with `manifest` and, when given, an executable `name/run`; returns the
  /// plugin's folder.
  @discardableResult
  public func plugin(_ name: String, manifest: String, script: String? = nil) -> String {
    if let script { write(name + "/run", script, executable: true) }
    write(name + "/toolhost.json", manifest)
    return file(name)
  }

  /// Writes a plugin `name` (see ``plugin(_:manifest:script:)``) with one tool, also named `name`, whose command is
  /// the shell script `body` (``manifest(tool:description:schema:extra:toolExtra:)`` tells the other arguments);
  /// returns the plugin's folder.
  @discardableResult
  public func shTool(
    _ name: String, description: String? = nil, body: String, schema: String = #"{"type":"object"}"#,
    extra: String = "", toolExtra: String = ""
  ) -> String {
    plugin(
      name,
      manifest: Self.manifest(
        tool: name, description: description, schema: schema, extra: extra, toolExtra: toolExtra),
      script: "#!/bin/sh\n\(body)\n")
  }

  /// The text of a manifest whose command is `run` and which has one tool, `tool`, described as `description` (else
  /// "test tool TOOL"), with the input schema `schema`; `extra` adds members (JSON text) to the manifest and
  /// `toolExtra` to the tool.
  public static func manifest(
    tool: String, description: String? = nil, schema: String = #"{"type":"object"}"#, extra: String = "",
    toolExtra: String = ""
  ) -> String {
    """
    {"manifestVersion": 1, "command": "run" \(extra.isEmpty ? "" : ", " + extra),
     "tools": [{"name": "\(tool)", "description": "\(description ?? "test tool \(tool)")", "inputSchema": \(schema) \(toolExtra.isEmpty ? "" : ", " + toolExtra)}]}
    """
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
