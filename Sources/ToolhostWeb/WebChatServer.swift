import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Synchronization
import ToolhostJSON
import ToolhostSession
import ToolhostSystem

/// The chat page's HTTP server: the page (``WebPage``), its JSON API over a ``WebChatEngine`` and the event stream,
/// on 127.0.0.1, behind ``WebAccess``.
///
/// ```swift
/// let server = WebChatServer(engine: engine, options: .init())
/// try await server.run { listening in print("open \(listening.url)") }  // until the task is cancelled
/// ```
public final class WebChatServer: Sendable {
  /// Where to listen and the limits.
  public struct Options: Sendable {
    /// The address to bind; a loopback one unless told otherwise (the page has no other protection than its token).
    public var host: String
    /// The port; 0 for any free one.
    public var port: Int
    /// The largest request body, in bytes.
    public var maxBodyBytes: Int
    /// How long a connection may stay idle between requests before it is closed.
    public var idleTimeout: Duration
    /// How often the event stream says it is alive.
    public var pingInterval: Duration
    /// The most connections open at once (more wait to be accepted).
    public var maxConnections: Int
    /// The most connections open at once that have not shown the session secret; a new one closes the oldest idle
    /// one, so that they never fill ``maxConnections``.
    public var maxWaitingConnections: Int
    /// How long a connection may stay open without showing the session secret.
    public var proofTimeout: Duration
    /// How long the printed address can be used, from the server's start.
    public var linkLifetime: Duration

    /// Makes options.
    public init(
      host: String = "127.0.0.1", port: Int = 0, maxBodyBytes: Int = 64 * 1024, idleTimeout: Duration = .seconds(60),
      pingInterval: Duration = .seconds(15), maxConnections: Int = 64, maxWaitingConnections: Int = 16,
      proofTimeout: Duration = .seconds(5), linkLifetime: Duration = .seconds(300)
    ) {
      self.host = host
      self.port = port
      self.maxBodyBytes = maxBodyBytes
      self.idleTimeout = idleTimeout
      self.pingInterval = pingInterval
      self.maxConnections = maxConnections
      self.maxWaitingConnections = maxWaitingConnections
      self.proofTimeout = proofTimeout
      self.linkLifetime = linkLifetime
    }
  }

  /// Where the server listens, once it does.
  public struct Listening: Sendable {
    /// The bound port.
    public var port: Int
    /// The address to open, with the one-time link token in its fragment (`/#token=…`), which no browser sends to a
    /// server.
    public var url: String
  }

  /// The chats.
  public let engine: WebChatEngine
  /// The options.
  public let options: Options
  /// Who may use it.
  public let access: WebAccess
  private let boundPort = Atomic<Int>(0)

  /// The Content-Security-Policy of every answer: nothing from elsewhere, no inline script or style.
  public static let contentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

  private let gate: WebConnectionGate

  /// Makes a server for `engine`'s chats; its link works for ``Options/linkLifetime`` from now unless `access` says
  /// otherwise.
  public init(engine: WebChatEngine, options: Options = Options(), access: WebAccess? = nil) {
    self.engine = engine
    self.options = options
    let access = access ?? WebAccess(host: options.host, linkLifetime: options.linkLifetime)
    self.access = access
    gate = WebConnectionGate(
      limits: .init(maxWaiting: options.maxWaitingConnections, proofTimeout: options.proofTimeout),
      authorizes: { fields in
        fields[.authorization].map { access.isAuthorized(["authorization": $0]) } ?? false
      })
  }

  /// Listens and answers until the calling task is cancelled; then stops every answer (their tools end) and closes
  /// the event streams.
  ///
  /// - Parameter onListening: called once the socket is bound, with the address to open.
  /// - Throws: why the address cannot be bound.
  public func run(onListening: @escaping @Sendable (Listening) -> Void = { _ in }) async throws {
    let host = options.host
    let gate = self.gate
    let app = Application(
      router: router(),
      server: .http1(
        configuration: HTTP1Channel.Configuration(
          additionalChannelHandlers: [gate.handler()],
          idleTimeout: .nanoseconds(options.idleTimeout.wholeNanoseconds))),
      configuration: .init(
        address: .hostname(host, port: options.port), serverName: nil,
        availableConnectionsDelegate: MaximumAvailableConnections(options.maxConnections)),
      onServerRunning: { [self] channel in
        let port = channel.localAddress?.port ?? options.port
        boundPort.store(port, ordering: .releasing)
        let shown = host.contains(":") ? "[\(host)]" : host
        onListening(Listening(port: port, url: "http://\(shown):\(port)/#token=\(access.linkToken)"))
      },
      logger: Logger(label: "toolhost.web", factory: { _ in SwiftLogNoOpLogHandler() }))
    defer { engine.events.finishAll() }
    // Every open event stream hears from the server now and then, so that a proxy or the browser keeps it open.
    let interval = options.pingInterval
    let events = engine.events
    let pings = Task {
      while !Task.isCancelled {
        try? await Task.sleep(for: interval)
        events.send(.ping)
      }
    }
    defer { pings.cancel() }
    do { try await app.run() } catch {
      await engine.finish()
      throw error
    }
    await engine.finish()
  }

  // MARK: Routes

  /// The page's routes: its files and the session trade, the chats, the approvals and the event stream, each
  /// request refused first unless ``access`` lets it through.
  private func router() -> Router<BasicRequestContext> {
    let router = Router(context: BasicRequestContext.self)
    router.addMiddleware { FailureMiddleware() }
    addPageRoutes(to: router)
    addChatRoutes(to: router)
    addApprovalAndEventRoutes(to: router)
    return router
  }

  /// The page's files, and the one-time link traded for the session's secret.
  private func addPageRoutes(to router: Router<BasicRequestContext>) {
    router.get("/") { request, _ in
      self.refusal(request) ?? Self.page(WebPage.html, type: "text/html; charset=utf-8")
    }
    router.get("/app.js") { request, _ in
      self.refusal(request) ?? Self.page(WebPage.script, type: "text/javascript; charset=utf-8")
    }
    router.get("/app.css") { request, _ in
      self.refusal(request) ?? Self.page(WebPage.style, type: "text/css; charset=utf-8")
    }
    router.get("/favicon.ico") { request, _ in
      self.refusal(request) ?? Response(status: .noContent, headers: Self.commonHeaders)
    }
    router.post(RouterPath(WebAccess.sessionPath)) { request, _ in
      if let refusal = self.refusal(request) { return refusal }
      let body = try await self.body(request)
      guard let link = body["link"]?.stringValue else {
        throw WebChatEngine.Failure(status: 400, description: "give the address's token as {\"link\": \"...\"}")
      }
      switch self.access.redeem(link: link) {
      case .success(let secret): return Self.json(["secret": .string(secret)])
      case .failure(let refusal):
        return Self.json(["error": .string(refusal.message)], status: .init(code: refusal.status))
      }
    }
  }

  /// The state, the chats and their messages: list, read, rename, delete, send, stop.
  private func addChatRoutes(to router: Router<BasicRequestContext>) {
    router.get("/api/state") { request, _ in
      if let refusal = self.refusal(request) { return refusal }
      let (chats, more) = try self.engine.chats()
      return Self.json([
        "model": .string(self.engine.configuration.model.displayName),
        "history": .bool(self.engine.configuration.keepsHistory),
        "tools": .array(self.engine.toolsJSON), "chats": .array(chats), "more": .bool(more),
      ])
    }
    router.get("/api/chats") { request, _ in
      if let refusal = self.refusal(request) { return refusal }
      let (chats, more) = try self.engine.chats(matching: request.uri.queryParameters.get("q"))
      return Self.json(["chats": .array(chats), "more": .bool(more)])
    }
    router.get("/api/chats/:id") { request, context in
      if let refusal = self.refusal(request) { return refusal }
      return Self.json(try await self.engine.chat(try Self.chatID(context)))
    }
    router.patch("/api/chats/:id") { request, context in
      if let refusal = self.refusal(request) { return refusal }
      let body = try await self.body(request)
      guard let title = body["title"]?.stringValue else {
        throw WebChatEngine.Failure(status: 400, description: "give the new title as {\"title\": \"...\"}")
      }
      return Self.json(try self.engine.rename(try Self.chatID(context), to: title))
    }
    router.delete("/api/chats/:id") { request, context in
      if let refusal = self.refusal(request) { return refusal }
      try await self.engine.delete(try Self.chatID(context))
      return Response(status: .noContent, headers: Self.commonHeaders)
    }
    router.post("/api/chats/:id/messages") { request, context in
      if let refusal = self.refusal(request) { return refusal }
      let id = context.parameters.get("id") == "new" ? nil : try Self.chatID(context)
      let body = try await self.body(request)
      guard let text = body["text"]?.stringValue else {
        throw WebChatEngine.Failure(status: 400, description: "give the message as {\"text\": \"...\"}")
      }
      let chat = try self.engine.send(
        text, to: id, tool: body["tool"]?.stringValue, nonce: body["nonce"]?.stringValue.map { String($0.prefix(64)) })
      return Self.json(["chat": .integer(chat)], status: .accepted)
    }
    router.post("/api/chats/:id/stop") { request, context in
      if let refusal = self.refusal(request) { return refusal }
      await self.engine.stop(try Self.chatID(context))
      return Response(status: .noContent, headers: Self.commonHeaders)
    }
  }

  /// The answers to approvals, and the event stream.
  private func addApprovalAndEventRoutes(to router: Router<BasicRequestContext>) {
    router.post("/api/approvals/:id") { request, context in
      if let refusal = self.refusal(request) { return refusal }
      let body = try await self.body(request)
      guard let answer = body["answer"]?.stringValue.flatMap(WebChatEngine.ApprovalAnswer.init(rawValue:)) else {
        throw WebChatEngine.Failure(
          status: 400, description: "answer with {\"answer\": \"once\" | \"always\" | \"deny\"}")
      }
      guard self.engine.answer(approval: context.parameters.get("id") ?? "", with: answer) else {
        throw WebChatEngine.Failure(status: 404, description: "that approval is no longer waiting")
      }
      return Response(status: .noContent, headers: Self.commonHeaders)
    }
    router.get("/api/events") { request, _ in
      if let refusal = self.refusal(request) { return refusal }
      return self.eventStream()
    }
  }

  /// The refusal of `request` by ``access``; `nil` to serve it.
  private func refusal(_ request: Request) -> Response? {
    var headers: [String: String] = [:]
    for field in request.headers { headers[field.name.canonicalName] = field.value }
    if let authority = request.head.authority { headers["host"] = authority }
    switch access.check(
      method: request.method.rawValue, path: request.uri.path, headers: headers,
      port: boundPort.load(ordering: .acquiring))
    {
    case .allow:
      return nil
    case .refuse(let status, let message):
      return Self.json(["error": .string(message)], status: .init(code: status))
    }
  }

  /// The request's body as a JSON object.
  private func body(_ request: Request) async throws -> JSONValue {
    let buffer: ByteBuffer
    do { buffer = try await request.body.collect(upTo: options.maxBodyBytes) } catch {
      throw WebChatEngine.Failure(status: 413, description: "the request is over \(options.maxBodyBytes) bytes")
    }
    guard let value = try? JSONValue.parse(Array(buffer: buffer)), value.objectValue != nil else {
      throw WebChatEngine.Failure(status: 400, description: "the request body is not a JSON object")
    }
    return value
  }

  private static func chatID(_ context: BasicRequestContext) throws -> Int64 {
    guard let id = context.parameters.get("id").flatMap({ Int64($0) }) else {
      throw WebChatEngine.Failure(status: 404, description: "no such chat")
    }
    return id
  }

  /// The event stream: `{"type": "hello"}`, the approvals waiting, then every event of the engine from now on (and
  /// the server's pings).
  private func eventStream() -> Response {
    let events = engine.subscribe()
    var fields = Self.commonHeaders
    fields[.contentType] = "text/event-stream"
    fields[.cacheControl] = "no-cache, no-store"
    let body = events.map { event in ByteBuffer(string: "data: \(event.serialized())\n\n") }
    return Response(status: .ok, headers: fields, body: ResponseBody(asyncSequence: body))
  }

  // MARK: Answers

  /// The headers of every answer: the CSP, no sniffing, no referrer, no caching, no framing.
  static var commonHeaders: HTTPFields {
    var fields = HTTPFields()
    fields[.contentSecurityPolicy] = contentSecurityPolicy
    if let name = HTTPField.Name("x-content-type-options") { fields[name] = "nosniff" }
    if let name = HTTPField.Name("referrer-policy") { fields[name] = "no-referrer" }
    if let name = HTTPField.Name("x-frame-options") { fields[name] = "DENY" }
    if let name = HTTPField.Name("cross-origin-opener-policy") { fields[name] = "same-origin" }
    if let name = HTTPField.Name("cross-origin-resource-policy") { fields[name] = "same-origin" }
    fields[.cacheControl] = "no-store"
    return fields
  }

  static func page(_ text: String, type: String) -> Response {
    var fields = commonHeaders
    fields[.contentType] = type
    return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }

  static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
    var fields = commonHeaders
    fields[.contentType] = "application/json; charset=utf-8"
    return Response(
      status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: value.serialized())))
  }

  /// Answers a ``WebChatEngine/Failure`` (and anything else thrown) as `{"error": ...}` with its status.
  struct FailureMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    func handle(
      _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
      do { return try await next(request, context) } catch let failure as WebChatEngine.Failure {
        return WebChatServer.json(["error": .string(failure.description)], status: .init(code: failure.status))
      } catch let error as HTTPError {
        return WebChatServer.json(
          ["error": .string(error.body ?? "\(error.status.code) \(error.status.reasonPhrase)")], status: error.status)
      }
    }
  }
}
