import Dispatch
import Foundation
import Synchronization
import Toolhost
import ToolhostJSON

typealias Completion = @Sendable (Result<JSONValue, MCPConnectionError>) -> Void

/// One run of a server process: its handshake, its pending requests, and its end.
final class MCPSession: Sendable {
  enum Phase: Sendable {
    case starting
    case ready
    case dead
  }

  struct Pending {
    var method: String
    var completion: Completion
  }

  struct State {
    var phase = Phase.starting
    var process: PersistentProcess?
    var pending: [JSONRPCID: Pending] = [:]
    var nextID: Int64 = 0
    var readyWaiters: [@Sendable (Result<MCPSession, MCPConnectionError>) -> Void] = []
    var info: MCPServerInfo?
    var failure: MCPConnectionError?
  }

  let state = Mutex(State())
  let configuration: MCPServerConfiguration
  let log: @Sendable (String) -> Void
  let onStderr: @Sendable ([UInt8]) -> Void
  let onToolsChanged: @Sendable () -> Void

  init(
    configuration: MCPServerConfiguration, log: @escaping @Sendable (String) -> Void,
    onStderr: @escaping @Sendable ([UInt8]) -> Void, onToolsChanged: @escaping @Sendable () -> Void
  ) {
    self.configuration = configuration
    self.log = log
    self.onStderr = onStderr
    self.onToolsChanged = onToolsChanged
  }

  enum ReadyState {
    case ready
    case queued
    case dead
  }

  /// Calls `body` once the handshake is done (now, when it is), or reports that this session is dead.
  func whenReady(_ body: @escaping @Sendable (Result<MCPSession, MCPConnectionError>) -> Void)
    -> ReadyState
  {
    state.withLock { s in
      switch s.phase {
      case .ready: return .ready
      case .dead: return .dead
      case .starting:
        s.readyWaiters.append(body)
        return .queued
      }
    }
  }

  var processID: Int32? { state.withLock { $0.phase == .dead ? nil : $0.process?.pid } }
  var process: PersistentProcess? { state.withLock { $0.process } }
  var info: MCPServerInfo? { state.withLock { $0.info } }

  /// Starts the process and the handshake; the ready waiters hear how it went.
  func start() {
    let c = configuration
    let spec = PersistentProcessSpec(
      executable: c.executable, arguments: c.arguments, environment: c.environment,
      workingDirectory: c.workingDirectory, limits: c.limits)
    let process: PersistentProcess
    do {
      process = try PersistentProcess.launch(
        spec,
        handlers: .init(
          onLine: { [self] in received($0) }, onStderr: { [self] in onStderr($0) },
          onExit: { [self] exit in
            fail(.serverExited(termination: exit.termination, log: exit.stderrTail), stop: false)
          }))
    } catch {
      fail(.launchFailed(error), stop: false)
      return
    }
    state.withLock { $0.process = process }
    let params: JSONValue = [
      "protocolVersion": .string(MCPProtocol.latestVersion),
      "capabilities": [:],
      "clientInfo": ["name": "toolhost", "version": .string(MCPProtocol.implementationVersion)],
    ]
    send("initialize", params: params, timeout: c.startupTimeout) { [self] result in
      switch result {
      case .failure(.requestTimedOut):
        fail(.startupTimedOut(limit: c.startupTimeout, log: process.stderrTail), stop: true)
      case .failure(.errorResponse(let e)):
        fail(.handshakeFailed(reason: e.description, log: process.stderrTail), stop: true)
      case .failure(let e):
        fail(e, stop: true)
      case .success(let r):
        guard let version = r["protocolVersion"]?.stringValue else {
          fail(
            .handshakeFailed(reason: "the initialize result has no protocolVersion", log: ""),
            stop: true)
          return
        }
        guard MCPProtocol.supportedVersions.contains(version) else {
          fail(.unsupportedProtocolVersion(version), stop: true)
          return
        }
        let info = MCPServerInfo(
          name: r["serverInfo"]?["name"]?.stringValue ?? c.name,
          version: r["serverInfo"]?["version"]?.stringValue ?? "", protocolVersion: version,
          capabilities: r["capabilities"] ?? [:], instructions: r["instructions"]?.stringValue)
        notify("notifications/initialized", params: nil)
        let waiters = state.withLock {
          s -> [@Sendable (Result<MCPSession, MCPConnectionError>) -> Void] in
          guard s.phase == .starting else { return [] }
          s.phase = .ready
          s.info = info
          defer { s.readyWaiters = [] }
          return s.readyWaiters
        }
        for w in waiters { w(.success(self)) }
      }
    }
  }

  /// Ends the session: every pending request and waiter fails with `error`; the process group is ended when
  /// `stop` is set.
  func fail(_ error: MCPConnectionError, stop: Bool) {
    let (pending, waiters, process) = state.withLock {
      s -> (
        [Pending], [@Sendable (Result<MCPSession, MCPConnectionError>) -> Void], PersistentProcess?
      ) in
      if s.phase != .dead {
        s.phase = .dead
        s.failure = error
      }
      defer {
        s.pending = [:]
        s.readyWaiters = []
      }
      return (Array(s.pending.values), s.readyWaiters, s.process)
    }
    if stop { process?.terminate() }
    let reported = state.withLock { $0.failure } ?? error
    for p in pending { p.completion(.failure(reported)) }
    for w in waiters { w(.failure(reported)) }
  }

  /// Sends a request; `completion` gets the result, the error response, the time limit or the session's end.
  /// Returns the request's id, or `nil` when the session is dead (the completion has been called then).
  @discardableResult
  func send(
    _ method: String, params: JSONValue?, timeout: Duration?, completion: @escaping Completion
  )
    -> JSONRPCID?
  {
    let sent = state.withLock { s -> (JSONRPCID, PersistentProcess?)? in
      guard s.phase != .dead else { return nil }
      s.nextID += 1
      let id = JSONRPCID.number(s.nextID)
      s.pending[id] = Pending(method: method, completion: completion)
      return (id, s.process)
    }
    guard let (id, process) = sent else {
      completion(.failure(state.withLock { $0.failure } ?? .shutDown))
      return nil
    }
    if let timeout {
      // The timer does nothing when the request is no longer pending (answered, cancelled, or the session ended).
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout.secondsValue) { [self] in
        timedOut(id, limit: timeout)
      }
    }
    process?.send(JSONRPCMessage.request(id: id, method: method, params: params).line)
    return id
  }

  /// Sends a notification.
  func notify(_ method: String, params: JSONValue?) {
    let process = state.withLock { $0.phase == .dead ? nil : $0.process }
    process?.send(JSONRPCMessage.notification(method: method, params: params).line)
  }

  /// Gives up on a request: it no longer waits, and the server is told with `notifications/cancelled`.
  /// Returns the completion when the request was still pending.
  func cancel(_ id: JSONRPCID, reason: String) -> Completion? {
    guard let pending = take(id) else { return nil }
    if pending.method != "initialize" {  // MCP: initialize must not be cancelled.
      notify("notifications/cancelled", params: ["requestId": id.json, "reason": .string(reason)])
    }
    return pending.completion
  }

  private func take(_ id: JSONRPCID) -> Pending? {
    state.withLock { $0.pending.removeValue(forKey: id) }
  }

  private func timedOut(_ id: JSONRPCID, limit: Duration) {
    guard let pending = take(id) else { return }
    if pending.method != "initialize" {
      notify(
        "notifications/cancelled",
        params: [
          "requestId": id.json,
          "reason": .string("timed out after \(limit.messageText)"),
        ])
    }
    pending.completion(.failure(.requestTimedOut(method: pending.method, limit: limit)))
    if pending.method == "tools/call" { checkHealth() }
  }

  /// After a timed-out call: a server that does not answer `ping` either is hung, and is stopped.
  private func checkHealth() {
    send("ping", params: nil, timeout: configuration.healthCheckTimeout) { [self] result in
      if case .failure(.requestTimedOut) = result {
        log("toolhost: the server did not answer ping after a timed-out call; stopping it")
        fail(
          .unresponsive(
            reason:
              "no answer to ping within \(configuration.healthCheckTimeout.messageText) after a timed-out call"
          ), stop: true)
      }
    }
  }

  /// One line from the server's stdout (on the process's I/O thread).
  private func received(_ line: [UInt8]) {
    let message: JSONRPCMessage
    do { message = try JSONRPCMessage.parse(line) } catch {
      let text = String(decoding: line.prefix(300), as: UTF8.self)
      log(
        "toolhost: ignored a line on the server's stdout that is not a JSON-RPC message (\(error.message)): \(text)"
      )
      return
    }
    switch message {
    case .response(let id, let result):
      guard let p = take(id) else { return }  // late: it timed out or was cancelled
      p.completion(.success(result))
    case .errorResponse(let id, let error):
      guard let id, let p = take(id) else {
        log("toolhost: the server reported an error: \(error.description)")
        return
      }
      p.completion(.failure(.errorResponse(error)))
    case .request(let id, let method, _):
      // toolhost declares no client capabilities: it answers ping and refuses the rest.
      let reply: JSONRPCMessage =
        method == "ping"
        ? .response(id: id, result: [:])
        : .errorResponse(
          id: id,
          error: JSONRPCError(
            code: JSONRPCError.methodNotFound, message: "toolhost does not support \(method)"))
      let process = state.withLock { $0.process }
      process?.send(reply.line)
    case .notification(let method, let params):
      switch method {
      case "notifications/message":
        let level = params?["level"]?.stringValue ?? "info"
        let data = params?["data"].map { $0.stringValue ?? $0.serialized() } ?? ""
        log("[\(level)] \(data)")
      case "notifications/tools/list_changed":
        onToolsChanged()
      default:
        break
      }
    }
  }
}

/// A handle on a request in flight, to cancel it.
final class RequestToken: Sendable {
  private struct State {
    var session: MCPSession?
    var id: JSONRPCID?
    var cancelled: String?
  }
  private let state = Mutex(State())

  var cancelReason: String? { state.withLock { $0.cancelled } }

  func bind(_ session: MCPSession, _ id: JSONRPCID) {
    let reason = state.withLock { s -> String? in
      s.session = session
      s.id = id
      return s.cancelled
    }
    if let reason { session.cancel(id, reason: reason)?(.failure(.cancelled)) }
  }

  func cancel(reason: String) {
    let bound = state.withLock { s -> (MCPSession, JSONRPCID)? in
      if s.cancelled == nil { s.cancelled = reason }
      guard let session = s.session, let id = s.id else { return nil }
      return (session, id)
    }
    if let (session, id) = bound { session.cancel(id, reason: reason)?(.failure(.cancelled)) }
  }
}

/// A connection to one MCP stdio server: it starts the server when first needed, runs the initialize handshake
/// (asking for the newest protocol version toolhost speaks and accepting any of ``MCPProtocol/supportedVersions``
/// the server answers), and then sends requests, many at once, matched to their answers by id.
///
/// Every request has a time limit; when it passes, the server is sent `notifications/cancelled` and the request
/// fails. After a timed-out tool call the server must answer `ping` within
/// ``MCPServerConfiguration/healthCheckTimeout`` or it is stopped as hung. A server that exits (or is stopped) is
/// started again by the next request. Its stderr is kept as ``log``. ``shutdown()`` closes its stdin, gives it
/// ``MCPServerConfiguration/shutdownGrace`` to exit, then ends its process group; servers still running when the
/// host exits are ended the same way.
///
/// The reading happens on the server process's own I/O thread; no task ever blocks on the server.
public final class MCPServerConnection: Sendable {
  private struct State {
    var session: MCPSession?
    var closed = false
    var starts = 0
    var log: [UInt8] = []
    var toolsChanged = false
  }

  /// How the server is started.
  public let configuration: MCPServerConfiguration
  private let state = Mutex(State())
  private static let logLimit = 16 << 10

  /// Makes a connection; the server is started by the first request (or ``start()``).
  public init(_ configuration: MCPServerConfiguration) {
    self.configuration = configuration
  }

  /// The end of the server's stderr (and of its log notifications), across restarts.
  public var log: String {
    String(decoding: state.withLock { $0.log }, as: UTF8.self)
  }

  /// The running server's process id (also its process group id), if it runs.
  public var processID: Int32? { state.withLock { $0.session }?.processID }

  /// How many times the server has been started.
  public var startCount: Int { state.withLock { $0.starts } }

  /// What the running server said about itself, once the handshake is done.
  public var serverInfo: MCPServerInfo? { state.withLock { $0.session }?.info }

  /// Whether the server sent `notifications/tools/list_changed` since the connection was made.
  public var toolsChanged: Bool { state.withLock { $0.toolsChanged } }

  private func appendLog(_ bytes: [UInt8]) {
    state.withLock { s in
      s.log.append(contentsOf: bytes)
      if s.log.count > 2 * Self.logLimit { s.log.removeFirst(s.log.count - Self.logLimit) }
    }
  }

  /// Calls `body` with a ready session: the running one, or a new one started now.
  func withSession(_ body: @escaping @Sendable (Result<MCPSession, MCPConnectionError>) -> Void) {
    enum Next {
      case now(Result<MCPSession, MCPConnectionError>)
      case wait
      case launch(MCPSession)
    }
    let next = state.withLock { s -> Next in
      if s.closed { return .now(.failure(.shutDown)) }
      if let session = s.session {
        switch session.whenReady(body) {
        case .ready: return .now(.success(session))
        case .queued: return .wait
        case .dead: break
        }
      }
      let session = MCPSession(
        configuration: configuration,
        log: { [weak self] text in self?.appendLog(Array((text + "\n").utf8)) },
        onStderr: { [weak self, sink = configuration.onStderr] chunk in
          self?.appendLog(chunk)
          sink?(chunk)
        },
        onToolsChanged: { [weak self] in self?.state.withLock { $0.toolsChanged = true } })
      _ = session.whenReady(body)
      s.session = session
      s.starts += 1
      return .launch(session)
    }
    switch next {
    case .now(let result): body(result)
    case .wait: break
    case .launch(let session): session.start()
    }
  }

  /// Sends a request once a session is ready; `completion` gets the outcome. Returns a token to cancel it.
  @discardableResult
  func request(
    _ method: String, params: JSONValue?, timeout: Duration?, completion: @escaping Completion
  ) -> RequestToken {
    let token = RequestToken()
    withSession { result in
      switch result {
      case .failure(let e): completion(.failure(e))
      case .success(let session):
        if token.cancelReason != nil {
          completion(.failure(.cancelled))
          return
        }
        if let id = session.send(method, params: params, timeout: timeout, completion: completion) {
          token.bind(session, id)
        }
      }
    }
    return token
  }

  /// Sends a request and waits for its result.
  ///
  /// Cancelling the calling task sends `notifications/cancelled` and fails with ``MCPConnectionError/cancelled``.
  /// - Throws: ``MCPConnectionError`` for every failure: start-up, time limit, the server's death, an error
  ///   response.
  public func request(_ method: String, params: JSONValue? = nil, timeout: Duration? = nil)
    async throws(MCPConnectionError) -> JSONValue
  {
    try await perform(method, params: params, timeout: timeout ?? configuration.requestTimeout)
      .get()
  }

  func perform(_ method: String, params: JSONValue?, timeout: Duration?) async -> Result<
    JSONValue, MCPConnectionError
  > {
    let promise = OneShot<Result<JSONValue, MCPConnectionError>>()
    let token = request(method, params: params, timeout: timeout) { promise.complete($0) }
    return await withTaskCancellationHandler {
      await promise.wait()
    } onCancel: {
      token.cancel(reason: "the client cancelled the call")
      promise.complete(.failure(.cancelled))
    }
  }

  /// Starts the server (when it does not run) and waits for the handshake.
  ///
  /// - Returns: what the server said about itself.
  /// - Throws: ``MCPConnectionError``: `.launchFailed`, `.startupTimedOut`, `.handshakeFailed`,
  ///   `.unsupportedProtocolVersion`, `.serverExited` or `.shutDown`.
  @discardableResult
  public func start() async throws(MCPConnectionError) -> MCPServerInfo {
    let promise = OneShot<Result<MCPSession, MCPConnectionError>>()
    withSession { promise.complete($0) }
    let session = try await promise.wait().get()
    guard let info = session.info else { throw .shutDown }
    return info
  }

  /// Checks that the server answers.
  ///
  /// - Throws: ``MCPConnectionError`` when it does not within `timeout` (default: the request timeout).
  public func ping(timeout: Duration? = nil) async throws(MCPConnectionError) {
    _ = try await request("ping", timeout: timeout)
  }

  /// Lists every tool of the server, following `nextCursor` (at most 100 pages).
  ///
  /// - Throws: ``MCPConnectionError``; `.invalidResponse` when the result has no `tools` array or an entry has no
  ///   name.
  public func listTools() async throws(MCPConnectionError) -> [MCPToolInfo] {
    let promise = OneShot<Result<[MCPToolInfo], MCPConnectionError>>()
    listTools(cursor: nil, found: [], pages: 0) { promise.complete($0) }
    return try await promise.wait().get()
  }

  /// The callback form of ``listTools()``, for callers that cannot await (discovery).
  func listTools(
    cursor: String?, found: [MCPToolInfo], pages: Int,
    completion: @escaping @Sendable (Result<[MCPToolInfo], MCPConnectionError>) -> Void
  ) {
    let params: JSONValue? = cursor.map { ["cursor": .string($0)] }
    request("tools/list", params: params, timeout: configuration.requestTimeout) { [self] result in
      switch result {
      case .failure(let e): completion(.failure(e))
      case .success(let value):
        guard let entries = value["tools"]?.arrayValue else {
          completion(.failure(.invalidResponse("the tools/list result has no \"tools\" array")))
          return
        }
        var all = found
        do throws(MCPConnectionError) {
          for entry in entries { all.append(try MCPToolInfo(json: entry)) }
        } catch {
          completion(.failure(error))
          return
        }
        if let next = value["nextCursor"]?.stringValue, !next.isEmpty, next != cursor, pages < 99 {
          listTools(cursor: next, found: all, pages: pages + 1, completion: completion)
        } else {
          completion(.success(all))
        }
      }
    }
  }

  /// The server's tools as ``MCPTool``s that call it.
  ///
  /// - Throws: ``MCPConnectionError`` as ``listTools()``, or `.invalidResponse` when a tool's input schema does
  ///   not compile (use ``MCPTool/init(info:connection:name:timeout:)`` to handle tools one by one).
  public func tools(timeout: Duration = .seconds(30)) async throws(MCPConnectionError) -> [MCPTool] {
    var tools: [MCPTool] = []
    for info in try await listTools() {
      do { tools.append(try MCPTool(info: info, connection: self, timeout: timeout)) } catch {
        throw .invalidResponse(
          "tool \(info.name): its inputSchema cannot be used: \(error.description)")
      }
    }
    return tools
  }

  /// Calls a tool of the server.
  ///
  /// The time limit starts when the request is sent (a server that must start first has its own startup time
  /// limit). On timeout the server is sent `notifications/cancelled`; if it does not answer `ping` right after, it
  /// is stopped and started again on the next call.
  /// - Returns: `structuredContent` as the output's value and the text content blocks, joined by line feeds, as
  ///   its text (other blocks appear as a bracketed note such as `[image image/png, 1.2 KiB]`).
  /// - Throws: ``ToolFailure``: `.toolReported` for a result with `isError: true` (its text as the message, its
  ///   `structuredContent` as data) or an error response; `.timedOut`, `.cancelled`, `.exited`, `.signaled`,
  ///   `.launchFailed` or `.invalidReply` for the rest.
  public func callTool(_ name: String, arguments: JSONValue, timeout: Duration)
    async throws(ToolFailure)
    -> ToolOutput
  {
    let result = await perform(
      "tools/call", params: ["name": .string(name), "arguments": arguments], timeout: timeout)
    switch result {
    case .failure(let e): throw e.toolFailure(executable: configuration.executable, limit: timeout)
    case .success(let value): return try Self.output(from: value)
    }
  }

  /// Reads a `tools/call` result.
  ///
  /// - Throws: ``ToolFailure/toolReported(message:code:data:)`` when `isError` is true,
  ///   ``ToolFailure/invalidReply(reason:excerpt:)`` when it is not an object.
  public static func output(from result: JSONValue) throws(ToolFailure) -> ToolOutput {
    guard result.objectValue != nil else {
      throw .invalidReply(
        reason: "the tools/call result is not an object", excerpt: MCPToolInfo.excerpt(result))
    }
    var texts: [String] = []
    for block in result["content"]?.arrayValue ?? [] {
      switch block["type"]?.stringValue {
      case "text":
        if let t = block["text"]?.stringValue { texts.append(t) }
      case let kind? where kind == "image" || kind == "audio":
        let bytes = (block["data"]?.stringValue?.utf8.count ?? 0) * 3 / 4
        texts.append("[\(kind) \(block["mimeType"]?.stringValue ?? "?"), \(Self.size(bytes))]")
      case "resource_link":
        texts.append("[resource \(block["uri"]?.stringValue ?? "?")]")
      case "resource":
        let r = block["resource"]
        texts.append(r?["text"]?.stringValue ?? "[resource \(r?["uri"]?.stringValue ?? "?")]")
      default:
        break
      }
    }
    let text = texts.isEmpty ? nil : texts.joined(separator: "\n")
    let structured = result["structuredContent"].flatMap { $0.isNull ? nil : $0 }
    if result["isError"]?.boolValue == true {
      throw .toolReported(
        message: text ?? "the tool reported an error without a message", code: nil, data: structured
      )
    }
    return ToolOutput(value: structured, text: text)
  }

  static func size(_ bytes: Int) -> String {
    bytes >= 1024 ? "\((Double(bytes) / 102.4).rounded() / 10) KiB" : "\(bytes) bytes"
  }

  /// Stops the server: fails requests in flight with ``MCPConnectionError/shutDown``, closes its stdin, gives it
  /// ``MCPServerConfiguration/shutdownGrace`` to exit, then ends its process group. Later requests fail with
  /// `.shutDown`. Does not throw.
  public func shutdown() async {
    let session = state.withLock { s -> MCPSession? in
      s.closed = true
      defer { s.session = nil }
      return s.session
    }
    guard let session else { return }
    let process = session.process
    session.fail(.shutDown, stop: false)
    await process?.shutdown(grace: configuration.shutdownGrace)
  }

  /// Stops the running server at once (SIGTERM to its group, SIGKILL after a moment); the next request starts it
  /// again. For servers that hang; prefer ``shutdown()``.
  public func stopServer(reason: String = "stopped by the host") {
    let session = state.withLock { $0.session }
    session?.fail(.unresponsive(reason: reason), stop: true)
  }
}
