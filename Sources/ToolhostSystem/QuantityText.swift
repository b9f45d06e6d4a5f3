import Foundation

extension Duration {
  /// The duration in seconds.
  package var seconds: Double {
    let c = components
    return Double(c.seconds) + Double(c.attoseconds) / 1e18
  }

  /// The duration in whole milliseconds, rounded up (a poll(2) timeout that never wakes early).
  package var millisecondsRoundedUp: Int64 {
    let (seconds, attoseconds) = components
    let ms = attoseconds / 1_000_000_000_000_000
    let rest = attoseconds % 1_000_000_000_000_000
    return seconds * 1000 + ms + (rest > 0 ? 1 : 0)
  }

  /// The duration in whole nanoseconds (for APIs that count them, such as NIO's `TimeAmount`).
  package var wholeNanoseconds: Int64 {
    let c = components
    return c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000
  }

  /// The duration as messages say it: `250 ms` below a second, else `5 s` or `1.5 s`.
  package var messageText: String {
    let s = seconds
    if s < 1 { return "\(Int((s * 1000).rounded())) ms" }
    if s == s.rounded() { return "\(Int(s)) s" }
    return "\((s * 10).rounded() / 10) s"
  }

  /// The duration as a tool call's is shown: `<1 ms`, `12 ms` below a second, else `1.5 s` (one decimal).
  package var callText: String {
    let ms = seconds * 1000
    if ms < 1 { return "<1 ms" }
    if ms < 1000 { return "\(Int(ms.rounded())) ms" }
    return String(format: "%.1f s", ms / 1000)
  }
}

/// A byte count as messages say it: `8 MiB` or `64 KiB` when it is a whole number of them, else `1000 bytes`.
package func byteCountText(_ bytes: Int) -> String {
  if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
  if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
  return "\(bytes) bytes"
}

extension Duration {
  /// A time in seconds as people and manifests write it (`2.5`), to the millisecond: the one place a flag's or a
  /// manifest's seconds become a `Duration`.
  package init(seconds: Double) { self = .milliseconds(Int64((seconds * 1000).rounded())) }
}
