import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostMCP

@Suite("MCP servers in plugin folders", .enabled(if: Peers.python3 != nil, "needs python3"))
struct MCPDiscoveryTests {
  func fakeManifest(name: String? = nil, prefix: Bool = false, startupTimeout: Double = 10)
    -> String
  {
    let python = Peers.python3 ?? "/usr/bin/python3"
    var extra = ""
    if let name { extra += #", "name": "\#(name)""# }
    if prefix { extra += #", "prefixTools": true"# }
    return """
      {"manifestVersion": 1, "timeout": 5,
       "mcp": {"command": "\(python)", "args": ["\(Paths.fakeServer)"], "startupTimeout": \(startupTimeout)\(extra)}}
      """
  }

  @Test func toolsAppearAndCollisionsGetAPrefix() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("alpha", manifest: fakeManifest())
    folder.plugin("beta", manifest: fakeManifest())
    folder.plugin("gamma", manifest: fakeManifest(name: "g", prefix: true))
    let catalog = await MCPPlugins.discover(folders: [folder.path], environment: hostEnvironment)
    defer { Task { await catalog.shutdown() } }
    let names = catalog.entries.map(\.tool.name)
    #expect(names.prefix(7) == ["echo", "fail", "hang", "freeze", "die", "grandchild", "pid"])
    #expect(names.contains("beta.echo") && names.contains("beta.pid"))
    #expect(names.contains("g.echo") && !names.contains("gamma.echo"))
    #expect(names.count == 21)
    #expect(catalog.diagnostics.filter { $0.kind == .adjusted }.count == 7)
    #expect(!catalog.hasErrors, "\(catalog.diagnostics)")
    let registry = catalog.registry()
    let out = try await registry.call("beta.echo", arguments: ["text": "b"])
    #expect(out.value?[path: "echo", "text"] == "b")
    // Each server is its own process.
    let a = try await registry.call("pid", arguments: [:]).value?["pid"]?.integerValue
    let b = try await registry.call("beta.pid", arguments: [:]).value?["pid"]?.integerValue
    #expect(a != nil && b != nil && a != b)
    // The manifest's timeout applies; a timed-out call is a timeout.
    await #expect {
      _ = try await registry.call(
        "hang", arguments: [:], context: ToolCallContext(timeout: .milliseconds(200)))
    } throws: { error in
      (error as? ToolCallError)?.failure == .timedOut(limit: .milliseconds(200))
    }
    await catalog.shutdown()
    for pid in [a, b].compactMap({ $0 }).map(Int32.init) {
      #expect(await ProcessProbe.waitForGroupToEnd(pid).isEmpty)
      ProcessProbe.killGroup(pid)
    }
  }

  @Test func aPluginsToolKeepsItsNameWhetherOrNotTheServersStart() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    // The server's folder comes first, yet the plugin's `echo` keeps the name.
    folder.plugin("aaa", manifest: fakeManifest())
    folder.plugin(
      "zzz",
      manifest: """
        {"manifestVersion": 1, "command": "run",
         "tools": [{"name": "echo", "description": "The plugin's echo.", "inputSchema": {"type": "object"}}]}
        """,
      script: "#!/bin/sh\necho '{\"result\": {\"from\": \"plugin\"}}'\n")
    let quick = await PluginCatalog.discover(folders: [folder.path], environment: hostEnvironment)
    #expect(quick.entries.first { $0.tool.name == "echo" }?.tool.description == "The plugin's echo.")
    let full = await MCPPlugins.discover(folders: [folder.path], environment: hostEnvironment)
    defer { Task { await full.shutdown() } }
    #expect(full.entries.first { $0.tool.name == "echo" }?.tool.description == "The plugin's echo.")
    #expect(full.entries.contains { $0.tool.name == "aaa.echo" })
    #expect(full.diagnostics.contains { $0.kind == .adjusted && $0.tool == "echo" && $0.message.contains("aaa.echo") })
    let registry = full.registry()
    #expect(try await registry.call("echo", arguments: [:]).value?["from"] == "plugin")
    let remote = try await registry.call("aaa.echo", arguments: ["text": "mcp"])
    #expect(remote.value?[path: "echo", "text"] == "mcp")
    let pid = try await registry.call("pid", arguments: [:]).value?["pid"]?.integerValue
    await full.shutdown()
    if let pid {
      #expect(await ProcessProbe.waitForGroupToEnd(Int32(pid)).isEmpty)
      ProcessProbe.killGroup(Int32(pid))
    }
  }

  /// `call --verbose` for an MCP tool: what the server says while the call runs reaches the call's stderr sink.
  @Test func theServersStderrAndLogMessagesReachTheCallsStderr() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("fake", manifest: fakeManifest())
    let catalog = await MCPPlugins.discover(folders: [folder.path], environment: hostEnvironment)
    let seen = StderrChunks()
    var context = ToolCallContext()
    context.onStderr = { tool, chunk in seen.append("\(tool): \(String(decoding: chunk, as: UTF8.self))") }
    let output = try await catalog.registry().call("echo", arguments: ["text": "t", "log": "hello"], context: context)
    #expect(output.value?[path: "echo", "text"] == "t")
    // Both come before the reply on the server's side; give the stderr pipe a moment to be read.
    for _ in 0..<50 where seen.all.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
    let text = seen.all.joined()
    #expect(text.contains("echo: stderr: hello"), "\(seen.all)")
    #expect(text.contains("echo: [info] message: hello"), "\(seen.all)")
    // A call without a sink adds nothing to it.
    _ = try await catalog.registry().call("echo", arguments: ["text": "t", "log": "quiet"])
    #expect(!seen.all.joined().contains("quiet"))
    let pid = try await catalog.registry().call("pid", arguments: [:]).value?["pid"]?.integerValue
    await catalog.shutdown()
    await expectGroupsToEnd([Int32(pid ?? -1)])
  }

  @Test func aHungServerBecomesADiagnosticNotAHang() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin(
      "silent",
      manifest:
        #"{"manifestVersion": 1, "mcp": {"command": "/bin/sh", "args": ["-c", "sleep 100"], "startupTimeout": 0.5}}"#
    )
    folder.plugin(
      "missing", manifest: #"{"manifestVersion": 1, "mcp": {"command": "no-such-mcp-server-here"}}"#
    )
    folder.plugin("ok", manifest: fakeManifest())
    let started = ContinuousClock.now
    let catalog = await MCPPlugins.discover(folders: [folder.path], environment: hostEnvironment)
    // Bounded by the slowest server that answers (the fake one), not by the one that hangs for 100 s.
    #expect(ContinuousClock.now - started < .seconds(10))
    let byKind = Dictionary(grouping: catalog.diagnostics, by: \.kind)
    #expect(
      byKind[.serverFailed]?.first?.message.contains("within 500 ms") == true,
      "\(catalog.diagnostics)")
    #expect(byKind[.commandMissing]?.count == 1)
    #expect(catalog.entries.count == 7)
    await catalog.shutdown()
  }
}
