import Dispatch
public import Foundation
import Synchronization

/// Turns SIGINT, SIGTERM and SIGHUP into cancellation of a task, so that Ctrl-C ends running tools' process
/// groups (plugins run in their own groups, which a terminal's Ctrl-C does not reach) instead of orphaning them.
public final class InterruptHandler {
  private let sources: [any DispatchSourceSignal]

  /// Starts watching; each signal calls `onSignal` with its number on a background queue.
  ///
  /// The signals' default actions are replaced until ``stop()``. Does not throw.
  public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP], onSignal: @escaping @Sendable (Int32) -> Void) {
    let queue = DispatchQueue(label: "toolhost.signals")
    sources = signals.map { sig in
      signal(sig, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
      source.setEventHandler { onSignal(sig) }
      source.resume()
      return source
    }
  }

  /// Stops watching and restores the default actions.
  public func stop() {
    for s in sources {
      s.cancel()
      signal(Int32(s.handle), SIG_DFL)
    }
  }

  /// Runs `body` in a task that SIGINT, SIGTERM or SIGHUP cancel.
  ///
  /// - Returns: the body's result and the signal that arrived, if any.
  /// - Throws: what `body` throws.
  public static func cancellingOnSignals<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws
    -> (T, Int32?)
  {
    // The handler goes in before the task starts, so a signal can never find the default action (which would kill
    // the host and orphan the plugins' process groups).
    let received = SignalBox()
    let handler = InterruptHandler { sig in received.set(sig) }
    defer { handler.stop() }
    let task = Task { try await body() }
    received.onSignal { task.cancel() }
    let value = try await task.value
    return (value, received.get())
  }
}

/// The signal that arrived, shared between the handler's queue and the caller.
final class SignalBox: Sendable {
  private struct State {
    var signal: Int32?
    var action: (@Sendable () -> Void)?
  }
  private let state = Mutex(State())

  /// Records the first signal and runs the action, if one is set.
  func set(_ s: Int32) {
    let action = state.withLock { st -> (@Sendable () -> Void)? in
      if st.signal == nil { st.signal = s }
      return st.action
    }
    action?()
  }

  /// Sets the action; runs it at once when a signal came already.
  func onSignal(_ action: @escaping @Sendable () -> Void) {
    let already = state.withLock { st -> Bool in
      st.action = action
      return st.signal != nil
    }
    if already { action() }
  }

  func get() -> Int32? { state.withLock { $0.signal } }
}
