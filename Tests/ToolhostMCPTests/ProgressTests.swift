import Foundation
import Synchronization
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostMCP

/// Progress (`notifications/progress`): asked for with a `progressToken`, it reaches the caller and stretches a
/// call's time limit up to a maximum; `serve` relays a client's progress over stdio and HTTP.
@Suite("MCP progress")
struct ProgressTests {
  func fakeServer() -> MCPServerConnection {
    MCPServerConnection(
      MCPServerConfiguration(
        name: "fake", executable: Peers.python3 ?? "/usr/bin/python3",
        arguments: [Paths.fakeServer, "--with-progress"],
        environment: PluginTool.baseEnvironment(hostEnvironment, allowed: []), startupTimeout: .seconds(20)))
  }

  /// A folder with the fake server as its one plugin (its `progress` tool listed), `maxTimeout` in the manifest when
  /// given.
  func fakeServerPlugin(maxTimeout: Int? = nil) throws -> TemporaryFolder {
    let python = try #require(Peers.python3)
    let folder = TemporaryFolder(prefix: "toolhost-progress-test")
    folder.plugin(
      "fake",
      manifest: """
        {"manifestVersion": 1, "timeout": 5\(maxTimeout.map { ", \"maxTimeout\": \($0)" } ?? ""),
         "mcp": {"command": "\(python)", "args": ["\(Paths.fakeServer)", "--with-progress"], "startupTimeout": 20}}
        """)
    return folder
  }

  /// Collects progress reports.
  final class Reports: Sendable {
    let box = Mutex<[ToolProgress]>([])
    var all: [ToolProgress] { box.withLock { $0 } }
    func add(_ p: ToolProgress) { box.withLock { $0.append(p) } }
  }

  /// A call that reports every 0.4 s outlives its 1 s limit while it reports, and its reports arrive.
  @Test func progressKeepsACallAliveUpToItsMaximum() async throws {
    let connection = fakeServer()
    try await connection.start()
    let reports = Reports()
    let started = ContinuousClock.now
    let output = try await connection.callTool(
      "progress", arguments: ["steps": 5, "interval": 0.4], timeout: .seconds(1),
      onProgress: { reports.add($0) }, maximumTimeout: .seconds(10))
    #expect(ContinuousClock.now - started > .seconds(1.5))
    #expect(output.value?["token"] == true)
    #expect(reports.all.map(\.progress) == [1, 2, 3, 4, 5])
    #expect(reports.all.last?.total == 5 && reports.all.last?.message == "step 5")
    #expect(reports.all.last?.summary == "100% step 5")
    let pid = connection.processID ?? -1
    await connection.shutdown()
    await expectGroupsToEnd([pid])
  }

  /// Progress never stretches a call past its maximum; without progress (no token asked), the limit is the limit;
  /// a call that stops reporting times out its limit after the last report.
  @Test func theLimitsStillHold() async throws {
    let connection = fakeServer()
    try await connection.start()
    var started = ContinuousClock.now
    await #expect {
      _ = try await connection.callTool(
        "progress", arguments: ["steps": 10, "interval": 0.4], timeout: .seconds(1),
        maximumTimeout: .milliseconds(1800))
    } throws: { error in
      (error as? ToolFailure) == .timedOut(limit: .milliseconds(1800))
    }
    #expect(ContinuousClock.now - started < .seconds(3))
    // The fake server answers one request at a time: wait for the one that timed out to end.
    try await Task.sleep(for: .seconds(3))
    started = ContinuousClock.now
    await #expect {
      _ = try await connection.callTool(
        "progress", arguments: ["steps": 3, "interval": 0.4], timeout: .milliseconds(700))
    } throws: { error in
      (error as? ToolFailure) == .timedOut(limit: .milliseconds(700))
    }
    #expect(ContinuousClock.now - started < .seconds(1.5))
    try await Task.sleep(for: .seconds(1.5))
    let stalled = ContinuousClock.now
    await #expect {
      _ = try await connection.callTool(
        "progress", arguments: ["steps": 2, "interval": 0.3, "stall": 5], timeout: .seconds(1),
        onProgress: { _ in }, maximumTimeout: .seconds(20))
    } throws: { error in
      (error as? ToolFailure) == .timedOut(limit: .seconds(1))
    }
    // Two reports 0.3 s apart, then a second without one.
    let took = ContinuousClock.now - stalled
    #expect(took > .seconds(1.4) && took < .seconds(3), "\(took)")
    connection.stopServer()
    await connection.shutdown()
  }

  /// The official SDK's client, with a progress callback, through `serve --mcp` over stdio and over HTTP: the
  /// server's progress reports reach it before the result.
  @Test(
    .enabled(if: Peers.pythonMCPClient, "\(Peers.missingMessage)"),
    .enabled(if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)"),
    arguments: ["stdio", "http"])
  func serveRelaysProgress(transport: String) async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let python = try #require(Peers.python3)
    let folder = try fakeServerPlugin(maxTimeout: 30)
    let environment = folder.userEnvironment(hostEnvironment)
    var target = [binary, "serve", "--mcp", "--yes", "--plugins", folder.path]
    var http: MCPServeProcess?
    if transport == "http" {
      let server = try MCPServeProcess(
        binary: binary, arguments: Array(target.dropFirst()) + ["--http", "0", "--no-auth"], environment: environment,
        workingDirectory: folder.url, logPath: folder.file("serve.log"))
      http = server
      guard let endpoint = await server.httpEndpoint() else {
        await server.stop(signal: SIGTERM)
        throw TestFailure("serve --mcp --http did not say where it listens; its log: \(server.log)")
      }
      target = [endpoint]
    }
    let outcome = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: python, arguments: [Paths.erasPeer, "progress", "auto"] + target, environment: environment,
        workingDirectory: folder.path, timeout: .seconds(120)))
    let stdout = String(decoding: outcome.stdout, as: UTF8.self)
    let report = try JSONValue.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(report["failure"] == nil, "\(report)\n\(outcome.stderrText)\n\(http?.log ?? "")")
    #expect(report[path: "structured", "token"] == true, "\(report)")
    let progress = report["reports"]?.arrayValue?.compactMap { $0["progress"]?.doubleValue }
    #expect(progress == [1, 2, 3], "\(report)")
    if let http {
      await http.stop(signal: SIGTERM)
      #expect(http.process.terminationStatus == 0, "log: \(http.log)")
    }
    try await Task.sleep(for: .milliseconds(300))
    #expect(ProcessProbe.processes { $0.contains(folder.path) }.isEmpty)
  }

  /// `toolhost call` on a terminal shows the tool's progress on one line of stderr, then the result.
  @Test(.enabled(if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)"))
  func callShowsProgressOnATerminal() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let folder = try fakeServerPlugin()
    let environment = folder.userEnvironment(hostEnvironment)
    let outcome = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: "/usr/bin/env",
        arguments: Terminal.command([
          binary, "call", "--plugins", folder.path, "progress", "--json", #"{"steps": 3, "interval": 0.3}"#,
        ]),
        environment: environment, workingDirectory: folder.path, timeout: .seconds(60)))
    let shown = String(decoding: outcome.stdout, as: UTF8.self)
    #expect(outcome.termination == .exited(0), "\(shown)")
    for step in ["33% step 1", "67% step 2", "100% step 3"] {
      #expect(shown.contains("[progress] \(step)"), "\(shown)")
    }
    #expect(shown.contains("\r\u{1B}[K"), "\(shown)")
    #expect(shown.contains("done"), "\(shown)")
  }
}
