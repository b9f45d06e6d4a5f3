import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Synchronization
import ToolhostJSON
public import ToolhostMCP
public import ToolhostMCPHTTP
import ToolhostPlugins
import ToolhostSystem

/// Serves an ``MCPServer`` over Streamable HTTP without sessions (`toolhost serve --mcp --http [ADDR:]PORT`), on
/// Hummingbird.
///
/// `POST /mcp` takes one JSON-RPC message (see ``MCPHTTPExchange`` for the rules); `GET /health` answers
/// `{"status": "ok", "tools": N, …}` for load balancers (only `{"status": "ok"}` to a request without the bearer
/// token, when one is set). Nothing is kept between requests, so any number of replicas behind a load balancer serve
/// the same tools, and any of them can answer any request. Request ids are the client's own, so two clients that use
/// the same id at once do not meet: each request is handed to the server under an id of the connection's own and
/// answered under the client's.
///
/// The server protects itself (``Limits``): a connection that sends no complete request head, or stays idle, for the
/// idle timeout is closed; at most so many connections are open (more wait to be accepted); at most so many
/// `tools/call` run at once (more are answered 503 with a JSON-RPC error); a call whose client goes away (closes its
/// side of the connection) is cancelled; and a client that reads a progress stream slowly loses the oldest progress
/// events, never the answer, instead of making the server keep them all. Without a bearer token it serves only a
/// loopback address.
///
/// ```swift
/// let token = MCPHTTPToken.generate()
/// let http = MCPHTTPServer(
///   server: MCPServer(registry: registry),
///   options: .init(port: 8080, exchange: MCPHTTPExchange(bearerToken: token), tokenFolder: MCPHTTPToken.defaultFolder()))
/// try await http.run { listening in print("listening on", listening.address, "token in", listening.tokenFile ?? "-") }
/// ```
public final class MCPHTTPServer: Sendable {
  /// How much the server takes on at once, and for how long.
  public struct Limits: Sendable {
    /// How long a connection may take to send a request's head, or stay idle between requests (or between the
    /// parts of a request's body), before it is closed; `nil` for no limit. A call being answered is never idle.
    public var idleTimeout: Duration?
    /// The most connections open at once; more wait (in the kernel's queue) until one closes. `nil` for no limit.
    public var maxConnections: Int?
    /// The most `tools/call` requests being answered at once; one more is answered HTTP 503 with `Retry-After` and
    /// the JSON-RPC error ``MCPHTTPExchange/serverBusy``. `nil` for no limit.
    public var maxCallsInFlight: Int?
    /// The most server-sent events a progress stream keeps for a client that reads slowly; beyond it the oldest
    /// progress events are dropped (the answer never is).
    public var maxPendingEvents: Int

    /// The default ``idleTimeout``: 30 s.
    public static let defaultIdleTimeout: Duration = .seconds(30)
    /// The default ``maxConnections``: 256.
    public static let defaultMaxConnections = 256
    /// The default ``maxCallsInFlight``: 32 (each may be a process).
    public static let defaultMaxCallsInFlight = 32
    /// The default ``maxPendingEvents``: 64.
    public static let defaultMaxPendingEvents = 64

    /// Makes limits; the defaults suit one machine's tools.
    public init(
      idleTimeout: Duration? = defaultIdleTimeout, maxConnections: Int? = defaultMaxConnections,
      maxCallsInFlight: Int? = defaultMaxCallsInFlight, maxPendingEvents: Int = defaultMaxPendingEvents
    ) {
      self.idleTimeout = idleTimeout
      self.maxConnections = maxConnections
      self.maxCallsInFlight = maxCallsInFlight
      self.maxPendingEvents = maxPendingEvents
    }
  }

  /// Where to listen and whom to answer.
  public struct Options: Sendable {
    /// The address to bind: `127.0.0.1` unless told otherwise.
    public var host: String
    /// The port; 0 picks a free one (``run(onListening:)`` says which).
    public var port: Int
    /// Who may ask, and the largest body. Without a bearer token only a loopback `host` is served.
    public var exchange: MCPHTTPExchange
    /// How much the server takes on at once.
    public var limits: Limits
    /// A folder to write the bearer token to, for the user to read: once the server listens, `serve-PORT.token`
    /// there (see ``MCPHTTPToken/write(_:port:in:)``), removed when ``run(onListening:)`` returns. `nil` for none.
    public var tokenFolder: String?

    /// Makes options.
    public init(
      host: String = "127.0.0.1", port: Int, exchange: MCPHTTPExchange = MCPHTTPExchange(), limits: Limits = Limits(),
      tokenFolder: String? = nil
    ) {
      self.host = host
      self.port = port
      self.exchange = exchange
      self.limits = limits
      self.tokenFolder = tokenFolder
    }
  }

  /// Where the server listens, once it does.
  public struct Listening: Sendable {
    /// `HOST:PORT` (`[HOST]:PORT` for IPv6).
    public var address: String
    /// The bound port.
    public var port: Int
    /// The token file written (``Options/tokenFolder``), if any.
    public var tokenFile: String?
  }

  /// Options the server will not run with.
  public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var description: String
  }

  /// The MCP endpoint's path.
  public static let endpoint = "/mcp"
  /// The health check's path.
  public static let healthPath = "/health"

  /// The server that answers.
  public let server: MCPServer
  /// The options.
  public let options: Options
  private let ids = Atomic<Int64>(0)
  private let callsInFlight = Atomic<Int>(0)
  private let connections = Connections()

  /// Makes an HTTP front for `server`.
  public init(server: MCPServer, options: Options) {
    self.server = server
    self.options = options
  }

  /// Listens and answers until the calling task is cancelled, then stops taking connections and lets the requests
  /// in flight finish; removes the token file it wrote.
  ///
  /// - Parameter onListening: called once the socket is bound (and the token file written), so a port of 0 can be
  ///   reported.
  /// - Throws: ``ConfigurationError`` without a bearer token on an address that is not a loopback one (or with a
  ///   token folder but no token); ``MCPHTTPToken/FileError`` when the token file cannot be written; or why the
  ///   address cannot be bound (in use, not an address of this machine, no permission).
  public func run(onListening: @escaping @Sendable (Listening) -> Void = { _ in }) async throws {
    let token = options.exchange.bearerToken
    if token == nil, !Loopback.isHost(options.host) {
      throw ConfigurationError(
        description: "\(options.host) is not a loopback address, and a server other machines can reach needs a bearer "
          + "token: set one (serve --token-env NAME, or leave out --no-auth for a generated one), or bind 127.0.0.1")
    }
    if options.tokenFolder != nil, token == nil {
      throw ConfigurationError(description: "a token folder needs a bearer token to write there")
    }
    let limits = options.limits
    let connections = connections
    // The token file once written (or why it could not be).
    let startup = OneShot<Result<String?, MCPHTTPToken.FileError>>()
    let app = Application(
      router: router(),
      server: .http1(
        configuration: HTTP1Channel.Configuration(
          additionalChannelHandlers: [ClientPresenceHandler(connections: connections)],
          idleTimeout: limits.idleTimeout.map(Self.timeAmount))),
      configuration: .init(
        address: .hostname(options.host, port: options.port), serverName: nil,
        availableConnectionsDelegate: limits.maxConnections.map { MaximumAvailableConnections($0) }),
      onServerRunning: { [options] channel in
        let port = channel.localAddress?.port ?? options.port
        var file: String?
        if let folder = options.tokenFolder, let token {
          do throws(MCPHTTPToken.FileError) { file = try MCPHTTPToken.write(token, port: port, in: folder) } catch {
            startup.complete(.failure(error))
            return
          }
        }
        startup.complete(.success(file))
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        onListening(Listening(address: "\(host):\(port)", port: port, tokenFile: file))
      },
      // Hummingbird's own log lines (a start banner, a cancelled child channel on shutdown) go nowhere: toolhost
      // says what matters itself, and stdout is never written to.
      logger: Logger(label: "toolhost.http", factory: { _ in SwiftLogNoOpLogHandler() }))
    defer {
      if case .success(let file?) = startup.value, let token { MCPHTTPToken.remove(file, token: token) }
    }
    // Serving ends when the application does; a token file that cannot be written ends it too (nobody could use it).
    try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        try await app.run()
        return true
      }
      group.addTask {
        if case .failure(let error) = await startup.waitUnlessCancelled() { throw error }
        return false
      }
      while let applicationEnded = try await group.next(), !applicationEnded {}
      group.cancelAll()
    }
  }

  /// The routes: the endpoint, 405 for its other methods, and the health check.
  private func router() -> Router<MCPRequestContext> {
    let router = Router(context: MCPRequestContext.self)
    router.post(RouterPath(stringLiteral: Self.endpoint)) { request, context in
      try await self.answer(request, connection: context.connection)
    }
    for method in [HTTPRequest.Method.get, .delete, .put, .patch] {
      router.on(RouterPath(stringLiteral: Self.endpoint), method: method) { request, _ in
        Self.response(
          self.options.exchange.refusal(method: request.method.rawValue, headers: Self.headers(of: request))
            ?? MCPHTTPExchange.plainError(
              405, JSONRPCError.invalidRequest,
              "\(request.method.rawValue) is not supported: this server keeps no sessions or streams, so every "
                + "message is a POST of its own",
              headers: ["allow": "POST"]))
      }
    }
    router.get(RouterPath(stringLiteral: Self.healthPath)) { request, _ in
      var body: JSONValue = ["status": "ok"]
      switch self.options.exchange.healthAccess(headers: Self.headers(of: request)) {
      case .refused(let answer): return Self.response(answer)
      case .bare: break
      case .full:
        body = [
          "status": "ok", "tools": .integer(Int64(self.server.servedToolNames.count)),
          "complete": .bool(!self.server.expectsMoreTools),
          "server": .string(self.server.options.name), "version": .string(self.server.options.version),
        ]
      }
      return Self.response(
        MCPHTTPExchange.Answer(
          status: 200, headers: ["content-type": "application/json"], body: Array(body.serialized().utf8)))
    }
    return router
  }

  /// Answers one POST to the endpoint.
  private func answer(_ request: Request, connection: ObjectIdentifier) async throws -> Response {
    let headers = Self.headers(of: request)
    let exchange = options.exchange
    if let refusal = exchange.refusal(method: "POST", headers: headers) { return Self.response(refusal) }
    let body: ByteBuffer
    do { body = try await request.body.collect(upTo: exchange.maxBodyBytes) } catch {
      return Self.response(
        MCPHTTPExchange.plainError(
          413, JSONRPCError.invalidRequest, "the request body is over \(exchange.maxBodyBytes) bytes"))
    }
    switch exchange.route(body: Array(buffer: body), headers: headers) {
    case .answer(let answer):
      return Self.response(answer)
    case .notification(let message):
      // Without a session a notification concerns nothing running here (a cancellation is the closed connection
      // of the request itself), but the server may still want to see it.
      if case .notification(let method, _) = message, method != "notifications/cancelled" {
        server.handle(message) { _ in }
      }
      return Self.response(MCPHTTPExchange.Answer(status: 202))
    case .request(let message):
      guard case .request(let id, let method, let params) = message else { return Self.response(.init(status: 500)) }
      let local = JSONRPCID.string("http-\(ids.add(1, ordering: .relaxed).newValue)")
      guard method == "tools/call" else {
        // Answered at once: nothing to count or watch.
        let reply = OneShot<JSONRPCMessage>()
        server.handle(.request(id: local, method: method, params: params)) { message in
          if case .notification = message { return }
          reply.complete(message)
        }
        guard let answered = await reply.waitUnlessCancelled() else { return Self.response(.init(status: 499)) }
        return Self.response(.message(Self.restoringID(answered, id)))
      }
      if let limit = options.limits.maxCallsInFlight,
        callsInFlight.wrappingAdd(1, ordering: .relaxed).newValue > limit
      {
        callsInFlight.wrappingSubtract(1, ordering: .relaxed)
        return Self.response(MCPHTTPExchange.busy(id: id, limit: limit))
      }
      let call = RunningCall(
        local: local, server: server, presence: connections.presence(of: connection),
        release: { [self] in
          if options.limits.maxCallsInFlight != nil { callsInFlight.wrappingSubtract(1, ordering: .relaxed) }
        })
      if params?["_meta"]?["progressToken"] != nil, headers["accept"]?.contains("text/event-stream") ?? false {
        return streamed(call, id: id, params: params)
      }
      let reply = OneShot<JSONRPCMessage?>()
      guard call.watch({ reply.complete(nil) }) else { return Self.response(.init(status: 499)) }
      server.handle(.request(id: local, method: method, params: params)) { message in
        // Without a stream there is nowhere for progress to go before the answer.
        if case .notification = message { return }
        reply.complete(message)
      }
      // The client went away (or the server stops): the call is cancelled as one whose stream closed, and gets no
      // answer.
      guard let answered = await reply.waitUnlessCancelled() ?? nil else {
        call.end(cancelled: true)
        return Self.response(.init(status: 499))
      }
      call.end(cancelled: false)
      return Self.response(.message(Self.restoringID(answered, id)))
    }
  }

  /// A `tools/call` that asked for progress, answered as server-sent events: each `notifications/progress` as it
  /// comes, then the response, which ends the stream. A client that reads slowly loses the oldest progress events
  /// beyond ``Limits/maxPendingEvents``; one that goes away cancels the call.
  private func streamed(_ call: RunningCall, id: JSONRPCID, params: JSONValue?) -> Response {
    let (events, continuation) = AsyncStream<ByteBuffer>.makeStream(
      bufferingPolicy: .bufferingNewest(max(1, options.limits.maxPendingEvents)))
    @Sendable func event(_ message: JSONRPCMessage) -> ByteBuffer {
      ByteBuffer(string: "event: message\ndata: \(message.json.serialized())\n\n")
    }
    // Ended by the answer (finished), or by the writer giving up on the client, or by the server stopping
    // (cancelled).
    continuation.onTermination = { termination in
      if case .cancelled = termination { call.end(cancelled: true) } else { call.end(cancelled: false) }
    }
    guard
      call.watch({
        call.end(cancelled: true)
        continuation.finish()
      })
    else { return Response(status: .init(code: 499)) }
    server.handle(.request(id: call.local, method: "tools/call", params: params)) { message in
      if case .notification = message {
        continuation.yield(event(message))
      } else {
        continuation.yield(event(Self.restoringID(message, id)))
        continuation.finish()
      }
    }
    var fields = HTTPFields()
    fields[.contentType] = "text/event-stream"
    fields[.cacheControl] = "no-cache, no-transform"
    if let buffering = HTTPField.Name("x-accel-buffering") { fields[buffering] = "no" }
    return Response(status: .ok, headers: fields, body: ResponseBody(asyncSequence: events))
  }

  /// A duration as NIO's time amount.
  static func timeAmount(_ duration: Duration) -> TimeAmount {
    .nanoseconds(duration.wholeNanoseconds)
  }

  /// `message` answered under the client's own id.
  static func restoringID(_ message: JSONRPCMessage, _ id: JSONRPCID) -> JSONRPCMessage {
    switch message {
    case .response(_, let result): .response(id: id, result: result)
    case .errorResponse(_, let error): .errorResponse(id: id, error: error)
    default: message
    }
  }

  /// The request's headers with lowercased names (a repeated header keeps its last value).
  static func headers(of request: Request) -> [String: String] {
    var out: [String: String] = [:]
    for field in request.headers { out[field.name.canonicalName] = field.value }
    return out
  }

  static func response(_ answer: MCPHTTPExchange.Answer) -> Response {
    var fields = HTTPFields()
    for (name, value) in answer.headers.sorted(by: { $0.key < $1.key }) {
      if let n = HTTPField.Name(name) { fields[n] = value }
    }
    return Response(
      status: HTTPResponse.Status(code: answer.status), headers: fields,
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
  }
}
