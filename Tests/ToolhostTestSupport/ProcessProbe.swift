import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Checks on processes that tests start, shared by the test targets: whether one still runs, which belong to a
/// process group, and a free port for a server a test starts.
public enum ProcessProbe {
  /// Whether `pid` is a process that exists and is not a zombie (for leak checks: an exited child nobody has reaped
  /// yet is gone for this purpose).
  public static func isAlive(_ pid: Int32) -> Bool {
    // EPERM: the process exists but belongs to someone else.
    guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
    guard let fields = statFields(pid) else { return false }
    return fields.first != "Z"
  }

  /// The living processes of process group `pgid`, and its zombies too when `includingZombies`.
  public static func inGroup(_ pgid: Int32, includingZombies: Bool = false) -> [Int32] {
    guard pgid > 0, let directory = opendir("/proc") else { return [] }
    defer { closedir(directory) }
    var found: [Int32] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      guard let pid = Int32(name), let fields = statFields(pid) else { continue }
      if fields.count > 2, includingZombies || fields[0] != "Z", Int32(fields[2]) == pgid { found.append(pid) }
    }
    return found
  }

  /// Waits up to `timeout` seconds for `pid` to end (be gone, or a zombie); whether it did.
  public static func waitForEnd(_ pid: Int32, timeout: Double = 3) async -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
      if !isAlive(pid) { return true }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return !isAlive(pid)
  }

  /// Waits up to `timeout` seconds for process group `pgid` to be empty; returns what is left of it.
  public static func waitForGroupToEnd(_ pgid: Int32, timeout: Double = 3) async -> [Int32] {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
      if inGroup(pgid).isEmpty { return [] }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return inGroup(pgid)
  }

  /// Kills whatever is left of process group `pgid` (clean-up after a failed expectation, so no test leaves
  /// processes behind).
  public static func killGroup(_ pgid: Int32) {
    guard pgid > 0 else { return }
    kill(-pgid, SIGKILL)
  }

  /// The living processes whose command line (its words joined by NUL bytes) satisfies `matches`.
  public static func processes(whoseCommandLine matches: (String) -> Bool) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return names.compactMap { name -> Int32? in
      guard let pid = Int32(name), let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else {
        return nil
      }
      return matches(String(decoding: data, as: UTF8.self)) && isAlive(pid) ? pid : nil
    }
  }

  /// The fields of `/proc/PID/stat` after the command name (state first); `nil` when the process is gone.
  private static func statFields(_ pid: Int32) -> [Substring]? {
    let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = read(fd, &buffer, buffer.count)
    guard count > 0 else { return nil }
    let text = String(decoding: buffer[..<count], as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    return text[text.index(after: close)...].split(separator: " ")
  }

  /// A TCP port on 127.0.0.1 that nobody listens on right now.
  ///
  /// - Throws: ``ProbeError`` when no socket can be bound.
  public static func freePort() throws(ProbeError) -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ProbeError(description: "socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw ProbeError(description: "bind() failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}

/// Why a probe could not be made.
public struct ProbeError: Error, CustomStringConvertible, Sendable {
  /// What went wrong.
  public var description: String
}

/// Whether the process group `pgid` is gone: no live member at once, and no zombie either within 3 s (orphans
/// belong to PID 1, which on some machines reaps them only every second or so).
public func groupIsGone(_ pgid: Int32) async -> Bool {
  if !ProcessProbe.inGroup(pgid).isEmpty { return false }
  for _ in 0..<60 {
    if ProcessProbe.inGroup(pgid, includingZombies: true).isEmpty { return true }
    try? await Task.sleep(for: .milliseconds(50))
  }
  return false
}
