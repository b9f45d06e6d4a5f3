import Synchronization
import ToolhostSystem

/// How an ``MCPServerConnection`` exchanges JSON-RPC messages with one run of a server: a child process's stdin and
/// stdout (the default, made from ``MCPServerConfiguration``'s executable), or another channel such as Streamable
/// HTTP (ToolhostMCPHTTP's `MCPHTTPClientTransport`).
///
/// A transport takes whole messages (one JSON-RPC message each, serialized on one line that ends in a line feed, as
/// ``JSONRPCMessage/line`` makes it) and hands every message it receives to ``MCPTransportHandlers/onMessage``, in the order received. It reports an unexpected end
/// (the process exited) through ``MCPTransportHandlers/onEnd``; ``terminate()`` and ``shutdown(grace:)`` are the
/// ends the connection asks for. Sending never blocks and never throws: a message that cannot be delivered is
/// answered with an error response (for a request) or dropped (for a notification).
public protocol MCPTransport: Sendable {
  /// Sends one message: its JSON on one line, ending in a line feed.
  func send(_ line: [UInt8])
  /// Ends the run at once: a process group is signalled, requests in flight are abandoned.
  func terminate()
  /// Ends the run gently: a process's stdin is closed and it gets `grace` to exit before its group is ended;
  /// requests in flight get `grace` to finish. Does not throw.
  func shutdown(grace: Duration) async
  /// The process id of the server, when it is a child process that runs.
  var processID: Int32? { get }
  /// The end of what the server said on the side (a process's stderr), for error messages.
  var logTail: String { get }
  /// Accepts messages of up to `bytes` from now on when the transport's limit is lower (a request with a larger
  /// output limit was sent); never lowers it. The session holds each reply to its request's own limit.
  func raiseMessageLimit(to bytes: Int)
}

extension MCPTransport {
  /// Does nothing: a transport without a message limit of its own.
  public func raiseMessageLimit(to bytes: Int) {}
}

/// Where a transport delivers what it receives.
public struct MCPTransportHandlers: Sendable {
  /// One message from the server (a JSON-RPC message's bytes).
  public var onMessage: @Sendable ([UInt8]) -> Void
  /// What the server says on the side (a process's stderr), as it comes.
  public var onLog: @Sendable ([UInt8]) -> Void
  /// The run ended without being asked to, with the error that describes it.
  public var onEnd: @Sendable (MCPConnectionError) -> Void
  /// One request failed in the transport while the run goes on: its answer was over the message limit
  /// (``MCPConnectionError/resultTooLarge(limit:)``), for example.
  public var onRequestFailed: @Sendable (JSONRPCID, MCPConnectionError) -> Void

  /// Makes handlers.
  public init(
    onMessage: @escaping @Sendable ([UInt8]) -> Void, onLog: @escaping @Sendable ([UInt8]) -> Void,
    onEnd: @escaping @Sendable (MCPConnectionError) -> Void,
    onRequestFailed: @escaping @Sendable (JSONRPCID, MCPConnectionError) -> Void = { _, _ in }
  ) {
    self.onMessage = onMessage
    self.onLog = onLog
    self.onEnd = onEnd
    self.onRequestFailed = onRequestFailed
  }
}

/// Opens a transport for a new run of a server.
///
/// - Throws: ``MCPConnectionError`` (`.launchFailed` for a process that cannot start).
public typealias MCPTransportOpener = @Sendable (MCPTransportHandlers) throws(MCPConnectionError) -> any MCPTransport

/// The server as a child process on stdio (a ``PersistentProcess``), one message per line.
struct ProcessTransport: MCPTransport {
  let process: PersistentProcess

  /// Starts the configuration's executable.
  static func open(_ c: MCPServerConfiguration, handlers: MCPTransportHandlers) throws(MCPConnectionError)
    -> ProcessTransport
  {
    let spec = PersistentProcessSpec(
      executable: c.executable, arguments: c.arguments, environment: c.environment,
      workingDirectory: c.workingDirectory, outputLimit: c.outputLimit, limits: c.limits, confinement: c.confinement)
    do {
      // The limit at the line's end: requests may have raised it since the start.
      let limit = Mutex<PersistentProcess?>(nil)
      let process = try PersistentProcess.launch(
        spec,
        handlers: .init(
          onLine: handlers.onMessage, onStderr: handlers.onLog,
          onExit: { exit in
            if exit.stopReason == .outputTooLarge {
              handlers.onEnd(.replyTooLarge(limit: limit.withLock { $0?.outputLimit } ?? spec.outputLimit))
            } else {
              handlers.onEnd(.serverExited(termination: exit.termination, log: exit.stderrTail))
            }
          }))
      limit.withLock { $0 = process }
      return ProcessTransport(process: process)
    } catch {
      throw .launchFailed(error)
    }
  }

  func send(_ line: [UInt8]) { process.send(line) }
  func terminate() { process.terminate() }
  func shutdown(grace: Duration) async { _ = await process.shutdown(grace: grace) }
  var processID: Int32? { process.isRunning ? process.pid : nil }
  var logTail: String { process.stderrTail }
  func raiseMessageLimit(to bytes: Int) { process.raiseOutputLimit(to: bytes) }
}
