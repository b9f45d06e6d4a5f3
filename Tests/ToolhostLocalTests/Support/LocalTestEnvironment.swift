import Foundation
import Synchronization
import Testing
import ToolhostLocal
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Where things are for the local-model tests, and whether the local model is installed.
enum LocalTestEnvironment {
  /// The package root, found from this file's path (Tests/ToolhostLocalTests/Support/).
  static let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// The installation `scripts/install-local-model` made in this checkout (or `$TOOLHOST_LOCAL_DIR`).
  static let installation: LocalModelInstallation? = try? LocalModelInstallation.locate(
    searchingFrom: [packageRoot.path])

  /// Whether the tests that run the real model run: the model is installed, or this is CI (where a missing set-up
  /// must fail the tests, not skip them: `.ci/run` installs it).
  static let runsLocalModel =
    installation != nil || ProcessInfo.processInfo.environment["CI"] == "true"

  static let skipReason: Comment =
    "the local model is not set up: run scripts/install-local-model (CI runs these tests)"

  /// The `toolhost` built beside this test bundle, or `$TOOLHOST_BIN`.
  static let binary: String? = {
    if let explicit = ProcessInfo.processInfo.environment["TOOLHOST_BIN"] { return explicit }
    let exe =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    if dir.pathExtension == "xctest" { dir = dir.deletingLastPathComponent() }
    let candidate = dir.appendingPathComponent("toolhost").path
    return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
  }()

  /// A plugin folder with the weather, bread and todo example plugins (linked), built with `make -C plugins`.
  static let examplePlugins: Result<URL, LocalTestFailure> = {
    let make = Process()
    make.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    make.arguments = ["make", "-s", "-C", packageRoot.appendingPathComponent("plugins").path]
    make.standardOutput = FileHandle.nullDevice
    do {
      try make.run()
      make.waitUntilExit()
      guard make.terminationStatus == 0 else { return .failure(LocalTestFailure("make -C plugins failed")) }
      let dir = try temporaryDirectory()
      removeAtExit(dir.path)  // shared by the whole test process, so removed when it ends
      for name in ["weather", "bread", "todo"] {
        try FileManager.default.createSymbolicLink(
          at: dir.appendingPathComponent(name),
          withDestinationURL: packageRoot.appendingPathComponent("plugins/\(name)"))
      }
      return .success(dir)
    } catch {
      return .failure(LocalTestFailure("cannot prepare the example plugins: \(error)"))
    }
  }()

  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "toolhost-local-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// The environment toolhost runs with in these tests: no colours, HOME in `home`.
  static func environment(home: URL, extra: [String: String] = [:]) -> [String: String] {
    let host = ProcessInfo.processInfo.environment
    var env = ["PATH": host["PATH"] ?? "/usr/bin:/bin", "HOME": home.path, "NO_COLOR": "1", "LANG": "C.UTF-8"]
    if let dir = host["TOOLHOST_LOCAL_DIR"] { env["TOOLHOST_LOCAL_DIR"] = dir }
    for (k, v) in extra { env[k] = v }
    return env
  }

  /// Waits up to `seconds` for `pid` to be gone (or a zombie).
  static func waitUntilGone(_ pid: Int32, seconds: Double) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while ProcessProbe.isAlive(pid) {
      if Date() > deadline { return false }
      try? await Task.sleep(for: .milliseconds(50))
    }
    return true
  }

  /// The PIDs of running llama.cpp servers started by toolhost's launcher.
  static func serverPIDs() -> Set<Int32> {
    var pids = Set<Int32>()
    for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let pid = Int32(name),
        let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline")
      else { continue }
      let command = String(decoding: data, as: UTF8.self)
      if command.contains("llama_cpp.server"), command.contains("--n_ctx"), ProcessProbe.isAlive(pid) {
        pids.insert(pid)
      }
    }
    return pids
  }
}

/// A test precondition that failed.
struct LocalTestFailure: Error, CustomStringConvertible, Sendable {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A running `toolhost` with its stdin held open and its output collected in files.
final class HostProcess {
  let process: Process
  let directory: URL
  private let stdinWriter: FileHandle

  /// Starts `toolhost ARGS` with a clear signal mask (children inherit the mask; Swift's threads block SIGINT).
  init(_ arguments: [String], environment: [String: String], workingDirectory: URL) throws {
    guard let binary = LocalTestEnvironment.binary else {
      throw LocalTestFailure("the toolhost binary is not built beside the tests; build it or set TOOLHOST_BIN")
    }
    directory = try LocalTestEnvironment.temporaryDirectory()
    let out = directory.appendingPathComponent("out")
    let err = directory.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let input = Pipe()
    process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = environment
    process.currentDirectoryURL = workingDirectory
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = input
    stdinWriter = input.fileHandleForWriting
    var empty = sigset_t()
    var old = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &old)
    defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
    try process.run()
  }

  var pid: Int32 { process.processIdentifier }
  var stdout: String { (try? String(contentsOf: directory.appendingPathComponent("out"), encoding: .utf8)) ?? "" }
  var stderr: String { (try? String(contentsOf: directory.appendingPathComponent("err"), encoding: .utf8)) ?? "" }

  func write(_ text: String) { try? stdinWriter.write(contentsOf: Data(text.utf8)) }
  func closeInput() { try? stdinWriter.close() }

  /// Waits up to `seconds` for stderr to match `pattern`; returns the first match's groups.
  func waitForStderr(_ pattern: String, seconds: Double) async throws -> [String] {
    let regex = try NSRegularExpression(pattern: pattern)
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      let text = stderr
      if let m = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) {
        return (0..<m.numberOfRanges).compactMap { Range(m.range(at: $0), in: text).map { String(text[$0]) } }
      }
      if !process.isRunning { break }
      try await Task.sleep(for: .milliseconds(100))
    }
    throw LocalTestFailure("toolhost's stderr never matched \(pattern):\n\(stderr)")
  }

  /// Waits up to `seconds` for the process to exit; returns its status, or nil after killing it.
  func waitForExit(seconds: Double) async -> Int32? {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning {
      if Date() > deadline {
        kill(pid, SIGKILL)
        process.waitUntilExit()
        return nil
      }
      try? await Task.sleep(for: .milliseconds(50))
    }
    return process.terminationStatus
  }

  /// Kills the process if it still runs and removes the output files.
  func cleanUp() {
    if process.isRunning {
      kill(pid, SIGKILL)
      process.waitUntilExit()
    }
    closeInput()
    try? FileManager.default.removeItem(at: directory)
  }
}

/// Folders the test process removes when it exits (the ones its static fixtures share between tests).
private let foldersToRemoveAtExit = Mutex<[String]>([])

/// Removes `path` when the test process exits.
func removeAtExit(_ path: String) {
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
