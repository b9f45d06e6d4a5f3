import Foundation
import ToolhostSession

/// An exclusive `flock` on a file, polled so that waiting never blocks a thread.
struct FileLock: Sendable {
  private let fd: Int32

  static func acquire(_ path: String, timeout: Duration = .seconds(180)) async throws -> FileLock {
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else {
      throw LanguageModelError(
        kind: .configuration, message: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
    }
    let deadline = ContinuousClock.now + timeout
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      if ContinuousClock.now > deadline {
        close(fd)
        throw LanguageModelError(
          kind: .timedOut, message: "another toolhost has held \(path) for over \(timeout.components.seconds) s")
      }
      do { try await Task.sleep(for: .milliseconds(50)) } catch {
        close(fd)
        throw error
      }
    }
    return FileLock(fd: fd)
  }

  func release() {
    flock(fd, LOCK_UN)
    close(fd)
  }
}
