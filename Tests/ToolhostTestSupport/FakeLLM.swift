public import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The Python environment of the tests against fakellm (the end-to-end tests of sessions and of `toolhost ask` and
/// `chat`), and where its scripts are.
public enum TestEnvironment {
  /// The folder of the Python scripts that run and check fakellm, Tests/ToolhostTestSupport/Peers.
  public static var support: URL {
    TestPackage.root.appendingPathComponent("Tests/ToolhostTestSupport/Peers")
  }

  /// The Python interpreter: `$TOOLHOST_TEST_PYTHON`, else `python3` on PATH.
  public static let python: String =
    ProcessInfo.processInfo.environment["TOOLHOST_TEST_PYTHON"] ?? "python3"

  /// The pip command CI runs; the tests that need these packages are skipped without them.
  public static let pipCommand = "pip install fakellm==0.3.5 openai==3.54.0"

  /// Whether `fakellm` 0.3.5 can be imported.
  public static let hasFakeLLM: Bool = pythonSucceeds(
    "import importlib.metadata as m, fakellm, uvicorn; assert m.version('fakellm') == '0.3.5'")

  /// Whether the `openai` package and pydantic can be imported.
  public static let hasOpenAITypes: Bool = pythonSucceeds(
    "import pydantic; from openai.types.chat import completion_create_params")

  /// Whether the Python interpreter runs `code` without an error (within 60 s).
  public static func pythonSucceeds(_ code: String) -> Bool {
    Subprocess.succeeds(["/usr/bin/env", python, "-c", code], timeout: 60)
  }
}

/// A fakellm server on 127.0.0.1, started by the test and always stopped (SIGTERM, then SIGKILL) by PID.
public final class FakeLLM: Sendable {
  /// The port it listens on.
  public let port: Int
  /// Its folder: the rules, the captured requests and its log.
  public let directory: URL
  /// Its process id.
  public let pid: Int32
  private let process: Mutex<Process?>

  /// Its OpenAI-compatible API: `http://127.0.0.1:PORT/v1`.
  public var baseURL: String { "http://127.0.0.1:\(port)/v1" }
  /// The file the requests it received are captured in (JSON lines).
  public var captureFile: URL { directory.appendingPathComponent("requests.jsonl") }
  /// Its log.
  public var logFile: URL { directory.appendingPathComponent("server.log") }

  /// Runs `body` with a fresh server whose rules are `rules` (fakellm YAML), then stops it, also when `body` throws.
  ///
  /// - Parameters:
  ///   - mangle: `reuse-index`, `omit-index` or `no-ids` (see run_fakellm.py).
  ///   - retryAfter: a `Retry-After` value for 429 replies.
  public static func with<T>(
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
  public func stop(removingDirectory: Bool = true) async {
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
  public func requests() throws -> [[String: Any]] {
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
  public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

  /// Runs check_requests.py on the captured requests; returns its exit status and output.
  ///
  /// - Throws: ``TestFailure`` when it does not finish within 120 s.
  public func checkRequestsAgainstOpenAITypes() async throws -> Subprocess.Output {
    try await Subprocess.runWithoutBlocking(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      arguments: [
        TestEnvironment.python, TestEnvironment.support.appendingPathComponent("check_requests.py").path,
        captureFile.path,
      ], timeout: 120
    ).finished()
  }

  /// Whether something on `port` answers `GET /_fakellm/stats` with a status line.
  public static func probe(port: Int) -> Bool {
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
