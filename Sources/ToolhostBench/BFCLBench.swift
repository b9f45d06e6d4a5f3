// BFCL v4 through `toolhost ask` (suite `bfcl`, issue 49): each case's functions become the tools of a plugin folder
// of their own, the question is asked as a user asks it, and the calls made are scored with BFCL's AST rules
// (ToolhostEval's port, checked against the package's own checker on the same calls). Needs scripts/fetch-bfcl,
// scripts/install-local-model and a release build of `toolhost`.
import Foundation
import ToolhostEval
import ToolhostJSON

/// What one BFCL run is: where the data is, which cases, which model, and where results are kept for resuming.
private struct BFCLPlan {
  var data: URL
  var categories: [BFCLCategory]
  var perCategory: Int
  var seed: UInt64
  var results: URL

  /// From the environment: `TOOLHOST_BFCL_DIR` (default `.toolhost/bfcl`), `TOOLHOST_BFCL_CATEGORIES` (default all
  /// five), `TOOLHOST_BFCL_CASES` (per category, default 50; `all` for every case), `TOOLHOST_BFCL_SEED` (default
  /// 1), `TOOLHOST_BFCL_RESULTS` (default `.toolhost/bfcl/results-MODEL-seedSEED.jsonl`: a run started again with
  /// the same file goes on where it stopped).
  static func fromEnvironment(model: String) throws -> BFCLPlan {
    let environment = ProcessInfo.processInfo.environment
    let root = URL(
      fileURLWithPath: environment["TOOLHOST_BFCL_DIR"]
        ?? FileManager.default.currentDirectoryPath + "/.toolhost/bfcl")
    let data = root.appendingPathComponent("bfcl_eval/data")
    guard FileManager.default.fileExists(atPath: data.appendingPathComponent("BFCL_v4_simple_python.json").path) else {
      throw BenchFailure("no BFCL data in \(root.path): run scripts/fetch-bfcl (or set TOOLHOST_BFCL_DIR)")
    }
    var categories = BFCLCategory.allCases
    if let named = environment["TOOLHOST_BFCL_CATEGORIES"] {
      categories = try named.split(separator: ",").map { name in
        guard let category = BFCLCategory(rawValue: String(name)) else {
          throw BenchFailure(
            "TOOLHOST_BFCL_CATEGORIES: no category \(name); they are "
              + BFCLCategory.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return category
      }
    }
    let cases = environment["TOOLHOST_BFCL_CASES"] ?? "50"
    guard let perCategory = cases == "all" ? Int.max : Int(cases), perCategory > 0 else {
      throw BenchFailure("TOOLHOST_BFCL_CASES is \(cases): give a number of cases per category, or all")
    }
    guard let seed = UInt64(environment["TOOLHOST_BFCL_SEED"] ?? "1") else {
      throw BenchFailure("TOOLHOST_BFCL_SEED must be a whole number")
    }
    let modelName = model.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: ":", with: "-")
    let results = URL(
      fileURLWithPath: environment["TOOLHOST_BFCL_RESULTS"]
        ?? root.appendingPathComponent("results-\(modelName)-seed\(seed).jsonl").path)
    return BFCLPlan(data: data, categories: categories, perCategory: perCategory, seed: seed, results: results)
  }

  /// The seeded sample of `category`.
  func cases(_ category: BFCLCategory) throws -> [BFCLCase] {
    let text = try String(contentsOf: data.appendingPathComponent(category.fileName), encoding: .utf8)
    let answers =
      category.hasAnswers
      ? try String(
        contentsOf: data.appendingPathComponent("possible_answer").appendingPathComponent(category.fileName),
        encoding: .utf8) : nil
    let all = try BFCLCase.load(category: category, data: text, answers: answers)
    let chosen = Set(BFCLSample.pick(all.map(\.id), count: perCategory, seed: seed))
    return all.filter { chosen.contains($0.id) }
  }
}

/// One case's result as kept in the results file.
private struct BFCLResult {
  var id: String
  var category: BFCLCategory
  var seconds: Double
  var calls: [BFCLChecker.Call]
  var verdict: BFCLChecker.Verdict
  var answer: String?

  var json: JSONValue {
    [
      "id": .string(id), "category": .string(category.rawValue), "seconds": .real(seconds),
      "calls": .array(calls.map { JSONValue.object([$0.name: $0.arguments]) }), "valid": .bool(verdict.valid),
      "error_type": verdict.errorType.map(JSONValue.string) ?? .null,
      "error": verdict.error.map(JSONValue.string) ?? .null, "answer": answer.map(JSONValue.string) ?? .null,
    ]
  }

  init(
    id: String, category: BFCLCategory, seconds: Double, calls: [BFCLChecker.Call], verdict: BFCLChecker.Verdict,
    answer: String?
  ) {
    (self.id, self.category, self.seconds, self.calls, self.verdict, self.answer) = (
      id, category, seconds, calls, verdict, answer
    )
  }

  init?(_ value: JSONValue) {
    guard let id = value["id"]?.stringValue, let category = value["category"]?.stringValue.flatMap(BFCLCategory.init),
      let valid = value["valid"]?.boolValue
    else { return nil }
    let calls = (value["calls"]?.arrayValue ?? []).compactMap { call -> BFCLChecker.Call? in
      guard let member = call.objectValue?.makeIterator().next() else { return nil }
      return (member.key, member.value)
    }
    self.init(
      id: id, category: category, seconds: value["seconds"]?.doubleValue ?? 0, calls: calls,
      verdict: .init(valid: valid, errorType: value["error_type"]?.stringValue, error: value["error"]?.stringValue),
      answer: value["answer"]?.stringValue)
  }
}

/// A plugin folder holding one plugin whose tools are `functions`; each call answers `{"status": "done"}`.
private func bfclPlugins(_ functions: [JSONValue], in folder: URL) throws -> URL {
  let plugin = folder.appendingPathComponent("plugins/bfcl")
  try FileManager.default.createDirectory(at: plugin, withIntermediateDirectories: true)
  let tools = functions.map { function -> JSONValue in
    [
      "name": function["name"] ?? "unnamed", "description": function["description"] ?? "",
      "inputSchema": BFCLSchema.inputSchema(of: function), "annotations": ["readOnlyHint": true],
    ]
  }
  let manifest: JSONValue = [
    "manifestVersion": 1, "command": "./run", "output": "json", "timeout": 10, "tools": .array(tools),
  ]
  try Data(manifest.serialized().utf8).write(to: plugin.appendingPathComponent("toolhost.json"))
  let run = plugin.appendingPathComponent("run")
  try Data("#!/bin/sh\ncat >/dev/null\necho '{\"result\": {\"status\": \"done\"}}'\n".utf8).write(to: run)
  try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: run.path)
  return plugin.deletingLastPathComponent()
}

/// Asks one case with `setup`'s toolhost, against the shared server, and scores it.
private func runBFCLCase(_ c: BFCLCase, setup: AskEvalSetup) throws -> BFCLResult {
  let dir = FileManager.default.temporaryDirectory.appendingPathComponent("toolhost-bfcl-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: dir) }
  let plugins = try bfclPlugins(c.functions, in: dir)
  var arguments = ["ask", "--json", "--yes", "--model", setup.model, "--plugins", plugins.path, "--keep-alive", "10m"]
  if let system = c.system { arguments += ["--instructions", system] }
  let result = try setup.run(arguments + ["--", c.question], in: dir, timeout: 240)
  let transcript = AskTranscript(ndjson: result.stdout)
  let calls = transcript.calls.map { (name: $0.tool, arguments: $0.arguments) }
  var verdict = BFCLChecker.check(
    category: c.category, functions: c.functions, calls: calls, groundTruth: c.groundTruth)
  if result.status != 0 {
    let why = result.status.map { "exit \($0): \(result.stderr.suffix(200))" } ?? "timed out"
    if verdict.valid { verdict = .init(valid: false, errorType: "toolhost:failed", error: why) }
  }
  return BFCLResult(
    id: c.id, category: c.category, seconds: result.seconds, calls: calls, verdict: verdict, answer: transcript.answer)
}

/// BFCL's own checker on the results file (scripts/bfcl-reference-check): the ids whose verdict differs from the port's,
/// and how many were compared; nil when it cannot run.
private func referenceDisagreements(plan: BFCLPlan, results: [BFCLResult]) -> (differ: [String], compared: Int)? {
  let script = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    .appendingPathComponent("scripts/bfcl-reference-check")
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = [
    "python3", script.path, plan.data.deletingLastPathComponent().deletingLastPathComponent().path, plan.results.path,
  ]
  let out = Pipe()
  process.standardOutput = out
  process.standardError = FileHandle.standardError
  guard (try? process.run()) != nil else { return nil }
  let data = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else { return nil }
  var reference: [String: Bool] = [:]
  for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
    if let value = try? JSONValue.parse(String(line)), let id = value["id"]?.stringValue,
      let valid = value["valid"]?.boolValue
    {
      reference[id] = valid
    }
  }
  let differ = results.filter { result in
    reference[result.id].map { $0 != result.verdict.valid } ?? true
  }.map(\.id)
  return (differ, reference.count)
}

/// Runs the sample (resuming from the results file), prints a table per category beside the published figures of
/// small models, and returns the benchmark rows. `TOOLHOST_BENCH_MODEL` picks the model (`local`, `local:1.5b`).
func bfclBenchmarks() async throws -> [BenchRow] {
  let setup = try AskEvalSetup.locate()
  let plan = try BFCLPlan.fromEnvironment(model: setup.model)
  var done: [String: BFCLResult] = [:]
  if let text = try? String(contentsOf: plan.results, encoding: .utf8) {
    for line in text.split(separator: "\n") {
      if let value = try? JSONValue.parse(String(line)), let result = BFCLResult(value) { done[result.id] = result }
    }
  }
  if !FileManager.default.fileExists(atPath: plan.results.path) {
    _ = FileManager.default.createFile(atPath: plan.results.path, contents: nil)
  }
  let log = try FileHandle(forWritingTo: plan.results)
  defer { try? log.close() }
  try log.seekToEnd()
  FileHandle.standardError.write(Data("bfcl: results in \(plan.results.path) (\(done.count) kept)\n".utf8))
  try setup.model("start")
  defer { try? setup.model("stop") }
  var all: [(category: BFCLCategory, results: [BFCLResult])] = []
  for category in plan.categories {
    var results: [BFCLResult] = []
    for c in try plan.cases(category) {
      if let kept = done[c.id] {
        results.append(kept)
        continue
      }
      let result = try runBFCLCase(c, setup: setup)
      log.write(Data((result.json.serialized() + "\n").utf8))
      results.append(result)
      let calls = result.calls.map { "\($0.name)\($0.arguments.serialized())" }.joined(separator: ", ")
      reportAsk(
        label: category.rawValue, right: result.verdict.valid, seconds: result.seconds,
        prompt: "\(c.id): \(c.question.prefix(100))", calls: calls.isEmpty ? [] : [calls],
        reasons: result.verdict.errorType.map { [$0] } ?? [])
    }
    all.append((category, results))
  }
  let ran = all.flatMap(\.results)
  let reference = referenceDisagreements(plan: plan, results: ran)
  printBFCLTable(all, model: setup.model, reference: reference)
  return all.map { category, results in
    BenchRow(
      suite: "bfcl", name: "\(category.rawValue), \(results.count) cases, \(setup.model)",
      value: Double(results.count { $0.verdict.valid }) * 100 / Double(max(results.count, 1)), unit: "%",
      baselineName: "Qwen3-0.6B (published)", baselineValue: category.published.first?.percent,
      higherIsBetter: true, showsRatio: false)
  }
}

/// The per-category table: accuracy, median time per case, the commonest errors, and the published figures.
private func printBFCLTable(
  _ all: [(category: BFCLCategory, results: [BFCLResult])], model: String,
  reference: (differ: [String], compared: Int)?
) {
  let published = BFCLCategory.simple.published.map(\.model)
  var lines = ["category | cases | toolhost (\(model)) | median s | " + published.joined(separator: " | ")]
  for (category, results) in all {
    let right = Double(results.count { $0.verdict.valid }) * 100 / Double(max(results.count, 1))
    let figures = category.published.map { String(format: "%.1f", $0.percent) }
    lines.append(
      "\(category.rawValue) | \(results.count) | \(String(format: "%.1f", right)) | "
        + "\(String(format: "%.1f", median(results.map(\.seconds)))) | " + figures.joined(separator: " | "))
  }
  print(lines.joined(separator: "\n"))
  for (category, results) in all {
    var counts: [String: Int] = [:]
    for result in results where !result.verdict.valid { counts[result.verdict.errorType ?? "?", default: 0] += 1 }
    let top = counts.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }.prefix(3)
    if !top.isEmpty {
      print("  \(category.rawValue) errors: " + top.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
    }
  }
  if let reference {
    print(
      "BFCL's own checker agrees with the port on \(reference.compared - reference.differ.count) of "
        + "\(reference.compared) cases"
        + (reference.differ.isEmpty ? "" : "; differs on \(reference.differ.prefix(10).joined(separator: ", "))"))
  } else {
    print("BFCL's own checker could not be run (scripts/bfcl-reference-check): the port is unchecked in this run")
  }
}
