package import Foundation

/// Reads a whole file with POSIX calls (Foundation's `Data(contentsOf:)` costs several times more for small files),
/// or its first `limit` bytes and a little more.
package func readFile(_ path: String, limit: Int = .max) throws -> [UInt8] {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
  defer { close(fd) }
  return try readAll(fd, upTo: limit)
}

/// Writes all of `bytes` to `fd`, again after an interrupted or short write.
///
/// - Throws: `POSIXError` when a write fails (`EIO` when one writes nothing).
package func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(POSIXError) {
  var written = 0
  while written < bytes.count {
    let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
    if n < 0 && errno == EINTR { continue }
    guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: n < 0 ? errno : EIO) ?? .EIO) }
    written += n
  }
}

/// Reads `fd` to its end, or until more than `limit` bytes have come (the caller tells the two apart by the count).
///
/// - Throws: `POSIXError` when a read fails.
package func readAll(_ fd: Int32, upTo limit: Int) throws(POSIXError) -> [UInt8] {
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 16384)
  while bytes.count <= limit {
    let n = read(fd, &chunk, chunk.count)
    if n > 0 {
      bytes.append(contentsOf: chunk[0..<n])
    } else if n == 0 {
      break
    } else if errno != EINTR {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
  }
  return bytes
}
