import Hummingbird
import NIOCore
import Synchronization
import ToolhostJSON
import ToolhostMCP

/// The request context of ``MCPHTTPServer``'s routes: Hummingbird's basics, and the connection the request came on
/// (to learn when its client goes away).
struct MCPRequestContext: RequestContext {
  var coreContext: CoreRequestContextStorage
  /// The connection's channel, as a key of ``Connections``.
  let connection: ObjectIdentifier

  init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    connection = ObjectIdentifier(source.channel)
  }
}

/// Whether a connection's client is still there, and what to do when it leaves.
final class ClientPresence: Sendable {
  private struct State {
    var gone = false
    var watchers: [Int: @Sendable () -> Void] = [:]
    var next = 0
  }
  private let state = Mutex(State())

  /// Calls `onGone` once the client leaves; returns the key that stops it, or `nil` (and calls nothing) when the
  /// client has left already.
  func watch(_ onGone: @escaping @Sendable () -> Void) -> Int? {
    state.withLock { s -> Int? in
      guard !s.gone else { return nil }
      s.next += 1
      s.watchers[s.next] = onGone
      return s.next
    }
  }

  /// Stops the watcher `key`.
  func unwatch(_ key: Int) {
    _ = state.withLock { $0.watchers.removeValue(forKey: key) }
  }

  /// The client left (closed its side of the connection, or the connection ended): every watcher is called, once.
  func left() {
    let watchers = state.withLock { s -> [@Sendable () -> Void] in
      guard !s.gone else { return [] }
      s.gone = true
      defer { s.watchers = [:] }
      return Array(s.watchers.values)
    }
    for onGone in watchers { onGone() }
  }
}

/// The open connections of a server, each with its client's presence.
final class Connections: Sendable {
  private let open = Mutex<[ObjectIdentifier: ClientPresence]>([:])

  /// Records a new connection.
  func opened(_ id: ObjectIdentifier) -> ClientPresence {
    let presence = ClientPresence()
    open.withLock { $0[id] = presence }
    return presence
  }

  /// Forgets a connection that ended (unless its key now belongs to a newer one).
  func closed(_ id: ObjectIdentifier, _ presence: ClientPresence) {
    open.withLock { if $0[id] === presence { $0[id] = nil } }
  }

  /// The presence of the client of connection `id`, while it is open.
  func presence(of id: ObjectIdentifier) -> ClientPresence? {
    open.withLock { $0[id] }
  }
}

/// Tells a connection's ``ClientPresence`` when its client closes its side of the connection, or the connection
/// ends: one per connection, in the HTTP/1 pipeline after the codec. Everything else passes through.
///
/// A client that only half-closes (shuts down its writing side and still reads) counts as gone, as with Go's
/// `net/http`: HTTP/1.1 clients do not do that while they wait for an answer.
final class ClientPresenceHandler: ChannelInboundHandler, RemovableChannelHandler {
  /// Anything: the handler looks at events, not at what is read.
  typealias InboundIn = NIOAny

  private let connections: Connections
  private var connection: (id: ObjectIdentifier, presence: ClientPresence)?

  init(connections: Connections) {
    self.connections = connections
  }

  func handlerAdded(context: ChannelHandlerContext) {
    let id = ObjectIdentifier(context.channel)
    connection = (id, connections.opened(id))
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    leave()
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let event = event as? ChannelEvent, event == .inputClosed { connection?.presence.left() }
    context.fireUserInboundEventTriggered(event)
  }

  func channelInactive(context: ChannelHandlerContext) {
    leave()
    context.fireChannelInactive()
  }

  private func leave() {
    guard let connection else { return }
    connection.presence.left()
    connections.closed(connection.id, connection.presence)
    self.connection = nil
  }
}

/// One `tools/call` being answered over HTTP, ended once: by its answer, or by its client going away (or the server
/// stopping). Ending it releases its place among the calls in flight, stops watching the client and, when the call
/// was cancelled, tells the MCP server so (as a closed stream cancels a request in MCP).
final class RunningCall: Sendable {
  private struct State {
    var ended = false
    var watch: Int?
  }

  /// The id the MCP server knows the call by.
  let local: JSONRPCID
  private let server: MCPServer
  private let presence: ClientPresence?
  private let release: @Sendable () -> Void
  private let state = Mutex(State())

  init(local: JSONRPCID, server: MCPServer, presence: ClientPresence?, release: @escaping @Sendable () -> Void) {
    self.local = local
    self.server = server
    self.presence = presence
    self.release = release
  }

  /// Calls `onGone` when the client goes away; `false` when it has gone already (the call then ends unstarted).
  func watch(_ onGone: @escaping @Sendable () -> Void) -> Bool {
    guard let presence else { return true }
    guard let key = presence.watch(onGone) else {
      end(cancelled: false)
      return false
    }
    state.withLock { $0.watch = key }
    return true
  }

  /// Ends the call (the first time only); `cancelled` cancels it in the MCP server.
  func end(cancelled: Bool) {
    let watch = state.withLock { s -> Int?? in
      guard !s.ended else { return nil }
      s.ended = true
      return .some(s.watch)
    }
    guard let watch else { return }
    if let watch, let presence { presence.unwatch(watch) }
    release()
    if cancelled {
      server.handle(.notification(method: "notifications/cancelled", params: ["requestId": local.json])) { _ in }
    }
  }
}
