import Dispatch
import Foundation
import Synchronization
import Toolhost

/// Reads stdin one line at a time on its own thread (blocking reads must stay off the cooperative pool), only when
/// asked, so the chat prompt and confirmations share it.
final class LineReader: Sendable {
  private struct State {
    /// Lines read after their reader stopped waiting (cancelled), for the next one.
    var buffered: [String] = []
    var eof = false
    /// Whether the thread is reading a line.
    var reading = false
    /// The reader waiting for the line being read.
    var waiter: OneShot<String?>?
  }

  private let state = Mutex(State())
  /// Lets the thread read one line.
  private let wake = DispatchSemaphore(value: 0)

  init() {
    let thread = Thread { [self] in
      while true {
        wake.wait()
        let line = readLine(strippingNewline: true)
        deliver(line)
        if line == nil { return }
      }
    }
    thread.name = "toolhost.stdin"
    thread.start()
  }

  /// Hands a line read (`nil`: end of input) to the waiting reader, or keeps it for the next one when the waiting
  /// reader was cancelled.
  private func deliver(_ line: String?) {
    state.withLock { s in
      s.reading = false
      if line == nil { s.eof = true }
      let delivered = s.waiter?.complete(line) ?? false
      s.waiter = nil
      if !delivered, let line { s.buffered.append(line) }
    }
  }

  /// The next line, or `nil` at end of input or when the task is cancelled while waiting.
  func nextLine() async -> String? {
    let waiter = OneShot<String?>()
    let ready: String?? = state.withLock { s in
      if !s.buffered.isEmpty { return .some(s.buffered.removeFirst()) }
      if s.eof || Task.isCancelled { return .some(nil) }
      s.waiter = waiter
      if !s.reading {
        s.reading = true
        wake.signal()
      }
      return .none
    }
    if let ready { return ready }
    return await withTaskCancellationHandler {
      await waiter.wait()
    } onCancel: {
      waiter.complete(nil)
    }
  }
}
