import Foundation
import Synchronization
import Testing
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Locations and the Python environment the end-to-end tests need.
enum TestEnvironment {
  static var support: URL {
    TestPackage.root.appendingPathComponent("Tests/ToolhostSessionTests/Support")
  }

  /// The Python interpreter: `$TOOLHOST_TEST_PYTHON`, else `python3` on PATH.
  static let python: String =
    ProcessInfo.processInfo.environment["TOOLHOST_TEST_PYTHON"] ?? "python3"

  /// The pip command CI runs; the tests that need these packages are skipped without them.
  static let pipCommand = "pip install fakellm==0.3.5 openai==3.54.0"

  /// Whether `fakellm` 0.3.5 can be imported.
  static let hasFakeLLM: Bool = pythonSucceeds(
    "import importlib.metadata as m, fakellm, uvicorn; assert m.version('fakellm') == '0.3.5'")

  /// Whether the `openai` package and pydantic can be imported.
  static let hasOpenAITypes: Bool = pythonSucceeds(
    "import pydantic; from openai.types.chat import completion_create_params")

  static func pythonSucceeds(_ code: String) -> Bool {
    Subprocess.succeeds(["/usr/bin/env", python, "-c", code], timeout: 60)
  }

  /// The result of a finished process.
  struct Finished: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
    var output: String { stdout + stderr }
  }

  /// Runs a command to completion with stdout and stderr collected to files (no pipe can fill up), killing it after
  /// `timeout` seconds. Waits without blocking a thread.
  static func run(
    _ command: [String], environment: [String: String]? = nil, stdin: String? = nil, timeout: Double
  ) async throws -> Finished {
    let dir = try TemporaryFolder.make(prefix: "toolhost-session-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = dir.appendingPathComponent("out")
    let err = dir.appendingPathComponent("err")
    let input = dir.appendingPathComponent("in")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    _ = FileManager.default.createFile(atPath: input.path, contents: Data((stdin ?? "").utf8))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    if let environment { process.environment = environment }
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = try FileHandle(forReadingFrom: input)
    let timedOut = Mutex(false)
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
      process.terminationHandler = { p in continuation.resume(returning: p.terminationStatus) }
      do {
        try Subprocess.withUnblockedSignals { try process.run() }
      } catch {
        continuation.resume(throwing: error)
        return
      }
      let pid = process.processIdentifier
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
        if process.isRunning, pid > 0 {
          timedOut.withLock { $0 = true }
          kill(pid, SIGKILL)
        }
      }
    }
    if timedOut.withLock({ $0 }) {
      throw TestFailure("\(command.joined(separator: " ")) did not finish within \(timeout) s")
    }
    return Finished(
      status: status,
      stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
      stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
  }
}

/// A fakellm server on 127.0.0.1, started by the test and always stopped (SIGTERM, then SIGKILL) by PID.
final class FakeLLM: Sendable {
  let port: Int
  let directory: URL
  let pid: Int32
  private let process: Mutex<Process?>

  var baseURL: String { "http://127.0.0.1:\(port)/v1" }
  var captureFile: URL { directory.appendingPathComponent("requests.jsonl") }
  var logFile: URL { directory.appendingPathComponent("server.log") }

  /// Runs `body` with a fresh server whose rules are `rules` (fakellm YAML), then stops it, also when `body` throws.
  ///
  /// - Parameters:
  ///   - mangle: `reuse-index`, `omit-index` or `no-ids` (see run_fakellm.py).
  ///   - retryAfter: a `Retry-After` value for 429 replies.
  static func with<T>(
    rules: String, mangle: String? = nil, retryAfter: String? = nil,
    _ body: (FakeLLM) async throws -> T
  ) async throws -> T {
    let server = try await start(rules: rules, mangle: mangle, retryAfter: retryAfter)
    let result: Result<T, any Error>
    do { result = .success(try await body(server)) } catch { result = .failure(error) }
    await server.stop()
    if ProcessProbe.isAlive(server.pid) {
      Issue.record("fakellm (pid \(server.pid)) is still running after stop()")
    }
    return try result.get()
  }

  private init(port: Int, directory: URL, process: Process) {
    self.port = port
    self.directory = directory
    self.pid = process.processIdentifier
    self.process = Mutex(process)
  }

  private static func start(rules: String, mangle: String?, retryAfter: String?) async throws
    -> FakeLLM
  {
    let directory = try TemporaryFolder.make(prefix: "toolhost-session-tests")
    let config = directory.appendingPathComponent("rules.yaml")
    try Data(rules.utf8).write(to: config)
    var lastLog = ""
    for _ in 0..<3 {
      let port = try ProcessProbe.freePort()
      let log = directory.appendingPathComponent("server.log")
      _ = FileManager.default.createFile(atPath: log.path, contents: nil)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      var arguments = [
        TestEnvironment.python,
        TestEnvironment.support.appendingPathComponent("run_fakellm.py").path,
        "--port", "\(port)", "--config", config.path,
        "--capture", directory.appendingPathComponent("requests.jsonl").path,
      ]
      if let mangle { arguments += ["--mangle", mangle] }
      if let retryAfter { arguments += ["--retry-after", retryAfter] }
      process.arguments = arguments
      process.currentDirectoryURL = directory
      process.standardInput = FileHandle.nullDevice
      let handle = try FileHandle(forWritingTo: log)
      process.standardOutput = handle
      process.standardError = handle
      try Subprocess.withUnblockedSignals { try process.run() }
      let server = FakeLLM(port: port, directory: directory, process: process)
      let deadline = ContinuousClock.now + .seconds(30)
      while ContinuousClock.now < deadline && process.isRunning {
        if probe(port: port) { return server }
        try? await Task.sleep(for: .milliseconds(100))
      }
      await server.stop(removingDirectory: false)
      lastLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
      if !lastLog.contains("address already in use") { break }
    }
    try? FileManager.default.removeItem(at: directory)
    throw TestFailure("fakellm did not start within 30 s; its log:\n\(lastLog)")
  }

  /// Stops the server: SIGTERM, then SIGKILL after 3 s; waits until it has exited.
  func stop(removingDirectory: Bool = true) async {
    guard
      let process = self.process.withLock({ p -> Process? in
        defer { p = nil }
        return p
      })
    else { return }
    if process.isRunning, pid > 0 { kill(pid, SIGTERM) }
    let deadline = ContinuousClock.now + .seconds(3)
    while process.isRunning && ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(20))
    }
    if process.isRunning, pid > 0 {
      kill(pid, SIGKILL)
      while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
    if removingDirectory { try? FileManager.default.removeItem(at: directory) }
  }

  /// The captured request bodies, in order.
  func requests() throws -> [[String: Any]] {
    let text = (try? String(contentsOf: captureFile, encoding: .utf8)) ?? ""
    return try text.split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let body = object["body"] as? [String: Any]
      else { throw TestFailure("a captured request is not a JSON object: \(line)") }
      var out = body
      out["_headers"] = object["headers"]
      return out
    }
  }

  /// The server's log, for failure messages.
  var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

  /// Runs check_requests.py on the captured requests; returns its exit status and output.
  func checkRequestsAgainstOpenAITypes() async throws -> TestEnvironment.Finished {
    try await TestEnvironment.run(
      [
        "/usr/bin/env", TestEnvironment.python,
        TestEnvironment.support.appendingPathComponent("check_requests.py").path, captureFile.path,
      ], timeout: 120)
  }

  /// Whether something on `port` answers `GET /_fakellm/stats` with a status line.
  static func probe(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { return false }
    let request = "GET /_fakellm/stats HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
    guard request.withCString({ send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }) > 0 else {
      return false
    }
    var buffer = [UInt8](repeating: 0, count: 64)
    let n = recv(fd, &buffer, buffer.count, 0)
    return n > 0 && String(decoding: buffer.prefix(n), as: UTF8.self).hasPrefix("HTTP/1.1 200")
  }
}
