import Foundation

/// Splits a byte stream into lines, as the plugin and MCP stdio protocols read them: a line feed ends a line, a
/// carriage return before it is dropped, blank lines (empty, or only spaces and tabs) are skipped, and a line longer
/// than the limit ends the stream.
///
/// A value type with no I/O: the persistent-process loop and the MCP server's line channel feed it what they read.
package struct LineSplitter: Sendable {
  /// The longest line handed over, in bytes (without its line ending); a persistent process's loop sets it from
  /// the limit of the call in flight.
  package var maxLineLength: Int
  private var line: [UInt8] = []

  /// Makes a splitter with an empty pending line.
  package init(maxLineLength: Int) {
    self.maxLineLength = maxLineLength
  }

  /// Hands each complete non-blank line in `chunk` to `onLine` and keeps the rest for the next chunk.
  ///
  /// Returns false, and drops the pending line, once a line passes ``maxLineLength``; the caller then stops reading
  /// (lines before it in the chunk were handed over).
  package mutating func feed(_ chunk: ArraySlice<UInt8>, onLine: ([UInt8]) -> Void) -> Bool {
    var start = chunk.startIndex
    while let newline = Self.firstLineFeed(in: chunk, from: start) {
      line.append(contentsOf: chunk[start..<newline])
      guard emit(onLine) else { return false }
      start = newline + 1
    }
    line.append(contentsOf: chunk[start...])
    if line.count > maxLineLength {
      line = []
      return false
    }
    return true
  }

  /// Ends the stream: hands over a last line that had no line feed, unless it is blank or too long (then false).
  package mutating func finish(onLine: ([UInt8]) -> Void) -> Bool {
    line.isEmpty ? true : emit(onLine)
  }

  private mutating func emit(_ onLine: ([UInt8]) -> Void) -> Bool {
    defer { line.removeAll(keepingCapacity: true) }
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    if line.count > maxLineLength { return false }
    if !line.isEmpty, !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { onLine(line) }
    return true
  }

  /// The index of the first line feed in `chunk` at or after `start` (memchr: lines can be megabytes long).
  private static func firstLineFeed(in chunk: ArraySlice<UInt8>, from start: Int) -> Int? {
    guard start < chunk.endIndex else { return nil }
    return chunk.withUnsafeBytes { raw -> Int? in
      let from = start - chunk.startIndex
      guard let p = memchr(raw.baseAddress! + from, 0x0A, chunk.endIndex - start) else { return nil }
      return start + raw.baseAddress!.distance(to: UnsafeRawPointer(p)) - from
    }
  }
}
