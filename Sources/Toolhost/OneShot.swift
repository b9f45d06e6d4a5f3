import Dispatch
import Synchronization

/// A value that is set once, by whichever comes first (a reply, a timer, a cancellation, an exit), and awaited by
/// one task, or by one thread with a time limit (synchronous discovery still starts MCP servers that way).
package final class OneShot<Value: Sendable>: Sendable {
  private struct State {
    var value: Value?
    var continuation: CheckedContinuation<Value, Never>?
  }
  private let state = Mutex(State())
  private let semaphore = DispatchSemaphore(value: 0)

  /// Makes an unset value.
  package init() {}

  /// Sets the value unless one is set already; resumes the waiting task or thread. Returns whether this call set it.
  @discardableResult
  package func complete(_ value: Value) -> Bool {
    let (continuation, set) = state.withLock { s -> (CheckedContinuation<Value, Never>?, Bool) in
      guard s.value == nil else { return (nil, false) }
      s.value = value
      defer { s.continuation = nil }
      return (s.continuation, true)
    }
    if set { semaphore.signal() }
    continuation?.resume(returning: value)
    return set
  }

  /// The value, once set.
  package var value: Value? { state.withLock { $0.value } }

  /// Waits in a task for the value.
  package func wait() async -> Value {
    await withCheckedContinuation { (c: CheckedContinuation<Value, Never>) in
      let ready = state.withLock { s -> Value? in
        if let v = s.value { return v }
        s.continuation = c
        return nil
      }
      if let ready { c.resume(returning: ready) }
    }
  }

  /// Blocks the calling thread until the value is set or `deadline` passes; for synchronous callers only.
  package func wait(until deadline: DispatchTime) -> Value? {
    if let v = value { return v }
    guard semaphore.wait(timeout: deadline) == .success else { return value }
    semaphore.signal()
    return value
  }
}
