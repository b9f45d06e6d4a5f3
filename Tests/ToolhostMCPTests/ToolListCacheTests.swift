import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostMCP

/// MCP servers' tool lists kept between runs: used while fresh (the manifest's `toolListTTL`, else the server's
/// `ttlMs`), tied to the manifest and the server's executable, and never a reason to start a server.
@Suite("MCP tool lists kept between runs")
struct ToolListCacheTests {
  func manifest(ttl: Double?, arguments: [String] = [Paths.fakeServer]) -> String {
    let python = Peers.python3 ?? "/usr/bin/python3"
    let args = arguments.map { "\"\($0)\"" }.joined(separator: ", ")
    return """
      {"manifestVersion": 1, "timeout": 5,
       "mcp": {"command": "\(python)", "args": [\(args)], "startupTimeout": 20\(ttl.map { ", \"toolListTTL\": \($0)" } ?? "")}}
      """
  }

  func discover(_ folder: TemporaryFolder, cache: MCPToolListCache, start: Bool, refresh: Bool = false) async
    -> PluginCatalog
  {
    await PluginCatalog.discover(
      in: [PluginFolder(path: folder.path, origin: .explicit)], environment: hostEnvironment,
      mcp: MCPPlugins.Loader(cache: cache, refresh: refresh), startServers: start)
  }

  /// The server's pids of a catalog's MCP tools (nil for a server that is not running).
  func runningServers(_ catalog: PluginCatalog) -> [Int32] {
    Array(Set(catalog.tools.compactMap { ($0.backend as? MCPToolBackend)?.connection.processID }))
  }

  @Test func aListKeptByTheManifestsTTLStartsNoServer() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("fake", manifest: manifest(ttl: 3600))
    let cache = MCPToolListCache(directory: folder.file("cache/mcp-tools"))
    // Nothing kept yet: without starting, the server is a note.
    let cold = await discover(folder, cache: cache, start: false)
    #expect(cold.entries.isEmpty)
    #expect(cold.diagnostics.contains { $0.kind == .notStarted })
    // Started once, its list is kept, private to the user.
    let started = await discover(folder, cache: cache, start: true)
    let names = started.entries.map(\.tool.name)
    #expect(names.contains("echo") && names.contains("pid"), "\(started.diagnostics)")
    let pids = runningServers(started)
    #expect(!pids.isEmpty)
    await started.shutdown()
    await expectGroupsToEnd(pids)
    let files = try FileManager.default.contentsOfDirectory(atPath: cache.directory)
    #expect(files.count == 1)
    let attributes = try FileManager.default.attributesOfItem(atPath: cache.directory + "/" + files[0])
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let folderAttributes = try FileManager.default.attributesOfItem(atPath: cache.directory)
    #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)
    // Now the same tools come without a server, with or without leave to start one; a call starts it.
    let warm = await discover(folder, cache: cache, start: false)
    #expect(warm.entries.map(\.tool.name) == names)
    #expect(!warm.diagnostics.contains { $0.kind == .notStarted })
    let lazy = await discover(folder, cache: cache, start: true)
    #expect(lazy.entries.map(\.tool.name) == names)
    #expect(runningServers(warm).isEmpty && runningServers(lazy).isEmpty)
    let echoed = try await lazy.registry().call("echo", arguments: ["text": "kept"])
    #expect(echoed.value?[path: "echo", "text"] == "kept")
    let pid = runningServers(lazy)
    #expect(pid.count == 1)
    await lazy.shutdown()
    await warm.shutdown()
    await expectGroupsToEnd(pid)
  }

  @Test func aChangedManifestOrAnOldListIsNotUsed() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("fake", manifest: manifest(ttl: 60))
    let path = folder.file("fake/toolhost.json")
    let cache = MCPToolListCache(directory: folder.file("cache"))
    let started = await discover(folder, cache: cache, start: true)
    let pids = runningServers(started)
    await started.shutdown()
    await expectGroupsToEnd(pids)
    let server = PluginServer(
      manifest: try #require(started.entries.first?.tool.manifest), endpoint: .command(executable: Peers.python3 ?? ""),
      hostEnvironment: hostEnvironment)
    #expect(cache.fresh(for: server) != nil)
    #expect(cache.fresh(for: server, now: Date().addingTimeInterval(61)) == nil)
    #expect(cache.fresh(for: server, now: Date().addingTimeInterval(-60)) == nil)
    // Another manifest (here: one more argument) is another key.
    try manifest(ttl: 60, arguments: [Paths.fakeServer, "--startup-delay", "0"]).write(
      toFile: path, atomically: true, encoding: .utf8)
    let edited = await discover(folder, cache: cache, start: false)
    #expect(edited.entries.isEmpty && edited.diagnostics.contains { $0.kind == .notStarted })
  }

  /// A server that does not say how long its list lasts (before 2026-07-28: no `ttlMs`, so 0) is listed afresh
  /// each time unless the manifest says otherwise; a refresh starts the server even when a list is fresh.
  @Test func withoutATTLTheServerIsAskedEachTime() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("fake", manifest: manifest(ttl: nil))
    let cache = MCPToolListCache(directory: folder.file("cache"))
    let started = await discover(folder, cache: cache, start: true)
    let pids = runningServers(started)
    #expect(!pids.isEmpty)
    await started.shutdown()
    await expectGroupsToEnd(pids)
    let again = await discover(folder, cache: cache, start: false)
    #expect(again.entries.isEmpty)
    // A broken file is ignored like a missing one.
    for file in try FileManager.default.contentsOfDirectory(atPath: cache.directory) {
      try "{broken".write(toFile: cache.directory + "/" + file, atomically: true, encoding: .utf8)
    }
    #expect(await discover(folder, cache: cache, start: false).entries.isEmpty)
  }

  /// A 2026-07-28 server's own `ttlMs` (60 s for the SDK peer) is honoured with no `toolListTTL`.
  @Test(.enabled(if: Peers.pythonMCPClient, "\(Peers.missingMessage)"))
  func theServersOwnTTLIsHonoured() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("eras", manifest: manifest(ttl: nil, arguments: [Paths.erasPeer, "server", "modern"]))
    let cache = MCPToolListCache(directory: folder.file("cache"))
    let started = await discover(folder, cache: cache, start: true)
    #expect(started.entries.map(\.tool.name) == ["echo"], "\(started.diagnostics)")
    let pids = runningServers(started)
    await started.shutdown()
    await expectGroupsToEnd(pids)
    let kept = await discover(folder, cache: cache, start: false)
    #expect(kept.entries.map(\.tool.name) == ["echo"])
    let server = PluginServer(
      manifest: try #require(kept.entries.first?.tool.manifest), endpoint: .command(executable: Peers.python3 ?? ""),
      hostEnvironment: hostEnvironment)
    #expect(cache.fresh(for: server)?.ttlMilliseconds == 60_000)
    #expect(cache.fresh(for: server, now: Date().addingTimeInterval(61)) == nil)
    let refreshed = await discover(folder, cache: cache, start: true, refresh: true)
    let refreshedPids = runningServers(refreshed)
    #expect(refreshedPids.count == 1)
    await refreshed.shutdown()
    await kept.shutdown()
    await expectGroupsToEnd(refreshedPids)
  }

  /// `toolhost list` shows a server's tools from the kept list once `list --start-servers` has listed them, and
  /// starts nothing; `describe` too.
  @Test(.enabled(if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)"))
  func theCommandLineListsKeptTools() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("fake", manifest: manifest(ttl: 3600))
    let environment = folder.userEnvironment(hostEnvironment)
    func run(_ arguments: [String]) async throws -> (status: ProcessOutcome.Termination, out: String, err: String) {
      let outcome = try await ProcessRunner.shared.run(
        ProcessSpec(
          executable: binary, arguments: arguments + ["--plugins", folder.path], environment: environment,
          workingDirectory: folder.path, timeout: .seconds(60)))
      return (outcome.termination, String(decoding: outcome.stdout, as: UTF8.self), outcome.stderrText)
    }
    let cold = try await run(["list"])
    #expect(cold.status == .exited(0) && !cold.out.contains("echo"), "\(cold)")
    let started = try await run(["list", "--start-servers"])
    #expect(started.out.contains("echo"), "\(started)")
    #expect(FileManager.default.fileExists(atPath: folder.file("cache/toolhost/mcp-tools")))
    let warm = try await run(["list"])
    #expect(warm.out.contains("echo") && warm.out.contains("pid"), "\(warm)")
    #expect(!warm.out.contains("not started"), "\(warm)")
    let described = try await run(["describe", "echo"])
    #expect(described.status == .exited(0) && described.out.contains("echo"), "\(described)")
    try await Task.sleep(for: .milliseconds(300))
    #expect(ProcessProbe.processes { $0.contains(Paths.fakeServer) && $0.contains(folder.path) }.isEmpty)
  }
}
