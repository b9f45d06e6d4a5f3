#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// This machine's loopback interface: the one place that decides what "this machine" means for a host, a URL or an
/// origin (a token may cross plain HTTP only to it; browser pages from it may call a local server; a server bound
/// to it may go without a token).
public enum Loopback {
  /// Whether `host` (a URL's host or an address to bind, with or without IPv6 brackets, any case) is an address of
  /// the loopback interface, which other machines cannot reach: `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped
  /// `::ffff:127.x.y.z`.
  public static func isHost(_ host: String) -> Bool {
    let name = unbracketed(host.lowercased())
    if name == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
    let bytes = withUnsafeBytes(of: &v6) { Array($0) }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
    return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
  }

  /// Whether `host` is an IP address written as numbers (`127.0.0.1`, `::1`, `[::1]`), not a name.
  public static func isNumeric(_ host: String) -> Bool {
    let name = unbracketed(host)
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
  }

  private static func unbracketed(_ host: String) -> String {
    host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
  }
}
