import Synchronization

/// A value that is set once, by whichever comes first (a reply, a time limit, a cancellation, an exit), and awaited
/// by any number of tasks.
package final class OneShot<Value: Sendable>: Sendable {
  private struct State {
    var value: Value?
    var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
    var nextWaiter = 0
  }
  private let state = Mutex(State())

  /// Makes an unset value.
  package init() {}

  /// Sets the value unless one is set already; resumes every waiting task. Returns whether this call set it.
  @discardableResult
  package func complete(_ value: Value) -> Bool {
    let waiters = state.withLock { s -> [CheckedContinuation<Value?, Never>]? in
      guard s.value == nil else { return nil }
      s.value = value
      defer { s.waiters = [:] }
      return Array(s.waiters.values)
    }
    guard let waiters else { return false }
    for w in waiters { w.resume(returning: value) }
    return true
  }

  /// The value, once set.
  package var value: Value? { state.withLock { $0.value } }

  /// Waits for the value, however long that takes: the caller makes sure something sets it (a reply, a time limit,
  /// the end of a process).
  package func wait() async -> Value {
    await withCheckedContinuation { (c: CheckedContinuation<Value?, Never>) in
      enqueue(c, cancellable: false)
    }!
  }

  /// Waits for the value; when `timeout` passes first, calls `onTimeout`, which must set it (to a time-out result).
  ///
  /// The time limit is a task of its own, cancelled as soon as the value is set; the waiter does not wait for it to
  /// wind down (a child task in a group would cost every wait one more hop through the executor), and it still fires
  /// when the waiting task is cancelled, so a value nobody else sets is set by the time limit.
  package func wait(timeout: Duration?, onTimeout: @escaping @Sendable () -> Void) async -> Value {
    guard let timeout else { return await wait() }
    let timer = Task {
      // Cancelled: the value came first.
      guard (try? await Task.sleep(for: timeout)) != nil else { return }
      onTimeout()
    }
    let value = await wait()
    timer.cancel()
    return value
  }

  /// Waits for the value, or until the calling task is cancelled (then `nil`, and the value stays unset).
  package func waitUnlessCancelled() async -> Value? {
    let id = state.withLock { s -> Int in
      s.nextWaiter += 1
      return s.nextWaiter
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { (c: CheckedContinuation<Value?, Never>) in
        enqueue(c, id: id, cancellable: true)
      }
    } onCancel: {
      state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
    }
  }

  private func enqueue(_ c: CheckedContinuation<Value?, Never>, id: Int? = nil, cancellable: Bool) {
    // Resume at once with the value (or nil when cancelled), or leave the continuation to `complete`.
    let now = state.withLock { s -> Value?? in
      if let v = s.value { return .some(v) }
      if cancellable && Task.isCancelled { return .some(nil) }
      let key: Int
      if let id {
        key = id
      } else {
        s.nextWaiter += 1
        key = s.nextWaiter
      }
      s.waiters[key] = c
      return .none
    }
    if let now { c.resume(returning: now) }
  }
}
