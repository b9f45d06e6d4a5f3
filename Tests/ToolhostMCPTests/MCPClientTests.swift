import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostMCP

/// A connection to Support/fake_mcp_server.py that logs what the server receives.
struct FakeServer {
  let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
  let connection: MCPServerConnection
  var logPath: String { folder.file("received.ndjson") }

  init(version: String? = nil, startupTimeout: Duration = .seconds(10)) {
    var env = PluginTool.baseEnvironment(hostEnvironment, allowed: [])
    env["FAKE_MCP_LOG"] = folder.file("received.ndjson")
    if let version { env["FAKE_MCP_VERSION"] = version }
    connection = MCPServerConnection(
      MCPServerConfiguration(
        name: "fake", executable: Peers.python3 ?? "/usr/bin/python3",
        arguments: [Paths.fakeServer],
        environment: env, startupTimeout: startupTimeout, healthCheckTimeout: .milliseconds(500)))
  }

  /// Every message the server received.
  var received: [JSONValue] {
    let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
  }

  func call(_ tool: String, _ arguments: JSONValue = [:], timeout: Duration = .seconds(10))
    async throws(ToolFailure)
    -> ToolOutput
  {
    try await connection.callTool(tool, arguments: arguments, timeout: timeout)
  }

  func pid() async throws -> Int32 {
    Int32(try await call("pid").value?["pid"]?.integerValue ?? -1)
  }

  /// Shuts down and checks that the groups of `pids` are gone (killing leftovers either way).
  func shutDownAndCheck(_ pids: [Int32]) async {
    await connection.shutdown()
    await expectGroupsToEnd(pids)
  }
}

@Suite("MCP client against a fake server", .enabled(if: Peers.python3 != nil, "needs python3"))
struct MCPClientFakeServerTests {
  @Test func handshakeAndPaginatedListing() async throws {
    let fake = FakeServer()
    let info = try await fake.connection.start()
    #expect(info.protocolVersion == "2025-11-25")
    #expect(info.name == "fake")
    let tools = try await fake.connection.listTools()
    #expect(tools.map(\.name) == ["echo", "fail", "hang", "freeze", "die", "grandchild", "pid"])
    #expect(tools[0].annotations.readOnlyHint == true)
    #expect(tools[0].title == "Echo")
    let methods = fake.received.compactMap { $0["method"]?.stringValue }
    #expect(methods.prefix(3) == ["server/discover", "initialize", "notifications/initialized"])
    #expect(fake.received.first { $0["method"] == "initialize" }?[path: "params", "protocolVersion"] == "2025-11-25")
    #expect(fake.received.contains { $0[path: "params", "cursor"] == "page2" })
    #expect(fake.connection.log.contains("fake server starting"))
    await fake.shutDownAndCheck([fake.connection.processID ?? -1])
  }

  @Test func callsAndToolErrors() async throws {
    let fake = FakeServer()
    let out = try await fake.call("echo", ["text": "hi"])
    #expect(out.value == ["echo": ["text": "hi"]])
    #expect(out.text == #"{"text": "hi"}"#)
    do {
      _ = try await fake.call("fail")
      Issue.record("fail did not fail")
    } catch {
      #expect(error == .toolReported(message: "it failed on purpose", code: nil, data: nil))
    }
    do {
      _ = try await fake.call("no-such-tool")
      Issue.record("an unknown tool did not fail")
    } catch {
      guard case .toolReported(_, let code, _) = error else {
        Issue.record("\(error)")
        return
      }
      #expect(code == "invalid_params")
    }
    await fake.shutDownAndCheck([try await fake.pid()])
  }

  @Test func aTimeoutSendsCancelledAndKeepsAHealthyServer() async throws {
    let fake = FakeServer()
    let pid = try await fake.pid()
    let started = ContinuousClock.now
    do {
      _ = try await fake.call("hang", timeout: .milliseconds(400))
      Issue.record("hang did not time out")
    } catch {
      #expect(error == .timedOut(limit: .milliseconds(400)))
    }
    #expect(ContinuousClock.now - started < .seconds(5))
    try await Task.sleep(for: .milliseconds(800))  // past the health check
    let hangID = fake.received.first { $0[path: "params", "name"] == "hang" }?["id"]
    let cancel = fake.received.first { $0["method"] == "notifications/cancelled" }
    #expect(hangID != nil && cancel?[path: "params", "requestId"] == hangID)
    #expect(cancel?[path: "params", "reason"]?.stringValue?.contains("timed out") == true)
    // It answered the health check, so it was kept.
    #expect(try await fake.pid() == pid)
    #expect(fake.connection.startCount == 1)
    await fake.shutDownAndCheck([pid])
  }

  @Test func aHungServerIsStoppedAndRestarted() async throws {
    let fake = FakeServer()
    let first = try await fake.pid()
    do {
      _ = try await fake.call("freeze", timeout: .milliseconds(300))
      Issue.record("freeze did not time out")
    } catch {
      #expect(error == .timedOut(limit: .milliseconds(300)))
    }
    // No answer to ping within 0.5 s: the server is stopped, with its whole group.
    #expect(
      await ProcessProbe.waitForGroupToEnd(first, timeout: 5).isEmpty, "the hung server still runs")
    let second = try await fake.pid()
    #expect(second != first)
    #expect(fake.connection.startCount == 2)
    await fake.shutDownAndCheck([first, second])
  }

  @Test func aDeadServerIsRestartedOnTheNextCall() async throws {
    let fake = FakeServer()
    let first = try await fake.pid()
    do {
      _ = try await fake.call("die")
      Issue.record("die did not fail")
    } catch {
      guard case .exited(let status, let log) = error else {
        Issue.record("expected exited, got \(error)")
        return
      }
      #expect(status == 3)
      #expect(log.contains("dying on purpose"))
    }
    let second = try await fake.pid()
    #expect(second != first)
    #expect(fake.connection.startCount == 2)
    await fake.shutDownAndCheck([first, second])
  }

  @Test func cancellingACallTellsTheServer() async throws {
    let fake = FakeServer()
    let pid = try await fake.pid()
    let connection = fake.connection
    let task = Task { try await connection.callTool("hang", arguments: [:], timeout: .seconds(30)) }
    try await Task.sleep(for: .milliseconds(300))
    task.cancel()
    let result = await task.result
    #expect(throws: ToolFailure.cancelled) { try result.get() }
    try await Task.sleep(for: .milliseconds(200))
    #expect(fake.received.contains { $0["method"] == "notifications/cancelled" })
    #expect(try await fake.pid() == pid)
    await fake.shutDownAndCheck([pid])
  }

  @Test func shutdownEndsTheWholeProcessGroup() async throws {
    let fake = FakeServer()
    let pid = try await fake.pid()
    let child = Int32(try await fake.call("grandchild").value?["pid"]?.integerValue ?? -1)
    #expect(ProcessProbe.inGroup(pid).contains(child))
    await fake.shutDownAndCheck([pid])
    #expect(await ProcessProbe.waitForEnd(child))
    do {
      _ = try await fake.call("echo", ["text": "x"])
      Issue.record("a call after shutdown worked")
    } catch {
      #expect(error == .cancelled)
    }
  }

  @Test func aReplyOverTheOutputLimitIsOutputTooLarge() async throws {
    let fake = FakeServer()
    func big(_ bytes: Int, limit: Int) async throws(ToolFailure) -> ToolOutput {
      try await fake.connection.callTool(
        "big", arguments: ["bytes": .integer(Int64(bytes))], timeout: .seconds(30), outputLimit: limit)
    }
    // Over the call's limit: that call fails and the server keeps running.
    await #expect(throws: ToolFailure.outputTooLarge(limit: 1000)) { _ = try await big(5000, limit: 1000) }
    let pid = try await fake.pid()
    #expect(try await big(10, limit: 1000).text?.count == 10)
    // Over the limit of every call in flight (here the server's, 8 MiB): the same failure, not "killed by signal
    // 9", and the next call starts the server again.
    await #expect(throws: ToolFailure.outputTooLarge(limit: 8 << 20)) { _ = try await big(9 << 20, limit: 2 << 20) }
    let next = try await fake.pid()
    #expect(next != pid)
    // A call whose own limit is larger raises the stream's: its reply is read whole.
    #expect(try await big(9 << 20, limit: 16 << 20).text?.utf8.count == 9 << 20)
    await fake.shutDownAndCheck([pid, next])
  }

  @Test func anUnsupportedProtocolVersionIsRefused() async throws {
    let fake = FakeServer(version: "1999-01-01")
    do {
      try await fake.connection.start()
      Issue.record("the handshake succeeded")
    } catch {
      guard case .unsupportedProtocolVersion("1999-01-01") = error else {
        Issue.record("\(error)")
        return
      }
    }
    #expect(fake.connection.processID == nil)
    await fake.connection.shutdown()
  }

  @Test func aServerThatNeverAnswersTimesOutAtStartup() async throws {
    let connection = MCPServerConnection(
      MCPServerConfiguration(
        name: "silent", executable: "/bin/sh", arguments: ["-c", "sleep 100"],
        startupTimeout: .milliseconds(400)))
    let started = ContinuousClock.now
    do {
      try await connection.start()
      Issue.record("the handshake succeeded")
    } catch {
      guard case .startupTimedOut = error else {
        Issue.record("\(error)")
        return
      }
    }
    #expect(ContinuousClock.now - started < .seconds(5))
    await connection.shutdown()
  }

  @Test func aMissingExecutableIsALaunchFailure() async {
    let connection = MCPServerConnection(
      MCPServerConfiguration(name: "none", executable: "/nonexistent/server"))
    do {
      _ = try await connection.callTool("x", arguments: [:], timeout: .seconds(1))
      Issue.record("the call worked")
    } catch {
      guard case .launchFailed(let exe, _) = error else {
        Issue.record("\(error)")
        return
      }
      #expect(exe == "/nonexistent/server")
    }
  }

  @Test func mcpToolsAreTools() async throws {
    let fake = FakeServer()
    let tools = try await fake.connection.tools()
    let registry = try ToolRegistry(tools)
    let out = try await registry.call("echo", arguments: ["text": "via registry"])
    #expect(out.value?[path: "echo", "text"] == "via registry")
    // The registry validates before anything is sent.
    await #expect {
      _ = try await registry.call("echo", arguments: ["text": 5])
    } throws: { error in
      if case .invalidArguments = (error as? ToolCallError)?.failure { return true }
      return false
    }
    await fake.shutDownAndCheck([fake.connection.processID ?? -1])
  }
}
