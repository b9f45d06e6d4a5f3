import Foundation
import Synchronization
public import ToolhostJSON
import ToolhostPlugins
import ToolhostSchema
import ToolhostSystem
public import ToolhostTools

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
    var log = ByteTail(limit: MCPServerConnection.logLimit)
    var toolsChanged = false
    /// Who else sees the server's stderr and log messages while a call runs (`call --verbose`), by call.
    var logObservers: [Int: @Sendable ([UInt8]) -> Void] = [:]
    var nextObserver = 0
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
    String(decoding: state.withLock { $0.log.bytes }, as: UTF8.self)
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
    let observers = state.withLock { s in
      s.log.append(bytes)
      return Array(s.logObservers.values)
    }
    for observe in observers { observe(bytes) }
  }

  /// A session whose handshake is done: the running one, or a new one started now (the handshake runs in a task
  /// of its own, so a caller that gives up does not end it for the others). `.cancelled` when the calling task is
  /// cancelled while it waits.
  func readySession() async -> Result<MCPSession, MCPConnectionError> {
    let found = state.withLock { s -> Result<(MCPSession, launch: Bool), MCPConnectionError> in
      if s.closed { return .failure(.shutDown) }
      if let session = s.session, !session.isDead { return .success((session, false)) }
      let session = MCPSession(
        configuration: configuration,
        log: { [weak self] text in self?.appendLog(Array((text + "\n").utf8)) },
        onStderr: { [weak self, sink = configuration.onStderr] chunk in
          self?.appendLog(chunk)
          sink?(chunk)
        },
        onToolsChanged: { [weak self] in self?.state.withLock { $0.toolsChanged = true } })
      s.session = session
      s.starts += 1
      return .success((session, true))
    }
    switch found {
    case .failure(let e): return .failure(e)
    case .success(let (session, launch)):
      if launch { Task { await session.start() } }
      guard let handshake = await session.ready.waitUnlessCancelled() else { return .failure(.cancelled) }
      return handshake.map { session }
    }
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

  func perform(
    _ method: String, params: JSONValue?, timeout: Duration?, lineLimit: Int? = nil,
    progress: MCPSession.ProgressRequest? = nil
  ) async -> MCPSession.Reply {
    switch await readySession() {
    case .failure(let e): return .failure(e)
    case .success(let session):
      return await session.request(method, params: params, timeout: timeout, lineLimit: lineLimit, progress: progress)
    }
  }

  /// Starts the server (when it does not run) and waits for the handshake.
  ///
  /// - Returns: what the server said about itself.
  /// - Throws: ``MCPConnectionError``: `.launchFailed`, `.startupTimedOut`, `.handshakeFailed`,
  ///   `.unsupportedProtocolVersion`, `.serverExited` or `.shutDown`.
  @discardableResult
  public func start() async throws(MCPConnectionError) -> MCPServerInfo {
    let session = try await readySession().get()
    guard let info = session.info else { throw .shutDown }
    return info
  }

  /// Checks that the server answers.
  ///
  /// - Throws: ``MCPConnectionError`` when it does not within `timeout` (default: the request timeout).
  public func ping(timeout: Duration? = nil) async throws(MCPConnectionError) {
    let session = try await readySession().get()
    _ = try await session.request(session.pingMethod, params: nil, timeout: timeout ?? configuration.requestTimeout)
      .get()
  }

  /// Lists every tool of the server, following `nextCursor` (at most 100 pages).
  ///
  /// - Throws: ``MCPConnectionError``; `.invalidResponse` when the result has no `tools` array or an entry has no
  ///   name.
  public func listTools() async throws(MCPConnectionError) -> [MCPToolInfo] {
    try await toolList().tools
  }

  /// Lists every tool of the server, following `nextCursor` (at most 100 pages), with how long the list may be
  /// reused: the smallest `ttlMs` of its pages (0 when a page has none, as before 2026-07-28).
  ///
  /// - Throws: as ``listTools()``.
  public func toolList() async throws(MCPConnectionError) -> MCPToolList {
    var list = MCPToolList(tools: [], ttlMilliseconds: .max)
    var cursor: String?
    for _ in 0..<100 {
      let params: JSONValue? = cursor.map { ["cursor": .string($0)] }
      let value = try await perform("tools/list", params: params, timeout: configuration.requestTimeout).get()
      guard let entries = value["tools"]?.arrayValue else {
        throw .invalidResponse("the tools/list result has no \"tools\" array")
      }
      for entry in entries { list.tools.append(try MCPToolInfo(json: entry)) }
      list.ttlMilliseconds = min(list.ttlMilliseconds, max(0, value["ttlMs"]?.integerValue ?? 0))
      guard let next = value["nextCursor"]?.stringValue, !next.isEmpty, next != cursor else { break }
      cursor = next
    }
    return list
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
  ///   `.launchFailed` or `.invalidReply` for the rest; `.outputTooLarge` for a result over `outputLimit` bytes
  ///   (default ``PluginTool/defaultOutputLimit``, as for plugins), or a message over the stream's line limit.
  ///
  /// With `onLog`, what the server writes to stderr and its log messages (asked for at level `info`) while the call
  /// runs also go there as they come; the server is shared, so that is everything it says meanwhile.
  /// With `traceParent`, the call carries it as `_meta.traceparent`.
  ///
  /// With `onProgress` or a `maximumTimeout` over `timeout`, the call asks for progress (a `progressToken`): each
  /// report goes to `onProgress` and gives the call `timeout` again from then on, up to `maximumTimeout` in all. A
  /// call that stops reporting times out `timeout` after its last report.
  public func callTool(
    _ name: String, arguments: JSONValue, timeout: Duration, outputLimit: Int? = nil,
    onLog: (@Sendable ([UInt8]) -> Void)? = nil, traceParent: String? = nil,
    onProgress: (@Sendable (ToolProgress) -> Void)? = nil, maximumTimeout: Duration? = nil
  )
    async throws(ToolFailure)
    -> ToolOutput
  {
    var params: JSONObject = ["name": .string(name), "arguments": arguments]
    var meta: JSONObject = [:]
    if let traceParent { meta["traceparent"] = .string(traceParent) }
    var observer: Int?
    if let onLog {
      meta[MCPEnvelope.logLevelKey] = "info"
      observer = state.withLock { s in
        s.nextObserver += 1
        s.logObservers[s.nextObserver] = onLog
        return s.nextObserver
      }
    }
    if !meta.isEmpty { params["_meta"] = .object(meta) }
    defer {
      if let observer { _ = state.withLock { $0.logObservers.removeValue(forKey: observer) } }
    }
    // The reply's line is measured as it is read, before it is used.
    let maximum = max(timeout, maximumTimeout ?? timeout)
    let progress =
      onProgress != nil || maximum > timeout
      ? MCPSession.ProgressRequest(onProgress: onProgress, maximum: maximum) : nil
    let result = await perform(
      "tools/call", params: .object(params), timeout: timeout, lineLimit: outputLimit ?? configuration.outputLimit,
      progress: progress)
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
    let transport = session.transport
    session.fail(.shutDown, stop: false)
    await transport?.shutdown(grace: configuration.shutdownGrace)
  }

  /// Stops the running server at once (SIGTERM to its group, SIGKILL after a moment); the next request starts it
  /// again. For servers that hang; prefer ``shutdown()``.
  public func stopServer(reason: String = "stopped by the host") {
    let session = state.withLock { $0.session }
    session?.fail(.unresponsive(reason: reason), stop: true)
  }
}
