public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import ToolhostSession
import ToolhostSystem

/// Runs llama.cpp's server on 127.0.0.1 and keeps it running: started on first use, reused across requests, started
/// again if it dies, stopped by PID.
///
/// The server is ``ModelServerProgram/own``: it binds its own socket on a port the kernel picks and reports the port
/// on its stdout, which only toolhost reads, and it answers only requests that carry the random key it was given in
/// its environment (``Endpoint/key``), so another account on the machine can neither take its place nor use it.
///
/// The server runs as a ``PersistentProcess`` in its own process group (so Ctrl-C at a terminal reaches toolhost,
/// not the server). Its stdin is a socket from toolhost that nothing is written to: the server program exits
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
    /// The bearer key every request must carry (`Authorization: Bearer KEY`); the server answers 401 without it.
    public var key: String

    /// Makes an endpoint.
    public init(pid: Int32, port: Int, startup: Duration, key: String) {
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

  /// Stops the server: closes its stdin (the server program then exits at once) and waits; SIGTERM then SIGKILL to
  /// its process group if it is still there after `grace`. Later requests fail. Does not throw.
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

  private func launch() async throws -> Endpoint {
    let c = configuration
    let log = try LogFile(path: c.logPath)
    onEvent(.starting(logPath: c.logPath))
    let key = ModelServerProgram.makeKey()
    var environment = c.serverEnvironment()
    environment[ModelServerProgram.keyVariable] = key
    let arguments = ["-c", ModelServerProgram.own, ModelServerProgram.settings(c)]
    let started = ContinuousClock.now
    log.write(
      "\n=== \(Date()) toolhost (pid \(getpid())) starts: \(ModelServerProgram.summary(c))\n")
    let spec = PersistentProcessSpec(
      executable: c.python, arguments: arguments, environment: environment,
      workingDirectory: URL(fileURLWithPath: c.logPath).deletingLastPathComponent().path,
      stderrTailLimit: 4 << 10, killGrace: .seconds(3))
    // The first line on stdout is the program's report of its port; it then sends stdout to the log.
    let firstLine = FirstLine()
    let process: PersistentProcess
    do {
      process = try PersistentProcess.launch(
        spec,
        handlers: .init(
          onLine: { line in
            if !firstLine.keep(line) { log.write(line + [10]) }
          }, onStderr: { log.write($0) },
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
    let port: Int
    do {
      port = try await waitUntilReady(process, key: key, firstLine: firstLine, started: started)
    } catch {
      await process.shutdown(grace: .milliseconds(500))
      state.withLock { s in if s.process === process { s.process = nil } }
      throw error
    }
    let endpoint = Endpoint(pid: process.pid, port: port, startup: ContinuousClock.now - started, key: key)
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

  /// Waits for the program's report of its port, then for the server to answer there with `key`.
  ///
  /// - Returns: the port.
  private func waitUntilReady(
    _ process: PersistentProcess, key: String, firstLine: FirstLine, started: ContinuousClock.Instant
  ) async throws -> Int {
    try await Self.waitUntilAnswering(
      key: key, started: started, configuration: configuration, client: client,
      port: { firstLine.line.flatMap { ModelServerProgram.report($0)?.port } },
      ended: {
        if let line = firstLine.line, ModelServerProgram.report(line) == nil {
          return "printed \(String(decoding: line.prefix(200), as: UTF8.self).debugDescription) instead of its port"
        }
        guard let exit = process.exit else { return nil }
        let hint =
          exit.termination == .signaled(SIGILL)
          ? " (an illegal instruction: llama.cpp was built for another CPU; delete the llama_cpp_python wheel in "
            + "~/.cache/toolhost/wheels and run `\(LocalModelInstallation.setupCommand)` again)"
          : ""
        return "\(exit.termination)\(hint)"
      })
  }

  /// Polls `http://127.0.0.1:PORT/v1/models` with `key` as bearer key every 100 ms until it answers, once `port`
  /// knows the port (the server reported it).
  ///
  /// `ended` says how the server process ended, or what else went wrong (`nil` while it runs and all is well).
  /// - Returns: the port.
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when it ended (with the end of its log), `.timedOut`
  ///   after ``LocalServerConfiguration/startupTimeout`` from `started`; `CancellationError`.
  static func waitUntilAnswering(
    key: String, started: ContinuousClock.Instant, configuration: LocalServerConfiguration, client: HTTPClient,
    port: () -> Int?, ended: () -> String?
  ) async throws -> Int {
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
            "the llama.cpp server did not answer on 127.0.0.1:\(port().map(String.init) ?? "(no port yet)") within "
            + "\(configuration.startupTimeout.components.seconds) s; see its log \(configuration.logPath)")
      }
      if let port = port() {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/models")
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "User-Agent", value: ToolhostVersion.userAgent)
        if let response = try? await client.execute(request, timeout: .seconds(2)), response.status == .ok {
          _ = try? await response.body.collect(upTo: 1 << 20)
          return port
        }
      }
      try await Task.sleep(for: .milliseconds(port() == nil ? 20 : 100))
    }
  }

  /// The last lines of the log, for error messages.
  static func logTail(_ path: String, lines: Int = 12) -> String {
    guard let data = FileManager.default.contents(atPath: path) else { return "(no log)" }
    let text = String(decoding: data.suffix(8 << 10), as: UTF8.self)
    return text.split(separator: "\n", omittingEmptySubsequences: true).suffix(lines).map { "  " + $0 }
      .joined(separator: "\n")
  }
}

/// The first line a server printed on stdout: its report of its port.
private final class FirstLine: Sendable {
  private let first = Mutex<[UInt8]?>(nil)

  /// The line, once printed.
  var line: [UInt8]? { first.withLock { $0 } }

  /// Keeps `line` if it is the first; whether it was.
  func keep(_ line: [UInt8]) -> Bool {
    first.withLock { first in
      guard first == nil else { return false }
      first = line
      return true
    }
  }
}
