import Foundation
import Synchronization
import ToolhostJSON
import ToolhostSystem
import ToolhostTools

/// One run of a server (a process, or a remote server's transport): its handshake, its pending requests, and its
/// end.
///
/// The handshake asks `server/discover` first (2026-07-28, where every request then carries the version in its
/// envelope) and falls back to `initialize` (2025-11-25 and earlier) when the server answers with any other error or
/// not within half the startup limit; the era is kept for the life of the process.
///
/// Requests are awaited; each one's time limit is a task that sleeps (``OneShot/wait(timeout:onTimeout:)``),
/// and a reply, the limit, the caller's cancellation or the session's end settles it, whichever comes first.
final class MCPSession: Sendable {
  enum Phase: Sendable {
    case starting
    case ready
    case dead
  }

  typealias Reply = Result<JSONValue, MCPConnectionError>

  struct Pending {
    var method: String
    var reply: OneShot<Reply>
    /// The most bytes the response's line may have (a tool call's output limit); `nil`: the stream's line limit.
    var lineLimit: Int?
    /// For a request that asked for progress: its token, where reports go, and how they stretch its time limit.
    var progress: ProgressWatch?
  }

  /// A request's progress: each report gives it its time limit again from then on, up to `maximum` in all.
  struct ProgressWatch {
    var token: String
    var onProgress: (@Sendable (ToolProgress) -> Void)?
    var maximum: Duration
    var started = ContinuousClock.now
    var last = ContinuousClock.now
  }

  /// What a request that wants progress reports asks for.
  struct ProgressRequest: Sendable {
    /// Where reports go.
    var onProgress: (@Sendable (ToolProgress) -> Void)?
    /// The most the request may take in all while it reports progress.
    var maximum: Duration
  }

  struct State {
    var phase = Phase.starting
    var transport: (any MCPTransport)?
    var pending: [JSONRPCID: Pending] = [:]
    var nextID: Int64 = 0
    var info: MCPServerInfo?
    var failure: MCPConnectionError?
    /// The 2026-07-28-era version every request carries in its envelope; `nil` for a server that uses `initialize`.
    var envelopeVersion: String?
  }

  /// What `server/discover` found out.
  enum Discovery {
    /// The server speaks this 2026-07-28-era version.
    case modern(MCPServerInfo)
    /// The server needs `initialize` (it did not know `server/discover`, or did not answer in time).
    case handshake
    /// The session ended (the server exited or failed).
    case ended
  }

  let state = Mutex(State())
  /// How the handshake went: set once, by its end or the session's.
  let ready = OneShot<Result<Void, MCPConnectionError>>()
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

  var isDead: Bool { state.withLock { $0.phase == .dead } }
  var processID: Int32? { state.withLock { $0.phase == .dead ? nil : $0.transport?.processID } }
  var transport: (any MCPTransport)? { state.withLock { $0.transport } }
  var info: MCPServerInfo? { state.withLock { $0.info } }
  /// The request that shows the server answers: `ping`, or `server/discover` in the 2026-07-28 era, which has no
  /// `ping`.
  var pingMethod: String { state.withLock { $0.envelopeVersion } == nil ? "ping" : "server/discover" }

  /// Opens the transport (starts the process) and runs the handshake; ``ready`` says how it went.
  func start() async {
    let c = configuration
    let handlers = MCPTransportHandlers(
      onMessage: { [self] in received($0) }, onLog: { [self] in onStderr($0) },
      onEnd: { [self] in fail($0, stop: false) },
      onRequestFailed: { [self] id, error in requestFailed(id, error) })
    let transport: any MCPTransport
    do throws(MCPConnectionError) {
      if let open = c.transport {
        transport = try open(handlers)
      } else {
        transport = try ProcessTransport.open(c, handlers: handlers)
      }
    } catch {
      fail(error, stop: false)
      return
    }
    state.withLock { $0.transport = transport }
    let deadline = ContinuousClock.now + c.startupTimeout
    switch await discover(timeout: c.startupTimeout / 2) {
    case .modern(let info):
      becomeReady(info)
    case .ended:
      return
    case .handshake:
      await initialize(until: deadline, transport: transport)
    }
  }

  /// Asks `server/discover` with toolhost's newest version in the envelope; never cancelled, so a late answer is
  /// only ignored.
  private func discover(timeout: Duration) async -> Discovery {
    let version = MCPProtocol.modernVersions[0]
    let params = MCPEnvelope.stamped(nil, version: version)
    switch await request("server/discover", params: params, timeout: timeout) {
    case .success(let r):
      let offered = r["supportedVersions"]?.arrayValue?.compactMap(\.stringValue) ?? []
      guard let agreed = MCPProtocol.modernVersions.first(where: offered.contains) else { return .handshake }
      let server = r["_meta"]?[MCPEnvelope.serverInfoKey]
      return .modern(
        MCPServerInfo(
          name: server?["name"]?.stringValue ?? configuration.name, version: server?["version"]?.stringValue ?? "",
          protocolVersion: agreed, capabilities: r["capabilities"] ?? [:],
          instructions: r["instructions"]?.stringValue))
    case .failure(.errorResponse(let e)) where e.code == MCPEnvelope.unsupportedProtocolVersion:
      let supported = e.data?["supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
      if supported.contains(where: MCPProtocol.supportedVersions.contains) || supported.isEmpty { return .handshake }
      fail(.unsupportedProtocolVersion(supported.joined(separator: ", ")), stop: true)
      return .ended
    case .failure(.errorResponse), .failure(.requestTimedOut), .failure(.invalidResponse):
      return .handshake
    case .failure(let e):
      fail(e, stop: true)
      return .ended
    }
  }

  /// The handshake of servers before 2026-07-28: `initialize`, then `notifications/initialized`. A server that
  /// answers it with UnsupportedProtocolVersion naming a 2026-07-28-era version (one that took a late
  /// `server/discover` to mean that era) is asked `server/discover` once more.
  private func initialize(until deadline: ContinuousClock.Instant, transport: any MCPTransport) async {
    let c = configuration
    let params: JSONValue = [
      "protocolVersion": .string(MCPProtocol.latestVersion),
      "capabilities": [:],
      "clientInfo": ["name": "toolhost", "version": .string(ToolhostVersion.version)],
    ]
    let remaining = max(.zero, deadline - .now)
    switch await request("initialize", params: params, timeout: remaining) {
    case .failure(.requestTimedOut):
      fail(.startupTimedOut(limit: c.startupTimeout, log: transport.logTail), stop: true)
    case .failure(.errorResponse(let e))
    where e.code == MCPEnvelope.unsupportedProtocolVersion
      && (e.data?["supported"]?.arrayValue ?? []).contains(where: {
        MCPProtocol.modernVersions.contains($0.stringValue ?? "")
      }):
      switch await discover(timeout: max(.zero, deadline - .now)) {
      case .modern(let info): becomeReady(info)
      case .ended: return
      case .handshake: fail(.handshakeFailed(reason: e.description, log: transport.logTail), stop: true)
      }
    case .failure(.errorResponse(let e)):
      fail(.handshakeFailed(reason: e.description, log: transport.logTail), stop: true)
    case .failure(let e):
      fail(e, stop: true)
    case .success(let r):
      guard let version = r["protocolVersion"]?.stringValue else {
        fail(.handshakeFailed(reason: "the initialize result has no protocolVersion", log: ""), stop: true)
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
      becomeReady(info)
    }
  }

  /// The handshake is done: requests may go out (with the envelope in the 2026-07-28 era).
  private func becomeReady(_ info: MCPServerInfo) {
    let isReady = state.withLock { s -> Bool in
      guard s.phase == .starting else { return false }
      s.phase = .ready
      s.info = info
      if MCPProtocol.modernVersions.contains(info.protocolVersion) { s.envelopeVersion = info.protocolVersion }
      return true
    }
    if isReady { ready.complete(.success(())) }
  }

  /// Ends the session: every pending request and the handshake's waiters fail with `error`; the transport is
  /// ended (a process group signalled) when `stop` is set.
  func fail(_ error: MCPConnectionError, stop: Bool) {
    let (pending, transport, reported) = state.withLock {
      s -> ([Pending], (any MCPTransport)?, MCPConnectionError) in
      if s.phase != .dead {
        s.phase = .dead
        s.failure = error
      }
      defer { s.pending = [:] }
      return (Array(s.pending.values), s.transport, s.failure ?? error)
    }
    if stop { transport?.terminate() }
    for p in pending { p.reply.complete(.failure(reported)) }
    ready.complete(.failure(reported))
  }

  /// Sends a request and waits for its result, the error response, the time limit or the session's end.
  ///
  /// Cancelling the calling task sends the server `notifications/cancelled` and returns `.cancelled`.
  ///
  /// With `progress`, the request carries a `progressToken`; each `notifications/progress` for it goes to
  /// `progress.onProgress` and gives the request `timeout` again from then on, up to `progress.maximum` in all.
  func request(
    _ method: String, params: JSONValue?, timeout: Duration?, lineLimit: Int? = nil,
    progress: ProgressRequest? = nil
  ) async -> Reply {
    if Task.isCancelled { return .failure(.cancelled) }
    let reply = OneShot<Reply>()
    let sent = state.withLock { s -> (JSONRPCID, (any MCPTransport)?, String?, token: String?)? in
      guard s.phase != .dead else { return nil }
      s.nextID += 1
      let id = JSONRPCID.number(s.nextID)
      let watch = progress.map {
        ProgressWatch(token: "toolhost-\(s.nextID)", onProgress: $0.onProgress, maximum: $0.maximum)
      }
      s.pending[id] = Pending(method: method, reply: reply, lineLimit: lineLimit, progress: watch)
      return (id, s.transport, s.envelopeVersion, watch?.token)
    }
    guard let (id, transport, envelope, token) = sent else {
      return .failure(state.withLock { $0.failure } ?? .shutDown)
    }
    var sentParams = envelope.map { MCPEnvelope.stamped(params, version: $0) } ?? params
    if let token { sentParams = MCPEnvelope.addingMeta(["progressToken": .string(token)], to: sentParams) }
    if let lineLimit { transport?.raiseMessageLimit(to: lineLimit) }
    transport?.send(JSONRPCMessage.request(id: id, method: method, params: sentParams).line)
    let outcome = await withTaskCancellationHandler {
      await reply.wait(timeout: timeout) { [self] in expire(id, limit: timeout ?? .zero) }
    } onCancel: {
      cancel(id, reason: "the client cancelled the call")
    }
    if case .success(let result) = outcome, let problem = MCPEnvelope.problem(with: result) {
      return .failure(.invalidResponse("\(method): \(problem)"))
    }
    return outcome
  }

  /// The handshake's requests, which are never cancelled (MCP: `initialize` must not be; a `server/discover` that
  /// comes late is answered and ignored).
  private static func isHandshake(_ method: String) -> Bool {
    method == "initialize" || method == "server/discover"
  }

  /// Sends a notification.
  func notify(_ method: String, params: JSONValue?) {
    let transport = state.withLock { $0.phase == .dead ? nil : $0.transport }
    transport?.send(JSONRPCMessage.notification(method: method, params: params).line)
  }

  /// Gives up on a request: it fails with `.cancelled`, and the server is told with `notifications/cancelled`.
  private func cancel(_ id: JSONRPCID, reason: String) {
    guard let pending = take(id) else { return }
    if !Self.isHandshake(pending.method) {
      notify("notifications/cancelled", params: ["requestId": id.json, "reason": .string(reason)])
    }
    pending.reply.complete(.failure(.cancelled))
  }

  /// Request `id` failed in the transport. An answer over the transport's message limit is over the request's own
  /// limit too (a request raises the transport's to its own), so it fails with that one, as the caller set it.
  private func requestFailed(_ id: JSONRPCID, _ error: MCPConnectionError) {
    guard let p = take(id) else { return }
    if case .resultTooLarge = error, let limit = p.lineLimit {
      p.reply.complete(.failure(.resultTooLarge(limit: limit)))
    } else {
      p.reply.complete(.failure(error))
    }
  }

  private func take(_ id: JSONRPCID) -> Pending? {
    state.withLock { $0.pending.removeValue(forKey: id) }
  }

  /// The time limit of request `id` passed: it times out, unless it reported progress since, which gives it `limit`
  /// again from its last report (up to its maximum in all); then the check comes back when that passes.
  private func expire(_ id: JSONRPCID, limit: Duration) {
    let verdict = state.withLock { s -> (wait: Duration?, limit: Duration) in
      guard let watch = s.pending[id]?.progress else { return (nil, limit) }
      let now = ContinuousClock.now
      let end = min(watch.last + limit, watch.started + watch.maximum)
      return end > now ? (end - now, limit) : (nil, watch.last + limit > now ? watch.maximum : limit)
    }
    guard let wait = verdict.wait else { return timedOut(id, limit: verdict.limit) }
    Task { [self] in
      try? await Task.sleep(for: wait)
      expire(id, limit: limit)
    }
  }

  /// A progress report: to the request whose token it names, which it keeps alive.
  private func progressed(_ params: JSONValue?) {
    guard let token = params?["progressToken"].flatMap({ $0.stringValue ?? $0.integerValue.map { "\($0)" } }),
      let amount = params?["progress"]?.doubleValue
    else { return }
    let sink = state.withLock { s -> (@Sendable (ToolProgress) -> Void)? in
      guard let (id, pending) = s.pending.first(where: { $0.value.progress?.token == token }) else { return nil }
      s.pending[id]?.progress?.last = .now
      return pending.progress?.onProgress
    }
    sink?(
      ToolProgress(progress: amount, total: params?["total"]?.doubleValue, message: params?["message"]?.stringValue))
  }

  private func timedOut(_ id: JSONRPCID, limit: Duration) {
    guard let pending = take(id) else { return }
    if !Self.isHandshake(pending.method) {
      notify(
        "notifications/cancelled",
        params: ["requestId": id.json, "reason": .string("timed out after \(limit.messageText)")])
    }
    pending.reply.complete(.failure(.requestTimedOut(method: pending.method, limit: limit)))
    if pending.method == "tools/call" { checkHealth() }
  }

  /// After a timed-out call: a server that does not answer `ping` (2026-07-28 has no `ping`: `server/discover`)
  /// either is hung, and is stopped. Any answer, an error too, shows it is not. The check runs on its own, so the
  /// timed-out call returns at once.
  private func checkHealth() {
    Task { [self] in
      let limit = configuration.healthCheckTimeout
      if case .failure(.requestTimedOut) = await request(pingMethod, params: nil, timeout: limit) {
        log("toolhost: the server did not answer ping after a timed-out call; stopping it")
        fail(.unresponsive(reason: "no answer to ping within \(limit.messageText) after a timed-out call"), stop: true)
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
      if let limit = p.lineLimit, line.count > limit {
        p.reply.complete(.failure(.resultTooLarge(limit: limit)))
      } else {
        p.reply.complete(.success(result))
      }
    case .errorResponse(let id, let error):
      guard let id, let p = take(id) else {
        log("toolhost: the server reported an error: \(error.description)")
        return
      }
      p.reply.complete(.failure(.errorResponse(error)))
    case .request(let id, let method, _):
      // toolhost declares no client capabilities: it answers ping and refuses the rest.
      let reply: JSONRPCMessage =
        method == "ping"
        ? .response(id: id, result: [:])
        : .errorResponse(
          id: id,
          error: JSONRPCError(
            code: JSONRPCError.methodNotFound, message: "toolhost does not support \(method)"))
      let transport = state.withLock { $0.transport }
      transport?.send(reply.line)
    case .notification(let method, let params):
      switch method {
      case "notifications/message":
        let level = params?["level"]?.stringValue ?? "info"
        let data = params?["data"].map { $0.stringValue ?? $0.serialized() } ?? ""
        log("[\(level)] \(data)")
      case "notifications/tools/list_changed":
        onToolsChanged()
      case "notifications/progress":
        progressed(params)
      default:
        break
      }
    }
  }
}
