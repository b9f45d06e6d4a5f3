// describeData: a toolhost plugin in Swift. Descriptive statistics of numeric data sets.
//
// Reads one request object from stdin, writes one reply object to stdout
// (schemas/request.schema.json, schemas/reply.schema.json). Build:
//   swiftc -O describe_data.swift -o bin/describe-data
//
// Conventions: variance and stdev are sample statistics (divisor n - 1, or the
// total weight minus 1 with frequency weights); percentiles and the median
// interpolate linearly between order statistics (R type 7, NumPy "linear",
// Excel PERCENTILE.INC), generalized to weights by treating them as
// frequencies. Values with weight 0 are ignored.

import Foundation

// MARK: - Errors

struct ToolError: Error {
  var message: String
  var code: String
  var data: JSONOut?
}

func invalid(_ message: String, data: JSONOut? = nil) -> ToolError {
  ToolError(message: message, code: "invalid_arguments", data: data)
}

// MARK: - JSON output
// A small serializer, so numbers come out exactly as rounded ("1.581", not
// "1.5810000000000002") and object keys keep their order.

indirect enum JSONOut {
  case null
  case bool(Bool)
  case int(Int)
  case number(Double)
  case string(String)
  case array([JSONOut])
  case object([(String, JSONOut)])

  var text: String {
    var out = ""
    write(into: &out)
    return out
  }

  func write(into out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .int(let i): out += String(i)
    case .number(let x): out += formatNumber(x) ?? "null"
    case .string(let s): JSONOut.writeString(s, into: &out)
    case .array(let items):
      out += "["
      for (i, item) in items.enumerated() {
        if i > 0 { out += ", " }
        item.write(into: &out)
      }
      out += "]"
    case .object(let members):
      out += "{"
      for (i, (key, value)) in members.enumerated() {
        if i > 0 { out += ", " }
        JSONOut.writeString(key, into: &out)
        out += ": "
        value.write(into: &out)
      }
      out += "}"
    }
  }

  static func writeString(_ s: String, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }
}

/// The shortest text of x ("15", "1.581", "1e-07"); nil for NaN and infinities.
func formatNumber(_ x: Double) -> String? {
  guard x.isFinite else { return nil }
  if x == x.rounded() && abs(x) < 1e15 { return String(Int(x)) }
  return String(x)
}

// MARK: - Arguments

enum Measure: String, CaseIterable {
  case count, sum, mean, median, min, max, stdev, variance, percentiles
}

enum RoundingMode: String, CaseIterable {
  case nearest, floor, ceil
}

struct Dataset {
  var name: String
  var values: [Double]
  var weights: [Double]?
}

struct Arguments {
  var datasets: [Dataset] = []
  var measures: [Measure] = Measure.allCases.filter { $0 != .percentiles }
  var percentiles: [Double] = [25, 50, 75]
  var digits = 3
  var mode = RoundingMode.nearest
}

/// A JSON number as a Double; nil for anything else, booleans included
/// (JSONSerialization gives both as NSNumber; a boolean's objCType is "c").
func number(_ value: Any) -> Double? {
  guard let n = value as? NSNumber, String(cString: n.objCType) != "c" else { return nil }
  return n.doubleValue
}

func checkKeys(_ object: [String: Any], allowed: Set<String>, in place: String) throws {
  if let extra = object.keys.sorted().first(where: { !allowed.contains($0) }) {
    let names = allowed.sorted().joined(separator: ", ")
    throw invalid("\(place) has an unknown property \"\(extra)\"; allowed: \(names).")
  }
}

func numbers(_ value: Any?, _ place: String, min: Int, max: Int) throws -> [Double] {
  guard let array = value as? [Any] else { throw invalid("\(place) must be an array of numbers.") }
  guard (min...max).contains(array.count) else {
    throw invalid("\(place) must have \(min) to \(max) numbers, not \(array.count).")
  }
  var result: [Double] = []
  result.reserveCapacity(array.count)
  for (i, item) in array.enumerated() {
    guard let x = number(item), x.isFinite else {
      throw invalid("\(place)[\(i)] is not a number.")
    }
    result.append(x)
  }
  return result
}

func parseDataset(_ value: Any, index: Int) throws -> Dataset {
  let place = "datasets[\(index)]"
  guard let object = value as? [String: Any] else { throw invalid("\(place) must be an object.") }
  try checkKeys(object, allowed: ["name", "values", "weights"], in: place)
  guard let name = object["name"] as? String, !name.isEmpty else {
    throw invalid("\(place).name must be a non-empty string.")
  }
  let label = "dataset \"\(name)\""
  let values = try numbers(object["values"], "\(label): values", min: 1, max: 10_000)
  guard let rawWeights = object["weights"] else {
    return Dataset(name: name, values: values, weights: nil)
  }
  let weights = try numbers(rawWeights, "\(label): weights", min: 0, max: 10_000)
  guard weights.count == values.count else {
    throw invalid(
      "In \(label), weights has \(weights.count) numbers but values has \(values.count); "
        + "give exactly one weight per value, or leave weights out.",
      data: .object([
        ("dataset", .string(name)), ("values", .int(values.count)),
        ("weights", .int(weights.count)),
      ]))
  }
  if let i = weights.firstIndex(where: { $0 < 0 }) {
    throw invalid("In \(label), weights[\(i)] is negative; weights must be 0 or more.")
  }
  guard weights.contains(where: { $0 > 0 }) else {
    throw invalid("In \(label), all weights are 0, so there is nothing to describe.")
  }
  return Dataset(name: name, values: values, weights: weights)
}

func parseArguments(_ args: [String: Any]) throws -> Arguments {
  var result = Arguments()
  try checkKeys(
    args, allowed: ["datasets", "measures", "percentiles", "rounding"], in: "The arguments object")

  guard let datasets = args["datasets"] as? [Any], (1...10).contains(datasets.count) else {
    throw invalid("datasets must be an array of 1 to 10 objects {name, values, weights?}.")
  }
  var seen = Set<String>()
  for (i, item) in datasets.enumerated() {
    let dataset = try parseDataset(item, index: i)
    guard seen.insert(dataset.name).inserted else {
      throw invalid("Two datasets are named \"\(dataset.name)\"; give each a distinct name.")
    }
    result.datasets.append(dataset)
  }

  if let raw = args["measures"] {
    guard let list = raw as? [Any], !list.isEmpty else {
      throw invalid("measures must be a non-empty array.")
    }
    var chosen = Set<Measure>()
    for item in list {
      guard let name = item as? String, let measure = Measure(rawValue: name) else {
        let names = Measure.allCases.map(\.rawValue).joined(separator: ", ")
        throw invalid("measures may contain only: \(names).")
      }
      guard chosen.insert(measure).inserted else {
        throw invalid("measures lists \"\(name)\" twice.")
      }
    }
    result.measures = Measure.allCases.filter { chosen.contains($0) }
  }
  if let raw = args["percentiles"] {
    let list = try numbers(raw, "percentiles", min: 1, max: 20)
    if let bad = list.first(where: { !(0...100).contains($0) }) {
      throw invalid("percentiles must be between 0 and 100; got \(formatNumber(bad) ?? "?").")
    }
    result.percentiles = list
    if !result.measures.contains(.percentiles) {
      result.measures.append(.percentiles)  // giving percentiles asks for them
    }
  }
  if let raw = args["rounding"] {
    guard let rounding = raw as? [String: Any] else {
      throw invalid("rounding must be an object {digits, mode}.")
    }
    try checkKeys(rounding, allowed: ["digits", "mode"], in: "rounding")
    if let d = rounding["digits"] {
      guard let x = number(d), x == x.rounded(), (0...10).contains(x) else {
        throw invalid("rounding.digits must be an integer from 0 to 10.")
      }
      result.digits = Int(x)
    }
    if let m = rounding["mode"] {
      guard let name = m as? String, let mode = RoundingMode(rawValue: name) else {
        throw invalid("rounding.mode must be nearest, floor or ceil.")
      }
      result.mode = mode
    }
  }
  return result
}

// MARK: - Statistics

/// Neumaier's compensated sum.
func accurateSum<S: Sequence>(_ xs: S) -> Double where S.Element == Double {
  var sum = 0.0
  var compensation = 0.0
  for x in xs {
    let t = sum + x
    if abs(sum) >= abs(x) {
      compensation += (sum - t) + x
    } else {
      compensation += (x - t) + sum
    }
    sum = t
  }
  return sum + compensation
}

struct Summary {
  var count: Int
  var totalWeight: Double?
  var sum: Double
  var mean: Double
  var min: Double
  var max: Double
  var variance: Double?
  var sorted: [Double]  // values with weight > 0, ascending
  var cumulative: [Double]  // running total of their weights
  var total: Double  // total weight (count when unweighted)

  init(_ data: Dataset) {
    var pairs: [(x: Double, w: Double)] = []
    if let weights = data.weights {
      for (x, w) in zip(data.values, weights) where w > 0 { pairs.append((x, w)) }
    } else {
      pairs = data.values.map { ($0, 1.0) }
    }
    pairs.sort { $0.x < $1.x }
    sorted = pairs.map(\.x)
    var running = 0.0
    cumulative = pairs.map { pair in
      running += pair.w
      return running
    }
    total = accurateSum(pairs.map(\.w))
    count = data.values.count
    totalWeight = data.weights == nil ? nil : total
    sum = accurateSum(pairs.map { $0.x * $0.w })
    mean = sum / total
    min = sorted.first ?? .nan
    max = sorted.last ?? .nan
    let mean = self.mean
    let squares = accurateSum(pairs.map { ($0.x - mean) * ($0.x - mean) * $0.w })
    variance = total > 1 ? squares / (total - 1) : nil
  }

  /// The value at 0-based position k of the data expanded by its weights.
  func valueAt(_ k: Double) -> Double {
    var lo = 0
    var hi = cumulative.count - 1
    while lo < hi {  // first index whose running total exceeds k
      let mid = (lo + hi) / 2
      if cumulative[mid] > k { hi = mid } else { lo = mid + 1 }
    }
    return sorted[lo]
  }

  /// Percentile p (0...100), linear between order statistics (R type 7).
  func percentile(_ p: Double) -> Double {
    let h = Swift.max(0, (total - 1) * p / 100)
    let lower = h.rounded(.down)
    let a = valueAt(lower)
    guard lower + 1 <= total - 1 else { return a }
    return a + (h - lower) * (valueAt(lower + 1) - a)
  }
}

struct Rounder {
  var digits: Int
  var mode: RoundingMode

  func callAsFunction(_ x: Double) -> Double {
    let factor = pow(10, Double(digits))
    var scaled = x * factor
    guard scaled.isFinite, abs(scaled) < 9e15 else { return x }
    // 0.3 * 10 is 3.0000000000000004: snap products that are integers up to
    // floating-point error, so that ceil does not turn 0.3 into 0.4.
    let nearest = scaled.rounded()
    if abs(scaled - nearest) <= 1e-9 * Swift.max(1, abs(scaled)) { scaled = nearest }
    switch mode {
    case .nearest: scaled.round(.toNearestOrAwayFromZero)
    case .floor: scaled.round(.down)
    case .ceil: scaled.round(.up)
    }
    let result = scaled / factor
    return result == 0 ? 0 : result  // no -0
  }
}

// MARK: - Result

func describe(_ args: Arguments) -> (result: JSONOut, text: String) {
  let round = Rounder(digits: args.digits, mode: args.mode)
  func num(_ x: Double?) -> JSONOut { x.map { .number(round($0)) } ?? .null }

  var rows: [[String]] = []
  var header = ["dataset"]
  for measure in args.measures {
    if measure == .percentiles {
      header += args.percentiles.map { "p" + (formatNumber($0) ?? "?") }
    } else {
      header.append(measure.rawValue)
    }
  }

  var items: [JSONOut] = []
  for data in args.datasets {
    let s = Summary(data)
    var members: [(String, JSONOut)] = [("name", .string(data.name))]
    // A name with control characters would break the table's lines.
    var row = [String(data.name.map { $0.isNewline || $0 == "\t" ? " " : $0 })]
    for measure in args.measures {
      let value: JSONOut
      switch measure {
      case .count: value = .int(s.count)
      case .sum: value = num(s.sum)
      case .mean: value = num(s.mean)
      case .median: value = num(s.percentile(50))
      case .min: value = num(s.min)
      case .max: value = num(s.max)
      case .stdev: value = num(s.variance.map { $0.squareRoot() })
      case .variance: value = num(s.variance)
      case .percentiles:
        var list: [JSONOut] = []
        for p in args.percentiles {
          let v = round(s.percentile(p))
          list.append(.object([("p", .number(p)), ("value", .number(v))]))
          row.append(formatNumber(v) ?? "—")
        }
        members.append(("percentiles", .array(list)))
        continue
      }
      members.append((measure.rawValue, value))
      row.append(value.cell)
    }
    if let w = s.totalWeight {
      members.append(("totalWeight", num(w)))
    }
    members.append(("weighted", .bool(data.weights != nil)))
    items.append(.object(members))
    rows.append(row)
  }

  let result = JSONOut.object([
    ("datasets", .array(items)),
    ("measures", .array(args.measures.map { .string($0.rawValue) })),
    ("rounding", .object([("digits", .int(args.digits)), ("mode", .string(args.mode.rawValue))])),
  ])
  var text = table([header] + rows)
  if args.measures.contains(where: { $0 == .stdev || $0 == .variance }) {
    text += "\nstdev and variance are sample statistics (n − 1)."
  }
  if args.datasets.contains(where: { $0.weights != nil }) {
    text += "\nWeighted data sets use their weights as frequencies."
  }
  return (result, text)
}

extension JSONOut {
  /// A table cell: numbers as in JSON, null as a dash.
  var cell: String {
    switch self {
    case .int(let i): return String(i)
    case .number(let x): return formatNumber(x) ?? "—"
    default: return "—"
    }
  }
}

/// Columns padded to equal width: the first left-aligned, the others right-aligned.
func table(_ rows: [[String]]) -> String {
  let columns = rows.map(\.count).max() ?? 0
  var widths = [Int](repeating: 0, count: columns)
  for row in rows {
    for (i, cell) in row.enumerated() { widths[i] = Swift.max(widths[i], cell.count) }
  }
  let lines = rows.map { row in
    row.enumerated().map { i, cell in
      let pad = String(repeating: " ", count: widths[i] - cell.count)
      return i == 0 ? cell + pad : pad + cell
    }.joined(separator: "  ")
  }
  return lines.joined(separator: "\n")
}

// MARK: - Main

func run() -> (reply: JSONOut, status: Int32) {
  do {
    let input = FileHandle.standardInput.readDataToEndOfFile()
    let parsed: Any
    do {
      parsed = try JSONSerialization.jsonObject(with: input)
    } catch {
      throw ToolError(message: "The request on stdin is not JSON.", code: "bad_request")
    }
    guard let request = parsed as? [String: Any], let args = request["arguments"] as? [String: Any]
    else {
      throw ToolError(message: "The request has no arguments object.", code: "bad_request")
    }
    let tool = request["tool"] as? String ?? ""
    guard tool == "describeData" else {
      throw ToolError(
        message: "This plugin provides only describeData, not \"\(tool)\".", code: "unknown_tool")
    }
    let (result, text) = describe(try parseArguments(args))
    return (.object([("result", result), ("text", .string(text))]), 0)
  } catch let error as ToolError {
    var members: [(String, JSONOut)] = [
      ("message", .string(error.message)), ("code", .string(error.code)),
    ]
    if let data = error.data { members.append(("data", data)) }
    FileHandle.standardError.write(Data("stats: \(error.code): \(error.message)\n".utf8))
    return (.object([("error", .object(members))]), 1)
  } catch {
    let message = "Unexpected failure: \(error)"
    return (
      .object([("error", .object([("message", .string(message)), ("code", .string("internal"))]))]),
      1
    )
  }
}

let (reply, status) = run()
FileHandle.standardOutput.write(Data((reply.text + "\n").utf8))
exit(status)
