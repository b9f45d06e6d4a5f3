// How calls end over an in-memory pair: cancelled by the client, timed out, or cut off when either end closes
// mid-call; and how a connection starts a new in-memory run after one ended.

import Testing
import ToolhostCore
import ToolhostJSON

@testable import ToolhostMCP

/// Calls `tool` from a task of its own, with 20 s to run; the task's value is how the call failed (`nil`: it did not).
func startCall(_ connection: MCPServerConnection, _ tool: String, arguments: JSONValue) -> Task<ToolFailure?, Never> {
  Task {
    do throws(ToolFailure) {
      _ = try await connection.callTool(tool, arguments: arguments, timeout: .seconds(20))
      return nil
    } catch { return error }
  }
}

@Suite("MCP in memory: cancellation, time limits and closing", .timeLimit(.minutes(1)))
struct InMemoryMCPEndTests {
  let waiter = Waiter()
  let server: MCPServer

  init() throws {
    server = try inMemoryTestServer(waiter)
  }

  @Test func aCancelledCallIsCancelledOnTheServer() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    try await connection.start()
    let call = startCall(connection, "wait", arguments: [:])
    try await Task.sleep(for: .milliseconds(200))
    let started = ContinuousClock.now
    call.cancel()
    #expect(await call.value == .cancelled)
    #expect(ContinuousClock.now - started < .seconds(2))
    // notifications/cancelled reached the server, which cancelled the call; the server goes on.
    #expect(await value(of: waiter.cancelled) != nil)
    let sum = try await connection.callTool("add", arguments: ["a": 1, "b": 1], timeout: .seconds(5))
    #expect(sum.value == ["sum": 2])
    await connection.shutdown()
    #expect(await ends(serving))
  }

  @Test func aCallThatTimesOutIsCancelledAndTheServerKept() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    await #expect(throws: ToolFailure.timedOut(limit: .milliseconds(300))) {
      try await connection.callTool("wait", arguments: [:], timeout: .milliseconds(300))
    }
    #expect(await value(of: waiter.cancelled) != nil)
    // The server answered the health check (ping) after the time-out, so it was not stopped.
    try await Task.sleep(for: .milliseconds(200))
    let rested = try await connection.callTool("nap", arguments: ["ms": 10], timeout: .seconds(5))
    #expect(rested.text == "rested")
    #expect(connection.startCount == 1)
    await connection.shutdown()
    #expect(await ends(serving))
  }

  @Test func closingTheServerEndMidCallFailsTheCall() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    try await connection.start()
    let call = startCall(connection, "nap", arguments: ["ms": 1000])
    try await Task.sleep(for: .milliseconds(200))
    let closed = ContinuousClock.now
    channel.close()
    // The client sees the server exit at once, though the call still runs on the server.
    #expect(await call.value == .exited(status: 0, stderr: ""))
    #expect(ContinuousClock.now - closed < .milliseconds(700))
    // serve(channel:) saw its input end: it lets the running call finish (its answer goes nowhere), then returns.
    #expect(await ends(serving))
    // A pair is one run: the connection cannot start the server again.
    await #expect {
      try await connection.ping()
    } throws: { error in
      guard case MCPConnectionError.launchFailed = error else { return false }
      return true
    }
  }

  @Test func cancellingTheServeTaskMidCallEndsTheRun() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener))
    try await connection.start()
    let call = startCall(connection, "wait", arguments: [:])
    try await Task.sleep(for: .milliseconds(200))
    serving.cancel()
    #expect(await ends(serving))
    #expect(waiter.cancelled.value != nil)
    // The cancelled call was answered before the server closed its output.
    guard case .toolReported(let message, _, _)? = await call.value else {
      Issue.record("expected a tool error result")
      return
    }
    #expect(message.contains("cancel"), "\(message)")
  }

  @Test func shuttingDownMidCallEndsTheServe() async throws {
    let (client, channel) = MCPInMemoryTransport.pair()
    let serving = Task { await server.serve(channel: channel) }
    let connection = MCPServerConnection(inMemoryConfiguration(client.opener, grace: .seconds(5)))
    try await connection.start()
    let call = startCall(connection, "nap", arguments: ["ms": 400])
    try await Task.sleep(for: .milliseconds(100))
    let started = ContinuousClock.now
    await connection.shutdown()
    // The server's input ended: it finished the nap, closed its output, and shutdown returned well within its grace.
    #expect(ContinuousClock.now - started < .seconds(3))
    #expect(await call.value == .cancelled)
    #expect(await ends(serving, within: .seconds(1)))
  }

  @Test func anOpenerServesEveryRun() async throws {
    let connection = MCPServerConnection(inMemoryConfiguration(MCPInMemoryTransport.opener(serving: server)))
    let first = try await connection.callTool("add", arguments: ["a": 1, "b": 2], timeout: .seconds(5))
    #expect(first.value == ["sum": 3])
    connection.stopServer()
    let second = try await connection.callTool("add", arguments: ["a": 2, "b": 2], timeout: .seconds(5))
    #expect(second.value == ["sum": 4])
    #expect(connection.startCount == 2)
    await connection.shutdown()
  }
}
