import CToolhostSupport
import Foundation
import Synchronization
import ToolhostSystem

/// Lines in from one descriptor and bytes out to another, each on a thread of its own: the stdio of a server such
/// as `toolhost serve --mcp`.
///
/// The descriptors stay blocking (they are usually shared with the parent, and O_NONBLOCK would change them for
/// it too), so the reader blocks in read(2) on its own thread and the writer in write(2) on another, never in a
/// Swift task. The writer blocks SIGPIPE, so a peer that goes away makes writes fail instead of killing the host.
public final class LineChannel: Sendable {
  private struct Outbox {
    var bytes: [UInt8] = []
    var closing = false
    var broken = false
  }

  private let input: Int32
  private let output: Int32
  private let maxLineLength: Int
  private let outbox = Mutex(Outbox())
  private let ready = DispatchSemaphore(value: 0)
  /// Set by the writer thread once it has written what was queued before `finish` (or the peer has gone).
  private let flushed = OneShot<Void>()

  /// Makes a channel over `input` and `output` (not started).
  public init(input: Int32 = 0, output: Int32 = 1, maxLineLength: Int = 64 << 20) {
    self.input = input
    self.output = output
    self.maxLineLength = maxLineLength
  }

  /// Starts the reader and writer threads.
  ///
  /// `onLine` gets each non-blank line without its line feed (and a trailing carriage return), on the reader
  /// thread; `onEnd` is called once when the input ends, fails, or a line passes the length limit.
  public func start(
    onLine: @escaping @Sendable ([UInt8]) -> Void, onEnd: @escaping @Sendable () -> Void
  ) {
    let input = self.input
    let maxLineLength = self.maxLineLength
    let reader = Thread {
      var buffer = [UInt8](repeating: 0, count: 65536)
      var lines = LineSplitter(maxLineLength: maxLineLength)
      while true {
        let n = read(input, &buffer, buffer.count)
        if n < 0, errno == EINTR { continue }
        if n <= 0 {
          _ = lines.finish(onLine: onLine)
          break
        }
        guard lines.feed(buffer[0..<n], onLine: onLine) else { break }
      }
      onEnd()
    }
    reader.name = "toolhost-line-reader"
    reader.stackSize = 512 << 10
    reader.start()

    let writer = Thread { [self] in
      toolhost_block_sigpipe_on_this_thread()
      while true {
        ready.wait()
        let (bytes, closing) = outbox.withLock { o -> ([UInt8], Bool) in
          defer { o.bytes.removeAll(keepingCapacity: true) }
          return (o.bytes, o.closing)
        }
        var offset = 0
        while offset < bytes.count {
          let n = bytes.withUnsafeBytes {
            write(output, $0.baseAddress! + offset, bytes.count - offset)
          }
          if n > 0 {
            offset += n
          } else if n < 0, errno == EINTR {
            continue
          } else {
            outbox.withLock { $0.broken = true }
            break
          }
        }
        if closing {
          flushed.complete(())
          return
        }
      }
    }
    writer.name = "toolhost-line-writer"
    writer.stackSize = 256 << 10
    writer.start()
  }

  /// Queues bytes for the output; the writer thread writes them in order.
  ///
  /// - Returns: `false` when the channel is closed or the peer has gone (writes failed).
  @discardableResult
  public func send(_ bytes: [UInt8]) -> Bool {
    let queued = outbox.withLock { o -> Bool in
      guard !o.closing, !o.broken else { return false }
      o.bytes.append(contentsOf: bytes)
      return true
    }
    if queued { ready.signal() }
    return queued
  }

  /// Writes what is queued, then stops the writer; waits at most `timeout` for the output to drain.
  ///
  /// The wait suspends the calling task; no thread of Swift's cooperative pool blocks on a slow peer.
  public func finish(timeout: Duration = .seconds(5)) async {
    let first = outbox.withLock { o -> Bool in
      defer { o.closing = true }
      return !o.closing
    }
    guard first else { return }
    ready.signal()
    // A writer still blocked in write(2) after `timeout` is left to the peer: the time limit only ends the wait.
    await flushed.wait(timeout: timeout) { [flushed] in flushed.complete(()) }
  }
}
