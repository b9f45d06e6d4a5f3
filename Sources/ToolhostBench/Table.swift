import Foundation
import ToolhostSystem

/// One row of a benchmark table: what was measured, the figure, and the baseline measured in the same run.
struct BenchRow: Sendable {
  var suite: String
  var name: String
  var value: Double
  var unit: String
  var baselineName: String? = nil
  var baselineValue: Double? = nil
  var goal: String? = nil
  /// `true` when a larger value is better (throughput); `false` for times.
  var higherIsBetter: Bool = false
  /// Whether the ratio column means something (not for accuracy percentages, where the baseline is just beside).
  var showsRatio: Bool = true

  /// The measured value divided by the baseline's (for times), or the baseline divided by the value (throughput),
  /// so that a ratio above 1 always means "slower than the baseline".
  var ratio: Double? {
    guard showsRatio, let b = baselineValue, b > 0, value > 0 else { return nil }
    return higherIsBetter ? b / value : value / b
  }
}

/// The instant the benchmarks' clock counts from.
private let clockStart = ContinuousClock.now

/// Monotonic seconds since an arbitrary start (the process's first reading).
func now() -> Double {
  (ContinuousClock.now - clockStart).seconds
}

/// The median of `xs` (the upper one of an even count); 0 for none.
func median(_ xs: [Double]) -> Double {
  let s = xs.sorted()
  return s.isEmpty ? 0 : s[s.count / 2]
}

/// Runs `body` `runs` times and returns the median wall time in seconds.
func medianSeconds(runs: Int = 5, _ body: () throws -> Void) rethrows -> Double {
  var times: [Double] = []
  for _ in 0..<runs {
    let t0 = now()
    try body()
    times.append(now() - t0)
  }
  times.sort()
  return times[times.count / 2]
}

/// Prints rows as an aligned text table.
func printTable(_ rows: [BenchRow]) {
  func fmt(_ v: Double) -> String {
    if v >= 100_000 { return String(format: "%.0f", v) }
    if v >= 100 { return String(format: "%.1f", v) }
    return String(format: "%.3f", v)
  }
  let header = ["suite", "measurement", "value", "unit", "baseline (same run)", "ratio", "goal"]
  var lines = [header]
  for r in rows {
    let base = r.baselineValue.map { "\(r.baselineName ?? "baseline"): \(fmt($0))" } ?? "-"
    lines.append([
      r.suite, r.name, fmt(r.value), r.unit, base, r.ratio.map { String(format: "%.2fx", $0) } ?? "-", r.goal ?? "-",
    ])
  }
  var widths = Array(repeating: 0, count: header.count)
  for l in lines { for (i, c) in l.enumerated() { widths[i] = max(widths[i], c.count) } }
  for (n, l) in lines.enumerated() {
    print(
      l.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(
        separator: " | "))
    if n == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")) }
  }
}
