// The hostile plugins' cases, their outcomes and fixture, for HostilePluginTests.swift (which says what they test).
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The cases

enum Hostile {
  /// How a case must end.
  enum Expectation: Sendable, Equatable {
    /// Success: in json mode the plugin's reply `result`, in text mode its stdout.
    case ok
    /// A failure with this error `code`; `message`, when given, is part of the error's message.
    case fails(String, message: String? = nil)
    /// `limit_exceeded` ("exceeded its process limit of 32") when `toolhost doctor` reports cgroup containment,
    /// which caps a call's processes (pids.max, or counting the cgroup's). Without a cgroup the limit is not
    /// enforced (RLIMIT_NPROC would count all of the user's processes, and none of root's): the forks succeed,
    /// the plugin hangs, and `timed_out` is accepted too.
    case processLimit
  }

  enum Mode: Sendable {
    case json, text

    /// The tool names of the text-mode plugin end in `Text`.
    var suffix: String { self == .text ? "Text" : "" }
  }

  /// One misbehaviour of hostile.py: its tool, time limit, how it must end in each mode, the result it replies
  /// with when it succeeds, and its large string arguments (name: length).
  struct Case: Sendable, CustomTestStringConvertible {
    var tool: String
    var json: Expectation
    var text: Expectation
    var timeout: Double
    var result: JSONValue
    var strings: [String: Int]

    init(
      _ tool: String, _ json: Expectation, text: Expectation? = nil, timeout: Double = 1,
      result: JSONValue = ["ok": true], strings: [String: Int] = [:]
    ) {
      self.tool = tool
      self.json = json
      self.text = text ?? json
      self.timeout = timeout
      self.result = result
      self.strings = strings
    }

    var testDescription: String { tool }

    func expected(_ mode: Mode) -> Expectation { mode == .json ? json : text }

    /// The argument object: `pidDir`, and each string argument as that many `x`.
    func arguments(pidDir: String) -> JSONValue {
      var object: JSONObject = ["pidDir": .string(pidDir)]
      for (name, length) in strings.sorted(by: { $0.key < $1.key }) {
        object[name] = .string(String(repeating: "x", count: length))
      }
      return .object(object)
    }

    /// What hostile.py prints instead of `result` in text mode: `ok`, then ` name=value` for the other members.
    var resultText: String {
      let members = result.objectValue.map { Array($0) } ?? []
      return "ok" + members.filter { $0.key != "ok" }.map { " \($0.key)=\($0.value.serialized())" }.joined()
    }
  }

  /// Every case and how toolhost must end it, in json mode and (where it differs) text mode. Time limits are the
  /// manifest's: 1 s unless given. In text mode stdout is the result and exit status 0 is success, so the
  /// replies that are not JSON succeed there.
  static let cases: [Case] = [
    // Hanging: the call times out and everything the plugin started is stopped.
    Case("hang", .fails("timed_out", message: "timed out after 1 s")),
    Case("hangWithGrandchildHoldingStdout", .fails("timed_out")),
    Case("ignoreSigterm", .fails("timed_out")),
    Case("daemonizeThenHang", .fails("timed_out")),
    Case("closeStdoutKeepRunning", .fails("timed_out")),
    Case("replyThenHang", .fails("timed_out")),
    Case("stopSelf", .fails("timed_out")),
    // Replying, but leaving processes behind: the call succeeds and the leftovers are stopped.
    Case("daemonizeSetsidThenReply", .ok),
    Case("daemonizeSetpgidThenReply", .ok),
    Case("doubleForkThenReply", .ok),
    Case("daemonizeClearEnvThenReply", .ok),
    // Leaving the call's cgroup too (where there is one), keeping the marker or not (see aProcessThatLeavesItsCgroup…).
    Case("leaveCgroupThenReply", .ok),
    Case("leaveCgroupClearEnvThenReply", .ok),
    Case("grandchildHoldsStdoutThenReply", .ok),
    // Floods.
    Case("floodStdout", .fails("output_too_large")),
    Case("floodStderrThenReply", .ok),
    // Replies that are not one JSON reply object.
    Case("garbage", .fails("invalid_reply"), text: .ok),
    Case("invalidUTF8", .fails("invalid_reply"), text: .ok),
    Case("nulBytes", .fails("invalid_reply"), text: .ok),
    Case("deepJSON", .fails("invalid_reply"), text: .ok),
    Case("twoReplies", .fails("invalid_reply"), text: .ok),
    Case("noReply", .fails("invalid_reply"), text: .ok),
    // Dying.
    Case("crashBySignal", .fails("signaled", message: "killed by signal 11 (SIGSEGV)")),
    Case("exitWithError", .fails("exited", message: "exited with status 3: disk on fire")),
    // Input: ignored, or too large for the environment (values over 16 KiB stay out of it; stdin has them all).
    Case("neverReadStdin", .ok, strings: ["big": 1 << 20]),
    Case("exitsWithoutReadingHugeInput", .ok, strings: ["big": 4 << 20]),
    Case(
      "hugeArgumentsInEnv", .ok, result: ["envArguments": 1, "stdinArguments": 11],
      strings: Dictionary(uniqueKeysWithValues: (0..<10).map { ("chunk\($0)", 200 << 10) })),
    Case("slowButFine", .ok),
    // The terminal: a plugin has no controlling one (see aPluginHasNoControllingTerminal for a run that has one).
    Case("writeTTY", .ok, result: ["tty": false]),
    // Resource limits (the tool's `limits` over the manifest's larger ones).
    Case("forkMany", .processLimit),
    Case("memoryHog", .fails("limit_exceeded", message: "exceeded its memory limit of 256 MiB")),
    Case("cpuBurn", .fails("limit_exceeded", message: "exceeded its CPU time limit of 1 s"), timeout: 5),
    Case("fileHog", .fails("limit_exceeded", message: "exceeded its file size limit of 1 MiB")),
    Case("openFilesHog", .fails("limit_exceeded", message: "exceeded its open files limit of 64")),
  ]

  /// The tools of Hostile/hostile-sh, for the thousand calls of the descriptor-leak test.
  static let quickTools = [
    "daemonizeSetsidThenReply", "grandchildHoldsStdoutThenReply", "garbage", "crashBySignal", "exitWithError",
    "doubleForkThenReply",
  ]

  /// toolhost's exit status for a failure code.
  static func exitStatus(forCode code: String) -> Int32 {
    switch code {
    case "timed_out": 124
    case "launch_failed": 126
    default: 1
    }
  }

  /// Words of each failure's description, for MCP, whose error results carry only text.
  static let phrases: [String: String] = [
    "timed_out": "timed out after", "output_too_large": "on stdout, so the call was stopped",
    "invalid_reply": "invalid reply", "signaled": "killed by signal", "exited": "exited with status",
    "limit_exceeded": "exceeded its", "launch_failed": "cannot start",
  ]

  /// Whether `toolhost doctor` says plugins are contained in cgroups (a line with `containment: cgroup`).
  static let cgroupContainment: Bool = {
    guard let fixture = try? Fixture(), let doctor = try? fixture.run(["doctor"], limit: 60) else { return false }
    return doctor.output.stdoutText.contains("containment: cgroup")
  }()

  static let script: String? = ["/usr/bin/script", "/bin/script"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }
}

// MARK: - Outcomes

extension Hostile {
  /// How a call ended, read from `call --json`, a `batch` line or an MCP `tools/call` result.
  struct Outcome {
    var ok: Bool
    /// The error's code; nil through MCP, whose error results carry only text.
    var code: String?
    var message: String
    var result: JSONValue?
    var text: String?
    /// toolhost's exit status (`call` only).
    var status: Int32?

    /// `toolhost call --json`: the reply (`result`, `text`) on success, `{"error": {code, message}}` on failure.
    init(call out: Subprocess.Output) {
      let json = try? JSONValue.parse(out.stdoutText)
      let error = json?["error"]
      ok = out.status == 0 && json != nil && error == nil
      code = error?["code"]?.stringValue
      message =
        error?["message"]?.stringValue
        ?? "status \(out.status)\(out.timedOut ? " (killed by the test)" : ""), stdout «\(out.stdoutText.prefix(300))»"
        + ", stderr «\(out.stderrText.suffix(300))»"
      result = json?["result"]
      text = json?["text"]?.stringValue
      status = out.status
    }

    /// A `toolhost batch` line: `{"ok": true, "result", "text"?}` or `{"ok": false, "error": {code, message}}`.
    init(batchLine line: JSONValue) {
      ok = line["ok"] == true
      code = line["error"]?["code"]?.stringValue
      message = line["error"]?["message"]?.stringValue ?? line.serialized()
      result = line["result"]
      text = line["text"]?.stringValue
    }

    /// A `tools/call` response: `isError` and the text naming the problem, `structuredContent` on success.
    init(mcpResponse response: JSONValue) {
      let result = response["result"]
      ok = result?["isError"] == false
      message = result?["content"]?[0]?["text"]?.stringValue ?? response.serialized()
      self.result = result?["structuredContent"]
      text = nil
    }
  }
}

// MARK: - The fixture

extension Hostile {
  /// The hostile plugins copied into a temporary folder (tests never write into the repository), a working folder
  /// without a `plugins` folder, toolhost's environment, and a fresh pid folder per call; all removed at the end.
  final class Fixture {
    private let temp = TemporaryFolder(prefix: "toolhost-cli")
    private var pidDirCount = 0
    /// hostile and hostile-text.
    let plugins: String
    /// hostile-sh, whose tools have the same names as hostile's.
    let shPlugins: String
    let work: String
    let environment: [String: String]

    /// - Parameter containment: `TOOLHOST_CONTAINMENT` for toolhost (`subreaper` to test the mechanism used where
    ///   no cgroup can be made); the machine's strongest when nil.
    init(containment: String? = nil) throws {
      plugins = temp.path + "/plugins"
      shPlugins = temp.path + "/sh-plugins"
      work = temp.path + "/work"
      let source = TestPackage.root.appendingPathComponent("Tests/ToolhostCLITests/Hostile").path
      let files = FileManager.default
      for folder in [plugins, shPlugins, work, temp.path + "/config", temp.path + "/calls"] {
        try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
      }
      for (plugin, parent) in [("hostile", plugins), ("hostile-text", plugins), ("hostile-sh", shPlugins)] {
        try files.copyItem(atPath: source + "/" + plugin, toPath: parent + "/" + plugin)
      }
      for program in [plugins + "/hostile/hostile.py", shPlugins + "/hostile-sh/run"] {
        try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program)
      }
      var env = ProcessInfo.processInfo.environment
      env["TOOLHOST_PLUGIN_PATH"] = nil
      env["XDG_CONFIG_HOME"] = temp.path + "/config"
      env["XDG_CACHE_HOME"] = temp.path + "/cache"
      env["PATH"] = Self.pathWithoutShims(env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
      env["TOOLHOST_CONTAINMENT"] = containment
      environment = env
    }

    /// PATH without version managers' shim folders (pyenv, asdf) when python3 is also found elsewhere on it: a
    /// shim runs bash and the manager before Python, a quarter of a second of a 1 s time limit.
    static func pathWithoutShims(_ path: String) -> String {
      let folders = path.split(separator: ":").map(String.init)
      let direct = folders.filter { !$0.hasSuffix("/shims") }
      let python = direct.contains { FileManager.default.isExecutableFile(atPath: $0 + "/python3") }
      return (python ? direct : folders).joined(separator: ":")
    }

    /// A new empty folder for one call's pid list.
    func pidDir(_ label: String) -> String {
      pidDirCount += 1
      let path = temp.path + "/calls/\(label)-\(pidDirCount)"
      try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
      return path
    }

    /// Writes a case's argument object to `<pidDir>/arguments.json` (a 4 MB argument is too long for a command
    /// line) and returns its path.
    func writeArguments(_ hostile: Case, pidDir: String) throws -> String {
      let path = pidDir + "/arguments.json"
      try Data(hostile.arguments(pidDir: pidDir).serialized().utf8).write(to: URL(fileURLWithPath: path))
      return path
    }

    /// Runs toolhost (or `executable`) in the working folder; `limit` is a safety net that kills it.
    func run(
      _ arguments: [String], executable: String = toolhostBinary.path, input: Data = Data(), limit: TimeInterval
    ) throws -> (output: Subprocess.Output, seconds: Double) {
      let start = monotonicSeconds()
      let output = try Subprocess.run(
        executable: URL(fileURLWithPath: executable), arguments: arguments, environment: environment,
        workingDirectory: URL(fileURLWithPath: work), input: input, timeout: limit)
      return (output, monotonicSeconds() - start)
    }
  }

  static func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

  static func shellQuoted(_ word: String) -> String {
    "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}

// MARK: - Processes

extension Hostile {
  /// The pids the processes of one call recorded.
  static func recordedPIDs(_ pidDir: String) -> [pid_t] {
    let text = (try? String(contentsOfFile: pidDir + "/pids", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { pid_t($0) }
  }

  static func describe(_ pid: pid_t) -> String {
    let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "?"
    return "\(pid) (\(name.trimmingCharacters(in: .whitespacesAndNewlines)))"
  }
}

// MARK: - toolhost serve --mcp

extension Hostile {
  /// Starts `toolhost serve --mcp --yes --plugins PLUGINS` (unannotated tools ask, so --yes) in the fixture's working
  /// folder, its stderr in a fresh pid folder.
  static func serve(plugins: String, fixture: Fixture) throws -> MCPServeProcess {
    try MCPServeProcess(
      binary: toolhostBinary.path, arguments: ["serve", "--mcp", "--yes", "--plugins", plugins],
      environment: fixture.environment, workingDirectory: URL(fileURLWithPath: fixture.work),
      logPath: fixture.pidDir("serve-log") + "/stderr")
  }
}
