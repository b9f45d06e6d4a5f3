import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import ToolhostHistory
import ToolhostJSON
import ToolhostSystem

/// The chat page's cost (issue 33), in the same run against the same fakellm and the same tiny C plugin:
///
/// - **A turn with a tool call** through the real `toolhost chat --json` (a prompt line on stdin until its
///   `response` event on stdout) and through the real `toolhost chat --web` (a `POST` of the message until its
///   `done` event on the event stream), each going on in one chat, interleaved in blocks (the same number of turns
///   each, so their transcripts grow alike). The page's overhead is the difference of the medians; the goal is at
///   most 5 ms.
/// - **First paint with 1,000 chats** in the history: headless Chromium loads the page (Selenium, as the tests do)
///   and reads when the chat list was drawn (the page's `chats-drawn` mark) and the first contentful paint, both
///   from the start of the navigation; the median of 7 loads. The goal is 0.5 s.
func webBenchmarks() async throws -> [BenchRow] {
  let binary = try toolhostBesideThisBinary()
  let exe = try compileTinyLinePlugin()
  let root = benchDir + "/web-suite"
  try? FileManager.default.removeItem(atPath: root)
  let plugins = root + "/plugins"
  try FileManager.default.createDirectory(atPath: plugins + "/tiny", withIntermediateDirectories: true)
  try """
  {"manifestVersion": 1, "command": "\(exe)", "tools": [{"name": "tinyWeb", "description": "tiny",
   "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
   "annotations": {"readOnlyHint": true}}]}
  """.write(toFile: plugins + "/tiny/toolhost.json", atomically: false, encoding: .utf8)
  let server = try await BenchFakeLLM.start()
  defer { server.stop() }
  var environment = ProcessInfo.processInfo.environment
  environment["HOME"] = root + "/home"
  environment["XDG_CONFIG_HOME"] = root + "/home/config"
  environment["XDG_DATA_HOME"] = root + "/home/data"
  environment["XDG_STATE_HOME"] = root + "/home/state"
  environment["TOOLHOST_API_KEY"] = "bench"
  environment["NO_COLOR"] = "1"
  let common = ["--plugins", plugins, "--model", "bench", "--base-url", server.baseURL]

  let terminal = try TerminalChat(binary: binary, arguments: ["chat", "--json"] + common, environment: environment)
  defer { terminal.stop() }
  let page = try await PageChat(
    binary: binary, arguments: ["chat", "--web", "--no-open"] + common, environment: environment)
  defer { page.stop() }
  var terminalTimes: [Double] = []
  var pageTimes: [Double] = []
  // Warm-up: the first turns start the plugin's path, the HTTP clients and the history.
  for i in 0..<3 {
    _ = try await terminal.turn("bench-web warm \(i)")
    _ = try await page.turn("bench-web warm \(i)")
  }
  for block in 0..<4 {
    for i in 0..<10 { terminalTimes.append(try await terminal.turn("bench-web t\(block)-\(i)")) }
    for i in 0..<10 { pageTimes.append(try await page.turn("bench-web p\(block)-\(i)")) }
  }
  let (t50, p50) = (median(terminalTimes) * 1000, median(pageTimes) * 1000)
  var rows = [
    BenchRow(suite: "web", name: "turn with a tool call: terminal chat (p50)", value: t50, unit: "ms"),
    BenchRow(
      suite: "web", name: "turn with a tool call: the page (p50)", value: p50, unit: "ms",
      baselineName: "terminal chat", baselineValue: t50),
    BenchRow(
      suite: "web", name: "the page's overhead per turn (p50 difference)", value: p50 - t50, unit: "ms",
      goal: "≤ 5 ms", showsRatio: false),
  ]
  page.stop()
  terminal.stop()

  // 1,000 chats, then the page's first paint with its chat list.
  let history = try ChatHistory.open(at: ChatHistory.defaultPath(environment: environment))
  for i in 0..<1000 {
    let id = try history.startChat(.init(command: "chat", model: "bench"))
    try history.setTitle("Chat number \(i) about the weather", source: .model, for: id)
  }
  let loaded = try await PageChat(
    binary: binary, arguments: ["chat", "--web", "--no-open"] + common, environment: environment, enter: false)
  defer { loaded.stop() }
  let paint = try firstPaint(url: loaded.url, shots: root + "/shots")
  rows += [
    BenchRow(
      suite: "web", name: "first paint, 1,000 chats: chat list drawn (p50)", value: paint.drawn, unit: "ms",
      goal: "≤ 500 ms", showsRatio: false),
    BenchRow(
      suite: "web", name: "first paint, 1,000 chats: first contentful paint (p50)", value: paint.contentful, unit: "ms",
      showsRatio: false),
  ]
  return rows
}

/// `toolhost chat --json` with its stdin and stdout piped.
private final class TerminalChat: Sendable {
  let process: Process
  let input: FileHandle
  /// The times `response` events arrived, in order.
  private let responses = Arrivals()
  private let count = Atomic<Int>(0)

  init(binary: String, arguments: [String], environment: [String: String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = environment
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    try process.run()
    self.process = process
    input = stdin.fileHandleForWriting
    let output = stdout.fileHandleForReading
    let responses = self.responses
    Thread.detachNewThread {
      var pending = Data()
      while true {
        let chunk = output.availableData
        if chunk.isEmpty { break }
        pending += chunk
        while let newline = pending.firstIndex(of: 0x0A) {
          let line = pending[pending.startIndex..<newline]
          pending.removeSubrange(pending.startIndex...newline)
          if line.range(of: Data(#""type":"response""#.utf8)) != nil { responses.add(now()) }
        }
      }
      responses.finish()
    }
  }

  /// One prompt: seconds from writing it to its response event.
  func turn(_ prompt: String) async throws -> Double {
    let start = now()
    input.write(Data("\(prompt)\n".utf8))
    let index = count.add(1, ordering: .relaxed).oldValue
    guard let end = await responses.wait(for: index) else { throw BenchError("toolhost chat ended") }
    return end - start
  }

  func stop() {
    if process.isRunning { kill(process.processIdentifier, SIGTERM) }
    process.waitUntilExit()
  }
}

/// `toolhost chat --web`, entered with its printed link (traded for the session secret, as the page does), its event
/// stream open.
private final class PageChat: Sendable {
  let process: Process
  let url: String
  let base: String
  /// `Bearer SECRET`.
  let authorization: String
  let client: HTTPClient
  /// The times `done` events arrived, in order.
  private let dones = Arrivals()
  private let count = Atomic<Int>(0)
  /// The chat the first message made.
  private let chat = Mutex<Int64?>(nil)
  private let reader: Task<Void, Never>?

  /// Starts the page's server; with `enter`, trades the link for the secret and opens the event stream.
  init(binary: String, arguments: [String], environment: [String: String], enter: Bool = true) async throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = environment
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    self.process = process
    var said = ""
    while !said.contains("#token=") || !said.contains("\n") {
      let chunk = stdout.fileHandleForReading.availableData
      if chunk.isEmpty { throw BenchError("toolhost chat --web ended: \(said)") }
      said += String(decoding: chunk, as: UTF8.self)
    }
    guard let found = said.range(of: #"http://127\.0\.0\.1:[0-9]+/#token=[0-9a-f]+"#, options: .regularExpression)
    else { throw BenchError("toolhost chat --web printed no address: \(said)") }
    let printed = String(said[found])
    url = printed
    let marker = printed.range(of: "/#token=")
    base = String(printed[..<(marker?.lowerBound ?? printed.endIndex)])
    let link = marker.map { String(printed[$0.upperBound...]) } ?? ""
    var configuration = HTTPClient.Configuration()
    configuration.redirectConfiguration = .disallow
    client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    let dones = self.dones
    guard enter else {
      authorization = ""
      reader = nil
      return
    }
    var trade = HTTPClientRequest(url: base + "/api/session")
    trade.method = .POST
    trade.headers.add(name: "origin", value: base)
    trade.headers.add(name: "content-type", value: "application/json")
    trade.body = .bytes(ByteBuffer(string: JSONValue.object(["link": .string(link)]).serialized()))
    let entered = try await client.execute(trade, timeout: .seconds(10))
    let answer = try await entered.body.collect(upTo: 4096)
    guard let secret = (try? JSONValue.parse(Array(buffer: answer)))?["secret"]?.stringValue else {
      throw BenchError("the link gave no session secret (status \(entered.status))")
    }
    authorization = "Bearer " + secret
    var events = HTTPClientRequest(url: base + "/api/events")
    events.headers.add(name: "authorization", value: authorization)
    let response = try await client.execute(events, timeout: .hours(1))
    reader = Task {
      var text = ""
      do {
        for try await chunk in response.body {
          text += String(buffer: chunk)
          while let range = text.range(of: "\n\n") {
            let event = text[..<range.lowerBound]
            if event.contains(#""type":"done""#) { dones.add(now()) }
            text.removeSubrange(..<range.upperBound)
          }
        }
      } catch {}
      dones.finish()
    }
  }

  /// One message, in the chat the first one made: seconds from sending it to its `done` event.
  func turn(_ text: String) async throws -> Double {
    let chat = self.chat.withLock { $0 }.map(String.init) ?? "new"
    var request = HTTPClientRequest(url: base + "/api/chats/\(chat)/messages")
    request.method = .POST
    request.headers.add(name: "authorization", value: authorization)
    request.headers.add(name: "origin", value: base)
    request.headers.add(name: "content-type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: JSONValue.object(["text": .string(text)]).serialized()))
    let start = now()
    let response = try await client.execute(request, timeout: .seconds(30))
    guard response.status.code == 202 else { throw BenchError("the page refused the message: \(response.status)") }
    let answer = try await response.body.collect(upTo: 4096)
    if let id = (try? JSONValue.parse(Array(buffer: answer)))?["chat"]?.integerValue {
      self.chat.withLock { $0 = id }
    }
    let index = count.add(1, ordering: .relaxed).oldValue
    guard let end = await dones.wait(for: index) else { throw BenchError("the event stream ended") }
    return end - start
  }

  func stop() {
    reader?.cancel()
    if process.isRunning { kill(process.processIdentifier, SIGINT) }
    process.waitUntilExit()
    try? client.syncShutdown()
  }
}

/// The times something arrived, in order, and waiting for the n-th.
private final class Arrivals: Sendable {
  private struct State {
    var times: [Double] = []
    var waiter: (index: Int, continuation: CheckedContinuation<Double?, Never>)?
    var finished = false
  }
  private let state = Mutex(State())

  func add(_ time: Double) {
    let resumed = state.withLock { s -> (CheckedContinuation<Double?, Never>, Double)? in
      s.times.append(time)
      guard let waiter = s.waiter, waiter.index < s.times.count else { return nil }
      s.waiter = nil
      return (waiter.continuation, s.times[waiter.index])
    }
    resumed.map { $0.0.resume(returning: $0.1) }
  }

  func finish() {
    let waiter = state.withLock { s in
      s.finished = true
      defer { s.waiter = nil }
      return s.waiter
    }
    waiter?.continuation.resume(returning: nil)
  }

  /// The time of arrival `index` (from 0), once it came; `nil` when none will.
  func wait(for index: Int) async -> Double? {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { s -> Double?? in
        if index < s.times.count { return .some(s.times[index]) }
        if s.finished { return .some(nil) }
        s.waiter = (index, continuation)
        return .none
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }
}

/// Loads the page 7 times in headless Chromium (web_browser.py's `paint` step); the medians, in ms.
private func firstPaint(url: String, shots: String) throws -> (drawn: Double, contentful: Double) {
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  let script = root.appendingPathComponent("Tests/ToolhostTestSupport/Peers/web_browser.py").path
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["python3", script, "--url", url, "--shots", shots, "open", "paint"]
  let stdout = Pipe()
  process.standardOutput = stdout
  process.standardError = FileHandle.nullDevice
  try process.run()
  let output = stdout.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
  guard process.terminationStatus == 0,
    let paint = lines.compactMap({ try? JSONValue.parse(String($0)) }).first(where: { $0["step"] == "paint" }),
    let drawn = paint["chatsDrawnMs"]?.doubleValue, let contentful = paint["contentfulMs"]?.doubleValue
  else {
    throw BenchError(
      "the browser could not measure the page (needs chromium, chromium-driver, selenium): \(lines.joined(separator: "\n"))"
    )
  }
  guard paint["chats"]?.integerValue == 1000 else {
    throw BenchError("the page listed \(paint["chats"] ?? .null) chats")
  }
  return (drawn, contentful)
}
