import Foundation
import Synchronization
import ToolhostSession
import ToolhostSystem

/// The server's log file, appended to from the process's I/O thread.
final class LogFile: Sendable {
  private let fd: Mutex<Int32>

  init(path: String) throws(LanguageModelError) {
    let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    // Prompts and answers: the user's only, also when an older toolhost made the file readable by others.
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if fd >= 0 { fchmod(fd, 0o600) }
    guard fd >= 0 else {
      throw LanguageModelError(
        kind: .configuration,
        message: "cannot open the local model's log \(path): \(String(cString: strerror(errno)))")
    }
    self.fd = Mutex(fd)
  }

  func write(_ text: String) { write(Array(text.utf8)) }

  func write(_ bytes: [UInt8]) {
    fd.withLock { fd in
      guard fd >= 0 else { return }
      try? writeAll(fd, bytes)  // a log that cannot be written must not stop the server
    }
  }

  /// The open descriptor (-1 once closed), for a child process's stderr.
  var descriptor: Int32 { fd.withLock { $0 } }

  func close() {
    fd.withLock { fd in
      if fd >= 0 { Glibc.close(fd) }
      fd = -1
    }
  }
}
