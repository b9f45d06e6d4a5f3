// MCP exchanges run in process over an in-memory pair: the transport's own behaviour (order, close, end of file) and
// the real client (MCPServerConnection) against the real server (MCPServer), with no process, socket or Python peer.

import Synchronization
import Testing
import ToolhostCore
import ToolhostJSON

@testable import ToolhostMCP

/// A tool that fails with a message of its own.
struct Refuser: Tool {
  struct Refusal: Error, CustomStringConvertible {
    var description: String { "the archive is locked" }
  }
  let name = "refuse"
  let description = "Always fails."
  let parameters: JSONValue = ["type": "object"]
  func call(arguments: JSONValue) async throws -> String { throw Refusal() }
}

/// A tool that sleeps `ms` milliseconds, then says so.
struct Napper: Tool {
  let name = "nap"
  let description = "Sleeps a while."
  let parameters: JSONValue = ["type": "object", "properties": ["ms": ["type": "integer"]]]
  func call(arguments: JSONValue) async throws -> String {
    try await Task.sleep(for: .milliseconds(arguments["ms"]?.integerValue ?? 0))
    return "rested"
  }
}

/// A tool that waits 30 s, and says when it was cancelled instead.
struct Waiter: Tool {
  let name = "wait"
  let description = "Waits."
  let parameters: JSONValue = ["type": "object"]
  let cancelled = OneShot<Void>()
  func call(arguments: JSONValue) async throws -> String {
    do { try await Task.sleep(for: .seconds(30)) } catch {
      cancelled.complete(())
      throw error
    }
    return "waited"
  }
}

/// What one end of a pair received: its lines, and how its reads ended.
final class EndRecord: Sendable {
  let lines = Mutex<[String]>([])
  let end = OneShot<String>()
  var text: [String] { lines.withLock { $0 } }
  func add(_ line: [UInt8]) { lines.withLock { $0.append(String(decoding: line, as: UTF8.self)) } }
  /// The messages received, parsed.
  var messages: [JSONRPCMessage] { text.compactMap { try? JSONRPCMessage.parse(Array($0.utf8)) } }
}

/// Waits until `condition` holds, at most `seconds`; whether it does.
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
  let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
  while !condition() {
    guard ContinuousClock.now < end else { return false }
    try? await Task.sleep(for: .milliseconds(10))
  }
  return true
}

/// Whether `task` ends within `limit` (it is not cancelled).
func ends(_ task: Task<Void, Never>, within limit: Duration = .seconds(5)) async -> Bool {
  let done = OneShot<Bool>()
  Task {
    await task.value
    done.complete(true)
  }
  return await done.wait(timeout: limit) { done.complete(false) }
}

/// The value `shot` gets within `limit`, if it does.
func value<V: Sendable>(of shot: OneShot<V>, within limit: Duration = .seconds(5)) async -> V? {
  let outcome = OneShot<V?>()
  Task { outcome.complete(await shot.wait()) }
  return await outcome.wait(timeout: limit) { outcome.complete(nil) }
}

/// A server of the test tools, `waiter` among them.
func inMemoryTestServer(_ waiter: Waiter = Waiter()) throws -> MCPServer {
  MCPServer(registry: try ToolRegistry([Adder(), Refuser(), Napper(), waiter]))
}

/// A connection configuration for an in-memory server: short limits, and `grace` to end.
func inMemoryConfiguration(_ opener: @escaping MCPTransportOpener, grace: Duration = .seconds(2))
  -> MCPServerConfiguration
{
  MCPServerConfiguration(
    name: "memory", executable: "in-memory", startupTimeout: .seconds(5), requestTimeout: .seconds(5),
    shutdownGrace: grace, healthCheckTimeout: .seconds(2), transport: opener)
}

@Suite("MCP in memory (MCPInMemoryTransport)", .timeLimit(.minutes(1)))
struct InMemoryMCPTests {
  let server: MCPServer

  init() throws {
    server = try inMemoryTestServer()
  }

  /// Opens the client end with handlers that record into `record`.
  func open(_ client: MCPInMemoryTransport, into record: EndRecord) throws {
    try client.open(
      MCPTransportHandlers(
        onMessage: { record.add($0) }, onLog: { _ in }, onEnd: { record.end.complete($0.description) }))
  }

  // MARK: - The pair itself

  @Test func linesArriveWholeAndInOrderBothWays() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let atClient = EndRecord()
    let atServer = EndRecord()
    // Sent before either end reads: kept until it does.
    client.send(Array("{\"a\":".utf8))
    client.send(Array("1}\n\n  \n{\"b\":2}\r\n".utf8))
    try open(client, into: atClient)
    channel.start(onLine: { atServer.add($0) }, onEnd: { atServer.end.complete("input ended") })
    #expect(channel.send(Array("one\ntwo\n".utf8)))
    #expect(await eventually { atServer.text.count == 2 && atClient.text.count == 2 })
    #expect(atServer.text == ["{\"a\":1}", "{\"b\":2}"])
    #expect(atClient.text == ["one", "two"])

    // The server end closes: the client's reads end as when a server process exits, and nothing more gets through.
    channel.close()
    let end = await value(of: atClient.end)
    #expect(end == MCPConnectionError.serverExited(termination: .exited(0), log: "").description)
    #expect(await value(of: atServer.end) == "input ended")
    #expect(!channel.send(Array("three\n".utf8)))
    client.send(Array("{\"c\":3}\n".utf8))
    try await Task.sleep(for: .milliseconds(50))
    #expect(atServer.text.count == 2 && atClient.text == ["one", "two"])
  }

  @Test func terminateEndsTheServersInputAndDropsWhatItSends() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let atClient = EndRecord()
    let atServer = EndRecord()
    try open(client, into: atClient)
    channel.start(onLine: { atServer.add($0) }, onEnd: { atServer.end.complete("input ended") })
    client.terminate()
    #expect(await value(of: atServer.end) == "input ended")
    #expect(!channel.send(Array("late\n".utf8)))
    try await Task.sleep(for: .milliseconds(50))
    // The connection asked for the end: it is not reported to it as the server's.
    #expect(atClient.end.value == nil && atClient.text.isEmpty)
  }

  @Test func aLineOverTheLimitEndsTheConnection() async throws {
    let (client, channel) = MCPInMemoryTransport.pair(maxLineLength: 8)
    let atClient = EndRecord()
    try open(client, into: atClient)
    channel.start(onLine: { _ in }, onEnd: {})
    channel.send(Array("0123456789\n".utf8))
    #expect(await value(of: atClient.end) == MCPConnectionError.replyTooLarge(limit: 8).description)
  }

  @Test func aPairOpensOnce() throws {
    let (client, _) = MCPInMemoryTransport.pair()
    try open(client, into: EndRecord())
    #expect(throws: MCPConnectionError.self) { try open(client, into: EndRecord()) }
  }

  // MARK: - JSON-RPC with the server

  @Test func initializeNegotiatesTheVersionOverThePair() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let atClient = EndRecord()
    try open(client, into: atClient)
    let initialize = { (id: Int64, version: String) in
      client.send(
        JSONRPCMessage.request(
          id: .number(id), method: "initialize",
          params: ["protocolVersion": .string(version), "capabilities": [:], "clientInfo": ["name": "test"]]
        ).line)
    }
    initialize(1, "2025-06-18")
    initialize(2, "2031-01-01")
    client.send(JSONRPCMessage.request(id: .number(3), method: "ping", params: nil).line)
    #expect(await eventually { atClient.messages.count == 3 })
    let byID = Dictionary(
      atClient.messages.compactMap { m -> (JSONRPCID, JSONValue)? in
        guard case .response(let id, let result) = m else { return nil }
        return (id, result)
      }, uniquingKeysWith: { a, _ in a })
    #expect(byID[.number(1)]?["protocolVersion"] == "2025-06-18")
    #expect(byID[.number(2)]?["protocolVersion"] == .string(MCPProtocol.latestVersion))
    #expect(byID[.number(1)]?[path: "serverInfo", "name"] == "toolhost")
    #expect(byID[.number(3)] == [:])
    // The client closes its end: the server's input ends, serve returns, and the client's reads end.
    await client.shutdown(grace: .seconds(5))
    #expect(await ends(serving))
  }

  @Test func aConnectionDiscoversListsAndCalls() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    let info = try await connection.start()
    #expect(info.protocolVersion == "2026-07-28")
    #expect(info.name == "toolhost")
    #expect(server.protocolVersion == "2026-07-28")

    let tools = try await connection.listTools()
    #expect(tools.map(\.name) == ["add", "refuse", "nap", "wait"])
    #expect(tools.first?.inputSchema["required"] == ["a", "b"])
    #expect(tools.first?.annotations.readOnlyHint == true)

    let output = try await connection.callTool("add", arguments: ["a": 2, "b": 3], timeout: .seconds(5))
    #expect(output.value == ["sum": 5])
    #expect(connection.processID == nil && connection.startCount == 1)
    await connection.shutdown()
    #expect(await ends(serving))
  }

  /// A tool's examples (issue 49) reach an MCP client as its input schema's JSON Schema `examples`, where toolhost's
  /// own client reads them back; a schema that has its own examples keeps them.
  @Test func aToolsExamplesAreListedInItsInputSchema() {
    struct Greeter: Tool {
      let name = "greet"
      let description = "Greets someone."
      let parameters: JSONValue = ["type": "object", "properties": ["who": ["type": "string"]]]
      let examples = [ToolExample(prompt: "Say hello to Ada", arguments: ["who": "Ada"])]
      func call(arguments: JSONValue) async throws -> String { "hello" }
    }
    let listed = MCPServer.listing(Greeter(), modern: true)
    #expect(listed["inputSchema"]?["examples"] == [["who": "Ada"]])
    #expect(
      ToolExample.examples(inSchema: listed["inputSchema"] ?? [:]) == [
        ToolExample(prompt: nil, arguments: ["who": "Ada"])
      ])
    #expect(MCPServer.listing(Napper(), modern: true)["inputSchema"]?["examples"] == nil, "none: no keyword")
  }

  @Test func aFailedToolIsAnErrorResult() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    await #expect {
      try await connection.callTool("refuse", arguments: [:], timeout: .seconds(5))
    } throws: { error in
      guard case ToolFailure.toolReported(let message, _, _) = error else { return false }
      return message.contains("the archive is locked")
    }
    await #expect {
      try await connection.callTool("add", arguments: ["a": "two"], timeout: .seconds(5))
    } throws: { error in
      guard case ToolFailure.toolReported(let message, _, _) = error else { return false }
      return message.contains("invalid arguments")
    }
    // The raw result says isError; the server goes on.
    let raw = try await connection.request("tools/call", params: ["name": "refuse", "arguments": [:]])
    #expect(raw["isError"] == true)
    try await connection.ping()
    await connection.shutdown()
    #expect(await ends(serving))
  }

  @Test func anUnknownMethodIsAJSONRPCError() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    await #expect {
      try await connection.request("resources/list")
    } throws: { error in
      guard case MCPConnectionError.errorResponse(let e) = error else { return false }
      return e.code == JSONRPCError.methodNotFound && e.message.contains("resources/list")
    }
    await #expect {
      try await connection.callTool("nope", arguments: [:], timeout: .seconds(5))
    } throws: { error in
      guard case ToolFailure.toolReported(let message, _, _) = error else { return false }
      return message.contains("unknown tool: nope")
    }
    await connection.shutdown()
    #expect(await ends(serving))
  }
}
