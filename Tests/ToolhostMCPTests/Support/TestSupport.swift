import Foundation
import Toolhost
import ToolhostJSON
import ToolhostTestSupport

/// Paths of the package and of the test peers.
enum Paths {
  /// The package root, from this file's path (Tests/ToolhostMCPTests/Support/).
  static let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
  }()

  static let support = packageRoot + "/Tests/ToolhostMCPTests/Support"
  static let plugins = packageRoot + "/plugins"
  static let fakeServer = support + "/fake_mcp_server.py"
  static let persistentPlugin = support + "/persistent_plugin.py"
  static let clientCheck = support + "/mcp_client_check.py"

  /// The `toolhost` binary built next to the test bundle, or `$TOOLHOST_BIN`.
  static var toolhostBinary: String? {
    if let env = ProcessInfo.processInfo.environment["TOOLHOST_BIN"] { return env }
    let exe =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // The bundle may be a directory (…/toolhostPackageTests.xctest/…) on some platforms.
    for _ in 0..<3 {
      let candidate = dir.appendingPathComponent("toolhost").path
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      dir.deleteLastPathComponent()
    }
    return nil
  }

  /// An executable on PATH.
  static func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
      let path = "\(dir)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
  }
}

/// The PyPI peers the tests use, pinned: `pip install mcp==2.3.0 mcp-server-time==2026.10.19`.
enum Peers {
  static let python3 = Paths.which("python3")
  static let mcpServerTime = Paths.which("mcp-server-time")

  /// Whether `import mcp` works and is version 2.3.0.
  static let pythonMCPClient: Bool = {
    guard let python3 else { return false }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: python3)
    p.arguments = ["-c", "import importlib.metadata as m, mcp; assert m.version('mcp') == '2.3.0'"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
  }()

  static let missingMessage =
    "needs the PyPI peers: pip install mcp==2.3.0 mcp-server-time==2026.10.19"
}

/// A temporary folder removed at the end.
final class TempFolder: Sendable {
  let path: String

  init() {
    path = NSTemporaryDirectory() + "toolhost-mcp-test-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// Writes `DIR/name/toolhost.json` with `manifest`; returns the plugin's folder.
  @discardableResult
  func plugin(_ name: String, manifest: String) -> String {
    let dir = path + "/" + name
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(
      atPath: dir + "/toolhost.json", contents: Data(manifest.utf8))
    return dir
  }

  func file(_ name: String) -> String { path + "/" + name }
}

/// Processes on the machine, read from /proc.
enum Processes {
  /// Waits up to `timeout` seconds for group `pgid` to be empty; returns what is left.
  static func waitForGroupToEnd(_ pgid: Int32, timeout: Double = 3) async -> [Int32] {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
      if ProcessProbe.inGroup(pgid).isEmpty { return [] }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return ProcessProbe.inGroup(pgid)
  }

  /// Waits up to `timeout` seconds for `pid` to end.
  static func waitForEnd(_ pid: Int32, timeout: Double = 3) async -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
      if !ProcessProbe.isAlive(pid) { return true }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return !ProcessProbe.isAlive(pid)
  }

  /// Kills whatever is left of a group (clean-up after a failed expectation, so no test leaves processes behind).
  static func killGroup(_ pgid: Int32) {
    guard pgid > 0 else { return }
    kill(-pgid, SIGKILL)
  }
}

/// The host environment for spawned peers: the test process's own (PATH finds python3 and the pip scripts).
let hostEnvironment = ProcessInfo.processInfo.environment

extension JSONValue {
  /// Shorthand for tests: the value at a key path.
  subscript(path path: String...) -> JSONValue? {
    var v: JSONValue? = self
    for k in path { v = v?[k] }
    return v
  }
}

/// A value behind a lock, for test helpers.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
  // @unchecked: every access to `stored` goes through `lock`.
  private let lock = NSLock()
  private var stored: Value

  init(_ value: Value) { stored = value }

  var value: Value {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }

  func mutate(_ body: (inout Value) -> Void) {
    lock.lock()
    defer { lock.unlock() }
    body(&stored)
  }
}
