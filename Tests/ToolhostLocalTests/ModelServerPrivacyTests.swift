import Foundation
import Testing
import ToolhostTestSupport

@testable import ToolhostLocal

/// The program of a server of toolhost's own makes its process non-dumpable, so another process of the user (a
/// plugin) cannot read its key in `/proc/PID/environ`; a shared server's stays readable (see the test). Run with Python and a stand-in `llama_cpp` that only sleeps, so no model is
/// needed: the program reports its PID, and a reader without the capabilities that read any process's files
/// (`CAP_SYS_PTRACE`, and on Linux 6.18 `CAP_SYS_ADMIN` or `CAP_PERFMON` too; root's tests have them) tries the
/// server's environment.
@Suite(
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
    "needs util-linux's setpriv and /usr/bin/python3"))
struct ModelServerPrivacyTests {
  /// Starts `program` with the key in its environment, reads the PID it reports, and reads its environment (then
  /// the shell's own, to show the reader can read a dumpable process's). All of it runs without those capabilities
  /// (a reader with fewer capabilities than its target is refused whatever the target's setting).
  private static let probe = #"""
    mkfifo in
    exec 3<>in
    /usr/bin/python3 -c "$1" "$2" <in >report 2>log 3>&- &
    for i in $(seq 200); do [ -s report ] && break; sleep 0.05; done
    pid=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' report)
    echo "pid=$pid"
    grep CapEff /proc/self/status
    echo "server:"; cat /proc/$pid/environ | tr '\0' '\n'
    echo "shell:"; cat /proc/$$/environ | tr '\0' '\n'
    kill -9 $pid
    """#

  @Test(arguments: ["own", "shared"]) func onlyTheOwnServersEnvironmentIsHidden(kind: String) throws {
    let folder = TemporaryFolder(prefix: "toolhost-server-privacy")
    // Stand-ins for what the program imports after its report, found first (its folder is the first on sys.path).
    for module in ["numpy", "llama_cpp"] { folder.write(module + "/__init__.py", "import time\ntime.sleep(30)\n") }
    let key = "key-\(UUID().uuidString)"
    let settings = #"{"model": "none", "n_ctx": 64, "n_threads": 1, "extra": [], "idle": 30}"#
    let output = try Subprocess.run(
      executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
      arguments: [
        "--inh-caps=-all", "--bounding-set=-sys_ptrace,-sys_admin,-perfmon", "/bin/sh", "-c", Self.probe, "sh",
        kind == "own" ? ModelServerProgram.own : ModelServerProgram.shared, settings,
      ],
      environment: ["PATH": "/usr/bin:/bin", ModelServerProgram.keyVariable: key, "PROBE_MARK": "shell-env"],
      workingDirectory: folder.url, timeout: 60)
    let text = output.stdoutText
    #expect(!output.timedOut)
    #expect(text.range(of: #"pid=[0-9]+\n"#, options: .regularExpression) != nil, "no PID reported: \(output.allText)")
    // The reader really goes without them (CAP_SYS_PTRACE is bit 19, CAP_SYS_ADMIN 21, CAP_PERFMON 38).
    let effective = text.split(separator: "\n").first { $0.hasPrefix("CapEff:") }.flatMap {
      UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }
    #expect(effective.map { $0 & (1 << 19 | 1 << 21 | 1 << 38) == 0 } == true, "\(text)")
    #expect(text.contains("PROBE_MARK=shell-env"), "the reader cannot read even a dumpable process: \(output.allText)")
    let server = text.components(separatedBy: "shell:")[0]
    if kind == "own" {
      #expect(!server.contains(key), "the server's environment shows its key: \(server)")
      #expect(!server.contains("PATH="), "the server's environment can be read: \(server)")
    } else {
      // A shared server stays readable: its key is in its 0600 state file for every toolhost of the user anyway,
      // and a toolhost that adopts it must read its environment to tell it from a plugin's orphan (it ended it).
      #expect(server.contains("PATH="), "the shared server's environment cannot be read: \(server)")
    }
  }
}
