import Foundation
import ToolhostJSON

/// JSON parse and serialize times: jansson through ``JSONValue`` against Foundation's `JSONSerialization`, both on the
/// same bytes in the same run, medians of 5 runs.
///
/// Two workloads, generated deterministically: one ~1 MB document shaped like a tool-call transcript (objects,
/// arrays, strings with escapes and non-ASCII text, integers, reals), and 10,000 small ~190-byte tool-call requests.
func jsonBenchmarks() -> [BenchRow] {
  let large = Array(JSONBenchData.largeDocument().utf8)
  let small = JSONBenchData.smallDocuments(10_000).map { Array($0.utf8) }
  let largeData = Data(large)
  let smallData = small.map { Data($0) }
  let smallBytes = small.reduce(0) { $0 + $1.count }

  // Both sides must accept the input and agree on it before anything is timed.
  guard let largeValue = try? JSONValue.parse(large),
    let largeObject = try? JSONSerialization.jsonObject(
      with: largeData, options: [.fragmentsAllowed]),
    let again = try? JSONValue.parse(largeValue.serialized(.compact)), again == largeValue
  else {
    print("json benchmark: the generated documents do not round-trip; skipped")
    return []
  }
  let smallValues = small.compactMap { try? JSONValue.parse($0) }
  let smallObjects = smallData.compactMap {
    try? JSONSerialization.jsonObject(with: $0, options: [])
  }

  var sink = 0  // Keeps results alive so no work is optimized away.
  func ours(_ bytes: [UInt8]) {
    if let text = try? JSONValue.parse(bytes).serialized(.compact) { sink &+= text.utf8.count }
  }
  func foundation(_ data: Data) {
    if let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
      let out = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed])
    {
      sink &+= out.count
    }
  }

  let mb = String(format: "%.2f MB", Double(large.count) / 1_000_000)
  let base = "JSONSerialization"
  var rows: [BenchRow] = []
  func row(_ name: String, _ ourSeconds: Double, _ theirSeconds: Double) {
    rows.append(
      BenchRow(
        suite: "json", name: name, value: ourSeconds * 1000, unit: "ms", baselineName: base,
        baselineValue: theirSeconds * 1000))
  }

  row(
    "parse \(mb) document (jansson)",
    medianSeconds { sink &+= (try? JSONValue.parse(large))?.arrayValue?.count ?? 0 },
    medianSeconds {
      sink &+=
        ((try? JSONSerialization.jsonObject(with: largeData, options: [.fragmentsAllowed]))
        as? [Any])?.count
        ?? 0
    })
  row(
    "serialize \(mb) document (jansson)",
    medianSeconds { sink &+= largeValue.serialized().utf8.count },
    medianSeconds {
      sink &+=
        (try? JSONSerialization.data(withJSONObject: largeObject, options: [.fragmentsAllowed]))?
        .count ?? 0
    })
  row(
    "parse+serialize \(mb) document (jansson)",
    medianSeconds { ours(large) },
    medianSeconds { foundation(largeData) })
  row(
    "parse+serialize 10,000 docs of \(smallBytes / small.count) B (jansson)",
    medianSeconds { for doc in small { ours(doc) } },
    medianSeconds { for doc in smallData { foundation(doc) } })
  row(
    "serialize 10,000 small values (jansson)",
    medianSeconds { for v in smallValues { sink &+= v.serialized().utf8.count } },
    medianSeconds {
      for o in smallObjects {
        sink &+= (try? JSONSerialization.data(withJSONObject: o, options: []))?.count ?? 0
      }
    })

  if sink == 0 { print("json benchmark: nothing was produced") }
  return rows
}

/// Deterministic JSON documents for the benchmarks.
enum JSONBenchData {
  /// SplitMix64: a small, fast generator with a fixed seed, so every run sees the same documents.
  struct Generator {
    var state: UInt64

    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
  }

  static let words = [
    "read", "file", "tool", "search", "result", "error", "path", "value", "schema", "line", "match",
    "module",
    "function", "return", "timeout", "stdout", "stderr", "exit", "argument", "request", "response",
    "cache",
    "naïve", "café", "日本語", "données", "Grüße", "😀", "→",
  ]

  static func sentence(_ g: inout Generator, words n: Int) -> String {
    var parts: [String] = []
    for _ in 0..<n { parts.append(g.pick(words)) }
    var s = parts.joined(separator: " ")
    if g.below(8) == 0 { s += " \"quoted\"\\path\n\tnext line" }
    return s
  }

  /// One entry of a tool-call transcript.
  static func entry(_ g: inout Generator, _ i: Int) -> JSONValue {
    var args = JSONObject()
    args["path"] = .string("/work/src/module_\(g.below(40))/file_\(g.below(1000)).swift")
    args["offset"] = .integer(Int64(g.below(100_000)))
    args["limit"] = .integer(Int64(g.pick([100, 500, 2000])))
    args["pattern"] = .string(g.pick(["^func ", "TODO|FIXME", "import\\s+\\w+", "\\d{3,}"]))
    args["caseSensitive"] = .bool(g.below(2) == 0)
    args["threshold"] = .real((g.unit() * 1000).rounded() / 1000)

    var matches: [JSONValue] = []
    for _ in 0..<g.below(6) {
      matches.append([
        "line": .integer(Int64(g.below(5000))), "column": .integer(Int64(g.below(120))),
        "text": .string(sentence(&g, words: 4 + g.below(10))), "score": .real(g.unit()),
      ])
    }

    var entry = JSONObject()
    entry["id"] = .string("call_\(String(g.next(), radix: 36))")
    entry["index"] = .integer(Int64(i))
    entry["tool"] = .string(g.pick(["read_file", "grep", "list_dir", "run_tests", "edit"]))
    entry["arguments"] = .object(args)
    entry["result"] = [
      "ok": .bool(g.below(10) != 0), "exitCode": .integer(Int64(g.pick([0, 0, 0, 1, 2, 127]))),
      "durationMs": .real((g.unit() * 5000).rounded() / 10), "matches": .array(matches),
      "summary": .string(sentence(&g, words: 8 + g.below(20))),
      "truncated": g.below(5) == 0 ? .null : .bool(false),
    ]
    entry["tokens"] = .array((0..<g.below(8)).map { _ in .integer(Int64(g.below(50_000)) - 1000) })
    entry["timestamp"] = .real(1.7e9 + Double(i) * 1.25)
    return .object(entry)
  }

  /// A ~1 MB compact JSON array of transcript entries.
  static func largeDocument(bytes target: Int = 1_000_000) -> String {
    var g = Generator(state: 42)
    var entries: [JSONValue] = []
    var size = 2
    while size < target {
      let e = entry(&g, entries.count)
      size += e.serialized().utf8.count + 1
      entries.append(e)
    }
    return JSONValue.array(entries).serialized()
  }

  /// `count` small tool-call requests of about 190 bytes each.
  static func smallDocuments(_ count: Int) -> [String] {
    var g = Generator(state: 7)
    return (0..<count).map { i in
      let value: JSONValue = [
        "jsonrpc": "2.0", "id": .integer(Int64(i)), "method": "tools/call",
        "params": [
          "name": .string(g.pick(["read_file", "grep", "list_dir"])),
          "arguments": [
            "path": .string("/src/module_\(g.below(100))/file_\(g.below(1000)).swift"),
            "offset": .integer(Int64(g.below(10_000))), "limit": 2000,
            "follow": .bool(g.below(2) == 0),
            "score": .real((g.unit() * 10_000).rounded() / 10_000),
          ],
        ],
      ]
      return value.serialized()
    }
  }
}
