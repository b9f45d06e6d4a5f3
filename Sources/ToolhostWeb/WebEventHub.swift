import Synchronization
public import ToolhostJSON

/// Hands the chat page's events to every open event stream (each browser tab has one).
///
/// A stream that falls more than ``maximumPending`` events behind is ended rather than left to grow: the page's
/// `EventSource` connects again and reloads what it shows, so nothing is lost but the backlog.
public final class WebEventHub: Sendable {
  /// The most events kept for one slow stream before it is ended.
  public let maximumPending: Int
  private let subscribers = Mutex<[Int: AsyncStream<JSONValue>.Continuation]>([:])
  private let nextID = Atomic<Int>(0)

  /// Makes a hub with no streams.
  public init(maximumPending: Int = 10_000) {
    self.maximumPending = maximumPending
  }

  /// A new stream of every event sent from now on, after the `greeting` events; it ends when the hub ends it (too
  /// far behind, or ``finishAll()``), or when its consumer stops iterating.
  public func subscribe(greeting: [WebEvent] = []) -> AsyncStream<JSONValue> {
    let id = nextID.add(1, ordering: .relaxed).newValue
    let (stream, continuation) = AsyncStream<JSONValue>.makeStream(bufferingPolicy: .bufferingOldest(maximumPending))
    for event in greeting { continuation.yield(event.json) }
    continuation.onTermination = { [weak self] _ in
      _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
    }
    subscribers.withLock { $0[id] = continuation }
    return stream
  }

  /// Sends `event` to every open stream.
  public func send(_ event: WebEvent) {
    let json = event.json
    let all = subscribers.withLock { Array($0.values) }
    for continuation in all {
      if case .dropped = continuation.yield(json) { continuation.finish() }
    }
  }

  /// Ends every stream (the server stops).
  public func finishAll() {
    let all = subscribers.withLock { s in
      defer { s.removeAll() }
      return Array(s.values)
    }
    for continuation in all { continuation.finish() }
  }
}
