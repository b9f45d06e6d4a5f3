import Foundation
import ToolhostJSON
import ToolhostPlugins
import ToolhostTools

/// Persistent plugins against spawning per call: the same tiny C plugin (it answers one request read to EOF, or,
/// with `TOOLHOST_PERSISTENT=1`, one reply line per request line), called through the full tool path (validation,
/// request, reply parsing) in the same run: sequential latency (median and p90 of every call of 5 interleaved
/// rounds) and throughput with 8 calls in flight (median of 3 runs).
func persistentBenchmarks() async throws -> [BenchRow] {
  let root = try writePersistentSuitePlugins(command: try compileTinyLinePlugin())
  let catalog = await PluginCatalog.discover(folders: [root])
  let registry = catalog.registry()
  let arguments: JSONValue = ["city": "Boston"]
  for name in ["tinySpawned", "tinyPersistent", "tinyPool"] {
    // Warm up; this starts the persistent processes.
    let out = try await registry.call(name, arguments: arguments)
    guard out.value?["ok"] == true else {
      throw BenchError("\(name) gave an unexpected reply: \(out)")
    }
  }

  // Sequential latency of each call, interleaved rounds; medians are robust against other load on the machine.
  let spawnCalls = 300
  let keptCalls = 3000
  var spawned: [Double] = []
  var kept: [Double] = []
  for _ in 0..<5 {
    for _ in 0..<spawnCalls {
      let t0 = now()
      _ = try await registry.call("tinySpawned", arguments: arguments)
      spawned.append((now() - t0) * 1e6)
    }
    for _ in 0..<keptCalls {
      let t0 = now()
      _ = try await registry.call("tinyPersistent", arguments: arguments)
      kept.append((now() - t0) * 1e6)
    }
  }
  spawned.sort()
  kept.sort()
  func percentile(_ a: [Double], _ p: Double) -> Double {
    a[min(a.count - 1, Int(Double(a.count) * p))]
  }
  var rows = [
    BenchRow(
      suite: "persistent", name: "sequential call, persistent plugin (median)",
      value: percentile(kept, 0.5),
      unit: "µs/call", baselineName: "spawn per call", baselineValue: percentile(spawned, 0.5),
      goal: "<= 0.05x (20x faster)"),
    BenchRow(
      suite: "persistent", name: "sequential call, persistent plugin (p90)",
      value: percentile(kept, 0.9),
      unit: "µs/call", baselineName: "spawn per call", baselineValue: percentile(spawned, 0.9),
      goal: "-"),
  ]

  // Throughput with 8 calls in flight: a pool of 2 against spawning.
  func throughput(_ tool: String, calls: Int) async throws -> Double {
    let t = try await medianAsync(runs: 3) {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<calls {
          if i >= 8 { try await group.next() }
          group.addTask { _ = try await registry.call(tool, arguments: arguments) }
        }
        try await group.waitForAll()
      }
    }
    return Double(calls) / t
  }
  let spawnRate = try await throughput("tinySpawned", calls: 1000)
  let poolRate = try await throughput("tinyPool", calls: 10_000)
  rows.append(
    BenchRow(
      suite: "persistent", name: "throughput, 8 in flight, pool of 2", value: poolRate,
      unit: "calls/s",
      baselineName: "spawn per call", baselineValue: spawnRate, goal: "-", higherIsBetter: true))

  await catalog.shutdown()
  return rows
}

/// The persistent suite's three plugins, the tiny line plugin `command` spawned per call, kept running, and kept
/// running in a pool of 2, in a folder of their own, which it returns.
private func writePersistentSuitePlugins(command exe: String) throws -> String {
  let root = benchDir + "/persistent-suite"
  func plugin(_ name: String, persistent: Bool, poolSize: Int = 1) throws {
    let dir = root + "/" + name
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let extra = persistent ? #", "persistent": true, "poolSize": \#(poolSize)"# : ""
    try """
    {"manifestVersion": 1, "command": "\(exe)"\(extra), "tools": [{"name": "\(name)", "description": "tiny",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}
    """.write(toFile: dir + "/toolhost.json", atomically: false, encoding: .utf8)
  }
  try plugin("tinySpawned", persistent: false)
  try plugin("tinyPersistent", persistent: true)
  try plugin("tinyPool", persistent: true, poolSize: 2)
  return root
}

/// Compiles the tiny plugin that answers in both modes.
func compileTinyLinePlugin() throws -> String {
  let source = benchDir + "/tinyline.c"
  let exe = benchDir + "/tinyline"
  let code = #"""
    #define _GNU_SOURCE
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>
    static const char *reply = "{\"result\": {\"ok\": true, \"n\": 42}, \"text\": \"tiny plugin reply..\"}\n";
    int main(void) {
      if (getenv("TOOLHOST_PERSISTENT")) {
        char *line = NULL;
        size_t capacity = 0;
        while (getline(&line, &capacity, stdin) > 0) {
          fputs(reply, stdout);
          fflush(stdout);
        }
        return 0;
      }
      char buf[65536];
      while (read(0, buf, sizeof buf) > 0) {}
      return write(1, reply, strlen(reply)) < 0;
    }
    """#
  return try compileC(code, source: source, executable: exe)
}
