// The client end of an in-memory MCP connection, and the pair it belongs to: an MCPServerConnection and an
// MCPServer talking in one process, with no process, pipe or socket between them.

import Synchronization
import ToolhostSystem

/// The client end of an MCP client and server connected in memory: an ``MCPTransport`` for an
/// ``MCPServerConnection``, whose other end is an ``MCPInMemoryServerChannel`` that ``MCPServer/serve(channel:)``
/// serves on. Each direction is a queue of bytes in memory, read as lines, in the order written, by a task of its
/// own; nothing blocks a thread.
///
/// The ends behave as the stdio of a server's child process would:
/// - ``shutdown(grace:)`` closes the server's input, as closing a process's stdin: ``MCPServer/serve(channel:)``
///   answers the calls still running, closes its output and returns. After `grace`, the connection is ended as by
///   ``terminate()``.
/// - ``terminate()`` closes both directions at once, as ending a process: the server's input ends and what it sends
///   from then on is dropped.
/// - When the server end closes its output (``MCPInMemoryServerChannel/finish(timeout:)``, which ends
///   ``MCPServer/serve(channel:)``, or ``MCPInMemoryServerChannel/close()``), the client's reads end: requests in
///   flight fail as when a server process exits with status 0 (``MCPConnectionError/serverExited(termination:log:)``).
///
/// ```swift
/// let server = MCPServer(registry: try ToolRegistry([Adder()]))
/// let (client, channel) = MCPInMemoryTransport.pair()
/// let serving = Task { await server.serve(channel: channel) }
/// let connection = MCPServerConnection(
///   MCPServerConfiguration(name: "adder", executable: "in-memory", transport: client.opener))
/// let sum = try await connection.callTool("add", arguments: ["a": 1, "b": 2], timeout: .seconds(5))
/// await connection.shutdown()  // the server's input ends, so serve(channel:) returns
/// await serving.value
/// ```
///
/// A pair is one run of a server: its ``opener`` opens once, so a connection whose server ended cannot start it
/// again. ``opener(serving:maxLineLength:)`` makes a new pair, served by the same ``MCPServer``, for every run.
public final class MCPInMemoryTransport: MCPTransport {
  private struct State {
    var handlers: MCPTransportHandlers?
    /// The connection asked for the end (``terminate()`` or ``shutdown(grace:)``), so it is not reported.
    var endAsked = false
    /// ``terminate()`` was called: what the server still sends is dropped.
    var terminated = false
  }

  /// What the client sends, which the server reads.
  private let toServer: InMemoryLinePipe
  /// What the server sends, which the client reads.
  private let fromServer: InMemoryLinePipe
  private let state = Mutex(State())
  /// Set when the reads from the server have ended.
  private let readsEnded = OneShot<Void>()

  init(toServer: InMemoryLinePipe, fromServer: InMemoryLinePipe) {
    self.toServer = toServer
    self.fromServer = fromServer
  }

  /// Makes a connected pair: `client` for an ``MCPServerConnection`` (through ``opener``), `server` for
  /// ``MCPServer/serve(channel:)``. Lines longer than `maxLineLength` bytes end the connection, as on stdio.
  public static func pair(maxLineLength: Int = 64 << 20) -> (
    client: MCPInMemoryTransport, server: MCPInMemoryServerChannel
  ) {
    let up = InMemoryLinePipe(maxLineLength: maxLineLength)
    let down = InMemoryLinePipe(maxLineLength: maxLineLength)
    return (MCPInMemoryTransport(toServer: up, fromServer: down), MCPInMemoryServerChannel(input: up, output: down))
  }

  /// An opener that connects every run of a server to `server` in memory: each open makes a new pair and serves its
  /// server end from a task of its own, which ends when the run does (``shutdown(grace:)`` or ``terminate()``, once
  /// the calls still running have ended). The server should serve this one connection, one run at a time.
  public static func opener(serving server: MCPServer, maxLineLength: Int = 64 << 20) -> MCPTransportOpener {
    { handlers throws(MCPConnectionError) in
      let (client, channel) = pair(maxLineLength: maxLineLength)
      Task { await server.serve(channel: channel) }
      return try client.open(handlers)
    }
  }

  /// This end as the ``MCPServerConfiguration/transport`` of a connection: it opens once (see ``open(_:)``).
  public var opener: MCPTransportOpener {
    { [self] handlers throws(MCPConnectionError) in try open(handlers) }
  }

  /// Starts reading what the server sends: each message goes to `handlers.onMessage`, in order, and the end of the
  /// server's output to `handlers.onEnd` (unless the connection asked for it).
  ///
  /// - Returns: this transport.
  /// - Throws: ``MCPConnectionError/launchFailed(_:)`` when it was opened already: a pair is one run of a server.
  @discardableResult
  public func open(_ handlers: MCPTransportHandlers) throws(MCPConnectionError) -> MCPInMemoryTransport {
    let first = state.withLock { s -> Bool in
      guard s.handlers == nil else { return false }
      s.handlers = handlers
      return true
    }
    guard first else {
      throw .launchFailed(
        ProcessLaunchError(
          executable: "in-memory MCP server",
          reason: "an in-memory pair is one run of a server, and it was opened already"))
    }
    fromServer.startReading(
      onLine: { [self] line in
        guard !state.withLock({ $0.terminated }) else { return }
        handlers.onMessage(line)
      },
      onEnd: { [self] overlong in
        // The server's output ended: the run is over, so its input is closed too.
        toServer.close()
        readsEnded.complete(())
        guard !state.withLock({ $0.endAsked }) else { return }
        handlers.onEnd(
          overlong
            ? .replyTooLarge(limit: fromServer.maxLineLength) : .serverExited(termination: .exited(0), log: ""))
      })
    return self
  }

  /// Sends one message (its JSON on one line, ending in a line feed) to the server; dropped once the server's input
  /// is closed.
  public func send(_ line: [UInt8]) {
    toServer.write(line)
  }

  /// Ends the run at once: the server's input ends, and what it sends from then on is dropped.
  public func terminate() {
    state.withLock { s in
      s.endAsked = true
      s.terminated = true
    }
    toServer.close()
    fromServer.close()
  }

  /// Ends the run gently: the server's input ends, and the server gets `grace` to answer what runs and close its
  /// output; then the run is ended as by ``terminate()``. Returns once the server's output ended or `grace` passed.
  public func shutdown(grace: Duration) async {
    let opened = state.withLock { s -> Bool in
      s.endAsked = true
      return s.handlers != nil
    }
    toServer.close()
    if opened {
      await readsEnded.wait(timeout: grace) { [readsEnded] in readsEnded.complete(()) }
    }
    terminate()
  }

  /// `nil`: no process runs.
  public var processID: Int32? { nil }

  /// Empty: an in-memory server has no stderr.
  public var logTail: String { "" }
}
