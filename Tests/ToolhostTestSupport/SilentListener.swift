import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TCP socket listening on 127.0.0.1 at a port the system picks, which never accepts: a connection to it is made
/// (the kernel queues it in the backlog) and never answered. For a client's time limit, and for telling a connection
/// that was made from one refused before it left (a confined plugin's).
public final class SilentListener: Sendable {
  /// The listening socket.
  public let fd: Int32
  /// The port it listens on.
  public let port: Int
  private let closed = Atomic(false)

  /// Listens with a backlog of 64.
  ///
  /// - Throws: ``TestFailure`` when no socket can listen on 127.0.0.1.
  public init() throws(TestFailure) {
    (fd, port) = try listenOnLoopback(backlog: 64)
  }

  /// Stops listening (once; the deinitializer does it too).
  public func close() {
    if !closed.exchange(true, ordering: .relaxed) { closeDescriptor(fd) }
  }

  deinit { close() }
}

/// A TCP socket listening on 127.0.0.1 at a port the system picks, and that port: the one way the test servers
/// listen.
///
/// - Throws: ``TestFailure`` when no socket can listen there.
public func listenOnLoopback(backlog: Int32) throws(TestFailure) -> (fd: Int32, port: Int) {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let listening = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, $0, &length) == 0
    }
  }
  guard listening else {
    let code = errno
    closeDescriptor(fd)
    throw TestFailure("cannot listen on 127.0.0.1: errno \(code)")
  }
  return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// close(2), out of reach of the method of the same name.
private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
