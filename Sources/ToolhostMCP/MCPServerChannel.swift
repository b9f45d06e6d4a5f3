// The seam between an MCPServer and what carries its messages: stdio (LineChannel) or an in-memory pair.

/// Where an ``MCPServer`` reads its requests and writes its answers, one JSON-RPC message per line: a
/// ``LineChannel`` on stdio (the default of ``MCPServer/serve(channel:)``) or the server end of an in-memory pair
/// (``MCPInMemoryServerChannel``).
public protocol MCPServerChannel: Sendable {
  /// Starts reading. `onLine` gets each non-blank line without its line feed, in the order received; `onEnd` is
  /// called once, when the input ends, fails, or a line passes the length limit.
  func start(onLine: @escaping @Sendable ([UInt8]) -> Void, onEnd: @escaping @Sendable () -> Void)

  /// Queues bytes (whole lines, each ending in a line feed) for the client, in order.
  ///
  /// - Returns: `false` when the channel is closed or the peer has gone.
  @discardableResult
  func send(_ bytes: [UInt8]) -> Bool

  /// Delivers what is queued, then closes the output; waits at most `timeout` for it to drain, suspending the task
  /// (no thread of the cooperative pool blocks on a slow peer).
  func finish(timeout: Duration) async
}

extension LineChannel: MCPServerChannel {}
