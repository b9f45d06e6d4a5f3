public import ToolhostJSON

/// A single-turn category of the Berkeley Function Calling Leaderboard (BFCL v4) that `toolhost-bench bfcl` runs.
public enum BFCLCategory: String, CaseIterable, Sendable {
  /// One function, one call (Python-style functions).
  case simple = "simple_python"
  /// Several functions, one call of the right one.
  case multiple
  /// One function, several calls of it.
  case parallel
  /// Functions that do not fit the question: right is no call.
  case irrelevance
  /// One function from user-contributed ("live") questions, one call.
  case liveSimple = "live_simple"

  /// The data file's name in `bfcl_eval/data/` (and in `possible_answer/`).
  public var fileName: String { "BFCL_v4_\(rawValue).json" }
  /// Whether the category has expected calls (`irrelevance` has none: right means no call).
  public var hasAnswers: Bool { self != .irrelevance }

  /// Published BFCL v4 figures (percent; the leaderboard of 2026-04-12, as written in the shared notes) of small
  /// models with function calling, for the table beside toolhost's.
  public var published: [(model: String, percent: Double)] {
    switch self {
    case .simple:
      [("Qwen3-0.6B", 64.17), ("Qwen3-1.7B", 70.67), ("Hammer2.1-0.5b", 62.42), ("xLAM-2-1b", 64.17)]
    case .multiple: [("Qwen3-0.6B", 86.00), ("Qwen3-1.7B", 92.50), ("Hammer2.1-0.5b", 81.00), ("xLAM-2-1b", 82.50)]
    case .parallel: [("Qwen3-0.6B", 67.50), ("Qwen3-1.7B", 88.50), ("Hammer2.1-0.5b", 69.00), ("xLAM-2-1b", 73.50)]
    case .irrelevance:
      [("Qwen3-0.6B", 80.84), ("Qwen3-1.7B", 76.54), ("Hammer2.1-0.5b", 80.79), ("xLAM-2-1b", 64.47)]
    case .liveSimple:
      [("Qwen3-0.6B", 61.24), ("Qwen3-1.7B", 76.74), ("Hammer2.1-0.5b", 56.59), ("xLAM-2-1b", 68.22)]
    }
  }
}

/// One BFCL test case: the question's messages, the functions offered and, where the category has them, the
/// acceptable calls.
public struct BFCLCase: Sendable {
  /// The case's id (`simple_python_12`).
  public var id: String
  /// Its category.
  public var category: BFCLCategory
  /// The first turn's messages, in order: `(role, content)`.
  public var messages: [(role: String, content: String)]
  /// The functions offered, in BFCL's own form (`"type": "dict"`, `"float"`, `"tuple"`, `"any"`).
  public var functions: [JSONValue]
  /// The acceptable calls: one `{name: {parameter: [allowed values]}}` per expected call; empty for `irrelevance`.
  public var groundTruth: [JSONValue]

  /// The last user message: what is asked.
  public var question: String { messages.last { $0.role == "user" }?.content ?? "" }
  /// The system messages, joined, if any.
  public var system: String? {
    let parts = messages.filter { $0.role == "system" }.map(\.content)
    return parts.isEmpty ? nil : parts.joined(separator: "\n\n")
  }

  /// Reads a category's cases from its data file's text and its possible answers' text (one JSON object a line);
  /// a case without an answer is left out of a category that has answers.
  ///
  /// - Throws: ``BFCLDataError`` naming the line that is not a case.
  public static func load(category: BFCLCategory, data: String, answers: String?) throws(BFCLDataError) -> [BFCLCase] {
    var truth: [String: [JSONValue]] = [:]
    for (number, line) in (answers ?? "").split(separator: "\n").enumerated() {
      guard let value = try? JSONValue.parse(String(line)), let id = value["id"]?.stringValue,
        let calls = value["ground_truth"]?.arrayValue
      else { throw BFCLDataError(description: "possible answers of \(category.rawValue), line \(number + 1)") }
      truth[id] = calls
    }
    var cases: [BFCLCase] = []
    for (number, line) in data.split(separator: "\n").enumerated() {
      guard let value = try? JSONValue.parse(String(line)), let id = value["id"]?.stringValue,
        let turns = value["question"]?.arrayValue, let first = turns.first?.arrayValue,
        let functions = value["function"]?.arrayValue
      else { throw BFCLDataError(description: "\(category.fileName), line \(number + 1)") }
      let messages = first.compactMap { message -> (role: String, content: String)? in
        guard let role = message["role"]?.stringValue, let content = message["content"]?.stringValue else { return nil }
        return (role, content)
      }
      let expected = truth[id] ?? []
      if category.hasAnswers, expected.isEmpty { continue }
      cases.append(
        BFCLCase(id: id, category: category, messages: messages, functions: functions, groundTruth: expected))
    }
    return cases
  }
}

/// A BFCL data file that cannot be read as one.
public struct BFCLDataError: Error, Sendable, CustomStringConvertible {
  /// Which file and line.
  public var description: String
}

/// BFCL's function documents as toolhost manifests see them: JSON Schema.
public enum BFCLSchema {
  /// A BFCL parameter schema in JSON Schema: `dict` becomes `object`, `float` `number`, `tuple` `array`, `any` no
  /// type at all, at every depth; `required` names only declared properties; BFCL's own `optional` is dropped.
  public static func jsonSchema(_ bfcl: JSONValue) -> JSONValue {
    guard var object = bfcl.objectValue else { return bfcl }
    if let type = object["type"]?.stringValue {
      switch type {
      case "dict": object["type"] = "object"
      case "float": object["type"] = "number"
      case "tuple": object["type"] = "array"
      case "any": object["type"] = nil
      case "string", "integer", "boolean", "array", "object", "number", "null": break
      default: object["type"] = nil
      }
    }
    object["optional"] = nil
    if let properties = object["properties"]?.objectValue {
      object["properties"] = .object(JSONObject(properties.map { ($0.key, jsonSchema($0.value)) }))
      if let required = object["required"]?.arrayValue {
        object["required"] = .array(required.filter { $0.stringValue.map { properties[$0] != nil } ?? false })
      }
    } else if object["type"]?.stringValue == "object" {
      object["required"] = nil
    }
    if let items = object["items"] { object["items"] = jsonSchema(items) }
    // A default that is not of the declared type (BFCL has some) would be a broken schema, and toolhost fills no
    // defaults in.
    object["default"] = nil
    return .object(object)
  }

  /// The input schema of one BFCL function: its `parameters`, as JSON Schema, always an object.
  public static func inputSchema(of function: JSONValue) -> JSONValue {
    var schema = function["parameters"].map(jsonSchema)?.objectValue ?? [:]
    schema["type"] = "object"
    if schema["properties"] == nil { schema["properties"] = .object([:]) }
    return .object(schema)
  }
}

/// A seeded choice of cases, the same for the same seed on every machine (SplitMix64 and a Fisher–Yates shuffle).
public enum BFCLSample {
  /// `count` of `ids` (all when fewer), chosen by `seed`, in the order of `ids`.
  public static func pick(_ ids: [String], count: Int, seed: UInt64) -> [String] {
    guard count < ids.count else { return ids }
    var state = seed
    func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
    var order = Array(ids.indices)
    for i in stride(from: order.count - 1, to: 0, by: -1) {
      let j = Int(next() % UInt64(i + 1))
      order.swapAt(i, j)
    }
    let chosen = Set(order.prefix(count))
    return ids.indices.filter(chosen.contains).map { ids[$0] }
  }
}
