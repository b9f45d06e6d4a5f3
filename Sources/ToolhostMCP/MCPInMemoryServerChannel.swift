// The server end of an in-memory MCP connection, and the one-way line pipe both ends are made of.

import Synchronization
import ToolhostSystem

/// The server end of an in-memory pair (``MCPInMemoryTransport/pair(maxLineLength:)``): what
/// ``MCPServer/serve(channel:)`` serves on instead of stdin and stdout.
///
/// Its input ends when the client end shuts down or terminates; ``finish(timeout:)`` (with which
/// ``MCPServer/serve(channel:)`` ends) closes its output, which ends the client's reads after what was sent.
public final class MCPInMemoryServerChannel: MCPServerChannel {
  /// What the client sends, which the server reads.
  private let input: InMemoryLinePipe
  /// What the server sends, which the client reads.
  private let output: InMemoryLinePipe

  init(input: InMemoryLinePipe, output: InMemoryLinePipe) {
    self.input = input
    self.output = output
  }

  /// Starts reading what the client sends: `onLine` gets each non-blank line without its line feed, in order, from
  /// a task of its own; `onEnd` is called once, when the client's output is closed and every line before it was
  /// handed over, or when a line passes the length limit. Only the first call starts reading; later ones do nothing.
  public func start(onLine: @escaping @Sendable ([UInt8]) -> Void, onEnd: @escaping @Sendable () -> Void) {
    input.startReading(onLine: onLine, onEnd: { _ in onEnd() })
  }

  /// Queues bytes (whole lines) for the client, in order.
  ///
  /// - Returns: `false` once the output is closed (by ``finish(timeout:)``, ``close()`` or the client's end).
  @discardableResult
  public func send(_ bytes: [UInt8]) -> Bool {
    output.write(bytes)
  }

  /// Closes the output: the client reads what was sent before, then its reads end. Returns at once, since nothing
  /// in memory has to drain (`timeout` is not needed).
  public func finish(timeout: Duration) {
    output.close()
  }

  /// Ends the connection from the server's side at once, as a server process that exits: the input and the output
  /// are closed, so ``MCPServer/serve(channel:)`` sees its input end and the client sees the server exit.
  public func close() {
    input.close()
    output.close()
  }
}

/// One direction of an in-memory pair: bytes written at one end are read as lines at the other, in the order
/// written, by a task of its own (so a writer never runs the reader's code, as with a pipe between processes).
final class InMemoryLinePipe: Sendable {
  /// The longest line read, in bytes (without its line feed); a longer one ends the pipe.
  let maxLineLength: Int
  private let stream: AsyncStream<[UInt8]>
  private let continuation: AsyncStream<[UInt8]>.Continuation
  private let reading = Atomic<Bool>(false)

  init(maxLineLength: Int) {
    self.maxLineLength = maxLineLength
    (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
  }

  deinit {
    continuation.finish()
  }

  /// Queues bytes for the reader (kept until it starts, however long that takes).
  ///
  /// - Returns: `false` once the pipe is closed; the bytes are dropped.
  @discardableResult
  func write(_ bytes: [UInt8]) -> Bool {
    if case .terminated = continuation.yield(bytes) { return false }
    return true
  }

  /// Closes the pipe: later writes fail, and the reader ends after the bytes written before.
  func close() {
    continuation.finish()
  }

  /// Starts the reader, once: a task that hands every non-blank line, without its line feed, to `onLine`, then
  /// calls `onEnd` when the pipe is closed and read to its end (`overlong` false) or a line passes
  /// ``maxLineLength`` (`overlong` true; the pipe is closed then).
  ///
  /// - Returns: `false` when the reader was started already (nothing is done).
  @discardableResult
  func startReading(
    onLine: @escaping @Sendable ([UInt8]) -> Void, onEnd: @escaping @Sendable (_ overlong: Bool) -> Void
  ) -> Bool {
    guard reading.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return false }
    Task { [stream, continuation, maxLineLength] in
      var lines = LineSplitter(maxLineLength: maxLineLength)
      var fits = true
      for await chunk in stream {
        fits = lines.feed(chunk[...], onLine: onLine)
        if !fits { break }
      }
      if fits { fits = lines.finish(onLine: onLine) }
      continuation.finish()
      onEnd(!fits)
    }
    return true
  }
}
