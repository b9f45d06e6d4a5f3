import AsyncHTTPClient
import Foundation
import Synchronization
import Toolhost
import ToolhostSession

/// Runs llama.cpp's server on 127.0.0.1 and keeps it running: started on first use on a free port, reused across
/// requests, started again if it dies, stopped by PID.
///
/// The server runs as a ``PersistentProcess`` in its own process group (so Ctrl-C at a terminal reaches toolhost,
/// not the server). Its stdin is a socket from toolhost that nothing is written to: a small launcher exits the server
/// as soon as that socket closes, so the server ends with toolhost even when toolhost is killed with SIGKILL. On a
/// normal exit ``stop()`` (or the process-wide `atexit` clean-up) closes it and, after a grace period, sends SIGTERM
/// and SIGKILL to its process group. Everything the server prints is appended to ``LocalServerConfiguration/logPath``.
public final class LocalModelServer: Sendable {
  /// A running server.
  public struct Endpoint: Sendable, Equatable {
    /// The server's process id.
    public var pid: Int32
    /// Its port on 127.0.0.1.
    public var port: Int
    /// `http://127.0.0.1:PORT/v1`.
    public var baseURL: String { "http://127.0.0.1:\(port)/v1" }
    /// From starting the process to the first answer of `/v1/models` (zero for a shared server found running).
    public var startup: Duration
    /// The bearer key requests must carry (a shared server's), or `nil`.
    public var key: String?

    /// Makes an endpoint.
    public init(pid: Int32, port: Int, startup: Duration, key: String? = nil) {
      self.pid = pid
      self.port = port
      self.startup = startup
      self.key = key
    }
  }

  /// The configuration.
  public let configuration: LocalServerConfiguration
  private let client: HTTPClient
  private let onEvent: @Sendable (LocalServerEvent) -> Void

  private struct State {
    var process: PersistentProcess?
    var endpoint: Endpoint?
    var starting: Task<Endpoint, any Error>?
    var starts = 0
    var stopped = false
  }
  private let state = Mutex(State())

  /// Makes a server manager; nothing starts until ``ensureRunning()``.
  public init(
    configuration: LocalServerConfiguration, httpClient: HTTPClient,
    onEvent: @escaping @Sendable (LocalServerEvent) -> Void = { _ in }
  ) {
    self.configuration = configuration
    self.client = httpClient
    self.onEvent = onEvent
  }

  /// How many times a server process was started.
  public var startCount: Int { state.withLock { $0.starts } }

  /// The running server's process id, if one runs.
  public var pid: Int32? {
    state.withLock { s in s.process.flatMap { $0.isRunning ? $0.pid : nil } }
  }

  /// Whether a server process is running.
  public var isRunning: Bool { pid != nil }

  /// The running server, started (or started again, if it died) when needed. Concurrent callers share one start.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when the server cannot be started or exits while
  ///   starting (the message has the end of its log and the log's path), `.timedOut` when it does not answer within
  ///   ``LocalServerConfiguration/startupTimeout``; `CancellationError` when the calling task is cancelled (the
  ///   half-started server is stopped).
  public func ensureRunning() async throws -> Endpoint {
    enum Next {
      case ready(Endpoint)
      case wait(Task<Endpoint, any Error>)
    }
    let next: Next = try state.withLock { s throws(LanguageModelError) -> Next in
      if s.stopped {
        throw LanguageModelError(kind: .configuration, message: "the local model was shut down")
      }
      if let e = s.endpoint, let p = s.process, p.isRunning { return .ready(e) }
      if let task = s.starting { return .wait(task) }
      var reason: String?
      if let p = s.process, let exit = p.exit {
        reason = "the llama.cpp server (pid \(p.pid)) \(exit.termination)"
      }
      s.process = nil
      s.endpoint = nil
      let task = Task { [self] in
        if let reason { onEvent(.restarting(reason: reason)) }
        return try await launch()
      }
      s.starting = task
      return .wait(task)
    }
    switch next {
    case .ready(let endpoint):
      return endpoint
    case .wait(let task):
      let result = await withTaskCancellationHandler {
        await task.result
      } onCancel: {
        task.cancel()
      }
      state.withLock { s in
        if s.starting == task { s.starting = nil }
      }
      try Task.checkCancellation()
      return try result.get()
    }
  }

  /// Stops the server: closes its stdin (the launcher then exits at once) and waits; SIGTERM then SIGKILL to its
  /// process group if it is still there after `grace`. Later requests fail. Does not throw.
  public func stop(grace: Duration = .seconds(3)) async {
    let (process, starting) = state.withLock { s in
      s.stopped = true
      defer {
        s.process = nil
        s.endpoint = nil
      }
      return (s.process, s.starting)
    }
    starting?.cancel()
    _ = await starting?.result
    // A start that finished after the lock above left its process in the state.
    let late = state.withLock { s in
      defer { s.process = nil }
      return s.process
    }
    for p in [process, late].compactMap({ $0 }) where p.isRunning {
      await p.shutdown(grace: grace)
      onEvent(.stopped(pid: p.pid))
    }
  }

  // MARK: - Starting

  /// The launcher: exits when stdin closes (toolhost has gone), then runs `python -m llama_cpp.server` with the
  /// arguments after `-c CODE`, with ``LlamaServerPatches`` applied. It reads descriptor 0 with `os.read`, not
  /// through `sys.stdin`: a daemon thread blocked inside the buffered reader makes Python abort (SIGABRT) when the
  /// server exits by itself.
  static let launcher =
    LlamaServerPatches.source + "\n" + """
      import os, runpy, sys, threading
      def watch():
          try:
              while os.read(0, 65536):
                  pass
          except Exception:
              pass
          os._exit(0)
      threading.Thread(target=watch, daemon=True).start()
      sys.argv = ["llama_cpp.server"] + sys.argv[1:]
      runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
      """

  private func launch() async throws -> Endpoint {
    var lastError: LanguageModelError?
    // A port found free can be taken before the server binds it: then try once more with another.
    for _ in 0..<2 {
      do {
        return try await launchOnce()
      } catch let error as LanguageModelError where error.message.contains("address already in use") {
        lastError = error
      }
    }
    throw lastError!
  }

  private func launchOnce() async throws -> Endpoint {
    let c = configuration
    let port = try Self.freePort()
    let log = try LogFile(path: c.logPath)
    onEvent(.starting(logPath: c.logPath))
    let environment = c.serverEnvironment()
    let arguments =
      [
        "-c", Self.launcher, "--model", c.modelPath, "--host", "127.0.0.1", "--port", String(port),
        "--n_ctx", String(c.contextSize), "--n_threads", String(c.threads),
      ] + c.launchArguments
    let started = ContinuousClock.now
    log.write(
      "\n=== \(Date()) toolhost (pid \(getpid())) starts: \(c.python) -m llama_cpp.server "
        + arguments.dropFirst(2).joined(separator: " ") + "\n")
    let spec = PersistentProcessSpec(
      executable: c.python, arguments: arguments, environment: environment,
      workingDirectory: URL(fileURLWithPath: c.logPath).deletingLastPathComponent().path,
      stderrTailLimit: 4 << 10, killGrace: .seconds(3))
    let process: PersistentProcess
    do {
      process = try PersistentProcess.launch(
        spec,
        handlers: .init(
          onLine: { line in log.write(line + [10]) }, onStderr: { log.write($0) },
          onExit: { exit in
            log.write("=== server exited: \(exit.termination)\n")
            log.close()
          }))
    } catch {
      log.close()
      throw LanguageModelError(
        kind: .configuration,
        message: "cannot start the llama.cpp server: \(error.description); run `\(LocalModelInstallation.setupCommand)`"
      )
    }
    state.withLock { s in
      s.process = process
      s.starts += 1
    }
    do {
      try await waitUntilReady(process, port: port, started: started)
    } catch {
      await process.shutdown(grace: .milliseconds(500))
      state.withLock { s in if s.process === process { s.process = nil } }
      throw error
    }
    let endpoint = Endpoint(pid: process.pid, port: port, startup: ContinuousClock.now - started)
    let stopped = state.withLock { s in
      if s.process === process { s.endpoint = endpoint }
      return s.stopped
    }
    if stopped {
      await process.shutdown(grace: .milliseconds(500))
      throw CancellationError()
    }
    onEvent(.ready(pid: process.pid, port: port, startup: endpoint.startup))
    return endpoint
  }

  private func waitUntilReady(_ process: PersistentProcess, port: Int, started: ContinuousClock.Instant)
    async throws
  {
    try await Self.waitUntilAnswering(
      port: port, key: nil, started: started, configuration: configuration, client: client
    ) {
      guard let exit = process.exit else { return nil }
      let hint =
        exit.termination == .signaled(SIGILL)
        ? " (an illegal instruction: llama.cpp was built for another CPU; delete the llama_cpp_python wheel in "
          + "~/.cache/toolhost/wheels and run `\(LocalModelInstallation.setupCommand)` again)"
        : ""
      return "\(exit.termination)\(hint)"
    }
  }

  /// Polls `http://127.0.0.1:PORT/v1/models` (with `key` as bearer key) every 100 ms until it answers.
  ///
  /// `ended` says how the server process ended (`nil` while it runs).
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when it ended (with the end of its log), `.timedOut`
  ///   after ``LocalServerConfiguration/startupTimeout`` from `started`; `CancellationError`.
  static func waitUntilAnswering(
    port: Int, key: String?, started: ContinuousClock.Instant, configuration: LocalServerConfiguration,
    client: HTTPClient, ended: () -> String?
  ) async throws {
    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/models")
    request.method = .GET
    if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
    let deadline = started + configuration.startupTimeout
    while true {
      try Task.checkCancellation()
      if let how = ended() {
        throw LanguageModelError(
          kind: .configuration,
          message:
            "the llama.cpp server \(how) while starting; "
            + "the end of its log (\(configuration.logPath)):\n\(logTail(configuration.logPath))")
      }
      if ContinuousClock.now > deadline {
        throw LanguageModelError(
          kind: .timedOut,
          message:
            "the llama.cpp server did not answer on 127.0.0.1:\(port) within "
            + "\(configuration.startupTimeout.components.seconds) s; see its log \(configuration.logPath)")
      }
      if let response = try? await client.execute(request, timeout: .seconds(2)), response.status == .ok {
        _ = try? await response.body.collect(upTo: 1 << 20)
        return
      }
      try await Task.sleep(for: .milliseconds(100))
    }
  }

  /// A port on 127.0.0.1 that nothing listens on right now.
  static func freePort() throws(LanguageModelError) -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else {
      throw LanguageModelError(kind: .configuration, message: "cannot make a socket to find a free port")
    }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
        bind(fd, a, length) == 0 && getsockname(fd, a, &length) == 0
      }
    }
    guard ok else {
      throw LanguageModelError(
        kind: .configuration,
        message: "cannot find a free port on 127.0.0.1: \(String(cString: strerror(errno)))")
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// The last lines of the log, for error messages.
  static func logTail(_ path: String, lines: Int = 12) -> String {
    guard let data = FileManager.default.contents(atPath: path) else { return "(no log)" }
    let text = String(decoding: data.suffix(8 << 10), as: UTF8.self)
    return text.split(separator: "\n", omittingEmptySubsequences: true).suffix(lines).map { "  " + $0 }
      .joined(separator: "\n")
  }
}
