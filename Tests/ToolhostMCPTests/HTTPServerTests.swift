import Foundation
import Synchronization
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostMCP
import ToolhostMCPHTTP
import ToolhostMCPHTTPServer
import ToolhostTestSupport

/// `MCPHTTPServer` in this process, with Swift tools, spoken to over raw sockets: clients that go away, clients that
/// read slowly, and options it refuses.
@Suite("MCP over HTTP: the server in process")
struct HTTPServerTests {
  /// Whether something happened, seen from another task.
  final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }

    /// Waits up to `seconds` for the flag; whether it was raised.
    func wait(within seconds: Double) async -> Bool {
      let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
      while !isRaised, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
      return isRaised
    }
  }

  /// Runs until cancelled, reporting progress (when asked for it) once, or every 20 ms when `reportsAllAlong`;
  /// raises `started` at once and `cancelled` when it is cancelled.
  struct Patient: Tool {
    let name = "patient"
    let description = "Waits until cancelled."
    let parameters: JSONValue = ["type": "object"]
    let started: Flag
    let cancelled: Flag
    var reportsAllAlong = false
    func call(arguments: JSONValue) async throws -> String {
      started.raise()
      var step = 0.0
      while !Task.isCancelled {
        step += 1
        if step == 1 || reportsAllAlong { ToolCallContext.current.onProgress?(name, ToolProgress(progress: step)) }
        try? await Task.sleep(for: .milliseconds(20))
      }
      cancelled.raise()
      throw CancellationError()
    }
  }

  /// Reports progress `count` times as fast as it can, each with a message of 1,000 characters, raises `reported`,
  /// then answers "done".
  struct Chatty: Tool {
    let name = "chatty"
    let description = "Reports a lot of progress."
    let parameters: JSONValue = ["type": "object"]
    let count: Int
    let reported: Flag
    func call(arguments: JSONValue) async throws -> String {
      let message = String(repeating: "x", count: 1000)
      for step in 0..<count {
        ToolCallContext.current.onProgress?(name, ToolProgress(progress: Double(step), message: message))
        if step % 100 == 0 { await Task.yield() }  // other tests share the pool's threads
      }
      reported.raise()
      return "done"
    }
  }

  /// Answers with `bytes` characters of text.
  struct Big: Tool {
    let name = "big"
    let description = "Answers with a long text."
    let parameters: JSONValue = ["type": "object", "properties": ["bytes": ["type": "integer"]]]
    func call(arguments: JSONValue) async throws -> String {
      String(repeating: "a", count: Int(arguments["bytes"]?.integerValue ?? 1))
    }
  }

  /// An `MCPHTTPServer` over `tools` on 127.0.0.1, running until ``stop()``.
  struct Running {
    let task: Task<Void, any Error>
    let port: Int

    static func start(_ tools: [any Tool], limits: MCPHTTPServer.Limits = .init()) async throws -> Running {
      let server = MCPServer(registry: try ToolRegistry(tools))
      let http = MCPHTTPServer(server: server, options: .init(port: 0, limits: limits))
      let port = Mutex<Int?>(nil)
      let task = Task { try await http.run { listening in port.withLock { $0 = listening.port } } }
      let deadline = ContinuousClock.now + .seconds(30)
      while port.withLock({ $0 }) == nil, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
      }
      guard let bound = port.withLock({ $0 }) else {
        task.cancel()
        throw TestFailure("the server did not listen")
      }
      return Running(task: task, port: bound)
    }

    func stop() async {
      task.cancel()
      _ = try? await task.value
    }
  }

  static func call(_ tool: String, progress: Bool) -> String {
    let meta = progress ? #", "_meta": {"progressToken": 7}"# : ""
    return
      #"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\#(tool)", "arguments": {}\#(meta)}}"#
  }

  static let eventStream = ["accept": "application/json, text/event-stream"]

  /// A remote server's answer is held to the call's output limit as a plugin's stdout is: over it, the call fails
  /// with outputTooLarge and that limit, and the connection goes on; a call with a limit over the transport's
  /// default (8 MiB) reads its answer whole.
  @Test func anAnswerOverTheCallsOutputLimitIsOutputTooLarge() async throws {
    let running = try await Running.start([Big()])
    let url = "http://127.0.0.1:\(running.port)/mcp"
    let connection = MCPServerConnection(
      MCPServerConfiguration(name: "big", executable: url, transport: MCPHTTPClientTransport.opener(.init(url: url))))
    func big(_ bytes: Int, limit: Int?) async throws(ToolFailure) -> ToolOutput {
      try await connection.callTool(
        "big", arguments: ["bytes": .integer(Int64(bytes))], timeout: .seconds(30), outputLimit: limit)
    }
    await #expect(throws: ToolFailure.outputTooLarge(limit: 1000)) { _ = try await big(5000, limit: 1000) }
    await #expect(throws: ToolFailure.outputTooLarge(limit: 2 << 20)) { _ = try await big(9 << 20, limit: 2 << 20) }
    await #expect(throws: ToolFailure.outputTooLarge(limit: ResourceLimits.defaultOutputBytes)) {
      _ = try await big(9 << 20, limit: nil)
    }
    #expect(try await big(10, limit: nil).text == "aaaaaaaaaa")
    #expect(try await big(17 << 20, limit: 32 << 20).text?.utf8.count == 17 << 20)
    await connection.shutdown()
    await running.stop()
  }

  /// A call answered as JSON whose client hangs up is cancelled.
  @Test func aCallWhoseClientLeavesIsCancelled() async throws {
    let (started, cancelled) = (Flag(), Flag())
    let running = try await Running.start([Patient(started: started, cancelled: cancelled)])
    let client = try RawConnection(port: running.port)
    try client.post("/mcp", body: Self.call("patient", progress: false))
    #expect(await started.wait(within: 30))
    client.hangUp()
    #expect(await cancelled.wait(within: 30), "the call went on after its client left")
    await running.stop()
  }

  /// A call answered as a stream of progress events whose client hangs up is cancelled, whether the tool still
  /// reports (the next event cannot be written) or has gone quiet (nothing is written to notice it by).
  @Test(arguments: [false, true])
  func aProgressStreamWhoseClientLeavesCancelsTheCall(reportsAllAlong: Bool) async throws {
    let (started, cancelled) = (Flag(), Flag())
    let running = try await Running.start([
      Patient(started: started, cancelled: cancelled, reportsAllAlong: reportsAllAlong)
    ])
    let client = try RawConnection(port: running.port)
    try client.post("/mcp", body: Self.call("patient", progress: true), headers: Self.eventStream)
    let first = await client.read(until: "notifications/progress", within: 30)
    #expect(first.contains("text/event-stream") && first.contains("notifications/progress"), "\(first)")
    client.hangUp()
    #expect(await cancelled.wait(within: 30), "the call went on after its client left")
    await running.stop()
  }

  /// A client that does not read its progress stream does not make the server keep every event: the oldest are
  /// dropped beyond the bound, and the answer still comes, last.
  @Test func aSlowReaderLosesOldProgressButNotTheAnswer() async throws {
    let count = 10_000
    let reported = Flag()
    let running = try await Running.start([Chatty(count: count, reported: reported)])
    // A small receive buffer, and nothing read until the tool has reported everything: the server's writes back up
    // at once.
    let client = try RawConnection(port: running.port, receiveBuffer: 4096)
    try client.post("/mcp", body: Self.call("chatty", progress: true), headers: Self.eventStream)
    #expect(await reported.wait(within: 120))
    // Read until the answer's text itself: the answer's event may come in more than one piece, so reading until
    // its first bytes (`"result"`) can stop before the rest.
    let text = await client.read(until: #""text":"done""#, within: 120)
    let received = text.components(separatedBy: "notifications/progress").count - 1
    #expect(text.contains(#""result""#) && text.contains(#""text":"done""#), "\(text.suffix(500))")
    // What the kernel's socket buffers took (a few MB here: 2,000-6,000 events of 1 kB) and the bound, not all: an
    // unbounded stream keeps every one.
    #expect(received > 0 && received < count, "\(received) of \(count) progress events kept")
    await running.stop()
  }

  /// Without a bearer token the server serves only a loopback address; a token folder needs a token.
  @Test func noTokenMeansLoopbackOnly() async throws {
    let server = MCPServer(registry: try ToolRegistry([]))
    await #expect(throws: MCPHTTPServer.ConfigurationError.self) {
      try await MCPHTTPServer(server: server, options: .init(host: "0.0.0.0", port: 0)).run()
    }
    await #expect(throws: MCPHTTPServer.ConfigurationError.self) {
      try await MCPHTTPServer(server: server, options: .init(port: 0, tokenFolder: NSTemporaryDirectory())).run()
    }
    for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"] {
      #expect(Loopback.isHost(host), "\(host)")
    }
    for host in ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "example.com", "::2", "localhost.example.com"] {
      #expect(!Loopback.isHost(host), "\(host)")
    }
    // Every spelling of "all addresses" the resolver reads (chat --web refuses them).
    for host in ["0", "0.0.0.0", "0x0", "0.0", "::", "[::]", "::0", "0:0:0:0:0:0:0:0", "::ffff:0.0.0.0", "::ffff:0:0"] {
      #expect(MCPHTTPToken.isUnspecified(host), "\(host)")
    }
    for host in ["127.0.0.1", "::1", "[::1]", "localhost", "192.168.1.2", "1", "example.org", "", "::ffff:127.0.0.1"] {
      #expect(!MCPHTTPToken.isUnspecified(host), "\(host)")
    }
  }

  /// A generated token is 32 random bytes in hex; its file is 0600 in a 0700 folder, and is removed only while it
  /// holds that token.
  @Test func tokenFiles() throws {
    let token = MCPHTTPToken.generate()
    #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
    #expect(MCPHTTPToken.generate() != token)
    let folder = TemporaryFolder(prefix: "toolhost-token-test")
    let tokens = folder.file("state/toolhost")
    #expect(MCPHTTPToken.defaultFolder(environment: ["XDG_STATE_HOME": folder.file("state")]) == tokens)
    #expect(
      MCPHTTPToken.defaultFolder(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"])
        == "/h/.local/state/toolhost")
    #expect(MCPHTTPToken.defaultFolder(environment: ["XDG_RUNTIME_DIR": folder.path]) == folder.path + "/toolhost")
    let path = try MCPHTTPToken.write(token, port: 8080, in: tokens)
    #expect(path == tokens + "/serve-8080.token")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == token + "\n")
    let mode = { (p: String) in (try? FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? Int) ?? -1
    }
    #expect(mode(path) == 0o600 && mode(tokens) == 0o700)
    MCPHTTPToken.remove(path, token: "another")
    #expect(FileManager.default.fileExists(atPath: path))
    MCPHTTPToken.remove(path, token: token)
    #expect(!FileManager.default.fileExists(atPath: path))
    // A folder that is a link is refused.
    let link = folder.file("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: tokens)
    #expect(throws: MCPHTTPToken.FileError.self) { try MCPHTTPToken.write(token, port: 1, in: link) }
  }
}
