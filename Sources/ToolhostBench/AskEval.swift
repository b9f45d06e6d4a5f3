// The end-to-end eval of the local model (suite `ask`): the real `toolhost ask --model local --json PROMPT`, each
// prompt in a fresh scratch folder holding a copy of every example plugin, first with no model server running
// (cold: each ask starts and ends its own) and then against a shared server that `toolhost model start` loaded
// (warm). Needs scripts/install-local-model, `make -C plugins` and a release build of `toolhost`.
import Foundation
import ToolhostEval
import ToolhostJSON

#if canImport(Glibc)
  import Glibc
#endif

/// What one `toolhost ask` did.
struct AskOutcome {
  var status: Int32?
  var seconds: Double
  var calls: [(tool: String, arguments: JSONValue)]
  var answer: String?
  var stderr: String
}

/// The verdict on one outcome: right when the prompt got an answer (exit 0), a prompt that needs a tool called it
/// with the expected arguments and made at most one other call, and a prompt that needs none made no call.
private func verdict(_ outcome: AskOutcome, for c: EvalCase) -> String? {
  guard outcome.status == 0, outcome.answer != nil else {
    return outcome.status == nil ? "timed out" : "exit \(outcome.status!): \(outcome.stderr.suffix(160))"
  }
  guard let expected = c.tool else {
    return outcome.calls.isEmpty ? nil : "needless call"
  }
  let expect = JSONObject(c.expect.map { ($0.key, $0.value) })
  let right = outcome.calls.filter { call in call.tool == expected && argumentsMatch(call.arguments, expect) }
  if right.isEmpty {
    return outcome.calls.contains { $0.tool == expected } ? "arguments off" : "wrong or no tool"
  }
  return outcome.calls.count > 2 ? "\(outcome.calls.count) calls" : nil
}

/// The plugin folder an eval of `toolhost ask` asks with, and what each question's fresh HOME holds before it is
/// asked: the seeding belongs to the plugins, since only their tools can fill it.
struct EvalPlugins {
  /// The folder, relative to the checkout.
  var folder: String
  /// A file of the folder that exists only once its plugins are built, and what to say when it does not; nil when
  /// nothing needs building.
  var built: (file: String, failure: String)?
  /// What the seeding fills, for its failure message.
  var seeded: String
  /// The `toolhost call` arguments (a tool and its flags) run in each fresh HOME, in order, before the question.
  var seeding: [[String]]

  /// The example plugins of `plugins/` (`make -C plugins` builds them), with a to-do list of three items.
  static let examples = EvalPlugins(
    folder: "plugins",
    built: ("bread/bin/search-bread", "the example plugins are not built: run `make -C plugins` in the checkout"),
    seeded: "the to-do list",
    seeding: ["buy milk", "call the dentist", "water the plants"].map { ["todoAdd", "--text", $0] })
}

/// Where the evals of `toolhost ask` (`ask`, `answers`) find their programs and data.
struct AskEvalSetup {
  var toolhost: String
  var plugins: URL
  var model: String
  var environment: [String: String]
  /// The eval's plugins: what fills each question's fresh HOME (``EvalPlugins/seeding``), and what it fills.
  var evalPlugins: EvalPlugins

  /// The setup with this build's toolhost and `evalPlugins`' folder in the checkout (the current folder); throws
  /// when either is missing or the plugins are not built.
  static func locate(_ evalPlugins: EvalPlugins = .examples) throws -> AskEvalSetup {
    let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let toolhost = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("toolhost").path
    guard FileManager.default.isExecutableFile(atPath: toolhost) else {
      throw BenchFailure("no toolhost beside the benchmark (\(toolhost)): run `swift build -c release` first")
    }
    let plugins = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
      .appendingPathComponent(evalPlugins.folder)
    if let built = evalPlugins.built {
      guard FileManager.default.isExecutableFile(atPath: plugins.appendingPathComponent(built.file).path)
      else { throw BenchFailure(built.failure) }
    } else {
      var folder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: plugins.path, isDirectory: &folder), folder.boolValue else {
        throw BenchFailure("no plugin folder \(evalPlugins.folder): run from the checkout's root")
      }
    }
    let host = ProcessInfo.processInfo.environment
    var environment = ["PATH": host["PATH"] ?? "/usr/bin:/bin", "LANG": "C.UTF-8", "NO_COLOR": "1"]
    environment["TOOLHOST_LOCAL_DIR"] =
      host["TOOLHOST_LOCAL_DIR"] ?? FileManager.default.currentDirectoryPath + "/.toolhost/local-model"
    return AskEvalSetup(
      toolhost: toolhost, plugins: plugins, model: host["TOOLHOST_BENCH_MODEL"] ?? "local", environment: environment,
      evalPlugins: evalPlugins)
  }

  /// A fresh scratch folder for HOME, filled by ``EvalPlugins/seeding`` (with the tools in `plugins`): for the
  /// example plugins, a to-do list of three items.
  func scratch(plugins: URL) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("toolhost-eval-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    for call in evalPlugins.seeding {
      let seeded = try run(["call", "--plugins", plugins.path] + call, in: dir, timeout: 30)
      guard seeded.status == 0 else {
        throw BenchFailure("seeding \(evalPlugins.seeded) failed: \(seeded.stderr)")
      }
    }
    return dir
  }

  /// Runs toolhost in `dir` (HOME too, and the cache folder unless `cache` names another) with no terminal; kills it
  /// after `timeout` seconds.
  func run(_ arguments: [String], in dir: URL, cache: URL? = nil, timeout: Double) throws -> (
    status: Int32?, stdout: String, stderr: String, seconds: Double
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: toolhost)
    process.arguments = arguments
    process.currentDirectoryURL = dir
    var env = environment
    env["HOME"] = dir.path
    env["XDG_CONFIG_HOME"] = dir.appendingPathComponent(".config").path
    if let cache { env["XDG_CACHE_HOME"] = cache.path }
    process.environment = env
    let out = dir.appendingPathComponent(".out")
    let err = dir.appendingPathComponent(".err")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    let t0 = now()
    try process.run()
    var status: Int32? = nil
    while true {
      if !process.isRunning {
        status = process.terminationStatus
        break
      }
      if now() - t0 > timeout {
        kill(process.processIdentifier, SIGINT)
        usleep(3_000_000)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        break
      }
      usleep(20_000)
    }
    let seconds = now() - t0
    return (
      status, (try? String(contentsOf: out, encoding: .utf8)) ?? "",
      (try? String(contentsOf: err, encoding: .utf8)) ?? "",
      seconds
    )
  }

  /// `toolhost ask --json` for one prompt in a fresh scratch folder, with `folders`' plugins and cache folder; with
  /// `yes`, approving every call (`--yes`). Returns the exit status (nil: timed out), the event stream and stderr.
  func askJSON(_ prompt: String, yes: Bool, keepAlive: Bool, folders: UserFolders) throws -> (
    status: Int32?, stdout: String, stderr: String, seconds: Double
  ) {
    let dir = try scratch(plugins: folders.plugins)
    defer { try? FileManager.default.removeItem(at: dir) }
    var arguments = ["ask", "--json"] + (yes ? ["--yes"] : []) + ["--model", model, "--plugins", folders.plugins.path]
    if keepAlive { arguments += ["--keep-alive", "10m"] }
    return try run(arguments + [prompt], in: dir, cache: folders.cache, timeout: 240)
  }

  /// `toolhost ask --json --yes` for one prompt (``askJSON(_:yes:keepAlive:folders:)``), its calls and answer.
  func ask(_ prompt: String, keepAlive: Bool, folders: UserFolders) throws -> AskOutcome {
    let result = try askJSON(prompt, yes: true, keepAlive: keepAlive, folders: folders)
    let transcript = AskTranscript(ndjson: result.stdout)
    return AskOutcome(
      status: result.status, seconds: result.seconds,
      calls: transcript.calls.map { (tool: $0.tool, arguments: $0.arguments) },
      answer: transcript.answer, stderr: result.stderr)
  }

  /// `toolhost model start|stop` for the eval's model.
  func model(_ verb: String) throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("toolhost-eval-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var arguments = ["model", verb, "--model", model]
    if verb == "start" { arguments += ["--keep-alive", "10m"] }
    let result = try run(arguments, in: dir, timeout: 120)
    guard result.status == 0 else { throw BenchFailure("toolhost model \(verb) failed: \(result.stderr)") }
  }
}

struct BenchFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The scores of one binary in one run (cold or warm).
private struct AskScore {
  var right = 0
  var times: [Double] = []
  var extra = 0
  var needless = 0
}

/// A copy of the eval's plugin folder and a cache folder: made for every prompt when cold, once for the run when warm.
/// `ask` gets the copy as `--plugins`, a folder of the user's own choosing, so it runs those plugins without a
/// `toolhost trust` (which only a project's `./plugins` needs; the scratch HOME it runs in has none).
struct UserFolders {
  var root: URL
  var plugins: URL { root.appendingPathComponent("plugins") }
  var cache: URL { root.appendingPathComponent("cache") }

  /// A copy of `plugins` and an empty cache folder in a new temporary folder.
  init(copying plugins: URL) throws {
    root = FileManager.default.temporaryDirectory.appendingPathComponent("toolhost-eval-user-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: plugins, to: self.plugins)
  }
}

/// Calls `body` for each item with `setup`'s toolhost, cold or warm, and the user folders to ask in.
///
/// Cold is a first use: no server running, and a fresh copy of the plugins with an empty cache folder for every
/// prompt, so every ask starts the time MCP server to list its tools (about 0.9 s here; the list is cached per
/// plugin folder). Warm is someone who has used toolhost before: the shared server running, and one plugins folder
/// and one cache folder kept from prompt to prompt, so the list is read from the cache after the first prompt. HOME
/// (seeded: for the example plugins, the to-do list), configuration and trust are fresh for every prompt either way
/// (``AskEvalSetup/scratch``).
func forEachAsk<Item>(
  _ setup: AskEvalSetup, _ items: [Item], warm: Bool, _ body: (Item, UserFolders) throws -> Void
) throws {
  try setup.model("stop")
  if warm { try setup.model("start") }
  defer { if warm { try? setup.model("stop") } }
  let kept = warm ? try UserFolders(copying: setup.plugins) : nil
  defer { if let kept { try? FileManager.default.removeItem(at: kept.root) } }
  for item in items {
    let folders = try kept ?? UserFolders(copying: setup.plugins)
    defer { if kept == nil { try? FileManager.default.removeItem(at: folders.root) } }
    try body(item, folders)
    // A toolhost that keeps the model loaded by default (issue 49) leaves its server after a cold ask: stopped, so
    // that the next cold ask starts its own, whichever build is asked.
    if !warm { try setup.model("stop") }
  }
}

/// The stderr line of one asked prompt: `  warm ok    3.2 s  PROMPT → CALLS  [REASONS]`, and the answer when given.
func reportAsk(
  label: String, right: Bool, seconds: Double, prompt: String, calls: [String], reasons: [String],
  answer: String? = nil
) {
  var line = "  \(label) \(right ? "ok " : "BAD") \(String(format: "%5.1f", seconds)) s  \(prompt) → "
  line += calls.isEmpty ? "no call" : calls.joined(separator: ", ")
  if !reasons.isEmpty { line += "  [\(reasons.joined(separator: "; "))]" }
  if let answer { line += "  ⇒ \(answer)" }
  FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs every prompt with `setup`'s toolhost, cold or warm (``forEachAsk(_:_:warm:_:)``), and scores it; per-prompt
/// lines go to stderr.
private func askRun(_ setup: AskEvalSetup, _ cases: [EvalCase], warm: Bool, label: String) throws -> AskScore {
  var score = AskScore()
  try forEachAsk(setup, cases, warm: warm) { c, folders in
    let outcome = try setup.ask(c.prompt, keepAlive: warm, folders: folders)
    let wrong = verdict(outcome, for: c)
    if wrong == nil { score.right += 1 }
    score.times.append(outcome.seconds)
    if c.tool == nil { score.needless += outcome.calls.count } else { score.extra += max(0, outcome.calls.count - 1) }
    reportAsk(
      label: label, right: wrong == nil, seconds: outcome.seconds, prompt: c.prompt,
      calls: outcome.calls.map { "\($0.tool) \($0.arguments.description)" }, reasons: wrong.map { [$0] } ?? [])
  }
  return score
}

/// The runs (`TOOLHOST_EVAL_RUNS`: `cold,warm` by default) and the binaries of an eval of `toolhost ask` with
/// `plugins`: this build's, and `TOOLHOST_EVAL_BASELINE`'s (another `toolhost`, an earlier commit's) when set.
func askEvalPlan(_ plugins: EvalPlugins = .examples) throws -> (
  setup: AskEvalSetup, baseline: AskEvalSetup?, runs: [String]
) {
  let setup = try AskEvalSetup.locate(plugins)
  let environment = ProcessInfo.processInfo.environment
  let runs = (environment["TOOLHOST_EVAL_RUNS"] ?? "cold,warm").split(separator: ",").map(String.init)
  var baseline: AskEvalSetup? = nil
  if let path = environment["TOOLHOST_EVAL_BASELINE"] {
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw BenchFailure("TOOLHOST_EVAL_BASELINE is not an executable: \(path)")
    }
    baseline = setup
    baseline?.toolhost = path
  }
  return (setup, baseline, runs)
}

/// Runs every prompt cold, then warm, and scores both. Per-prompt lines go to stderr. `TOOLHOST_EVAL_RUNS`
/// (`cold,warm` by default) picks the runs; `TOOLHOST_BENCH_MODEL` the model (`local:/path/model.gguf`);
/// `TOOLHOST_EVAL_TOOLS` (tool names, `none` for the prompts needing none) a part of the set, while trying things;
/// `TOOLHOST_EVAL_BASELINE` another `toolhost` binary (an earlier commit's) to run the same prompts with, in the same
/// run, as the baseline column.
func askEvalBenchmarks() async throws -> [BenchRow] {
  let (setup, baseline, runs) = try askEvalPlan()
  let only = ProcessInfo.processInfo.environment["TOOLHOST_EVAL_TOOLS"].map {
    Set($0.split(separator: ",").map(String.init))
  }
  let cases = everydayPrompts.filter { c in only.map { $0.contains(c.tool ?? "none") } ?? true }
  var rows: [BenchRow] = []
  let total = Double(cases.count)
  for run in runs {
    let warm = run == "warm"
    let current = try askRun(setup, cases, warm: warm, label: run)
    let before = try baseline.map { try askRun($0, cases, warm: warm, label: run + " baseline") }
    let server = warm ? "shared server running" : "no server running"
    func row(_ name: String, _ value: (AskScore) -> Double, unit: String, goal: String? = nil, higher: Bool = false)
      -> BenchRow
    {
      BenchRow(
        suite: "ask", name: name, value: value(current), unit: unit, baselineName: before.map { _ in "baseline" },
        baselineValue: before.map(value), goal: goal, higherIsBetter: higher, showsRatio: unit == "s")
    }
    rows.append(
      row(
        "right, \(cases.count) prompts, \(server)", { Double($0.right) * 100 / total }, unit: "%", goal: "≥ 90",
        higher: true))
    rows.append(row("calls for prompts needing none, \(server)", { Double($0.needless) }, unit: "calls", goal: "0"))
    rows.append(row("extra calls for prompts needing one, \(server)", { Double($0.extra) }, unit: "calls"))
    rows.append(
      row("median time per ask, \(server)", { median($0.times) }, unit: "s", goal: warm ? "≤ 4" : "≤ 8"))
    rows.append(row("worst time, \(server)", { $0.times.max() ?? 0 }, unit: "s"))
  }
  return rows
}
