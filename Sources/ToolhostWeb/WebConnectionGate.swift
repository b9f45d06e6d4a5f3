import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization
import ToolhostSystem

/// Keeps room on the chat page's server for the page itself: any local account can open connections to it, and
/// without this, a few dozen idle ones would fill the server's connection cap and lock the page out.
///
/// A connection is **waiting** until a request on it carries the session secret, then **proven**. Waiting connections
/// are closed ``Limits/proofTimeout`` after they open (once their answer is written, if one is being written), at most
/// ``Limits/maxWaiting`` stay open (a new one closes the oldest idle one, else the one whose request has waited
/// longest: a request held open without its body does not keep its place), and one whose request was refused is
/// closed after the refusal. A new connection is never the one closed, so held requests cannot turn the page away. Proven connections are not counted against ``Limits/maxWaiting``: the page's event stream and
/// requests keep their place, and a new request of the page's proves its connection in the time it takes to send it.
final class WebConnectionGate: Sendable {
  /// The bounds on connections that have not shown the secret.
  struct Limits: Sendable {
    /// The most waiting connections open at once.
    var maxWaiting: Int
    /// How long a connection may stay open without showing the secret.
    var proofTimeout: Duration
  }

  private struct Entry {
    let channel: any Channel
    let order: UInt64
    var proven = false
    /// Since when a request on it is being answered; nil when none is.
    var busySince: ContinuousClock.Instant?
  }

  private struct State {
    var next: UInt64 = 0
    var entries: [ObjectIdentifier: Entry] = [:]
  }

  let limits: Limits
  /// Whether a request's headers carry the secret.
  let authorizes: @Sendable (HTTPFields) -> Bool
  private let state = Mutex(State())

  init(limits: Limits, authorizes: @escaping @Sendable (HTTPFields) -> Bool) {
    self.limits = limits
    self.authorizes = authorizes
  }

  /// The handler of one new connection.
  func handler() -> Handler { Handler(gate: self) }

  /// Records a new connection; returns the connection to close to keep ``Limits/maxWaiting``: the oldest idle
  /// waiting one, else the waiting one whose request was begun first; never the new one.
  fileprivate func opened(_ channel: any Channel) -> [any Channel] {
    state.withLock { s in
      s.next += 1
      let id = ObjectIdentifier(channel)
      s.entries[id] = Entry(channel: channel, order: s.next)
      let others = s.entries.filter { $0.key != id && !$0.value.proven }.map(\.value)
      guard others.count >= limits.maxWaiting else { return [] }
      let idle = others.filter { $0.busySince == nil }.min { $0.order < $1.order }
      let held = others.compactMap { entry in entry.busySince.map { (entry, $0) } }.min { $0.1 < $1.1 }?.0
      guard let victim = idle ?? held else { return [] }
      s.entries[ObjectIdentifier(victim.channel)] = nil
      return [victim.channel]
    }
  }

  fileprivate func prove(_ id: ObjectIdentifier) { state.withLock { $0.entries[id]?.proven = true } }
  fileprivate func setBusy(_ id: ObjectIdentifier, _ busy: Bool) {
    state.withLock { $0.entries[id]?.busySince = busy ? .now : nil }
  }
  fileprivate func closed(_ id: ObjectIdentifier) { _ = state.withLock { $0.entries.removeValue(forKey: id) } }

  /// Whether the connection is still waiting for its proof, and busy answering.
  fileprivate func waiting(_ id: ObjectIdentifier) -> (waiting: Bool, busy: Bool) {
    state.withLock { s in s.entries[id].map { (!$0.proven, $0.busySince != nil) } ?? (false, false) }
  }

  /// The gate's handler in one connection's pipeline, between the HTTP codec and Hummingbird's request handling.
  final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let gate: WebConnectionGate
    private var id: ObjectIdentifier?
    private var closeAfterAnswer = false

    init(gate: WebConnectionGate) { self.gate = gate }

    func handlerAdded(context: ChannelHandlerContext) {
      let channel = context.channel
      let id = ObjectIdentifier(channel)
      self.id = id
      for victim in gate.opened(channel) { victim.close(promise: nil) }
      scheduleProofCheck(channel: channel, id: id)
    }

    /// Closes the connection if it still has not shown the secret once the timeout passes (after its answer, if it
    /// is writing one).
    private func scheduleProofCheck(channel: any Channel, id: ObjectIdentifier) {
      let gate = self.gate
      channel.eventLoop.scheduleTask(in: .nanoseconds(gate.limits.proofTimeout.wholeNanoseconds)) {
        let (waiting, busy) = gate.waiting(id)
        guard waiting else { return }
        if busy {
          channel.eventLoop.scheduleTask(in: .milliseconds(500)) {
            if gate.waiting(id).waiting { channel.close(promise: nil) }
          }
        } else {
          channel.close(promise: nil)
        }
      }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
      if let id { gate.closed(id) }
      id = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
      if let id { gate.closed(id) }
      context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
      if case .head(let request) = unwrapInboundIn(data), let id {
        if gate.waiting(id).waiting, gate.authorizes(request.headerFields) { gate.prove(id) }
        gate.setBusy(id, true)
      }
      context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
      let part = unwrapOutboundIn(data)
      guard let id else {
        context.write(data, promise: promise)
        return
      }
      switch part {
      case .head(let response):
        // A refused request's connection is of no more use to whoever sent it.
        if [401, 403, 421].contains(response.status.code), gate.waiting(id).waiting { closeAfterAnswer = true }
        context.write(data, promise: promise)
      case .body:
        context.write(data, promise: promise)
      case .end:
        gate.setBusy(id, false)
        guard closeAfterAnswer else {
          context.write(data, promise: promise)
          return
        }
        let channel = context.channel
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        promise.map { written.futureResult.cascade(to: $0) }
        context.writeAndFlush(data, promise: written)
      }
    }
  }
}
