// The `answers` eval (issue 30): answers a user can trust. The real `toolhost ask --json --model local --plugins
// PLUGINS PROMPT` for each question of Benchmarks/answers.json (or, with TOOLHOST_EVAL_SET=heldout, of
// Benchmarks/heldout/questions.json with Benchmarks/heldout/plugins), as a user who followed the README runs it (no
// `--yes`, no terminal), cold and warm like `ask` (same folders and to-do list); a question is right only when every
// call it needs was made, in one round where the calls are independent, with no needless call, no invented argument,
// and an answer whose figures come from the results or the question, that is not the question echoed and that owns
// up to a failed call (ToolhostEval's checks). Needs scripts/install-local-model, `make -C plugins` and a build of
// `toolhost` beside the benchmark.
import Foundation
import ToolhostEval
import ToolhostJSON

/// The scores of one binary in one run (cold or warm).
private struct AnswerScore {
  var right = 0
  var firstCallRight = 0
  var needless = 0
  var extra = 0
  var loops = 0
  /// Questions with a reason of each kind.
  var reasons: [FailureKind: Int] = [:]
  var rightPerCategory: [QuestionCategory: Int] = [:]
  var times: [Double] = []

  mutating func add(_ verdict: AnswerVerdict, category: QuestionCategory, seconds: Double) {
    if verdict.right {
      right += 1
      rightPerCategory[category, default: 0] += 1
    }
    if verdict.firstCallRight { firstCallRight += 1 }
    needless += verdict.needlessCalls
    extra += verdict.extraCalls
    if verdict.loops { loops += 1 }
    for kind in Set(verdict.reasons.map(\.kind)) { reasons[kind, default: 0] += 1 }
    times.append(seconds)
  }
}

/// A question set of the eval (`TOOLHOST_EVAL_SET`): its questions file, the plugins they are asked with (and what
/// each question's fresh HOME holds first), where its rows go and its table's names.
struct AnswerSet {
  /// The set's name, as `TOOLHOST_EVAL_SET` gives it.
  var name: String
  /// The questions file, relative to the checkout.
  var questions: String
  /// The plugin folder and the seeding of HOME.
  var plugins: EvalPlugins
  /// The suite named in the table.
  var suite: String
  /// The default of `TOOLHOST_EVAL_OUT`.
  var rows: String
  /// The goal of the right answers, in %.
  var goal: String

  /// `answers` (the default): Benchmarks/answers.json, written alongside the code, with the example plugins and a
  /// to-do list of three items.
  static let answers = AnswerSet(
    name: "answers", questions: "Benchmarks/answers.json", plugins: .examples, suite: "answers",
    rows: ".build/answers-eval-{run}-{label}.jsonl", goal: "≥ 90")
  /// `heldout`: Benchmarks/heldout/questions.json with the plugins of Benchmarks/heldout/plugins only, written apart
  /// from the code and never tuned on (issue 49); their HOME starts empty (each writer starts from its own table).
  static let heldout = AnswerSet(
    name: "heldout", questions: "Benchmarks/heldout/questions.json",
    plugins: EvalPlugins(folder: "Benchmarks/heldout/plugins", built: nil, seeded: "nothing", seeding: []),
    suite: "answers heldout", rows: ".build/answers-heldout-eval-{run}-{label}.jsonl", goal: "≥ 85")

  /// The set `TOOLHOST_EVAL_SET` names (`answers` when unset or empty).
  static func chosen() throws -> AnswerSet {
    let name = ProcessInfo.processInfo.environment["TOOLHOST_EVAL_SET"] ?? ""
    let sets = [answers, heldout]
    if name.isEmpty { return answers }
    guard let set = sets.first(where: { $0.name == name }) else {
      throw BenchFailure(
        "TOOLHOST_EVAL_SET: \(name) is not a question set (\(sets.map(\.name).joined(separator: ", ")))")
    }
    return set
  }
}

/// The set's questions, from its file in the checkout (the current folder), narrowed by `TOOLHOST_EVAL_ONLY`:
/// categories and question numbers (from 0, as in the file), comma-separated.
private func answerQuestions(_ set: AnswerSet) throws -> [(number: Int, question: EvalQuestion)] {
  let file = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(set.questions)
  let all: [EvalQuestion]
  do { all = try EvalQuestion.load(from: file) } catch { throw BenchFailure("\(error)") }
  let numbered = all.enumerated().map { (number: $0.offset, question: $0.element) }
  guard let only = ProcessInfo.processInfo.environment["TOOLHOST_EVAL_ONLY"], !only.isEmpty else { return numbered }
  var numbers = Set<Int>()
  var categories = Set<QuestionCategory>()
  for item in only.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
    if let n = Int(item), all.indices.contains(n) {
      numbers.insert(n)
    } else if let category = QuestionCategory(rawValue: item) {
      categories.insert(category)
    } else {
      throw BenchFailure(
        "TOOLHOST_EVAL_ONLY: \(item) is neither a question number (0–\(all.count - 1)) nor a category "
          + "(\(QuestionCategory.allCases.map(\.rawValue).joined(separator: ", ")))")
    }
  }
  return numbered.filter { numbers.contains($0.number) || categories.contains($0.question.category) }
}

/// Where the per-question rows of one run go: `TOOLHOST_EVAL_OUT` with `{run}` and `{label}` replaced (without
/// them, `-RUN-LABEL` is added before the extension), by default the set's (`.build/answers-eval-RUN-LABEL.jsonl`,
/// `.build/answers-heldout-eval-RUN-LABEL.jsonl`).
private func answerRowsFile(_ set: AnswerSet, run: String, label: String) -> URL {
  let template = ProcessInfo.processInfo.environment["TOOLHOST_EVAL_OUT"] ?? set.rows
  var path = template.replacingOccurrences(of: "{run}", with: run).replacingOccurrences(of: "{label}", with: label)
  if path == template {
    let url = URL(fileURLWithPath: template)
    let ext = url.pathExtension.isEmpty ? "jsonl" : url.pathExtension
    path = url.deletingPathExtension().path + "-\(run)-\(label).\(ext)"
  }
  return URL(fileURLWithPath: path)
}

/// The per-question row: the question, what the ask did (calls with their round, results, answer), and the verdict.
private func answerRow(
  number: Int, question: EvalQuestion, transcript: AskTranscript, status: Int32?, seconds: Double,
  verdict: AnswerVerdict
) -> JSONValue {
  let calls: [JSONValue] = transcript.calls.map {
    ["tool": .string($0.tool), "arguments": $0.arguments, "round": .integer(Int64($0.round))]
  }
  let results: [JSONValue] = transcript.results.map { r in
    var o: JSONObject = ["tool": .string(r.tool), "ok": .bool(r.ok)]
    if let result = r.result { o["result"] = result }
    if let text = r.text { o["text"] = .string(text) }
    if let error = r.error { o["error"] = error }
    return .object(o)
  }
  return [
    "number": .integer(Int64(number)), "prompt": .string(question.prompt),
    "category": .string(question.category.rawValue), "status": status.map { .integer(Int64($0)) } ?? .null,
    "seconds": .real((seconds * 100).rounded() / 100), "calls": .array(calls), "results": .array(results),
    "answer": transcript.answer.map(JSONValue.string) ?? .null, "right": .bool(verdict.right),
    "firstCallRight": .bool(verdict.firstCallRight),
    "reasons": .array(verdict.reasons.map { .string($0.description) }),
  ]
}

/// Asks every question with `setup`'s toolhost, cold or warm, scores it, writes its row to the run's file and its
/// line to stderr.
private func answerRun(
  _ set: AnswerSet, _ setup: AskEvalSetup, _ questions: [(number: Int, question: EvalQuestion)], warm: Bool,
  run: String, label: String
) throws -> AnswerScore {
  let file = answerRowsFile(set, run: run, label: label)
  try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
  guard FileManager.default.createFile(atPath: file.path, contents: nil),
    let out = try? FileHandle(forWritingTo: file)
  else { throw BenchFailure("cannot write \(file.path)") }
  defer { try? out.close() }
  var score = AnswerScore()
  try forEachAsk(setup, questions, warm: warm) { item, folders in
    let (number, question) = item
    let asked = try setup.askJSON(question.prompt, yes: false, keepAlive: warm, folders: folders)
    let transcript = AskTranscript(ndjson: asked.stdout)
    let verdict = answerVerdict(for: question, transcript: transcript, status: asked.status, stderr: asked.stderr)
    score.add(verdict, category: question.category, seconds: asked.seconds)
    let row = answerRow(
      number: number, question: question, transcript: transcript, status: asked.status, seconds: asked.seconds,
      verdict: verdict)
    out.write(Data((row.description + "\n").utf8))
    let calls = transcript.calls.map { call in
      let ok = transcript.result(of: call)?.ok == false ? " (failed)" : ""
      return "\(call.round > 1 ? "r\(call.round) " : "")\(call.tool) \(call.arguments.description)\(ok)"
    }
    let answer = (transcript.answer ?? "").split(whereSeparator: \.isNewline).joined(separator: " ")
    reportAsk(
      label: label == "current" ? run : "\(run) \(label)", right: verdict.right, seconds: asked.seconds,
      prompt: "#\(number) \(question.prompt)", calls: calls, reasons: verdict.reasons.map(\.description),
      answer: String(answer.prefix(140)))
  }
  FileHandle.standardError.write(Data("  rows: \(file.path)\n".utf8))
  return score
}

/// Runs every question cold, then warm (`TOOLHOST_EVAL_RUNS`), with this build's `toolhost` and, when
/// `TOOLHOST_EVAL_BASELINE` names another, that one too, and scores both (see BENCHMARKS.md). `TOOLHOST_EVAL_SET`
/// picks the question set (`answers`, the default, or `heldout`); `TOOLHOST_EVAL_ONLY` narrows the questions
/// (categories or question numbers, comma-separated); `TOOLHOST_BENCH_MODEL` picks the model; `TOOLHOST_EVAL_OUT`
/// where the per-question rows go. `TOOLHOST_EVAL_EXTRA_PLUGINS` (plugin folders, comma-separated) asks the same
/// questions with their plugins offered beside the set's, and compares that with the set's plugins alone in the
/// same run (issue 49: `ask` with 20 tools against 11).
func answersEvalBenchmarks() async throws -> [BenchRow] {
  let set = try AnswerSet.chosen()
  var (setup, baseline, runs) = try askEvalPlan(set.plugins)
  var baselineName = "baseline"
  if let extra = ProcessInfo.processInfo.environment["TOOLHOST_EVAL_EXTRA_PLUGINS"], !extra.isEmpty {
    guard baseline == nil else {
      throw BenchFailure("TOOLHOST_EVAL_EXTRA_PLUGINS and TOOLHOST_EVAL_BASELINE are two comparisons: give one")
    }
    baseline = setup
    let folders = [setup.plugins.path] + extra.split(separator: ",").map(String.init)
    setup.plugins = try combinedPluginFolder(folders)
    baselineName = "\(try toolCount(setup, in: URL(fileURLWithPath: folders[0]))) tools"
    FileHandle.standardError.write(
      Data(
        "  \(try toolCount(setup, in: setup.plugins)) tools (\(setup.plugins.path)) against \(baselineName)\n".utf8))
  }
  let questions = try answerQuestions(set)
  guard !questions.isEmpty else { throw BenchFailure("TOOLHOST_EVAL_ONLY left no question") }
  var rows: [BenchRow] = []
  let total = questions.count
  for run in runs {
    let warm = run == "warm"
    let current = try answerRun(set, setup, questions, warm: warm, run: run, label: "current")
    let before = try baseline.map { try answerRun(set, $0, questions, warm: warm, run: run, label: "baseline") }
    let server = warm ? "shared server running" : "no server running"
    func row(_ name: String, _ value: (AnswerScore) -> Double, unit: String, goal: String? = nil, higher: Bool = false)
      -> BenchRow
    {
      BenchRow(
        suite: set.suite, name: "\(name), \(server)", value: value(current), unit: unit,
        baselineName: before.map { _ in baselineName }, baselineValue: before.map(value), goal: goal,
        higherIsBetter: higher, showsRatio: unit == "s")
    }
    func percent(_ n: Int, of d: Int) -> Double { d == 0 ? 0 : Double(n) * 100 / Double(d) }
    rows.append(
      row("right, \(total) questions", { percent($0.right, of: total) }, unit: "%", goal: set.goal, higher: true))
    rows.append(
      row(
        "right first calls (the old measure)", { percent($0.firstCallRight, of: total) }, unit: "%",
        goal: "≥ baseline", higher: true))
    let unserved = questions.filter { $0.question.category == .none }.count
    rows.append(
      row("needless calls, \(unserved) questions no tool serves", { Double($0.needless) }, unit: "calls", goal: "0"))
    rows.append(row("extra calls", { Double($0.extra) }, unit: "calls"))
    rows.append(row("questions that loop (a tool 3+ times)", { Double($0.loops) }, unit: "questions", goal: "0"))
    for kind in FailureKind.allCases {
      rows.append(row("questions with: \(kind.rawValue)", { Double($0.reasons[kind] ?? 0) }, unit: "questions"))
    }
    for category in QuestionCategory.allCases {
      let count = questions.filter { $0.question.category == category }.count
      guard count > 0 else { continue }
      rows.append(
        row(
          "right, \(count) \(category.rawValue) questions", { percent($0.rightPerCategory[category] ?? 0, of: count) },
          unit: "%", higher: true))
    }
    rows.append(row("median time per ask", { median($0.times) }, unit: "s", goal: warm ? "≤ 4" : "≤ 8"))
    rows.append(row("worst time", { $0.times.max() ?? 0 }, unit: "s"))
  }
  return rows
}

/// A scratch plugin folder holding a link to every plugin of `folders` (each plugin a folder of its own, as
/// `--plugins` reads them), for asking with all of their tools at once.
///
/// - Throws: ``BenchFailure`` when two folders hold plugins of the same name, or a folder cannot be read.
private func combinedPluginFolder(_ folders: [String]) throws -> URL {
  let combined = FileManager.default.temporaryDirectory.appendingPathComponent("toolhost-eval-plugins-\(getpid())")
  try? FileManager.default.removeItem(at: combined)
  try FileManager.default.createDirectory(at: combined, withIntermediateDirectories: true)
  for folder in folders {
    let absolute = URL(
      fileURLWithPath: folder, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    for name in try FileManager.default.contentsOfDirectory(atPath: absolute.path).sorted() {
      let plugin = absolute.appendingPathComponent(name)
      guard FileManager.default.fileExists(atPath: plugin.appendingPathComponent("toolhost.json").path) else {
        continue
      }
      let link = combined.appendingPathComponent(name)
      guard !FileManager.default.fileExists(atPath: link.path) else {
        throw BenchFailure("two plugin folders hold a plugin named \(name)")
      }
      try FileManager.default.createSymbolicLink(at: link, withDestinationURL: plugin.standardizedFileURL)
    }
  }
  return combined
}

/// How many tools `setup`'s toolhost offers from the plugins of `folder` (`toolhost list --json
/// --start-servers`, so an MCP server's tools count too).
private func toolCount(_ setup: AskEvalSetup, in folder: URL) throws -> Int {
  let home = try setup.scratch(plugins: folder)
  defer { try? FileManager.default.removeItem(at: home) }
  let listed = try setup.run(["list", "--json", "--start-servers", "--plugins", folder.path], in: home, timeout: 60)
  guard listed.status == 0, let tools = (try? JSONValue.parse(listed.stdout))?["tools"]?.arrayValue else {
    throw BenchFailure("toolhost list --plugins \(folder.path) failed: \(listed.stderr)")
  }
  return tools.count
}
