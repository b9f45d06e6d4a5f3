import Foundation

/// The last bytes of a stream (a child's stderr, a server's log), kept within a limit; trimmed in bulk, so appending
/// stays cheap.
package struct ByteTail: Sendable {
  /// How many bytes are kept.
  package let limit: Int
  private var buffer: [UInt8] = []
  /// Every byte seen, kept or not.
  package private(set) var byteCount = 0

  /// Makes an empty tail that keeps `limit` bytes.
  package init(limit: Int) { self.limit = limit }

  /// Adds a chunk; the buffer grows to at most twice the limit before it is cut back.
  package mutating func append<C: Collection<UInt8>>(_ chunk: C) {
    byteCount += chunk.count
    buffer.append(contentsOf: chunk)
    if buffer.count > 2 * limit { buffer.removeFirst(buffer.count - limit) }
  }

  /// The last `limit` bytes.
  package var bytes: [UInt8] { Array(buffer.suffix(limit)) }

  /// The last `limit` bytes as text, trimmed.
  package var text: String {
    String(decoding: buffer.suffix(limit), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
