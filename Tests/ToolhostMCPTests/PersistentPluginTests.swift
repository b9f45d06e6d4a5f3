import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

/// A folder with the persistent test plugin (Support/persistent_plugin.py) and its catalog.
struct PersistentFixture {
  let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
  let catalog: PluginCatalog

  /// `extra` adds members (JSON text, after a comma) to the manifest.
  init(poolSize: Int = 1, timeout: Double = 5, extra: String = "") async {
    let tools = ["whoami", "sleep", "crash", "garbage", "grandchild", "fail", "big"].map {
      #"{"name": "\#($0)", "description": "test tool \#($0)", "inputSchema": {"type": "object"}}"#
    }
    folder.plugin(
      "persistent",
      manifest: """
        {"manifestVersion": 1, "command": "\(Paths.persistentPlugin)", "persistent": true, "poolSize": \(poolSize),
         "timeout": \(timeout), "tools": [\(tools.joined(separator: ", "))]\(extra.isEmpty ? "" : ", " + extra)}
        """)
    catalog = await PluginCatalog.discover(folders: [folder.path], environment: hostEnvironment, mcp: nil)
  }

  var registry: ToolRegistry { catalog.registry() }

  func call(_ tool: String, _ arguments: JSONValue = [:], timeout: Duration? = nil, outputLimit: Int? = nil)
    async throws(ToolCallError)
    -> JSONValue
  {
    try await registry.call(
      tool, arguments: arguments, context: ToolCallContext(timeout: timeout, outputLimit: outputLimit)
    ).value ?? .null
  }

  func pid(_ value: JSONValue) -> Int32 { Int32(value["pid"]?.integerValue ?? -1) }

  /// Shuts the plugin down and checks that none of `pids`' groups is left; kills leftovers either way.
  func shutDownAndCheck(_ pids: [Int32]) async {
    await catalog.shutdown()
    await expectGroupsToEnd(pids)
  }
}

@Suite("Persistent plugins", .enabled(if: Peers.python3 != nil, "needs python3"))
struct PersistentPluginTests {
  @Test func manyCallsReuseOneProcess() async throws {
    let f = await PersistentFixture()
    #expect(f.catalog.diagnostics.isEmpty, "\(f.catalog.diagnostics)")
    var pids: Set<Int32> = []
    var last: JSONValue = .null
    for _ in 0..<25 {
      last = try await f.call("whoami")
      pids.insert(f.pid(last))
    }
    #expect(pids.count == 1)
    #expect(last["served"] == 25)
    #expect(last["persistent"] == "1")
    await f.shutDownAndCheck(Array(pids))
  }

  @Test func aTimedOutCallKillsAndReplacesTheProcess() async throws {
    let f = await PersistentFixture()
    let first = f.pid(try await f.call("whoami"))
    let started = ContinuousClock.now
    await #expect {
      _ = try await f.call("sleep", ["seconds": 30], timeout: .milliseconds(300))
    } throws: { error in
      (error as? ToolCallError)?.failure == .timedOut(limit: .milliseconds(300))
    }
    #expect(ContinuousClock.now - started < .seconds(5))
    #expect(
      await ProcessProbe.waitForGroupToEnd(first).isEmpty, "the timed-out process is still running")
    let second = f.pid(try await f.call("whoami"))
    #expect(second != first)
    #expect(second > 0)
    await f.shutDownAndCheck([first, second])
  }

  @Test func aCrashIsReportedAndRecovered() async throws {
    let f = await PersistentFixture()
    let first = f.pid(try await f.call("whoami"))
    do {
      _ = try await f.call("crash")
      Issue.record("crash did not fail")
    } catch {
      guard case .exited(let status, let stderr) = error.failure else {
        Issue.record("expected exited, got \(error)")
        return
      }
      #expect(status == 3)
      #expect(stderr.contains("crashing on purpose"))
    }
    let second = try await f.call("whoami")
    #expect(f.pid(second) != first)
    #expect(second["served"] == 1)
    await f.shutDownAndCheck([first, f.pid(second)])
  }

  @Test func aLineThatIsNotAReplyRetiresTheProcess() async throws {
    let f = await PersistentFixture()
    let first = f.pid(try await f.call("whoami"))
    await #expect {
      _ = try await f.call("garbage")
    } throws: { error in
      if case .invalidReply = (error as? ToolCallError)?.failure { return true }
      return false
    }
    let second = f.pid(try await f.call("whoami"))
    #expect(second != first)
    await #expect {
      _ = try await f.call("fail")
    } throws: { error in
      if case .toolReported(_, let code, _) = (error as? ToolCallError)?.failure {
        return code == "unknown_tool"
      }
      return false
    }
    // An error reply is a normal reply: the process stays.
    #expect(f.pid(try await f.call("whoami")) == second)
    await f.shutDownAndCheck([first, second])
  }

  /// One output limit per call, as for a spawned plugin: the default 8 MiB, the manifest's `limits.outputMiB`, or
  /// the caller's (`--max-output`), above or below the others. A reply over it ends the process, which the next
  /// call replaces.
  @Test func eachCallIsHeldToItsOwnOutputLimit() async throws {
    let f = await PersistentFixture()
    let first = f.pid(try await f.call("whoami"))
    do {
      _ = try await f.call("big", ["bytes": .integer(9 << 20)])
      Issue.record("a reply over the default limit was accepted")
    } catch {
      #expect(error.failure == .outputTooLarge(limit: ResourceLimits.defaultOutputBytes))
    }
    let second = f.pid(try await f.call("whoami"))
    #expect(second != first)
    // A caller's larger limit reads the same reply whole; a smaller one fails a reply the default would take.
    let whole = try await f.call("big", ["bytes": .integer(9 << 20)], outputLimit: 16 << 20)
    #expect(whole["text"]?.stringValue?.utf8.count == 9 << 20)
    await #expect(throws: ToolCallError.self) { _ = try await f.call("big", ["bytes": 5000], outputLimit: 1000) }
    await f.shutDownAndCheck([first, second])

    let small = await PersistentFixture(extra: #""limits": {"outputMiB": 1}"#)
    do {
      _ = try await small.call("big", ["bytes": .integer(2 << 20)])
      Issue.record("a reply over the manifest's limit was accepted")
    } catch {
      #expect(error.failure == .outputTooLarge(limit: 1 << 20))
    }
    #expect(try await small.call("big", ["bytes": 1000])["text"]?.stringValue?.count == 1000)
    await small.shutDownAndCheck([])
  }

  @Test func aPoolRunsCallsSideBySide() async throws {
    let f = await PersistentFixture(poolSize: 2)
    let registry = f.registry
    let results = await registry.callAll(
      (0..<6).map { _ in ToolCallRequest(tool: "sleep", arguments: ["seconds": 0.3]) },
      concurrency: 6)
    let values = try results.map { try $0.get().value ?? .null }
    let pids = values.map(f.pid)
    #expect(Set(pids).count == 2, "\(pids)")
    // The calls' own clocks (CLOCK_MONOTONIC, shared by the processes): never more than 2 at once, and 2 at once.
    let intervals = values.compactMap { v -> (Double, Double)? in
      guard let s = v["started"]?.doubleValue, let e = v["ended"]?.doubleValue else { return nil }
      return (s, e)
    }
    #expect(intervals.count == 6)
    let overlaps = intervals.map { a in intervals.filter { b in b.0 <= a.0 && a.0 < b.1 }.count }
    #expect(overlaps.max() == 2, "\(intervals)")
    await f.shutDownAndCheck(pids)
  }

  @Test func shutdownEndsTheProcessGroup() async throws {
    let f = await PersistentFixture()
    let value = try await f.call("grandchild")
    let (pid, child) = (f.pid(value), Int32(value["child"]?.integerValue ?? -1))
    #expect(ProcessProbe.isAlive(child))
    #expect(ProcessProbe.inGroup(pid).contains(child))
    await f.shutDownAndCheck([pid])
    #expect(await ProcessProbe.waitForEnd(child), "the grandchild \(child) survived")
    // Later calls fail cleanly.
    await #expect {
      _ = try await f.call("whoami")
    } throws: { error in
      (error as? ToolCallError)?.failure == .cancelled
    }
  }

  @Test func cancellingACallKillsAndReplacesTheProcess() async throws {
    let f = await PersistentFixture()
    let first = f.pid(try await f.call("whoami"))
    let registry = f.registry
    let task = Task { try await registry.call("sleep", arguments: ["seconds": 30]) }
    try await Task.sleep(for: .milliseconds(300))
    task.cancel()
    let result = await task.result
    #expect(throws: ToolCallError.self) { try result.get() }
    #expect(await ProcessProbe.waitForGroupToEnd(first).isEmpty)
    let second = f.pid(try await f.call("whoami"))
    #expect(second != first)
    await f.shutDownAndCheck([first, second])
  }

  @Test func restartsLeakNoDescriptors() async throws {
    func openDescriptors() -> Int {
      (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
    let f = await PersistentFixture()
    var pids: [Int32] = [f.pid(try await f.call("whoami"))]
    let before = openDescriptors()
    for _ in 0..<10 {
      _ = try? await f.call("crash")
      pids.append(f.pid(try await f.call("whoami")))
    }
    #expect(Set(pids).count == 11)
    await f.shutDownAndCheck(pids)
    try await Task.sleep(for: .milliseconds(200))
    // Other tests run alongside and open descriptors of their own: allow a little slack, not 4 per restart.
    #expect(
      openDescriptors() <= before + 8, "\(before) descriptors before, \(openDescriptors()) after")
  }

  @Test func theUnitsExamplePlugin() async throws {
    let catalog = await PluginCatalog.discover(
      folders: [TestPackage.plugins.path], environment: hostEnvironment, mcp: nil)
    let registry = catalog.registry()
    let output = try await registry.call(
      "convertUnits", arguments: ["value": 5, "from": "mi", "to": "km"])
    #expect(output.value?["value"] == 8.04672)
    #expect(output.text == "5 mi = 8.04672 km")
    // Units named as a question in another language names them.
    let pounds = try await registry.call("convertUnits", arguments: ["value": 50, "from": "libras", "to": "kg"])
    #expect(pounds.text == "50 lb = 22.6796 kg")
    let miles = try await registry.call("convertUnits", arguments: ["value": 10, "from": "Milhas", "to": "km"])
    #expect(miles.text == "10 mi = 16.0934 km")
    await #expect {
      _ = try await registry.call(
        "convertUnits", arguments: ["value": 1, "from": "cup", "to": "kg"])
    } throws: { error in
      if case .toolReported(_, let code, _) = (error as? ToolCallError)?.failure {
        return code == "incompatible_units"
      }
      return false
    }
    await catalog.shutdown()
  }
}

@Suite("Manifest forms")
struct ManifestFormTests {
  func problem(_ json: String) -> String? {
    do {
      _ = try PluginManifest.make(try JSONValue.parse(json), path: "/tmp/x/toolhost.json")
      return nil
    } catch let error as ManifestError {
      return error.message
    } catch {
      return "\(error)"
    }
  }

  @Test func persistentAndPoolSize() throws {
    let tool = #"{"name": "t", "description": "d", "inputSchema": {"type": "object"}}"#
    let m = try PluginManifest.make(
      try JSONValue.parse(
        #"{"manifestVersion": 1, "command": "x", "persistent": true, "poolSize": 3, "tools": [\#(tool)]}"#
      ),
      path: "/tmp/x/toolhost.json")
    #expect(m.persistent && m.poolSize == 3 && m.mcp == nil)
    #expect(
      problem(
        #"{"manifestVersion": 1, "command": "x", "persistent": true, "output": "text", "tools": [\#(tool)]}"#
      )?
      .contains("cannot be used with") == true)
    #expect(
      problem(#"{"manifestVersion": 1, "command": "x", "poolSize": 2, "tools": [\#(tool)]}"#)?
        .contains("persistent")
        == true)
    let withArgs =
      #"{"name": "t", "description": "d", "inputSchema": {"type": "object"}, "args": ["-v"]}"#
    #expect(
      problem(
        #"{"manifestVersion": 1, "command": "x", "persistent": true, "tools": [\#(withArgs)]}"#)?
        .contains(
          "move the arguments") == true)
  }

  @Test func mcpServers() throws {
    let m = try PluginManifest.make(
      try JSONValue.parse(
        #"{"manifestVersion": 1, "timeout": 5, "mcp": {"command": "srv", "args": ["-x"], "env": ["API_KEY"]}}"#
      ),
      path: "/tmp/my-server/toolhost.json")
    #expect(m.mcp?.name == "my-server")
    #expect(
      m.command == "srv" && m.arguments == ["-x"] && m.environment == ["API_KEY"] && m.tools.isEmpty
    )
    #expect(m.mcp?.prefixTools == false)
    let named = try PluginManifest.make(
      try JSONValue.parse(
        #"{"manifestVersion": 1, "mcp": {"command": "srv", "name": "t1", "prefixTools": true}}"#),
      path: "/tmp/a/t.toolhost.json")
    #expect(named.mcp?.name == "t1" && named.mcp?.prefixTools == true)
    #expect(
      PluginManifest.defaultServerName(path: "/tmp/a/weird name.toolhost.json") == "weird_name")
    #expect(
      problem(#"{"manifestVersion": 1, "mcp": {"command": "srv"}, "tools": []}"#)?.contains(
        "cannot also have")
        == true)
    #expect(problem(#"{"manifestVersion": 1, "mcp": {"args": []}}"#) != nil)
    #expect(
      problem(#"{"manifestVersion": 1, "mcp": {"command": "srv", "name": "bad name"}}"#) != nil)
    #expect(problem(#"{"manifestVersion": 1}"#) != nil)
  }

  @Test func theExampleManifestsLoad() throws {
    let units = try PluginManifest.load(path: TestPackage.plugins.path + "/units/toolhost.json")
    #expect(units.persistent && units.poolSize == 2)
    let time = try PluginManifest.load(path: TestPackage.plugins.path + "/time-mcp/toolhost.json")
    #expect(time.mcp?.name == "time" && time.command == "mcp-server-time")
  }

  @Test func withoutALoaderAnMCPManifestIsANote() async {
    let folder = TemporaryFolder(prefix: "toolhost-mcp-test")
    folder.plugin("srv", manifest: #"{"manifestVersion": 1, "mcp": {"command": "/bin/sh"}}"#)
    let catalog = await PluginCatalog.discover(
      folders: [folder.path], environment: hostEnvironment, mcp: nil)
    #expect(catalog.entries.isEmpty)
    #expect(catalog.diagnostics.map(\.kind) == [.serverFailed])
    #expect(!catalog.hasErrors)
  }
}
