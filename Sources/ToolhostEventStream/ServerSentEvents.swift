/// An incremental parser of Server-Sent Events (the `text/event-stream` format of the HTML standard).
///
/// Feed it bytes as they arrive, in chunks of any size; it returns each event once its closing blank line has
/// arrived. Lines may end in `\n`, `\r\n` or `\r` (even split across chunks); `:` lines are comments; several
/// `data:` lines of one event are joined with `\n`; a leading byte-order mark is skipped.
public struct ServerSentEventParser: Sendable {
  /// One event.
  public struct Event: Sendable, Equatable {
    /// The `event:` field, if any.
    public var event: String?
    /// The `data:` lines joined with `\n`.
    public var data: String
    /// The last `id:` seen so far, if any.
    public var id: String?

    /// Makes an event.
    public init(event: String? = nil, data: String, id: String? = nil) {
      self.event = event
      self.data = data
      self.id = id
    }
  }

  private var line: [UInt8] = []
  private var afterCR = false
  private var atStart = true
  private var dataLines: [String] = []
  private var hasData = false
  private var eventName: String?
  private var lastID: String?

  /// Makes a parser.
  public init() {}

  /// Bytes held for an event not yet complete (its line so far and its `data:` lines), so a reader can bound them.
  public var pendingBytes: Int { line.count + dataLines.reduce(0) { $0 + $1.utf8.count } }

  /// Parses more bytes; returns the events they complete.
  public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
    var events: [Event] = []
    for byte in bytes {
      if afterCR {
        afterCR = false
        if byte == 0x0A { continue }  // the \n of \r\n
      }
      switch byte {
      case 0x0A:
        endLine(into: &events)
      case 0x0D:
        afterCR = true
        endLine(into: &events)
      default:
        line.append(byte)
      }
    }
    return events
  }

  /// Ends the stream: an event still missing its blank line is returned if it has data (servers that close the
  /// connection right after the last `data:` line are common).
  public mutating func finish() -> [Event] {
    var events: [Event] = []
    if !line.isEmpty { endLine(into: &events) }
    if hasData { events.append(makeEvent()) }
    reset()
    return events
  }

  private mutating func endLine(into events: inout [Event]) {
    var bytes = line
    line.removeAll(keepingCapacity: true)
    if atStart {
      atStart = false
      if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
    }
    if bytes.isEmpty {
      if hasData { events.append(makeEvent()) }
      reset()
      return
    }
    if bytes[0] == UInt8(ascii: ":") { return }
    let field: String
    var value: ArraySlice<UInt8>
    if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
      field = String(decoding: bytes[..<colon], as: UTF8.self)
      value = bytes[(colon + 1)...]
      if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
    } else {
      field = String(decoding: bytes, as: UTF8.self)
      value = []
    }
    switch field {
    case "data":
      dataLines.append(String(decoding: value, as: UTF8.self))
      hasData = true
    case "event":
      eventName = String(decoding: value, as: UTF8.self)
    case "id":
      if !value.contains(0) { lastID = String(decoding: value, as: UTF8.self) }
    default:
      break  // retry and unknown fields are ignored
    }
  }

  private func makeEvent() -> Event {
    Event(event: eventName, data: dataLines.joined(separator: "\n"), id: lastID)
  }

  private mutating func reset() {
    dataLines.removeAll(keepingCapacity: true)
    hasData = false
    eventName = nil
  }
}
