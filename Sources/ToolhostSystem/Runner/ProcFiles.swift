import CToolhostSupport
import Foundation

/// What containment reads and writes in /proc and cgroupfs: a process's children, descendants, state and
/// environment, and small control files.
extension Containment {
  /// The children of every thread of `pid` (`/proc/PID/task/*/children`).
  static func children(of pid: Int32) -> [Int32] {
    collectPIDs { toolhost_children_of(pid, $0, $1) }
  }

  /// The children of this process that an orphan re-parented to it (as subreaper) would be among: the kernel gives an
  /// orphan to the first thread of its new parent that has not exited, which is the main thread while it runs, so
  /// only the main thread's are read (2 files, where every thread's are 1 to 2 a thread); every thread's once the
  /// main thread has ended.
  static func adoptiveChildren() -> [Int32] {
    collectPIDs { toolhost_adoptive_children($0, $1) }
  }

  /// Calls `read(buffer, capacity)`, which returns how many pids there are (or -1), with room enough for them all.
  private static func collectPIDs(_ read: (UnsafeMutablePointer<Int32>, Int32) -> Int32) -> [Int32] {
    var capacity = 64
    while true {
      var out = [Int32](repeating: 0, count: capacity)
      let count = Int(out.withUnsafeMutableBufferPointer { read($0.baseAddress!, Int32(capacity)) })
      if count < 0 { return [] }
      if count <= capacity { return Array(out.prefix(count)) }
      capacity = count + 64
    }
  }

  /// `pid`'s descendants, parents before children.
  static func tree(of pid: Int32) -> [Int32] {
    var out: [Int32] = []
    var queue = children(of: pid)
    while let next = queue.first {
      queue.removeFirst()
      out.append(next)
      if out.count > 100_000 { break }
      queue += children(of: next)
    }
    return out
  }

  /// A process's state letter and session from `/proc/PID/stat`, or nil when it is gone.
  static func stat(of pid: Int32) -> (state: Character, session: Int32)? {
    guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
    // After the command: state ppid pgrp session ...
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 3, let state = fields[0].first, let session = Int32(fields[3]) else { return nil }
    return (state, session)
  }

  /// The environment block of a process (NUL-separated), empty when it has none or cannot be read; `nil` while it is
  /// being exec'd (from the new program's memory until its environment is set up the kernel shows none, which is
  /// not an empty environment: its `env_end` in `/proc/PID/stat` is still 0).
  static func environment(of pid: Int32) -> String? {
    guard let text = readSmallFile("/proc/\(pid)/environ", limit: 1 << 20) else { return "" }
    guard text.isEmpty, let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
      return text
    }
    // After the command: field 3 (state) onwards; env_end is field 51.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return fields.count > 48 && fields[48] == "0" ? nil : text
  }

  /// A /proc or cgroup file as text (at most about `limit` bytes), nil when it cannot be read.
  static func readSmallFile(_ path: String, limit: Int = 64 << 10) -> String? {
    (try? readFile(path, limit: limit)).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Writes `text` to a cgroup file; false when it could not.
  @discardableResult
  static func write(_ path: String, _ text: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return text.withCString { Glibc.write(fd, $0, strlen($0)) } == text.utf8.count
  }
}
