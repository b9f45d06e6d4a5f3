import Foundation

// toolhost-bench [suite ...]: runs the named suites (default: all) and prints one table.
// Suites: json, discovery, validation, runner, persistent, session (run by default), serve (tools/call through
// `toolhost serve --mcp` over stdio and HTTP; needs the release toolhost binary beside this one), web (a turn through
// `toolhost chat --web` against the terminal chat, and the page's first paint with 1,000 chats in Chromium), and local,
// toolcalls, ask (the local model's speed, tool-call accuracy and the end-to-end `toolhost ask` eval: minutes each,
// and they need scripts/install-local-model), and answers (issue 30: every call a question needs, nothing invented,
// answers grounded in the results; the questions of Benchmarks/answers.json), and bfcl (issue 49: a seeded sample of
// the BFCL v4 single-turn categories through `toolhost ask`, scored with BFCL's AST rules; scripts/fetch-bfcl first).
let defaults = ["json", "discovery", "validation", "runner", "persistent", "session"]
let all = defaults + ["serve", "web", "local", "toolcalls", "ask", "answers", "bfcl"]
var wanted = Array(CommandLine.arguments.dropFirst())
if wanted.isEmpty { wanted = defaults }
if let bad = wanted.first(where: { !all.contains($0) }) {
  FileHandle.standardError.write(Data("unknown suite \(bad); suites: \(all.joined(separator: ", "))\n".utf8))
  exit(64)
}
var rows: [BenchRow] = []
for suite in wanted {
  FileHandle.standardError.write(Data("running \(suite)...\n".utf8))
  do {
    switch suite {
    case "json": rows += jsonBenchmarks()
    case "discovery": rows += try await discoveryBenchmarks()
    case "validation": rows += try validationBenchmarks()
    case "runner": rows += try await runnerBenchmarks()
    case "persistent": rows += try await persistentBenchmarks()
    case "session": rows += try await sessionBenchmarks()
    case "serve": rows += try await serveBenchmarks()
    case "web": rows += try await webBenchmarks()
    case "local": rows += try await localBenchmarks()
    case "toolcalls": rows += try await toolCallBenchmarks()
    case "ask": rows += try await askEvalBenchmarks()
    case "answers": rows += try await answersEvalBenchmarks()
    case "bfcl": rows += try await bfclBenchmarks()
    default: break
    }
  } catch {
    FileHandle.standardError.write(Data("\(suite) failed: \(error)\n".utf8))
    exit(1)
  }
}
var info = utsname()
uname(&info)
let machine = withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
print(
  "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB, \(machine)"
)
printTable(rows)
