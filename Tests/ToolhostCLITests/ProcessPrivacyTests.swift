import Foundation
import Testing
import ToolhostTestSupport

/// A plugin cannot read toolhost's own environment (which holds what plugins are not given, API keys among it)
/// through `/proc/$PPID/environ`: toolhost is non-dumpable. The tests run as root, whose capabilities read any
/// process's files (`CAP_SYS_PTRACE`, and on Linux 6.18 `CAP_SYS_ADMIN` or `CAP_PERFMON` too), so toolhost runs
/// under `setpriv` without them, as a user's toolhost and plugins do.
@Suite(
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs util-linux's setpriv"))
struct ProcessPrivacyTests {
  @Test func aPluginCannotReadToolhostsEnvironment() async throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli-privacy")
    let secret = "secret-\(UUID().uuidString)"
    dir.shTool(
      "peek",
      body: """
        echo "parent: $(cat /proc/$PPID/comm)"
        echo "own: ${HOST_ONLY_SECRET:-absent}"
        grep CapEff /proc/self/status
        tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep '^HOST_ONLY_SECRET=' || echo "environ: unreadable"
        """,
      // This is the host's own guard, under any plugin: the plugin runs unconfined, as one with "sandbox": "none"
      // does (confinement keeps the host's /proc out of reach as well: the escape suite checks that).
      extra: #""output": "text", "sandbox": "none""#)
    var environment = Subprocess.cleanEnvironment(home: dir.path)
    environment["XDG_CONFIG_HOME"] = dir.file("config")
    environment["XDG_CACHE_HOME"] = dir.file("cache")
    environment["HOST_ONLY_SECRET"] = secret
    let output = try await Subprocess.runWithoutBlocking(
      executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
      arguments: [
        "--inh-caps=-all", "--bounding-set=-sys_ptrace,-sys_admin,-perfmon", try TestPackage.requireToolhostBinary(),
        "call", "--plugins", dir.path, "peek",
      ], environment: environment, workingDirectory: dir.url, timeout: 60
    ).finished()
    let text = output.stdoutText
    #expect(output.status == 0, "\(output.allText)")
    // The plugin's parent is toolhost, the plugin's own environment is filtered, and the capabilities are gone
    // (CAP_SYS_PTRACE is bit 19, CAP_SYS_ADMIN 21, CAP_PERFMON 38).
    #expect(text.contains("parent: toolhost\n"), "\(text)")
    #expect(text.contains("own: absent\n"), "\(text)")
    let effective = text.split(separator: "\n").first { $0.hasPrefix("CapEff:") }.flatMap {
      UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }
    #expect(effective.map { $0 & (1 << 19 | 1 << 21 | 1 << 38) == 0 } == true, "\(text)")
    #expect(!text.contains(secret), "the plugin read toolhost's environment: \(text)")
    #expect(text.contains("environ: unreadable"), "\(text)")
  }
}
