// The local model: server start-up, first-token latency and generation speed (suite `local`), and tool-call
// accuracy of guided against native tool calling (suite `toolcalls`). Both need `scripts/install-local-model`.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ToolhostEval
import ToolhostJSON
import ToolhostLocal
import ToolhostMCP
import ToolhostOpenAI
import ToolhostPlugins
import ToolhostSession
import ToolhostSystem
import ToolhostTools

private func localConfiguration() throws -> LocalModelConfiguration {
  try LocalModelConfiguration.named(ProcessInfo.processInfo.environment["TOOLHOST_BENCH_MODEL"] ?? "local")
}

private func note(_ text: String) {
  FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// The example plugins, MCP servers included, as `toolhost chat` run in the checkout offers them.
private func examplePlugins() async -> PluginCatalog {
  await PluginCatalog.discover(
    folders: [FileManager.default.currentDirectoryPath + "/plugins"], mcp: MCPPlugins.Loader())
}

// MARK: - Speed

/// Server start (process start to the first answer of `/v1/models`, three starts), then on one server: the time to
/// the first streamed token of a short prompt and of the guided prompt for the example plugins, and generation
/// speed through toolhost against a raw streamed POST of the same body in the same run.
func localBenchmarks() async throws -> [BenchRow] {
  let configuration = try localConfiguration()
  var starts: [Double] = []
  for _ in 0..<3 {
    try await LocalModel.withModel(configuration) { model in
      starts.append(try await model.start().startup.seconds)
    }
  }
  var rows = [
    BenchRow(
      suite: "local", name: "server start to first answer (median of 3)", value: median(starts), unit: "s")
  ]
  rows += try await LocalModel.withModel(configuration) { model in
    let endpoint = try await model.start()
    return try await HTTPClient.withHTTPClient { raw in
      try await measureSpeed(model: model, endpoint: endpoint, raw: raw)
    }
  }
  return rows
}

/// Streams `request` through the model: (seconds to the first text, seconds from first to last text, deltas).
private func timedStream(_ model: LocalModel, _ request: ModelRequest) async throws -> (
  first: Double, rest: Double, deltas: Int
) {
  let t0 = now()
  var first: Double?
  var last = t0
  var deltas = 0
  for try await event in model.streamTurn(for: request) {
    if case .textDelta = event {
      let t = now()
      if first == nil { first = t }
      last = t
      deltas += 1
    }
  }
  return ((first ?? now()) - t0, last - (first ?? last), deltas)
}
/// The same body POSTed with a plain HTTP client: (seconds to the first content chunk, first to last, chunks).
private func timedRawStream(
  _ request: ModelRequest, endpoint: LocalModelServer.Endpoint, raw: HTTPClient, modelName: String
) async throws -> (first: Double, rest: Double, deltas: Int) {
  let body = ChatCompletions.requestBody(for: request, model: modelName, stream: true)
  var post = HTTPClientRequest(url: endpoint.baseURL + "/chat/completions")
  post.method = .POST
  post.headers.add(name: "Content-Type", value: "application/json")
  post.headers.add(name: "Authorization", value: "Bearer \(endpoint.key)")
  post.body = .bytes(Array(body.serialized().utf8))
  let t0 = now()
  let response = try await raw.execute(post, timeout: .seconds(300))
  var first: Double?
  var last = t0
  var chunks = 0
  var pending = ""
  for try await buffer in response.body {
    pending += String(buffer: buffer)
    while let newline = pending.firstIndex(of: "\n") {
      let line = pending[..<newline]
      pending = String(pending[pending.index(after: newline)...])
      guard line.hasPrefix("data: {"), let chunk = try? JSONValue.parse(String(line.dropFirst(6))) else {
        continue
      }
      if let content = chunk["choices"]?[0]?["delta"]?["content"]?.stringValue, !content.isEmpty {
        let t = now()
        if first == nil { first = t }
        last = t
        chunks += 1
      }
    }
  }
  return ((first ?? now()) - t0, last - (first ?? last), chunks)
}

private func measureSpeed(model: LocalModel, endpoint: LocalModelServer.Endpoint, raw: HTTPClient) async throws
  -> [BenchRow]
{
  let modelName = URL(fileURLWithPath: model.configuration.server.modelPath).lastPathComponent
  func request(_ prompt: String, tools: [Transcript.ToolDefinition] = [], maxTokens: Int) -> ModelRequest {
    ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: prompt))]), tools: tools, toolChoice: .auto,
      options: GenerationOptions(temperature: 0, maximumResponseTokens: maxTokens))
  }
  var rows: [BenchRow] = []
  // Warm up (the first request maps the model's pages in).
  _ = try await timedStream(model, request("Say hi.", maxTokens: 4))

  // First token of a short prompt: a different prompt each time, so no cached prefix beyond the chat template.
  var firstShort: [Double] = []
  for (i, city) in ["Lisbon", "Nairobi", "Lima", "Hanoi", "Quebec"].enumerated() {
    let r = try await timedStream(model, request("In one sentence, what is \(city) known for? (\(i))", maxTokens: 8))
    firstShort.append(r.first)
  }
  rows.append(
    BenchRow(
      suite: "local", name: "first token, short prompt (~30 tokens)", value: median(firstShort) * 1000,
      unit: "ms"))

  // First token of the guided prompt with every example plugin's tool (a call starts with `{"tool"`, which is not
  // streamed as text, so this asks a question the model answers).
  let catalog = await examplePlugins()
  let definitions = LanguageModelSession.definitions(of: catalog.registry())
  await catalog.shutdown()  // only the definitions are needed
  var firstGuidedCold: Double = 0
  var firstGuidedWarm: [Double] = []
  for (i, question) in ["What is the capital of Italy?", "Who wrote Hamlet?", "What is 7 times 6?"].enumerated() {
    let r = try await timedStream(model, request(question, tools: definitions, maxTokens: 24))
    if i == 0 { firstGuidedCold = r.first } else { firstGuidedWarm.append(r.first) }
  }
  rows.append(
    BenchRow(
      suite: "local", name: "first answer token, guided, \(definitions.count) tools, cold",
      value: firstGuidedCold * 1000,
      unit: "ms"))
  rows.append(
    BenchRow(
      suite: "local", name: "first answer token, guided, tools prefix cached", value: median(firstGuidedWarm) * 1000,
      unit: "ms"))

  // Generation speed: a long answer, through toolhost and raw, interleaved.
  var viaToolhost: [Double] = []
  var viaRaw: [Double] = []
  let long = request("Count from 1 to 60, separated by commas.", maxTokens: 160)
  for _ in 0..<3 {
    let a = try await timedStream(model, long)
    if a.deltas > 1 { viaToolhost.append(Double(a.deltas - 1) / a.rest) }
    let b = try await timedRawStream(long, endpoint: endpoint, raw: raw, modelName: modelName)
    if b.deltas > 1 { viaRaw.append(Double(b.deltas - 1) / b.rest) }
  }
  rows.append(
    BenchRow(
      suite: "local", name: "generation, streamed through toolhost", value: median(viaToolhost), unit: "tokens/s",
      baselineName: "raw HTTP stream", baselineValue: median(viaRaw), higherIsBetter: true))
  return rows
}

// MARK: - Tool-call accuracy

private struct EvalScore {
  var decision = 0
  var tool = 0
  var valid = 0
  var arguments = 0
  var unneeded = 0
  var times: [Double] = []
}

/// Asks the local model for the first turn of each evaluation prompt, with every example plugin's tool offered,
/// guided and native, and scores it: the right decision (call or no call), the right tool, arguments valid for
/// the tool's schema (toolhost's validator), and the expected argument values. Per-prompt results go to stderr.
func toolCallBenchmarks() async throws -> [BenchRow] {
  let catalog = await examplePlugins()
  let registry = catalog.registry()
  let definitions = LanguageModelSession.definitions(of: registry)
  var configuration = try localConfiguration()
  var scores: [ToolCallingStrategy: EvalScore] = [:]
  let strategies = (ProcessInfo.processInfo.environment["TOOLHOST_EVAL_MODES"] ?? "guided,native")
    .split(separator: ",").compactMap { ToolCallingStrategy(rawValue: String($0)) }
  for strategy in strategies {
    configuration.toolCalling = strategy
    scores[strategy] = try await LocalModel.withModel(configuration) { model in
      try await model.start()
      var score = EvalScore()
      for c in everydayPrompts {
        let request = ModelRequest(
          transcript: Transcript(entries: [.prompt(.init(text: c.prompt))]), tools: definitions, toolChoice: .auto)
        let t0 = now()
        let turn = try await model.turn(for: request)
        score.times.append(now() - t0)
        let call = turn.toolCalls.first
        var verdict: [String] = []
        if (call == nil) == (c.tool == nil) {
          score.decision += 1
        } else {
          verdict.append("wrong decision")
        }
        if call != nil && c.tool == nil { score.unneeded += 1 }
        if let expected = c.tool, let call {
          if call.toolName == expected {
            score.tool += 1
            let issues = registry.validate(call.arguments, for: call.toolName)
            if issues.isEmpty { score.valid += 1 } else { verdict.append("invalid: \(issues[0])") }
            let mismatched = c.expect.filter { !matches(call.arguments[$0.key], $0.value) }.map(\.key)
            if mismatched.isEmpty { score.arguments += 1 } else { verdict.append("arguments off: \(mismatched)") }
          } else {
            verdict.append("wrong tool")
          }
        }
        let got = call.map { "\($0.toolName) \($0.argumentsJSON)" } ?? "answer: \(turn.text.prefix(70))"
        note(
          "  \(strategy.rawValue) \(verdict.isEmpty ? "ok " : "BAD") \(c.prompt) → \(got)"
            + (verdict.isEmpty ? "" : "  [\(verdict.joined(separator: "; "))]"))
      }
      return score
    }
  }
  await catalog.shutdown()
  let calling = everydayPrompts.filter { $0.tool != nil }.count
  let total = everydayPrompts.count
  var rows: [BenchRow] = []
  func percent(_ n: Int, of d: Int) -> Double { d == 0 ? 0 : Double(n) * 100 / Double(d) }
  let g = scores[.guided] ?? EvalScore()
  let n = scores[.native] ?? EvalScore()
  func row(_ name: String, _ gv: Double, _ nv: Double, _ unit: String, higher: Bool = true) -> BenchRow {
    BenchRow(
      suite: "toolcalls", name: name, value: gv, unit: unit, baselineName: "native", baselineValue: nv,
      higherIsBetter: higher, showsRatio: unit == "s")
  }
  rows.append(
    row(
      "guided: right decision (call or not), \(total) prompts", percent(g.decision, of: total),
      percent(n.decision, of: total), "%"))
  rows.append(
    row(
      "guided: right tool, \(calling) prompts needing one", percent(g.tool, of: calling), percent(n.tool, of: calling),
      "%"))
  rows.append(
    row("guided: arguments valid for the schema", percent(g.valid, of: calling), percent(n.valid, of: calling), "%"))
  rows.append(
    row(
      "guided: expected argument values", percent(g.arguments, of: calling), percent(n.arguments, of: calling), "%"))
  rows.append(
    row(
      "guided: calls for the \(total - calling) prompts needing none", Double(g.unneeded), Double(n.unneeded),
      "calls", higher: false))
  rows.append(row("guided: median time per turn", median(g.times), median(n.times), "s", higher: false))
  return rows
}
