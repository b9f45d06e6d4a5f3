import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A tiny HTTP server on 127.0.0.1 that answers its connections in order with scripted replies, one connection a
/// request, and can leave a reply unfinished: it then keeps the connection open until the client hangs up (or
/// `holdLimit` passes) and records which it was. For replies no real server sends on purpose (malformed JSON,
/// streams cut short) and for a client that must stop reading a reply part way, as a streamed answer given up on.
///
/// ```swift
/// let server = try ScriptedHTTPServer(replies: [
///   .init(ScriptedHTTPServer.eventStream(["data: {…}"]), unfinished: true),
///   .init(ScriptedHTTPServer.eventStream(["data: {…}", "data: [DONE]"])),
/// ])
/// defer { server.stop() }
/// // … requests to server.baseURL …
/// #expect(server.hungUp == [true])
/// ```
public final class ScriptedHTTPServer: Sendable {
  /// One scripted reply.
  public struct Reply: Sendable {
    /// The whole HTTP response (status line, headers, blank line, body), sent at once.
    public var bytes: String
    /// Whether the connection stays open after `bytes`, as a stream that goes on.
    public var unfinished: Bool

    /// A reply of `bytes`, closed after them unless `unfinished`.
    public init(_ bytes: String, unfinished: Bool = false) {
      self.bytes = bytes
      self.unfinished = unfinished
    }
  }

  /// The port it listens on.
  public let port: Int
  private let fd: Int32
  private let done = DispatchSemaphore(value: 0)
  private let state = Mutex<(heads: [String], requests: [String], hungUp: [Bool])>(([], [], []))

  /// The base URL of an OpenAI-compatible API on this server: `http://127.0.0.1:PORT/v1`.
  public var baseURL: String { "http://127.0.0.1:\(port)/v1" }

  /// The head (request line and headers, lowercased) of each request served so far, in order.
  public var requestHeads: [String] { state.withLock { $0.heads } }

  /// The body of each request served so far, in order.
  public var requestBodies: [String] { state.withLock { $0.requests } }

  /// For each unfinished reply served so far, in order: whether the client hung up before `holdLimit`.
  public var hungUp: [Bool] { state.withLock { $0.hungUp } }

  /// Starts serving `replies`, one a connection; connections past the last get the last again.
  public init(replies: [Reply], holdLimit: Duration = .seconds(20)) throws(TestFailure) {
    guard !replies.isEmpty else { throw TestFailure("a scripted server needs at least one reply") }
    let fd: Int32
    (fd, port) = try listenOnLoopback(backlog: 16)
    self.fd = fd
    let holdMilliseconds = Int32(holdLimit.components.seconds * 1000)
    let done = self.done
    // The thread holds the server until stop() shuts the listening socket.
    Thread.detachNewThread { [self] in
      var served = 0
      while true {
        let client = accept(fd, nil, nil)
        if client < 0 { break }
        let reply = replies[min(served, replies.count - 1)]
        served += 1
        let (head, body) = Self.readRequest(client)
        state.withLock {
          $0.heads.append(head)
          $0.requests.append(body)
        }
        _ = Array(reply.bytes.utf8).withUnsafeBytes {
          send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if reply.unfinished {
          let hungUp = Self.waitForHangUp(client, milliseconds: holdMilliseconds)
          state.withLock { $0.hungUp.append(hungUp) }
        }
        shutdown(client, Int32(SHUT_RDWR))
        _ = close(client)
      }
      done.signal()
    }
  }

  /// Stops accepting and waits for the serving thread to end.
  public func stop() {
    shutdown(fd, Int32(SHUT_RDWR))
    _ = close(fd)
    done.wait()
  }

  /// A 200 response with this content type and body, delimited by closing the connection.
  public static func ok(_ contentType: String, _ body: String) -> String {
    "HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nConnection: close\r\n\r\n" + body
  }

  /// A 200 response of server-sent events, one `data: …` line each, delimited by closing the connection.
  public static func eventStream(_ lines: [String]) -> String {
    ok("text/event-stream", lines.map { $0 + "\n\n" }.joined())
  }

  /// Whether the client closes `client` (or resets it) within `milliseconds`.
  private static func waitForHangUp(_ client: Int32, milliseconds: Int32) -> Bool {
    var waited: Int32 = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    while waited < milliseconds {
      var poller = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, 100)
      waited += 100
      guard ready > 0 else { continue }
      if recv(client, &buffer, buffer.count, 0) <= 0 { return true }
    }
    return false
  }

  /// Reads the request head and its Content-Length body, so the client never sees a reset; returns the head
  /// (lowercased) and the body.
  private static func readRequest(_ client: Int32) -> (head: String, body: String) {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = recv(client, &buffer, buffer.count, 0)
      if n <= 0 { return ("", "") }
      data += buffer[..<n]
      guard let end = data.firstRange(of: Array("\r\n\r\n".utf8)) else { continue }
      let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
      var expected = 0
      if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
        expected = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
      }
      let body = data[end.upperBound...]
      if body.count >= expected { return (head, String(decoding: body, as: UTF8.self)) }
    }
  }
}
