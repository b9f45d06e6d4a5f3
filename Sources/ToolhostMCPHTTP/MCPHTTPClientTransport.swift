public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import ToolhostEventStream
import ToolhostJSON
public import ToolhostMCP
public import ToolhostSystem

/// A remote MCP server over Streamable HTTP, as the transport of an ``MCPServerConnection``: every message is a
/// POST of its own to the server's endpoint, and the answer comes back as JSON or as a stream of server-sent events
/// (progress and log notifications, then the response).
///
/// Requests of the 2026-07-28 era carry the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers; after an
/// `initialize` (earlier servers), the agreed version and any `Mcp-Session-Id` the server gave go on every later
/// request. `notifications/cancelled` closes the request's stream instead of being sent, as the transport says. A
/// request that cannot be delivered, or gets an HTTP error without a JSON-RPC answer, is answered with an error
/// response that says what happened (the server's URL, the HTTP status or the network error). Redirects are not
/// followed (they would post the tool's arguments, and the token, to another address): a 3xx answer is an error that
/// names the status and the `Location`, so the URL can be set to the final address. Time limits are the
/// connection's, as for servers on stdio.
///
/// ```swift
/// let endpoint = MCPHTTPClientTransport.Endpoint(url: "https://tools.example/mcp", bearerToken: token)
/// let connection = MCPServerConnection(
///   MCPServerConfiguration(name: "remote", executable: endpoint.url, transport: MCPHTTPClientTransport.opener(endpoint)))
/// ```
public final class MCPHTTPClientTransport: MCPTransport {
  /// Where the server is and how to reach it.
  public struct Endpoint: Sendable {
    /// The MCP endpoint's URL (`http` or `https`).
    public var url: String
    /// The bearer token sent as `Authorization`, if any.
    public var bearerToken: String?
    /// The largest message read from the server at first, in bytes; a request with a larger output limit raises it
    /// (``MCPTransport/raiseMessageLimit(to:)``).
    public var maxMessageBytes: Int

    /// Makes an endpoint; messages of up to ``ResourceLimits/defaultOutputBytes`` (8 MiB) unless told otherwise.
    public init(url: String, bearerToken: String? = nil, maxMessageBytes: Int = ResourceLimits.defaultOutputBytes) {
      self.url = url
      self.bearerToken = bearerToken
      self.maxMessageBytes = maxMessageBytes
    }
  }

  /// JSON-RPC error code of the answers made up for requests the server never answered (network errors, HTTP errors
  /// without a JSON-RPC body).
  public static let transportError = -32000

  private struct State {
    var sessionID: String?
    var protocolVersion: String?
    var inFlight: [Int: (id: JSONRPCID?, task: Task<Void, Never>)] = [:]
    var finished: Set<Int> = []
    var next = 0
    var closed = false
  }

  /// The endpoint.
  public let endpoint: Endpoint
  private let client: HTTPClient
  private let handlers: MCPTransportHandlers
  private let state = Mutex(State())
  /// The largest message read now: the endpoint's, or the largest output limit of a request since.
  private let messageLimit: Mutex<Int>

  /// The client remote servers are reached with unless told otherwise: like `HTTPClient.shared` (it lives as long as
  /// the process), but a connection that cannot be made fails its request at once, instead of being tried again
  /// until the request's deadline (a server that is down is an error now, not at the startup time limit), and
  /// redirects are not followed. A client given to ``opener(_:client:)`` instead should not follow them either.
  public static let client: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.redirectConfiguration = .disallow
    configuration.timeout.connect = .seconds(10)
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }()

  /// An opener for ``MCPServerConfiguration/transport``: each run of the connection gets a transport of its own.
  public static func opener(_ endpoint: Endpoint, client: HTTPClient = MCPHTTPClientTransport.client)
    -> MCPTransportOpener
  {
    { handlers in MCPHTTPClientTransport(endpoint: endpoint, client: client, handlers: handlers) }
  }

  /// What ``MCPPlugins/Loader/remote`` needs: an opener for a remote server's URL and bearer token.
  public static let remote: @Sendable (_ url: String, _ bearerToken: String?) -> MCPTransportOpener = { url, token in
    opener(Endpoint(url: url, bearerToken: token))
  }

  init(endpoint: Endpoint, client: HTTPClient, handlers: MCPTransportHandlers) {
    self.endpoint = endpoint
    self.client = client
    self.handlers = handlers
    self.messageLimit = Mutex(endpoint.maxMessageBytes)
  }

  /// Reads messages of up to `bytes` from now on, when that is more than before.
  public func raiseMessageLimit(to bytes: Int) {
    messageLimit.withLock { $0 = max($0, bytes) }
  }

  /// Posts one message, from a task of its own.
  public func send(_ line: [UInt8]) {
    let body = line.last == 0x0A ? Array(line.dropLast()) : line
    guard let message = try? JSONRPCMessage.parse(body) else { return }
    if case .notification("notifications/cancelled", let params) = message {
      // Closing the request's stream is how a request is cancelled over HTTP.
      if let raw = params?["requestId"], let id = JSONRPCID(json: raw) { cancel(id) }
      return
    }
    let requestID: JSONRPCID? = if case .request(let id, _, _) = message { id } else { nil }
    let key = state.withLock { s -> Int? in
      guard !s.closed else { return nil }
      s.next += 1
      return s.next
    }
    guard let key else { return }
    let task = Task { [self] in
      await post(message, body: body, id: requestID)
      state.withLock { s in
        if s.inFlight.removeValue(forKey: key) == nil { s.finished.insert(key) }
      }
    }
    // A post that finished before it was recorded is not recorded.
    state.withLock { s in
      if s.finished.remove(key) == nil { s.inFlight[key] = (requestID, task) }
    }
  }

  private func cancel(_ id: JSONRPCID) {
    let tasks = state.withLock { s in s.inFlight.values.filter { $0.id == id }.map(\.task) }
    for task in tasks { task.cancel() }
  }

  /// Abandons every request in flight; later messages are not sent.
  public func terminate() {
    let tasks = state.withLock { s -> [Task<Void, Never>] in
      s.closed = true
      return s.inFlight.values.map(\.task)
    }
    for task in tasks { task.cancel() }
  }

  /// Gives the requests in flight `grace` to finish, then abandons them.
  public func shutdown(grace: Duration) async {
    let deadline = ContinuousClock.now + grace
    while ContinuousClock.now < deadline, !state.withLock({ $0.inFlight.isEmpty }) {
      try? await Task.sleep(for: .milliseconds(10))
    }
    terminate()
  }

  /// `nil`: a remote server is no process of ours.
  public var processID: Int32? { nil }
  /// Empty: a remote server has no stderr here.
  public var logTail: String { "" }

  private func post(_ message: JSONRPCMessage, body: [UInt8], id: JSONRPCID?) async {
    var request = HTTPClientRequest(url: endpoint.url)
    request.method = .POST
    request.headers.add(name: "content-type", value: "application/json")
    request.headers.add(name: "accept", value: "application/json, text/event-stream")
    request.headers.add(name: "user-agent", value: ToolhostVersion.userAgent)
    if let token = endpoint.bearerToken { request.headers.add(name: "authorization", value: "Bearer \(token)") }
    let (session, agreed) = state.withLock { ($0.sessionID, $0.protocolVersion) }
    var method: String?
    if case .request(_, let m, let params) = message {
      method = m
      if let version = params?["_meta"]?[MCPEnvelope.protocolVersionKey]?.stringValue {
        request.headers.add(name: "mcp-protocol-version", value: version)
        request.headers.add(name: "mcp-method", value: m)
        if m == "tools/call", let name = params?["name"]?.stringValue {
          request.headers.add(name: "mcp-name", value: MCPHTTPExchange.encodedHeaderValue(name))
        }
      } else if let agreed {
        request.headers.add(name: "mcp-protocol-version", value: agreed)
      }
    } else if let agreed {
      request.headers.add(name: "mcp-protocol-version", value: agreed)
    }
    if let session { request.headers.add(name: "mcp-session-id", value: session) }
    request.body = .bytes(ByteBuffer(bytes: body))
    do {
      // The connection's own time limits end the request (by cancelling this task); this deadline only bounds a
      // request nobody waits for any more.
      let response = try await client.execute(request, timeout: .hours(1))
      let status = Int(response.status.code)
      if let given = response.headers.first(name: "mcp-session-id"), method == "initialize" {
        state.withLock { $0.sessionID = given }
      }
      if status == 202 { return }
      if (300..<400).contains(status) {
        let location = response.headers.first(name: "location").map { " to \($0)" } ?? ""
        return fail(
          id,
          "HTTP \(status) from \(endpoint.url): the server redirects\(location), and toolhost does not follow "
            + "redirects (they would send the request, with its arguments and token, to another address); set the "
            + "server's URL to the final address")
      }
      let type = response.headers.first(name: "content-type")?.lowercased() ?? ""
      let limit = messageLimit.withLock { $0 }
      if type.hasPrefix("text/event-stream") {
        var events = ServerSentEventParser()
        for try await chunk in response.body {
          for event in events.feed(chunk.readableBytesView) { deliver(Array(event.data.utf8), method: method) }
          if events.pendingBytes > limit { return tooLarge(id, limit: limit) }
        }
        return
      }
      let bytes: ByteBuffer
      do { bytes = try await response.body.collect(upTo: limit) } catch {
        return tooLarge(id, limit: limit)
      }
      let answer = Array(buffer: bytes)
      if type.hasPrefix("application/json"), let parsed = try? JSONRPCMessage.parse(answer) {
        if case .errorResponse(nil, let error) = parsed, let id {
          // A refusal before the request was read (401, 403, 413…) names no id: it answers this request.
          fail(id, "HTTP \(status) from \(endpoint.url): \(error.message)", code: error.code)
        } else {
          deliver(answer, method: method)
        }
        return
      }
      if status == 404, session != nil {
        // The server forgot the session: the connection starts over with a new handshake.
        handlers.onEnd(.unresponsive(reason: "the server at \(endpoint.url) ended the session (HTTP 404)"))
        return
      }
      let text = String(decoding: answer.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      fail(id, "HTTP \(status) from \(endpoint.url)" + (text.isEmpty ? "" : ": \(text)"))
    } catch is CancellationError {
      return
    } catch {
      if Task.isCancelled { return }
      fail(id, "cannot reach \(endpoint.url): \(error)")
    }
  }

  /// Hands a message to the connection, noting the version an `initialize` agreed on.
  private func deliver(_ bytes: [UInt8], method: String?) {
    if method == "initialize", let value = try? JSONValue.parse(bytes),
      let version = value["result"]?["protocolVersion"]?.stringValue
    {
      state.withLock { $0.protocolVersion = version }
    }
    handlers.onMessage(bytes)
  }

  /// Answers request `id` with a transport error (nothing for a notification).
  /// The answer to request `id` is over `limit` bytes: the request fails as any reader's output over its limit
  /// does, and the session goes on.
  private func tooLarge(_ id: JSONRPCID?, limit: Int) {
    guard let id else { return }
    handlers.onRequestFailed(id, .resultTooLarge(limit: limit))
  }

  private func fail(_ id: JSONRPCID?, _ text: String, code: Int = MCPHTTPClientTransport.transportError) {
    guard let id else { return }
    handlers.onMessage(
      Array(JSONRPCMessage.errorResponse(id: id, error: JSONRPCError(code: code, message: text)).json.serialized().utf8)
    )
  }
}
