import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostMCP

@Suite(
  "mcp-server-time as a plugin",
  .enabled(
    if: Peers.mcpServerTime != nil, "needs mcp-server-time: pip install mcp-server-time==2026.10.19"
  ))
struct MCPServerTimeTests {
  @Test func listCallWrongArgumentsAndShutdown() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    let source = try String(
      contentsOfFile: TestPackage.plugins.path + "/time-mcp/toolhost.json", encoding: .utf8)
    folder.plugin("time-mcp", manifest: source)
    let catalog = await MCPPlugins.discover(folders: [folder.path], environment: hostEnvironment)
    #expect(catalog.diagnostics.isEmpty, "\(catalog.diagnostics)")
    #expect(catalog.entries.map(\.tool.name) == ["get_current_time", "convert_time"])
    let tool = try #require(catalog.entries.first?.tool)
    #expect(tool.annotations.readOnlyHint == true)
    #expect(tool.parameters["required"] == ["timezone"])
    #expect(tool.outputSchema?["type"] == "object")

    let registry = catalog.registry()
    let out = try await registry.call("get_current_time", arguments: ["timezone": "Europe/Paris"])
    #expect(out.value?["timezone"] == "Europe/Paris")
    #expect(out.value?["datetime"]?.stringValue?.isEmpty == false)
    let converted = try await registry.call(
      "convert_time",
      arguments: ["source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"])
    #expect(converted.value?[path: "target", "datetime"]?.stringValue?.contains("21:00") == true)

    // Wrong arguments the schema allows: the server's isError result.
    do {
      _ = try await registry.call("get_current_time", arguments: ["timezone": "Mars/Olympus_Mons"])
      Issue.record("an unknown timezone worked")
    } catch {
      guard case .toolReported(let message, _, _) = error.failure else {
        Issue.record("\(error)")
        return
      }
      #expect(message.contains("Invalid timezone"))
    }
    // Wrong arguments the schema forbids: refused before anything is sent.
    await #expect {
      _ = try await registry.call("get_current_time", arguments: [:])
    } throws: { error in
      if case .invalidArguments = (error as? ToolCallError)?.failure { return true }
      return false
    }

    let backend = try #require(tool.backend as? MCPToolBackend)
    let pid = try #require(backend.connection.processID)
    #expect(ProcessProbe.isAlive(pid))
    await catalog.shutdown()
    #expect(await ProcessProbe.waitForGroupToEnd(pid).isEmpty)
    ProcessProbe.killGroup(pid)
  }

  @Test func aServerKilledFromOutsideIsRestarted() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    let source = try String(
      contentsOfFile: TestPackage.plugins.path + "/time-mcp/toolhost.json", encoding: .utf8)
    folder.plugin("time-mcp", manifest: source)
    let catalog = await MCPPlugins.discover(folders: [folder.path], environment: hostEnvironment)
    let registry = catalog.registry()
    let backend = try #require(catalog.entries.first?.tool.backend as? MCPToolBackend)
    let first = try #require(backend.connection.processID)
    kill(-first, SIGKILL)
    #expect(await ProcessProbe.waitForGroupToEnd(first).isEmpty)
    // Once the connection has noticed (a call sent before that fails: the server died under it).
    let end = ContinuousClock.now + .seconds(10)
    while backend.connection.processID != nil, ContinuousClock.now < end {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(backend.connection.processID == nil)
    let out = try await registry.call("get_current_time", arguments: ["timezone": "UTC"])
    #expect(out.value?["timezone"] == "UTC")
    let second = try #require(backend.connection.processID)
    #expect(second != first)
    await catalog.shutdown()
    #expect(await ProcessProbe.waitForGroupToEnd(second).isEmpty)
    ProcessProbe.killGroup(second)
  }
}
