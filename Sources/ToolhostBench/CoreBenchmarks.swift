import CBenchBaseline
import Foundation
import ToolhostJSON
import ToolhostPlugins
import ToolhostSchema
import ToolhostSystem
import ToolhostTools

/// A scratch folder for generated plugins, removed at exit.
let benchDir: String = {
  let dir = NSTemporaryDirectory() + "toolhost-bench-\(getpid())"
  try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
  atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "toolhost-bench-\(getpid())") }
  return dir
}()

/// Compiles a tiny C plugin: reads stdin to EOF, optionally sleeps, writes a 63-byte reply.
func compileTinyPlugin(name: String, sleepMicroseconds: Int = 0) throws -> String {
  let source = benchDir + "/\(name).c"
  let exe = benchDir + "/\(name)"
  let code = """
    #include <string.h>
    #include <unistd.h>
    int main(void) {
      char buf[65536];
      while (read(0, buf, sizeof buf) > 0) {}
      if (\(sleepMicroseconds) > 0) usleep(\(sleepMicroseconds));
      const char *r = "{\\"result\\": {\\"ok\\": true, \\"n\\": 42}, \\"text\\": \\"tiny plugin reply..\\"}\\n";
      write(1, r, strlen(r));
      return 0;
    }
    """
  return try compileC(code, source: source, executable: exe)
}

/// Writes `code` to `source` and compiles it with `cc -O2` into `executable`.
func compileC(_ code: String, source: String, executable exe: String) throws -> String {
  try code.write(toFile: source, atomically: true, encoding: .utf8)
  let cc = Process()
  cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  cc.arguments = ["cc", "-O2", "-o", exe, source]
  try cc.run()
  cc.waitUntilExit()
  guard cc.terminationStatus == 0 else { throw BenchError("cc failed for \(source)") }
  return exe
}

struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ d: String) { description = d }
}

/// A typical tool schema and argument object (the seed's searchBreadDatabase plus a few more fields).
let typicalSchema: JSONValue = [
  "type": "object", "additionalProperties": false, "required": ["searchTerm"],
  "properties": [
    "searchTerm": ["type": "string", "minLength": 1, "maxLength": 100],
    "limit": ["type": "integer", "minimum": 1, "maximum": 6, "default": 3],
    "units": ["enum": ["celsius", "fahrenheit"]],
    "includeDone": ["type": "boolean"],
    "tags": ["type": "array", "items": ["type": "string"], "maxItems": 10],
  ],
]
let typicalArguments: JSONValue = [
  "searchTerm": "sourdough rye", "limit": 4, "units": "celsius", "includeDone": false, "tags": ["bread", "rye"],
]

func discoveryBenchmarks() async throws -> [BenchRow] {
  let folder = benchDir + "/discovery"
  try? FileManager.default.removeItem(atPath: folder)
  try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  let schemaText = typicalSchema.serialized()
  for i in 0..<1000 {
    let dir = folder + "/plugin\(i)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let manifest = """
      {"manifestVersion": 1, "command": "/bin/true", "timeout": 10, "env": ["API_TOKEN"],
       "tools": [{"name": "tool\(i)", "description": "Generated tool number \(i) for the discovery benchmark.",
                  "inputSchema": \(schemaText), "annotations": {"readOnlyHint": true}}]}
      """
    try manifest.write(toFile: dir + "/toolhost.json", atomically: false, encoding: .utf8)
  }
  var count = 0
  let ours = await medianAsync(runs: 7) {
    count = await PluginCatalog.discover(folders: [folder]).entries.count
  }
  guard count == 1000 else { throw BenchError("discovered \(count) of 1000") }
  // Baseline: only list, read and parse the same files with Foundation (no schema checks, no compiling).
  let baseline = medianSeconds(runs: 7) {
    for path in PluginCatalog.manifests(in: folder) {
      let data = FileManager.default.contents(atPath: path)!
      _ = try? JSONSerialization.jsonObject(with: data)
    }
  }
  // Where the time goes, one core each.
  let paths = PluginCatalog.manifests(in: folder)
  let tList = medianSeconds(runs: 5) { _ = PluginCatalog.manifests(in: folder) }
  var manifests: [PluginManifest] = []
  let tLoad = medianSeconds(runs: 5) { manifests = paths.compactMap { try? PluginManifest.load(path: $0) } }
  let tResolve = medianSeconds(runs: 5) {
    for m in manifests { _ = try? m.resolveExecutable(searchPath: "/usr/bin:/bin") }
  }
  let tCompile = medianSeconds(runs: 5) {
    for m in manifests { for t in m.tools { _ = try? JSONSchema(t.inputSchema) } }
  }
  var texts: [[UInt8]] = []
  let tRead = medianSeconds(runs: 5) {
    texts = paths.compactMap { FileManager.default.contents(atPath: $0).map(Array.init) }
  }
  var values: [JSONValue] = []
  let tParse = medianSeconds(runs: 5) { values = texts.compactMap { try? JSONValue.parse($0) } }
  let tCheck = medianSeconds(runs: 5) { for v in values { _ = try? PluginManifest.make(v, path: "x/toolhost.json") } }
  // What trust adds: StrictModes (each plugin folder, each manifest read as a small regular file, each command where
  // it really is) and the notes for requested variables that look like secrets (every manifest here asks for one).
  let tOwnership = medianSeconds(runs: 5) {
    let checker = FileSafety.Checker()
    for path in paths {
      _ = checker.folderProblem(String(path[..<path.lastIndex(of: "/")!]))
      _ = try? FileSafety.readRegularFile(path, user: getuid())
      _ = checker.programProblem("/bin/true")
    }
  }
  let trust = DiscoveryTrust()
  let tSecrets = medianSeconds(runs: 5) {
    for m in manifests { _ = PluginCatalog.secretEnvironmentNotes(m, trust: trust) }
  }
  let parts: [(String, Double)] = [
    ("read files (1 core)", tRead), ("parse with jansson (1 core)", tParse),
    ("schema-check+read manifests (1 core)", tCheck),
    ("list the folder", tList), ("read+parse+schema-check (1 core)", tLoad), ("resolve commands (1 core)", tResolve),
    ("compile input schemas (1 core)", tCompile), ("ownership checks + safe reads (1 core)", tOwnership),
    ("secret-variable notes (1 core)", tSecrets),
  ]
  return parts.map { BenchRow(suite: "discovery", name: "  of which: \($0.0)", value: $0.1 * 1000, unit: "ms") } + [
    BenchRow(
      suite: "discovery", name: "discover 1,000 manifests (parse, schema-check, compile, stat)", value: ours * 1000,
      unit: "ms", baselineName: "read+JSONSerialization only", baselineValue: baseline * 1000, goal: "< 50 ms")
  ]
}

func validationBenchmarks() throws -> [BenchRow] {
  let schema = try JSONSchema(typicalSchema)
  precondition(schema.isValid(typicalArguments))
  let n = 200_000
  var valid = 0
  let t = medianSeconds(runs: 5) {
    for _ in 0..<n where schema.validate(typicalArguments).isEmpty { valid += 1 }
  }
  let tFast = medianSeconds(runs: 5) {
    for _ in 0..<n where schema.isValid(typicalArguments) { valid += 1 }
  }
  let m = 5_000
  let tCompile = medianSeconds(runs: 3) {
    for _ in 0..<m where (try? JSONSchema(typicalSchema))?.isValid(typicalArguments) == true { valid += 1 }
  }
  let baselineRate = Double(m) / tCompile
  return [
    BenchRow(
      suite: "validation", name: "validate() typical arguments, compiled once", value: Double(n) / t, unit: "/s",
      baselineName: "compile per call", baselineValue: baselineRate, goal: ">= 200k/s", higherIsBetter: true),
    BenchRow(
      suite: "validation", name: "isValid() typical arguments, compiled once", value: Double(n) / tFast, unit: "/s",
      baselineName: "compile per call", baselineValue: baselineRate, goal: ">= 200k/s", higherIsBetter: true),
  ]
}

func runnerBenchmarks() async throws -> [BenchRow] {
  let tiny = try compileTinyPlugin(name: "tiny")
  let sleeper = try compileTinyPlugin(name: "sleeper", sleepMicroseconds: 100_000)
  let request = Array(#"{"toolhost":1,"tool":"tiny","arguments":{"city":"Boston"},"callId":"bench"}"#.utf8)
  let runner = ProcessRunner()
  // The other mechanism than the machine's strongest, for its per-call cost.
  let subreaper = ProcessRunner(containment: Containment(preference: .subreaper))
  var (rows, cPer) = try await sequentialRunnerRows(tiny: tiny, request: request, runner: runner, subreaper: subreaper)
  rows += try await throughputRows(tiny: tiny, request: request, runners: [runner, subreaper], cPer: cPer)
  rows.append(try await sleeperRow(sleeper: sleeper, request: request, runner: runner))
  rows += try await timeoutRows(runner: runner)
  return rows
}

/// Sequential calls: the C floor and the runner (contained, confined, the subreaper, the full tool path, Foundation's
/// Process), interleaved, medians of 5; and the C floor's time per call in µs.
private func sequentialRunnerRows(
  tiny: String, request: [UInt8], runner: ProcessRunner, subreaper: ProcessRunner
) async throws -> (rows: [BenchRow], cPer: Double) {
  let n = 1000
  var cTimes: [Double] = []
  var handoffTimes: [Double] = []
  var ourTimes: [Double] = []
  var subreaperTimes: [Double] = []
  var toolTimes: [Double] = []
  var naiveTimes: [Double] = []
  var confinedTimes: [Double] = []
  // What a plugin gets by default: no network, its folder and the system to read, a folder of its own to write.
  let confinement = Confinement(
    readable: [(tiny as NSString).deletingLastPathComponent], writable: [benchDir + "/tiny-tmp"])
  try? FileManager.default.createDirectory(atPath: benchDir + "/tiny-tmp", withIntermediateDirectories: true)
  let registry = try await tinyToolRegistry(command: tiny)
  _ = try await registry.call("tiny", arguments: ["city": "Boston"])
  for _ in 0..<5 {
    let c = request.withUnsafeBufferPointer { b in
      b.withMemoryRebound(to: CChar.self) { toolhost_bench_posix_spawn_loop(tiny, $0.baseAddress, b.count, Int32(n)) }
    }
    guard c > 0 else { throw BenchError("the C baseline failed") }
    cTimes.append(c)
    let handoff = request.withUnsafeBufferPointer { b in
      b.withMemoryRebound(to: CChar.self) { toolhost_bench_handoff_loop(tiny, $0.baseAddress, b.count, Int32(n)) }
    }
    guard handoff > 0 else { throw BenchError("the C hand-off baseline failed") }
    handoffTimes.append(handoff)
    let t0 = now()
    for _ in 0..<n {
      let out = try await runner.run(ProcessSpec(executable: tiny, input: request, timeout: .seconds(10)))
      guard out.stdout.count > 0 else { throw BenchError("empty reply") }
    }
    ourTimes.append(now() - t0)
    if ConfinementSupport.current.problem(for: confinement) == nil {
      let t3 = now()
      for _ in 0..<n {
        let spec = ProcessSpec(executable: tiny, input: request, timeout: .seconds(10), confinement: confinement)
        guard try await runner.run(spec).stdout.count > 0 else { throw BenchError("empty reply") }
      }
      confinedTimes.append(now() - t3)
    }
    if runner.containment.mechanism != .subreaper {
      let t2 = now()
      for _ in 0..<n {
        let out = try await subreaper.run(ProcessSpec(executable: tiny, input: request, timeout: .seconds(10)))
        guard out.stdout.count > 0 else { throw BenchError("empty reply") }
      }
      subreaperTimes.append(now() - t2)
    }
    let t1 = now()
    for _ in 0..<n { _ = try await registry.call("tiny", arguments: ["city": "Boston"]) }
    toolTimes.append(now() - t1)
    naiveTimes.append(try naiveFoundationLoop(tiny, request: request, n: n))
  }
  let times = SequentialTimes(
    c: cTimes, handoff: handoffTimes, contained: ourTimes, subreaper: subreaperTimes, tool: toolTimes,
    naive: naiveTimes, confined: confinedTimes)
  return sequentialRows(times, calls: n, mechanism: runner.containment.mechanism.rawValue)
}

/// The times of the sequential rounds, in seconds per round of calls.
private struct SequentialTimes {
  var c, handoff, contained, subreaper, tool, naive, confined: [Double]
}

/// The sequential rows from their rounds' times (medians, in µs per call), and the C floor's time per call.
private func sequentialRows(_ times: SequentialTimes, calls n: Int, mechanism: String) -> (
  rows: [BenchRow], cPer: Double
) {
  var rows: [BenchRow] = []
  let (cTimes, ourTimes, subreaperTimes, toolTimes, naiveTimes, confinedTimes) = (
    times.c, times.contained, times.subreaper, times.tool, times.naive, times.confined
  )
  func med(_ a: [Double]) -> Double { a.sorted()[a.count / 2] }
  let cPer = med(cTimes) / Double(n) * 1e6
  let naivePer = med(naiveTimes) / Double(n) * 1e6
  let handoffPer = med(times.handoff) / Double(n) * 1e6
  rows.append(
    BenchRow(
      suite: "runner", name: "sequential call, C posix_spawn + hand-off to an I/O thread", value: handoffPer,
      unit: "µs/call", baselineName: "C posix_spawn+pipes", baselineValue: cPer, goal: "-"))
  rows.append(
    BenchRow(
      suite: "runner", name: "sequential call, ProcessRunner contained (\(mechanism))",
      value: med(ourTimes) / Double(n) * 1e6,
      unit: "µs/call", baselineName: "C posix_spawn+pipes", baselineValue: cPer, goal: "<= 1.5x"))
  rows.append(
    BenchRow(
      suite: "runner", name: "sequential call, ProcessRunner contained (\(mechanism))",
      value: med(ourTimes) / Double(n) * 1e6, unit: "µs/call", baselineName: "C with an I/O thread",
      baselineValue: handoffPer, goal: "-"))
  rows.append(
    BenchRow(
      suite: "runner", name: "sequential call, ProcessRunner contained (\(mechanism))",
      value: med(ourTimes) / Double(n) * 1e6, unit: "µs/call", baselineName: "Foundation Process, blocking",
      baselineValue: naivePer, goal: "<= 1.1x"))
  if !confinedTimes.isEmpty {
    rows.append(
      BenchRow(
        suite: "runner", name: "sequential call, contained (\(mechanism)) and confined (Landlock, seccomp)",
        value: med(confinedTimes) / Double(n) * 1e6, unit: "µs/call",
        baselineName: "the same, not confined", baselineValue: med(ourTimes) / Double(n) * 1e6, goal: "-"))
  }
  if !subreaperTimes.isEmpty {
    rows.append(
      BenchRow(
        suite: "runner", name: "sequential call, ProcessRunner contained (subreaper)",
        value: med(subreaperTimes) / Double(n) * 1e6, unit: "µs/call", baselineName: "Foundation Process, blocking",
        baselineValue: naivePer, goal: "<= 1.1x"))
    rows.append(
      BenchRow(
        suite: "runner", name: "sequential call, ProcessRunner contained (subreaper)",
        value: med(subreaperTimes) / Double(n) * 1e6, unit: "µs/call", baselineName: "C with an I/O thread",
        baselineValue: handoffPer, goal: "-"))
  }
  rows.append(
    BenchRow(
      suite: "runner", name: "sequential call, Foundation Process blocking pattern",
      value: naivePer, unit: "µs/call", baselineName: "C posix_spawn+pipes", baselineValue: cPer, goal: "-"))
  rows.append(
    BenchRow(
      suite: "runner", name: "sequential call, full tool path (validate+spawn+parse)",
      value: med(toolTimes) / Double(n) * 1e6, unit: "µs/call", baselineName: "C posix_spawn+pipes",
      baselineValue: cPer, goal: "-"))

  return (rows, cPer)
}

/// A registry with the tiny plugin `command` as a tool of a plugin folder, for the full tool path.
private func tinyToolRegistry(command tiny: String) async throws -> ToolRegistry {
  let dir = benchDir + "/tinyplugin"
  try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
  try """
  {"manifestVersion": 1, "command": "\(tiny)", "tools": [{"name": "tiny", "description": "tiny",
   "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}
  """.write(toFile: dir + "/toolhost.json", atomically: false, encoding: .utf8)
  let registry = await PluginCatalog.discover(folders: [benchDir]).registry()
  return registry
}

/// Throughput at 1, 8, 64 in flight, with the machine's containment (and the subreaper where that is a cgroup).
private func throughputRows(tiny: String, request: [UInt8], runners: [ProcessRunner], cPer: Double) async throws
  -> [BenchRow]
{
  var rows: [BenchRow] = []
  let runner = runners[0]
  let subreaper = runners[1]
  let throughputRunners = [runner] + (runner.containment.mechanism == .subreaper ? [] : [subreaper])
  for width in [1, 8, 64] {
    for contained in throughputRunners {
      let calls = 2000
      let t = try await medianAsync(runs: 3) {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for i in 0..<calls {
            if i >= width { try await group.next() }
            group.addTask {
              _ = try await contained.run(ProcessSpec(executable: tiny, input: request, timeout: .seconds(10)))
            }
          }
          try await group.waitForAll()
        }
      }
      rows.append(
        BenchRow(
          suite: "runner", name: "throughput, \(width) in flight (\(contained.containment.mechanism.rawValue))",
          value: Double(calls) / t, unit: "calls/s", baselineName: "C sequential", baselineValue: 1e6 / cPer,
          goal: "-", higherIsBetter: true))
    }
  }

  return rows
}

/// 1,000 calls of a plugin that sleeps 100 ms, 64 at a time: ideal 1000/64 x 0.1 s.
private func sleeperRow(sleeper: String, request: [UInt8], runner: ProcessRunner) async throws -> BenchRow {
  let ideal = (1000.0 / 64.0).rounded(.up) * 0.1
  let tSleep = try await medianAsync(runs: 3) {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<1000 {
        if i >= 64 { try await group.next() }
        group.addTask {
          _ = try await runner.run(ProcessSpec(executable: sleeper, input: request, timeout: .seconds(10)))
        }
      }
      try await group.waitForAll()
    }
  }
  return
    BenchRow(
      suite: "runner", name: "1,000 calls of a 100 ms plugin, 64 in flight", value: tSleep, unit: "s",
      baselineName: "ideal", baselineValue: ideal, goal: "<= 1.2x")
}

/// Timeout precision: a tree whose grandchild ignores SIGTERM and holds stdout.
private func timeoutRows(runner: ProcessRunner) async throws -> [BenchRow] {
  var rows: [BenchRow] = []
  var overshoots: [Double] = []
  for _ in 0..<10 {
    let spec = ProcessSpec(
      executable: "/bin/sh", arguments: ["-c", "sh -c 'trap \"\" TERM; sleep 100' & trap '' TERM; sleep 100"],
      environment: ["PATH": "/usr/bin:/bin"], timeout: .milliseconds(200))
    let t0 = now()
    let out = try await runner.run(spec)
    overshoots.append((now() - t0 - 0.2) * 1000)
    guard out.stopReason == .timedOut else { throw BenchError("the hung tree was not timed out") }
  }
  overshoots.sort()
  rows.append(
    BenchRow(
      suite: "runner", name: "timeout: hung tree gone after the limit (median of 10)", value: overshoots[5], unit: "ms",
      baselineName: "grace before SIGKILL", baselineValue: 200, goal: "< 500 ms"))
  rows.append(
    BenchRow(
      suite: "runner", name: "timeout: hung tree gone after the limit (worst of 10)", value: overshoots[9], unit: "ms",
      baselineName: "grace before SIGKILL", baselineValue: 200, goal: "< 500 ms"))
  return rows
}

/// Median wall time of an async body.
func medianAsync(runs: Int, _ body: () async throws -> Void) async rethrows -> Double {
  var times: [Double] = []
  for _ in 0..<runs {
    let t0 = now()
    try await body()
    times.append(now() - t0)
  }
  times.sort()
  return times[times.count / 2]
}

/// Foundation's simplest pattern, for comparison only (it deadlocks past 64 KiB of output and has no time limit):
/// write the request, close stdin, read stdout to the end, wait for the exit. Runs on a thread of its own.
func naiveFoundationLoop(_ path: String, request: [UInt8], n: Int) throws -> Double {
  let t0 = now()
  for _ in 0..<n {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    let input = Pipe()
    let output = Pipe()
    p.standardInput = input
    p.standardOutput = output
    p.standardError = FileHandle.nullDevice
    try p.run()
    try input.fileHandleForWriting.write(contentsOf: request)
    try input.fileHandleForWriting.close()
    _ = try output.fileHandleForReading.readToEnd()
    p.waitUntilExit()
  }
  return now() - t0
}
