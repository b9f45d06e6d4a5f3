/// Hostile plugins: no misbehaving plugin can hang toolhost, make it report the wrong failure, or leave a process
/// behind.
///
/// One Python program, Hostile/hostile/hostile.py, misbehaves in 34 ways, one per tool: it hangs, ignores SIGTERM,
/// stops itself, daemonizes out of its process group and session (with and without its environment), moves a
/// process out of its call's cgroup, leaves a grandchild holding stdout, forks a hundred children, floods stdout or
/// stderr, prints replies that are not JSON or nothing at all, crashes, writes to the terminal, ignores its input,
/// and runs into the manifest's `limits` on memory, CPU time, file size and open files. Every process it starts
/// appends its pid to `<pidDir>/pids`.
///
/// Each case runs through `toolhost call` in json and in text mode (Hostile/hostile-text), all at once through
/// `toolhost batch`, and through `toolhost serve --mcp`. For each, the suite checks the failure code and exit
/// status in ``Hostile/cases`` (the one table of expectations), that the call ended within its time limit, and that
/// every recorded process has ended within a second. A thousand calls of a small sh plugin (Hostile/hostile-sh)
/// against one `serve --mcp` show that it leaks no descriptors, and a call under script(1) shows that a plugin
/// has no controlling terminal (/dev/tty fails). (It could still open toolhost's terminal by its path, as any
/// program of the user's can: docs/security.md, Containment and limits.)
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The tests

// The tests block while toolhost runs; on the main actor they keep Swift's two pool threads free for the async tests
// running beside them.
@MainActor
@Suite("Hostile plugins", .serialized)
struct HostilePluginTests {
  let fixture: Hostile.Fixture

  init() throws {
    fixture = try Hostile.Fixture()
    subreaper = try Hostile.Fixture(containment: "subreaper")
  }

  /// The same toolhost with the subreaper and marker instead of a cgroup.
  let subreaper: Hostile.Fixture

  @Test func theHostilePluginsLoad() throws {
    for (folder, names) in [
      (fixture.plugins, Hostile.cases.flatMap { [$0.tool, $0.tool + "Text"] }), (fixture.shPlugins, Hostile.quickTools),
    ] {
      let list = try fixture.run(["list", "--json", "--plugins", folder], limit: 60).output
      let json = try JSONValue.parse(list.stdoutText)
      let found = Set(json["tools"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
      #expect(Set(names).subtracting(found).isEmpty, "missing tools: \(Set(names).subtracting(found).sorted())")
      #expect(json["diagnostics"]?.arrayValue?.isEmpty == true, "\(json["diagnostics"]?.serialized() ?? "")")
    }
  }

  @Test("toolhost call, json mode", arguments: Hostile.cases)
  func callInJSONMode(_ hostile: Hostile.Case) throws {
    try call(hostile, mode: .json)
  }

  @Test("toolhost call, text mode", arguments: Hostile.cases)
  func callInTextMode(_ hostile: Hostile.Case) throws {
    try call(hostile, mode: .text)
  }

  // Without a cgroup the process limit is not enforced (see Expectation.processLimit).
  @Test("toolhost call, json mode, subreaper containment", arguments: Hostile.cases.filter { $0.tool != "forkMany" })
  func callInJSONModeWithTheSubreaper(_ hostile: Hostile.Case) throws {
    try call(hostile, mode: .json, in: subreaper)
  }

  @Test(arguments: [false, true])
  func batchRunsEveryCaseAtOnce(withTheSubreaper: Bool) throws {
    let fixture = withTheSubreaper ? subreaper : self.fixture
    // Without a cgroup the process limit is not enforced (see Expectation.processLimit).
    let cases = Hostile.cases.filter { !withTheSubreaper || $0.tool != "forkMany" }
    let pidDirs = cases.map { fixture.pidDir("batch-" + $0.tool) }
    let lines = zip(cases, pidDirs).map { hostile, pidDir in
      JSONValue.object([
        "tool": .string(hostile.tool), "arguments": hostile.arguments(pidDir: pidDir), "id": .string(hostile.tool),
      ]).serialized()
    }
    let budget = cases.map(\.timeout).reduce(0, +) / 8 + 3
    let (out, seconds) = try fixture.run(
      ["batch", "--plugins", fixture.plugins, "--concurrency", "8"],
      input: Data((lines.joined(separator: "\n") + "\n").utf8),
      limit: budget + 30)
    #expect(seconds <= budget, "the batch took \(seconds) s, more than \(budget) s")
    #expect(out.status == 1, "stderr: \(out.stderrText.suffix(500))")
    let results = out.stdoutText.split(separator: "\n").map { try? JSONValue.parse(String($0)) }
    #expect(results.count == cases.count, "\(results.count) result lines for \(cases.count) calls")
    for (index, (hostile, result)) in zip(cases, results).enumerated() {
      guard let result else {
        Issue.record("batch \(hostile.tool): its result line is not JSON")
        continue
      }
      #expect(result["index"]?.integerValue == Int64(index) && result["id"]?.stringValue == hostile.tool)
      verify(Hostile.Outcome(batchLine: result), hostile, .json, "batch \(hostile.tool)")
    }
    expectCleanEnd(pidDirs, "batch")
  }

  @Test func serveMCPAnswersEveryCaseInTime() throws {
    let server = try Hostile.serve(plugins: fixture.plugins, fixture: fixture)
    defer { server.blockingStop() }
    try server.blockingInitialize()
    for (index, hostile) in Hostile.cases.enumerated() {
      let label = "serve \(hostile.tool)"
      let pidDir = fixture.pidDir("serve-" + hostile.tool)
      let id = Int64(index + 1)
      try server.sendCall(id: id, hostile.tool, hostile.arguments(pidDir: pidDir))
      // From sending to the answer: the time limit, and 1 s to stop the plugin and answer.
      if let response = server.blockingResponse(to: id, within: hostile.timeout + 1) {
        verify(Hostile.Outcome(mcpResponse: response), hostile, .json, label)
      } else {
        Issue.record("\(label): no answer within \(hostile.timeout + 1) s; serve's log: \(server.log)")
      }
      expectCleanEnd([pidDir], label)
    }
    server.closeInput()
    #expect(server.blockingWaitForExit(within: 5), "serve --mcp did not exit when its stdin closed")
  }

  @Test(arguments: [false, true])
  func serveLeaksNoDescriptorsOverAThousandCalls(withTheSubreaper: Bool) throws {
    let fixture = withTheSubreaper ? subreaper : self.fixture
    let calls = 1000
    let inFlight = 8
    let tools = Hostile.quickTools
    let failing = tools.map { tool in Hostile.cases.first { $0.tool == tool }?.json != .ok }
    let server = try Hostile.serve(plugins: fixture.shPlugins, fixture: fixture)
    defer { server.blockingStop() }
    try server.blockingInitialize()

    var pidDirs: [String] = []
    var wrong: [String] = []
    var answered = 0
    /// Waits for the answers to the calls before `end`, checking that each is an error when it should be. False
    /// when one does not come within 10 s: the server is stuck, and waiting for the rest would take hours.
    func settle(upTo end: Int) -> Bool {
      while answered < end {
        let tool = tools[answered % tools.count]
        guard let response = server.blockingResponse(to: Int64(answered + 1), within: 10) else {
          Issue.record("call \(answered) of \(tool): no answer within 10 s; serve's log: \(server.log)")
          return false
        }
        if response["result"]?["isError"] != .bool(failing[answered % tools.count]) {
          wrong.append("call \(answered) of \(tool): \(response.serialized().prefix(300))")
        }
        answered += 1
      }
      return true
    }

    var afterFifty = 0
    var stuck = false
    for call in 0..<calls {
      if call == 50 {
        stuck = !settle(upTo: 50)
        Thread.sleep(forTimeInterval: 0.2)
        afterFifty = server.descriptorCount
      }
      if stuck || !settle(upTo: call - inFlight + 1) {
        stuck = true
        break
      }
      let pidDir = fixture.pidDir("leak")
      pidDirs.append(pidDir)
      try server.sendCall(id: Int64(call + 1), tools[call % tools.count], ["pidDir": .string(pidDir)])
    }
    if !stuck, settle(upTo: calls) {
      Thread.sleep(forTimeInterval: 0.2)
      let afterAll = server.descriptorCount
      #expect(afterFifty > 0)
      #expect(
        afterAll <= afterFifty + 2,
        "serve --mcp had \(afterFifty) descriptors after 50 calls, \(afterAll) after \(calls)")
    }
    #expect(wrong.isEmpty, "\(wrong.count) wrong answers, the first: \(wrong.prefix(3))")
    expectCleanEnd(pidDirs, "\(calls) calls of serve --mcp")
    server.closeInput()
    #expect(server.blockingWaitForExit(within: 5), "serve --mcp did not exit when its stdin closed")
  }

  @Test(arguments: [false, true])
  func killingToolhostEndsItsPlugins(withTheSubreaper: Bool) throws {
    let fixture = withTheSubreaper ? subreaper : self.fixture
    let hostile = try #require(Hostile.cases.first { $0.tool == "daemonizeThenHang" })
    let pidDir = fixture.pidDir("killed")
    let process = Process()
    process.executableURL = toolhostBinary
    process.arguments = [
      "call", "--plugins", fixture.plugins, "--timeout", "60", hostile.tool, "--json",
      "@" + (try fixture.writeArguments(hostile, pidDir: pidDir)),
    ]
    process.environment = fixture.environment
    process.currentDirectoryURL = URL(fileURLWithPath: fixture.work)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    // The plugin and its daemon have both started.
    let deadline = Hostile.monotonicSeconds() + 10
    while Hostile.recordedPIDs(pidDir).count < 2, Hostile.monotonicSeconds() < deadline {
      Thread.sleep(forTimeInterval: 0.02)
    }
    #expect(Hostile.recordedPIDs(pidDir).count == 2, "the plugin did not start its daemon")
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    // The watchdog ends them; the clean-end check waits 1 s, so give it a moment more to notice.
    Thread.sleep(forTimeInterval: 0.5)
    expectCleanEnd([pidDir], "kill -9 of toolhost")
  }

  /// A process that moves itself out of its call's cgroup (into one above it that it may write) is ended with the
  /// call: the same toolhost serves the next call, so no exit of toolhost (and its watchdog) ends it instead.
  @Test(
    .enabled(
      if: Hostile.cgroupContainment,
      """
      needs cgroup containment (toolhost doctor: a cgroup v2 toolhost may create, as root, in a container or in a \
      delegated systemd scope); ContainmentTests.aCellWithACgroupAlsoSweepsWhatLeftIt covers the sweep without one
      """),
    arguments: ["leaveCgroupThenReply", "leaveCgroupClearEnvThenReply"])
  func aProcessThatLeavesItsCgroupEndsWithItsCall(tool: String) throws {
    let hostile = try #require(Hostile.cases.first { $0.tool == tool })
    let server = try Hostile.serve(plugins: fixture.plugins, fixture: fixture)
    defer { server.blockingStop() }
    try server.blockingInitialize()
    let pidDir = fixture.pidDir("left-" + tool)
    try server.sendCall(id: 1, tool, hostile.arguments(pidDir: pidDir))
    if let response = server.blockingResponse(to: 1, within: hostile.timeout + 1) {
      verify(Hostile.Outcome(mcpResponse: response), hostile, .json, "serve \(tool)")
    } else {
      Issue.record("serve \(tool): no answer within \(hostile.timeout + 1) s; serve's log: \(server.log)")
    }
    let left = (try? String(contentsOfFile: pidDir + "/left-cgroup", encoding: .utf8)) ?? ""
    #expect(!left.isEmpty, "serve \(tool): the plugin's process could not move itself out of its cgroup")
    expectCleanEnd([pidDir], "serve \(tool)")
    server.closeInput()
    #expect(server.blockingWaitForExit(within: 5), "serve --mcp did not exit when its stdin closed")
  }

  @Test(.enabled(if: Hostile.script != nil, "needs script(1) from util-linux"))
  func aPluginHasNoControllingTerminal() throws {
    let hostile = try #require(Hostile.cases.first { $0.tool == "writeTTY" })
    let pidDir = fixture.pidDir("terminal")
    let argumentsFile = try fixture.writeArguments(hostile, pidDir: pidDir)
    let command = [
      toolhostBinary.path, "call", "--plugins", fixture.plugins, "--json", hostile.tool, "--json", "@" + argumentsFile,
    ].map(Hostile.shellQuoted).joined(separator: " ")
    // script gives toolhost a terminal of its own (and its controlling terminal); its stdout is what was shown there.
    let (out, seconds) = try fixture.run(
      ["-qec", command, "/dev/null"], executable: try #require(Hostile.script), limit: 30)
    let terminal = out.stdoutText.replacingOccurrences(of: "\r", with: "")
    #expect(out.status == 0, "\(terminal)")
    #expect(seconds <= hostile.timeout + 0.5 + 0.7, "the call took \(seconds) s")
    #expect(!terminal.contains("HOSTILE-TTY-MARKER"), "the plugin wrote to toolhost's terminal:\n\(terminal)")
    let reply = terminal.firstIndex(of: "{").flatMap { start in
      terminal.lastIndex(of: "}").flatMap { end in try? JSONValue.parse(String(terminal[start...end])) }
    }
    #expect(reply?["result"]?["tty"] == false, "the plugin could open /dev/tty:\n\(terminal)")
    expectCleanEnd([pidDir], "writeTTY under script")
  }

  // MARK: Helpers

  /// One `toolhost call --json` of a case, checked against the table, its time limit and its processes.
  private func call(_ hostile: Hostile.Case, mode: Hostile.Mode, in fixture: Hostile.Fixture? = nil) throws {
    let fixture = fixture ?? self.fixture
    let tool = hostile.tool + mode.suffix
    let pidDir = fixture.pidDir(tool)
    let argumentsFile = try fixture.writeArguments(hostile, pidDir: pidDir)
    // The time limit, 0.5 s for toolhost to stop the plugin's processes, and 0.7 s for toolhost's own start-up in
    // a debug build (and Python's).
    let budget = hostile.timeout + 0.5 + 0.7
    let (out, seconds) = try fixture.run(
      ["call", "--plugins", fixture.plugins, "--json", tool, "--json", "@" + argumentsFile], limit: budget + 10)
    #expect(seconds <= budget, "\(tool) took \(seconds) s: its time limit is \(hostile.timeout) s")
    verify(Hostile.Outcome(call: out), hostile, mode, "call \(tool)")
    expectCleanEnd([pidDir], "call \(tool)")
  }

  /// Checks an outcome against the table; `label` names the case, its mode and how it was called.
  private func verify(_ outcome: Hostile.Outcome, _ hostile: Hostile.Case, _ mode: Hostile.Mode, _ label: String) {
    switch hostile.expected(mode) {
    case .ok:
      #expect(outcome.ok, "\(label): expected success, got \(outcome.code ?? "a failure"): \(outcome.message)")
      // Only the cases that reply in json mode print the result (or its text) in both modes.
      guard outcome.ok, hostile.json == .ok else { return }
      if mode == .json {
        #expect(
          outcome.result?.jsonEquals(hostile.result) == true,
          "\(label): result \(outcome.result?.serialized() ?? "none")")
      } else {
        #expect(outcome.text == hostile.resultText, "\(label): text «\(outcome.text ?? "none")»")
      }
    case .fails(let code, let message):
      expectFailure(outcome, codes: [code], message: message, label)
    case .processLimit:
      let codes = Hostile.cgroupContainment ? ["limit_exceeded"] : ["timed_out", "limit_exceeded"]
      let limited = outcome.code == "limit_exceeded" || outcome.message.contains("exceeded its")
      expectFailure(outcome, codes: codes, message: limited ? "exceeded its process limit of 32" : nil, label)
    }
  }

  private func expectFailure(_ outcome: Hostile.Outcome, codes: [String], message: String?, _ label: String) {
    let wanted = codes.joined(separator: " or ")
    guard !outcome.ok else {
      Issue.record("\(label): expected \(wanted), but the call succeeded")
      return
    }
    if let code = outcome.code {
      #expect(codes.contains(code), "\(label): expected \(wanted), got \(code): \(outcome.message)")
    } else {
      let named = codes.contains { outcome.message.contains(Hostile.phrases[$0] ?? $0) }
      #expect(named, "\(label): expected a message saying \(wanted), got: \(outcome.message)")
    }
    if let message {
      #expect(outcome.message.contains(message), "\(label): the message does not say «\(message)»: \(outcome.message)")
    }
    if let status = outcome.status {
      #expect(codes.map(Hostile.exitStatus).contains(status), "\(label): exit status \(status) for \(wanted)")
    }
  }

  /// Expects that the plugin ran (it recorded its pid), that every process it started has ended within 1 s, and
  /// that no file it wrote passed the 1 MiB file size limit; then kills what is left, so a failing run leaves
  /// nothing behind either.
  private func expectCleanEnd(_ pidDirs: [String], _ label: String) {
    #expect(pidDirs.allSatisfy { !Hostile.recordedPIDs($0).isEmpty }, "\(label): no pid recorded; did the plugin run?")
    for pidDir in pidDirs {
      let size = try? URL(fileURLWithPath: pidDir + "/big.bin").resourceValues(forKeys: [.fileSizeKey]).fileSize
      #expect((size ?? 0) <= 1 << 20, "\(label): the plugin wrote \(size ?? 0) bytes past its 1 MiB limit")
    }
    let deadline = Hostile.monotonicSeconds() + 1
    var alive: [pid_t] = []
    repeat {
      alive = pidDirs.flatMap(Hostile.recordedPIDs).filter { ProcessProbe.isAlive($0) }
      if alive.isEmpty { return }
      Thread.sleep(forTimeInterval: 0.02)
    } while Hostile.monotonicSeconds() < deadline
    Issue.record(
      "\(label): \(alive.count) processes still running 1 s after the call: \(alive.map(Hostile.describe).joined(separator: ", "))"
    )
    for pid in alive { kill(pid, SIGKILL) }
  }
}
