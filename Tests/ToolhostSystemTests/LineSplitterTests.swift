import Testing

@testable import ToolhostSystem

/// The line splitting the persistent-process loop and the MCP line channel share, without processes.
@Suite struct LineSplitterTests {
  /// Feeds `chunks` in order, then ends the stream; the lines handed over and whether every step succeeded.
  private func split(_ chunks: [String], limit: Int = 64) -> (lines: [String], ok: Bool) {
    var splitter = LineSplitter(maxLineLength: limit)
    var lines: [String] = []
    let collect: ([UInt8]) -> Void = { lines.append(String(decoding: $0, as: UTF8.self)) }
    for chunk in chunks {
      let bytes = Array(chunk.utf8)
      guard splitter.feed(bytes[...], onLine: collect) else { return (lines, false) }
    }
    let finished = splitter.finish(onLine: collect)
    return (lines, finished)
  }

  @Test func linesEndAtLineFeedsAcrossChunksWithoutCarriageReturnsOrBlankLines() {
    let result = split(["{\"a\":1}\r\n\n  \t\n{\"b\"", ":2}\n", "{\"c\":3}"])
    #expect(result.ok)
    #expect(result.lines == ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"])
  }

  @Test func aLineOverTheLimitEndsTheStreamAfterTheLinesBeforeIt() {
    // A complete long line inside one chunk.
    let whole = split(["ok\n" + String(repeating: "x", count: 11) + "\nlater\n"], limit: 10)
    #expect(!whole.ok)
    #expect(whole.lines == ["ok"])
    // A pending line that grows past the limit over several chunks, with no line feed yet.
    let pending = split(["12345", "67890", "1"], limit: 10)
    #expect(!pending.ok)
    #expect(pending.lines.isEmpty)
    // Exactly at the limit, with a carriage return that does not count.
    let atLimit = split([String(repeating: "y", count: 10) + "\r\n"], limit: 10)
    #expect(atLimit.ok && atLimit.lines == [String(repeating: "y", count: 10)])
  }

  @Test func aLastLineWithoutALineFeedIsHandedOverAtTheEnd() {
    #expect(split(["only"]).lines == ["only"])
    #expect(split(["   "]).lines.isEmpty)
    #expect(split([]).lines.isEmpty)
  }
}
