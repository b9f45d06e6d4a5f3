import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TCP connection to a server on 127.0.0.1 driven byte by byte, for what an HTTP client library will not do: a
/// request whose head never ends, a client that stops reading, a client that hangs up mid-call.
public final class RawConnection: Sendable {
  /// The socket.
  public let fd: Int32

  /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks the socket's receive buffer first (bytes).
  public init(port: Int, receiveBuffer: Int32? = nil) throws(TestFailure) {
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    if var size = receiveBuffer {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = RawConnection.loopback(port: port)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      let why = String(cString: strerror(errno))
      closeSocket(fd)
      throw TestFailure("connect to 127.0.0.1:\(port): \(why)")
    }
  }

  deinit { closeSocket(fd) }

  /// 127.0.0.1:`port` as a socket address.
  static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
  }

  /// Writes all of `text`.
  public func send(_ text: String) throws(TestFailure) {
    let bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
      let n = sendBytes(fd, bytes[sent...])
      if n < 0, errno == EINTR { continue }
      guard n > 0 else { throw TestFailure("send: \(String(cString: strerror(errno)))") }
      sent += n
    }
  }

  /// A POST of `body` (JSON) to `path`, with `headers` besides the usual ones.
  public func post(_ path: String, body: String, headers: [String: String] = [:]) throws(TestFailure) {
    var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
    try send(head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
  }

  /// What comes next: the bytes that arrive within `seconds` of waiting for the first of them (as many as are there
  /// then), `[]` at the end of the stream, `nil` when nothing came. Waits without blocking a thread of the pool
  /// (tests run side by side, and in-process servers need those threads).
  public func read(within seconds: Double) async -> [UInt8]? {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while true {
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&poller, 1, 0) > 0 { break }
      if ContinuousClock.now >= deadline { return nil }
      try? await Task.sleep(for: .milliseconds(2))
    }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    let n = recv(fd, &buffer, buffer.count, 0)
    if n < 0 { return errno == ECONNRESET ? [] : nil }
    return Array(buffer[0..<n])
  }

  /// Everything until the server closes the connection, or `nil` when it does not within `seconds` in all.
  public func readToEnd(within seconds: Double) async -> [UInt8]? {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    var all: [UInt8] = []
    while ContinuousClock.now < deadline {
      guard let chunk = await read(within: 0.2) else { continue }
      if chunk.isEmpty { return all }
      all += chunk
    }
    return nil
  }

  /// Reads until `text` has come, the connection ends, or `seconds` pass; everything read.
  public func read(until text: String, within seconds: Double) async -> String {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    let wanted = Array(text.utf8)
    var all: [UInt8] = []
    var searched = 0
    while ContinuousClock.now < deadline {
      guard let chunk = await read(within: 0.2) else { continue }
      if chunk.isEmpty { break }
      all += chunk
      // Only what is new (and the end of what came before) is looked through again.
      let from = max(0, searched - wanted.count)
      if all[from...].firstRange(of: wanted) != nil { break }
      searched = all.count
    }
    return String(decoding: all, as: UTF8.self)
  }

  /// Hangs up (both directions), as a client that went away; the socket itself is closed on release.
  public func hangUp() {
    shutdown(fd, Int32(SHUT_RDWR))
  }
}

/// An HTTP server on 127.0.0.1 that answers every request with the same bytes (a redirect, say), on a thread of its
/// own, and counts the requests; for clients that must not go where they are sent.
public final class CannedHTTPServer: Sendable {
  /// The port it listens on.
  public let port: Int
  private let fd: Int32
  private let count = Atomic<Int>(0)
  private let stopped = Atomic<Bool>(false)

  /// Listens at once; `response` is the whole answer (status line, headers, body).
  public init(response: String) throws(TestFailure) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = RawConnection.loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
      }
    }
    guard fd >= 0, bound else { throw TestFailure("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))") }
    self.fd = fd
    port = Int(UInt16(bigEndian: address.sin_port))
    let bytes = Array(response.utf8)
    Thread.detachNewThread { [self] in serve(bytes) }
  }

  /// A server answering `status` (`307 Temporary Redirect`) with `headers` and `body`, then closing the connection.
  public convenience init(status: String, headers: [String: String] = [:], body: String = "") throws(TestFailure) {
    var head = "HTTP/1.1 \(status)\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
    try self.init(response: head + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
  }

  /// How many requests it has answered.
  public var requests: Int { count.load(ordering: .relaxed) }

  /// Stops listening.
  public func stop() {
    guard !stopped.exchange(true, ordering: .relaxed) else { return }
    shutdown(fd, Int32(SHUT_RDWR))
    closeSocket(fd)
  }

  private func serve(_ response: [UInt8]) {
    while !stopped.load(ordering: .relaxed) {
      let client = accept(fd, nil, nil)
      if client < 0 {
        if errno == EINTR { continue }
        return
      }
      // The head, then as many body bytes as Content-Length says.
      var received: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 1 << 16)
      while true {
        let text = String(decoding: received, as: UTF8.self)
        if let end = text.range(of: "\r\n\r\n") {
          let head = text[..<end.lowerBound].lowercased()
          let length =
            head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
          if text.utf8.count - text[..<end.upperBound].utf8.count >= length { break }
        }
        let n = recv(client, &buffer, buffer.count, 0)
        if n <= 0 { break }
        received += buffer[0..<n]
      }
      count.add(1, ordering: .relaxed)
      _ = sendBytes(client, response[...])
      closeSocket(client)
    }
  }
}

// The system calls, outside the types whose methods share their names.

private func closeSocket(_ fd: Int32) {
  close(fd)
}

private func sendBytes(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Int {
  #if canImport(Darwin)
    let flags: Int32 = 0
  #else
    let flags = Int32(MSG_NOSIGNAL)
  #endif
  return bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, flags) }
}
