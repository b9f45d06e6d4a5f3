public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ToolhostJSON
import ToolhostSession
import ToolhostSystem

/// A llama.cpp server that outlives the toolhost that started it, so the next `ask` or `chat` finds the model loaded
/// and the instructions and tool list already read, as Ollama's `keep_alive` does.
///
/// The server is found through a state file in ``SharedServerConfiguration/runDirectory`` (one per model, 0600,
/// the user's own; a file anyone else could have written is not trusted) and started under an exclusive lock on a
/// lock file beside it, so concurrent invocations start one server and share it. The server process runs in a
/// session of its own (Ctrl-C at a terminal does not reach it), answers only requests that carry the random key in
/// the state file (it is ``ModelServerProgram/shared``: the port it reports is one it bound itself), and stops by
/// itself once it has had no request with that key for the keep-alive time (requests without it are refused and do
/// not count), also when every toolhost was killed with SIGKILL. ``stop()`` stops it at once.
///
/// ```swift
/// let installation = try LocalModelInstallation.locate()
/// let shared = SharedModelServer(
///   server: LocalServerConfiguration(
///     python: installation.python, modelPath: installation.defaultModel, logPath: installation.serverLog),
///   shared: SharedServerConfiguration(runDirectory: installation.runDirectory), httpClient: client)
/// let endpoint = try await shared.ensureRunning()
/// ```
public final class SharedModelServer: Sendable {
  /// The server's command line and model.
  public let configuration: LocalServerConfiguration
  /// Where the state lives and the keep-alive time for a server this starts.
  public let shared: SharedServerConfiguration
  private let client: HTTPClient
  private let onEvent: @Sendable (LocalServerEvent) -> Void

  /// Makes a handle; nothing starts until ``ensureRunning()``.
  public init(
    server: LocalServerConfiguration, shared: SharedServerConfiguration, httpClient: HTTPClient,
    onEvent: @escaping @Sendable (LocalServerEvent) -> Void = { _ in }
  ) {
    self.configuration = server
    self.shared = shared
    self.client = httpClient
    self.onEvent = onEvent
  }

  /// The marker in the server's command line that tells it from any other process with a recycled PID.
  static let marker = "toolhost-model-server"

  /// The state file for this model: `run/server-<64-bit FNV-1a hash of the model path, in hex>.json`.
  public var statePath: String { shared.runDirectory + "/" + Self.modelKey(configuration.modelPath) + ".json" }
  private var lockPath: String { shared.runDirectory + "/" + Self.modelKey(configuration.modelPath) + ".lock" }

  static func modelKey(_ modelPath: String) -> String {
    // FNV-1a, 64 bits: a file name, not a secret.
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in modelPath.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return "server-" + String(hash, radix: 16)
  }

  // MARK: - Status

  /// The recorded server if it is running and answers with its key; `nil` when none runs. A state file left by a
  /// server that is gone is removed.
  public func status() async -> SharedServerRecord? {
    guard let record = readRecord() else { return nil }
    if await answers(record) { return record }
    if !Self.isOurs(record.pid) { try? FileManager.default.removeItem(atPath: statePath) }
    return nil
  }

  /// Every shared server recorded in `runDirectory` that still runs (for `toolhost model status`).
  public static func running(in runDirectory: String) -> [SharedServerRecord] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: runDirectory)) ?? []
    return names.filter { $0.hasPrefix("server-") && $0.hasSuffix(".json") }.sorted().compactMap { name in
      guard let record = readRecord(at: runDirectory + "/" + name), isOurs(record.pid) else { return nil }
      return record
    }
  }

  // MARK: - Starting

  /// The running shared server for this model, started when none answers. Concurrent callers, in this process or
  /// others, share one start.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when the run folder is unsafe or the server cannot
  ///   start (the message has the end of its log), `.timedOut` when it does not answer within the start-up timeout;
  ///   `CancellationError`.
  public func ensureRunning() async throws -> LocalModelServer.Endpoint {
    if let record = readRecord(), await answers(record) { return endpoint(record, startup: .zero) }
    try prepareRunDirectory()
    let lock = try await FileLock.acquire(lockPath)
    defer { lock.release() }
    // Another invocation may have started it while this one waited for the lock.
    if let record = readRecord() {
      if await answers(record) { return endpoint(record, startup: .zero) }
      if Self.isOurs(record.pid) {
        onEvent(.restarting(reason: "the shared llama.cpp server (pid \(record.pid)) does not answer"))
        await Self.terminate(record.pid, grace: .seconds(2))
      } else {
        onEvent(.restarting(reason: "the shared llama.cpp server (pid \(record.pid)) has exited"))
      }
      try? FileManager.default.removeItem(atPath: statePath)
    }
    return try await launch()
  }

  /// Stops the recorded server (SIGTERM, then SIGKILL after `grace`) and removes its state file.
  ///
  /// - Returns: the server that was stopped, or `nil` when none ran. Does not throw.
  @discardableResult
  public func stop(grace: Duration = .seconds(5)) async -> SharedServerRecord? {
    guard FileManager.default.fileExists(atPath: statePath) else { return nil }
    // Under the lock, so a start in progress finishes first and its record is the one read.
    let lock = try? await FileLock.acquire(lockPath)
    defer { lock?.release() }
    guard let record = readRecord() else { return nil }
    let ours = Self.isOurs(record.pid)
    if ours {
      await Self.terminate(record.pid, grace: grace)
      onEvent(.stopped(pid: record.pid))
    }
    try? FileManager.default.removeItem(atPath: statePath)
    return ours ? record : nil
  }

  private func endpoint(_ record: SharedServerRecord, startup: Duration) -> LocalModelServer.Endpoint {
    LocalModelServer.Endpoint(pid: record.pid, port: record.port, startup: startup, key: record.key)
  }

  private func prepareRunDirectory() throws(LanguageModelError) {
    do { try FileSafety.makePrivateFolder(shared.runDirectory) } catch {
      throw LanguageModelError(
        kind: .configuration, message: "cannot make the folder \(shared.runDirectory): \(error.code)")
    }
    if let problem = FileSafety.folderProblem(shared.runDirectory) {
      throw LanguageModelError(kind: .configuration, message: "the local model's run folder is refused: \(problem)")
    }
  }

  private func launch() async throws -> LocalModelServer.Endpoint {
    let c = configuration
    let started = ContinuousClock.now
    let log = try LogFile(path: c.logPath)
    defer { log.close() }
    onEvent(.starting(logPath: c.logPath))
    let key = ModelServerProgram.makeKey()
    let settings = ModelServerProgram.settings(
      c, idle: Int(shared.keepAlive.components.seconds), statePath: statePath, lockPath: lockPath)
    log.write(
      "\n=== \(Date()) toolhost (pid \(getpid())) starts a shared server (keep-alive "
        + "\(shared.keepAlive.components.seconds) s): \(ModelServerProgram.summary(c))\n")
    var environment = c.serverEnvironment()
    environment[ModelServerProgram.keyVariable] = key
    // stdout is a pipe on which the server reports its PID and port; stderr is the log.
    var pipe: [Int32] = [-1, -1]
    let nullFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    defer {
      for fd in [nullFD, pipe[0], pipe[1]] where fd >= 0 { close(fd) }
    }
    guard nullFD >= 0, Glibc.pipe(&pipe) == 0,
      fcntl(pipe[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(pipe[1], F_SETFD, FD_CLOEXEC) == 0
    else {
      throw LanguageModelError(
        kind: .configuration,
        message: "cannot make a pipe for the llama.cpp server: \(String(cString: strerror(errno)))")
    }
    let first: ProcessOutcome.Termination
    do {
      first = try await runDaemonizing(
        executable: c.python, arguments: ["-c", ModelServerProgram.shared, settings], environment: environment,
        workingDirectory: shared.runDirectory, stdio: (nullFD, pipe[1], log.descriptor))
    } catch {
      throw LanguageModelError(
        kind: .configuration,
        message: "cannot start the llama.cpp server: \(error.description); run `\(LocalModelInstallation.setupCommand)`"
      )
    }
    close(pipe[1])
    pipe[1] = -1
    let readFD = pipe[0]
    // The server writes one line and then points its stdout at the log, so the read ends at the newline or EOF.
    let line: [UInt8] = await onThreadOfItsOwn(name: "toolhost-model-report", stackSize: 256 << 10) {
      var data: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 256)
      while !data.contains(10) {
        let n = read(readFD, &buffer, buffer.count)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        data += buffer[0..<n]
      }
      return data
    }
    guard let (pid, port) = ModelServerProgram.report(line) else {
      throw LanguageModelError(
        kind: .configuration,
        message: "the llama.cpp server did not start (its first process \(first)); the end of its log "
          + "(\(c.logPath)):\n\(LocalModelServer.logTail(c.logPath))")
    }
    let record = SharedServerRecord(
      pid: pid, port: port, key: key, model: c.modelPath, keepAliveSeconds: Int(shared.keepAlive.components.seconds),
      started: Date().timeIntervalSince1970)
    do {
      _ = try await LocalModelServer.waitUntilAnswering(
        key: key, started: started, configuration: c, client: client, port: { port },
        ended: { Self.isAlive(pid) ? nil : "exited" })
    } catch {
      await Self.terminate(pid, grace: .milliseconds(500))
      throw error
    }
    let text = (try? JSONValueEncoder().encode(record).serialized()) ?? "{}"
    do { try FileSafety.writeSecretFile(statePath, Array(text.utf8)) } catch {
      await Self.terminate(pid, grace: .milliseconds(500))
      throw LanguageModelError(
        kind: .configuration, message: "cannot write the local model's state file \(statePath): \(error.code)")
    }
    let startup = ContinuousClock.now - started
    onEvent(.ready(pid: pid, port: port, startup: startup))
    return endpoint(record, startup: startup)
  }

  /// Whether the server of `record` answers `/toolhost/alive` with its key: a route its access guard answers
  /// itself, also while the model generates for another client (llama.cpp's own routes wait for the model then, and
  /// a busy server was taken for a hung one and restarted under that client).
  private func answers(_ record: SharedServerRecord) async -> Bool {
    guard record.model == configuration.modelPath, Self.isAlive(record.pid) else { return false }
    var request = HTTPClientRequest(url: "http://127.0.0.1:\(record.port)/toolhost/alive")
    request.method = .GET
    request.headers.add(name: "Authorization", value: "Bearer \(record.key)")
    request.headers.add(name: "User-Agent", value: ToolhostVersion.userAgent)
    guard let response = try? await client.execute(request, timeout: .seconds(3)) else { return false }
    _ = try? await response.body.collect(upTo: 1 << 20)
    return response.status == .ok
  }

  private func readRecord() -> SharedServerRecord? { Self.readRecord(at: statePath) }

  private static func readRecord(at path: String) -> SharedServerRecord? {
    // The user's own file only: a record someone else wrote could point requests at their server.
    guard let bytes = try? FileSafety.readRegularFile(path, limit: 64 << 10, user: getuid()) else { return nil }
    guard let json = try? JSONValue.parse(bytes) else { return nil }
    return try? JSONValueDecoder().decode(SharedServerRecord.self, from: json)
  }

  static func isAlive(_ pid: Int32) -> Bool { pid > 0 && (kill(pid, 0) == 0 || errno == EPERM) }

  /// Whether `pid` is a shared model server (its command line has the marker), not a recycled PID.
  static func isOurs(_ pid: Int32) -> Bool {
    guard pid > 0, let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else {
      return false
    }
    return String(decoding: data, as: UTF8.self).contains(marker)
  }

  /// SIGTERM, then SIGKILL after `grace`, to a server process (only if it is one).
  static func terminate(_ pid: Int32, grace: Duration) async {
    guard isOurs(pid) else { return }
    kill(pid, SIGTERM)
    let deadline = ContinuousClock.now + grace
    while ContinuousClock.now < deadline {
      if !isOurs(pid) { return }
      try? await Task.sleep(for: .milliseconds(50))
    }
    if isOurs(pid) { kill(pid, SIGKILL) }
    for _ in 0..<40 where isOurs(pid) { try? await Task.sleep(for: .milliseconds(25)) }
  }
}
