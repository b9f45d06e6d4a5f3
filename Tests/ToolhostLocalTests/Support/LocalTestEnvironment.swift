import Foundation
import Testing
import ToolhostLocal
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Where things are for the local-model tests, and whether the local model is installed.
enum LocalTestEnvironment {
  /// The installation `scripts/install-local-model` made in this checkout (or `$TOOLHOST_LOCAL_DIR`).
  static let installation: LocalModelInstallation? = try? LocalModelInstallation.locate(
    searchingFrom: [TestPackage.root.path])

  /// Whether the tests that run the real model run: the model is installed, or this is CI (where a missing set-up
  /// must fail the tests, not skip them: `.ci/run` installs it).
  static let runsLocalModel =
    installation != nil || ProcessInfo.processInfo.environment["CI"] == "true"

  /// The model the tests run: the smaller one (`scripts/install-local-model --with-0.5b`, which `.ci/run` installs).
  /// They check toolhost's plumbing (servers, streaming, tools, shutdown), not the model's answers, and it runs them
  /// in about half the time; the chat page's test (ToolhostWebTests) runs the default model, and the model's
  /// answers are measured by the evals (BENCHMARKS.md).
  static let model = "local:0.5b"

  static let skipReason: Comment =
    "the local model is not set up: run scripts/install-local-model (CI runs these tests)"

  /// The environment toolhost runs with in these tests: no colours, HOME in `home`, ``model`` as the model, no keep-alive
  /// (`TOOLHOST_MODEL_KEEP_ALIVE=0`), so that a server a test's toolhost starts ends with it and the test can check
  /// that it did; the tests of the shared server give their own (`extra`, or `--keep-alive`).
  static func environment(home: URL, extra: [String: String] = [:]) -> [String: String] {
    var env = Subprocess.cleanEnvironment(home: home.path)
    env["TOOLHOST_MODEL_KEEP_ALIVE"] = "0"
    // For the example programs, which take `SystemLanguageModel.default`.
    env["TOOLHOST_MODEL"] = model
    if let dir = ProcessInfo.processInfo.environment["TOOLHOST_LOCAL_DIR"] { env["TOOLHOST_LOCAL_DIR"] = dir }
    for (k, v) in extra { env[k] = v }
    return env
  }

  /// Runs a program the package builds beside `toolhost` (an example app) with `arguments`, in a scratch home with
  /// the local model, and checks that it left no model server running: how it exited and all it wrote.
  static func runExample(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    guard let path = TestPackage.builtProduct(name) else {
      throw TestFailure("\(name) is not built beside the tests; run swift build")
    }
    let binary = URL(fileURLWithPath: path)
    let home = try TemporaryFolder.make(prefix: "toolhost-example")
    defer { try? FileManager.default.removeItem(at: home) }
    let before = serverPIDs()
    let result = try await Subprocess.runWithoutBlocking(
      executable: binary, arguments: arguments, environment: environment(home: home), timeout: 300
    ).finished()
    // The program stops the model server it started.
    #expect(serverPIDs().subtracting(before).isEmpty, "a model server was left running")
    return (result.status, result.allText)
  }

  /// The PIDs of running llama.cpp servers started by toolhost's launcher.
  static func serverPIDs() -> Set<Int32> {
    Set(ProcessProbe.processes { $0.contains("llama_cpp.server") && $0.contains("--n_ctx") })
  }
}

/// A running `toolhost` with its stdin held open and its output collected in files.
final class HostProcess {
  let process: Process
  let directory: URL
  private let stdinWriter: FileHandle

  /// Starts `toolhost ARGS` with a clear signal mask (children inherit the mask; Swift's threads block SIGINT).
  init(_ arguments: [String], environment: [String: String], workingDirectory: URL) throws {
    let binary = try TestPackage.requireToolhostBinary()
    directory = try TemporaryFolder.make(prefix: "toolhost-local-tests")
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
    try Subprocess.withUnblockedSignals { try process.run() }
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
    throw TestFailure("toolhost's stderr never matched \(pattern):\n\(stderr)")
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
