// Session turn overhead against fakellm (see BENCHMARKS.md).
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// Host overhead of one session turn: a turn through `LanguageModelSession` + `OpenAIModel` against fakellm, minus
/// a raw AsyncHTTPClient POST of the same request body to the same server, interleaved in the same run (medians).
///
/// Rows: a plain turn (no tool call) non-streamed and streamed, a turn with one in-process tool call (two model
/// requests, against two raw round trips), and the loop alone with an instant in-process model (no HTTP).
/// Needs `python3` with `fakellm==0.3.5`; the server is started on a free port and stopped by PID.
func sessionBenchmarks() async throws -> [BenchRow] {
  let server = try await BenchFakeLLM.start()
  do {
    let rows = try await measureSession(baseURL: server.baseURL)
    server.stop()
    return rows
  } catch {
    server.stop()
    throw error
  }
}

private struct BenchAdd: Tool {
  let name = "add"
  let description = "Adds two integers."
  let parameters: JSONValue = [
    "type": "object", "required": ["a", "b"],
    "properties": ["a": ["type": "integer"], "b": ["type": "integer"]],
  ]
  func call(arguments: JSONValue) async throws -> JSONValue {
    ["sum": .integer((arguments["a"]?.integerValue ?? 0) + (arguments["b"]?.integerValue ?? 0))]
  }
}

private struct InstantModel: LanguageModel {
  let displayName = "instant"
  func turn(for request: ModelRequest) async throws -> ModelTurn {
    ModelTurn(text: "ok", finishReason: "stop")
  }
}

private func measureSession(baseURL: String) async throws -> [BenchRow] {
  let configuration = OpenAIConfiguration(baseURL: baseURL, model: "bench", apiKey: "bench")
  let registry = try ToolRegistry([BenchAdd()])
  return try await HTTPClient.withHTTPClient { raw in
    try await measure(configuration: configuration, registry: registry, raw: raw)
  }
}

/// POSTs `body` to `url` with a plain HTTP client and reads the whole reply: the raw baseline of a request.
private func postRaw(_ body: [UInt8], to url: String, with raw: HTTPClient) async throws {
  var request = HTTPClientRequest(url: url)
  request.method = .POST
  request.headers.add(name: "Content-Type", value: "application/json")
  request.headers.add(name: "Authorization", value: "Bearer bench")
  request.body = .bytes(body)
  let response = try await raw.execute(request, timeout: .seconds(30))
  _ = try await response.body.collect(upTo: 16 << 20)
}

private func measure(configuration: OpenAIConfiguration, registry: ToolRegistry, raw: HTTPClient)
  async throws
  -> [BenchRow]
{
  let url = configuration.chatCompletionsURL
  func post(_ body: [UInt8]) async throws { try await postRaw(body, to: url, with: raw) }
  func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let t0 = now()
    try await body()
    return now() - t0
  }

  return try await OpenAIModel.withModel(configuration) { model in
    // The same body the session sends for a plain first turn.
    func plainBody(_ i: Int, stream: Bool) -> [UInt8] {
      let transcript = Transcript(entries: [
        .instructions(Transcript.Instructions(text: "Answer briefly.")),
        .prompt(Transcript.Prompt(text: "bench-plain \(i)")),
      ])
      let request = ModelRequest(
        transcript: transcript, tools: LanguageModelSession.definitions(of: registry),
        toolChoice: .auto)
      return Array(
        ChatCompletions.requestBody(for: request, model: "bench", stream: stream).serialized()
          .utf8)
    }

    let runs = 200
    var rawWhole: [Double] = []
    var sessionWhole: [Double] = []
    var rawStream: [Double] = []
    var sessionStream: [Double] = []
    var sessionTool: [Double] = []
    for i in 0..<(runs + 20) {  // the first 20 warm up connections and caches
      let r1 = try await seconds { try await post(plainBody(i, stream: false)) }
      let s1 = try await seconds {
        let session = LanguageModelSession(
          model: model, tools: registry, instructions: "Answer briefly.")
        _ = try await session.respond(to: "bench-plain \(i)")
      }
      let r2 = try await seconds { try await post(plainBody(i, stream: true)) }
      let s2 = try await seconds {
        let session = LanguageModelSession(
          model: model, tools: registry, instructions: "Answer briefly.")
        _ = try await session.streamResponse(to: "bench-plain \(i)").collect()
      }
      let s3 = try await seconds {
        let session = LanguageModelSession(
          model: model, tools: registry, instructions: "Answer briefly.")
        _ = try await session.respond(to: "bench-tool \(i)")
      }
      if i >= 20 {
        rawWhole.append(r1)
        sessionWhole.append(s1)
        rawStream.append(r2)
        sessionStream.append(s2)
        sessionTool.append(s3)
      }
    }

    // The loop alone: an instant in-process model, no HTTP.
    let instant = LanguageModelSession(
      model: InstantModel(), tools: registry, instructions: "Answer briefly.")
    let loops = 2000
    let t0 = now()
    for i in 0..<loops { _ = try await instant.respond(to: "p\(i)") }
    let loopMicros = (now() - t0) / Double(loops) * 1e6

    return sessionRows("plain turn, whole reply", sessionWhole, rawWhole, rounds: 1)
      + sessionRows("plain turn, streamed (SSE)", sessionStream, rawStream, rounds: 1)
      + sessionRows("turn with one tool call (2 requests)", sessionTool, rawWhole, rounds: 2)
      + [
        BenchRow(
          suite: "session", name: "loop alone, instant model", value: loopMicros, unit: "µs/turn")
      ]
  }
}

/// A session measurement's rows: its median turn against `rounds` raw HTTP requests, and the host's overhead.
private func sessionRows(_ name: String, _ session: [Double], _ raw: [Double], rounds: Double) -> [BenchRow] {
  let ms = 1000.0
  let turn = median(session) * ms
  let baseline = rounds * median(raw) * ms
  return [
    BenchRow(
      suite: "session", name: name, value: turn, unit: "ms",
      baselineName: rounds == 1 ? "raw HTTP" : "2 × raw HTTP", baselineValue: baseline),
    BenchRow(suite: "session", name: "  host overhead", value: turn - baseline, unit: "ms", goal: "< 5 ms"),
  ]
}

/// fakellm on a free port, through the tests' launcher script (which clears the inherited signal mask and exits
/// with its parent).
final class BenchFakeLLM {
  let process: Process
  let port: Int
  let directory: URL
  var baseURL: String { "http://127.0.0.1:\(port)/v1" }

  private init(process: Process, port: Int, directory: URL) {
    self.process = process
    self.port = port
    self.directory = directory
  }

  static func start() async throws -> BenchFakeLLM {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent()
      .deletingLastPathComponent()
    let script = root.appendingPathComponent("Tests/ToolhostTestSupport/Peers/run_fakellm.py")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "toolhost-bench-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let rules = """
      rules:
        - name: title
          when: {messages_contain: "You write titles"}
          respond: {content: "A benchmark chat title"}
        - name: web-first
          when: {messages_contain: "bench-web", turn: 1}
          respond:
            tool_calls:
              - {name: tinyWeb, arguments: {city: Boston}}
        - name: web-next
          when: {messages_contain: "bench-web", previous_message_contains: "bench done"}
          respond:
            tool_calls:
              - {name: tinyWeb, arguments: {city: Boston}}
        - name: web-answer
          when: {messages_contain: "bench-web"}
          respond: {content: "bench done"}
        - name: plain
          when: {messages_contain: "bench-plain"}
          respond: {content: "ok"}
        - name: tool
          when: {messages_contain: "bench-tool", turn: 1}
          respond:
            tool_calls:
              - {name: add, arguments: {a: 1, b: 2}}
        - name: tool-answer
          when: {messages_contain: "bench-tool"}
          respond: {content: "ok"}
      """
    let config = directory.appendingPathComponent("rules.yaml")
    try Data(rules.utf8).write(to: config)
    let port = try freePort()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, "--port", "\(port)", "--config", config.path]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let server = BenchFakeLLM(process: process, port: port, directory: directory)
    for _ in 0..<300 {
      if !process.isRunning { break }
      if canConnect(port) {
        try await Task.sleep(for: .milliseconds(200))
        return server
      }
      try await Task.sleep(for: .milliseconds(100))
    }
    server.stop()
    throw BenchError(
      "fakellm did not start (needs python3 with fakellm==0.3.5: pip install fakellm==0.3.5)")
  }

  func stop() {
    let pid = process.processIdentifier
    if process.isRunning, pid > 0 { kill(pid, SIGTERM) }
    for _ in 0..<150 where process.isRunning { usleep(20_000) }
    if process.isRunning, pid > 0 { kill(pid, SIGKILL) }
    process.waitUntilExit()
    try? FileManager.default.removeItem(at: directory)
  }

  static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard ok else { throw BenchError("cannot find a free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  static func canConnect(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}
