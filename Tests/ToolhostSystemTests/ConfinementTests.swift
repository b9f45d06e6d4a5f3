import Foundation
import Testing
import ToolhostTestSupport

@testable import ToolhostSystem

@Suite("Confinement")
struct ConfinementTests {
  let runner = ProcessRunner()

  /// Runs `script` with bash (for its /dev/tcp) under `confinement`; its stdout.
  func run(_ script: String, _ confinement: Confinement?) async throws -> String {
    let spec = ProcessSpec(
      executable: "/bin/bash", arguments: ["-c", script], environment: ["PATH": "/usr/bin:/bin"],
      timeout: .seconds(10), confinement: confinement)
    let outcome = try await runner.run(spec)
    return String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// `ok` or `no` for each command, one word a line.
  func attempts(_ commands: [String]) -> String {
    commands.map { "if \($0) >/dev/null 2>&1; then echo ok; else echo no; fi" }.joined(separator: "\n")
  }

  @Test func filesOutsideTheDeclaredPathsAreOutOfReach() async throws {
    try #require(ConfinementSupport.current.landlockABI != nil, "this kernel has no Landlock")
    let outside = TemporaryFolder(prefix: "toolhost-outside")
    let secret = outside.write("secret", "s3cret")
    let own = TemporaryFolder(prefix: "toolhost-own")
    own.write("data.txt", "mine")
    symlink(secret, own.file("link"))
    let scratch = TemporaryFolder(prefix: "toolhost-scratch")
    let script = attempts([
      "cat \(secret)", "cat \(own.file("data.txt"))", "cat \(own.file("link"))", "touch \(outside.file("new"))",
      "touch \(own.file("new"))", "touch \(scratch.file("new"))", "cat /etc/passwd", "echo x >/dev/null",
      // Landlock does not govern a file's mode: the filter does, even in the plugin's own folder.
      "chmod 644 \(secret)", "chmod 600 \(scratch.file("new"))",
    ])
    let free = try await run(script, nil)
    #expect(free.split(separator: "\n") == ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"])
    try? FileManager.default.removeItem(atPath: outside.file("new"))
    try? FileManager.default.removeItem(atPath: own.file("new"))
    try? FileManager.default.removeItem(atPath: scratch.file("new"))
    let confined = try await run(script, Confinement(readable: [own.path], writable: [scratch.path]))
    #expect(confined.split(separator: "\n") == ["no", "ok", "no", "no", "no", "ok", "ok", "ok", "no", "no"])
    #expect(!FileManager.default.fileExists(atPath: outside.file("new")))
  }

  @Test func noNetworkMeansNoSocketAndAListOfPortsOnlyThose() async throws {
    try #require(ConfinementSupport.current.landlockABI.map { $0 >= 4 } == true, "no Landlock TCP rules")
    let allowed = try SilentListener()
    let other = try SilentListener()
    // Then a Unix socket (a container engine's, D-Bus's), which only an unrestricted network may open.
    let script = attempts([
      "(exec 3<>/dev/tcp/127.0.0.1/\(allowed.port))", "(exec 3<>/dev/tcp/127.0.0.1/\(other.port))",
      "/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX)'",
      // TCP Fast Open connects without connect(2); a listener is no port to connect to.
      "/usr/bin/python3 -c 'import socket; socket.socket().sendto(b\"x\", socket.MSG_FASTOPEN, "
        + "(\"127.0.0.1\", \(other.port)))'",
      "/usr/bin/python3 -c 'import socket; socket.socket().listen()'",
    ])
    let unrestricted = try await run(script, Confinement(network: .unrestricted))
    let none = try await run(script, Confinement())
    let ports = try await run(script, Confinement(network: .tcpPorts([allowed.port])))
    withExtendedLifetime((allowed, other)) {
      #expect(unrestricted == "ok\nok\nok\nok\nok")
      #expect(none == "no\nno\nno\nno\nno")
      #expect(ports == "ok\nno\nno\nno\nno")
    }
  }

  @Test func theHostAndOtherProcessesStayOutOfReach() async throws {
    try #require(ConfinementSupport.current.landlockABI != nil, "this kernel has no Landlock")
    // Another process of the same user, with a secret in its environment.
    let other = Process()
    other.executableURL = URL(fileURLWithPath: "/bin/sleep")
    other.arguments = ["30"]
    other.environment = ["SECRET": "s3cret"]
    try other.run()
    let otherPID = other.processIdentifier
    defer {
      kill(otherPID, SIGKILL)
      other.waitUntilExit()
    }
    // The host's (its parent's) files in /proc and a signal to it; another process's environment; the process's own
    // /proc folder (read by bash itself, not a child) and the machine's figures; no capabilities, even for root.
    let script = attempts([
      "cat /proc/$PPID/maps", "cat /proc/$PPID/environ", "cat /proc/$PPID/cmdline", "kill -0 $PPID",
      "grep -q s3cret /proc/\(otherPID)/environ", "read -r line </proc/$$/status", "cat /proc/cpuinfo",
      "[[ \"$(</proc/$$/status)\" == *$'CapEff:\\t0000000000000000'* ]]",
    ])
    let free = try await run(script, nil)
    #expect(free.hasPrefix("ok\nok\nok\nok\nok\nok\nok"), "\(free)")
    let abi = ConfinementSupport.current.landlockABI ?? 0
    let confined = try await run(script, Confinement())
    let signal = abi >= 6 ? "no" : "ok"
    #expect(confined == "no\nno\nno\n\(signal)\nno\nok\nok\nok", "\(confined)")
  }

  @Test func aPersistentProcessIsConfinedForItsWholeLife() async throws {
    try #require(ConfinementSupport.current.landlockABI != nil, "this kernel has no Landlock")
    let outside = TemporaryFolder(prefix: "toolhost-outside")
    let secret = outside.write("secret", "s3cret")
    let spec = PersistentProcessSpec(
      executable: "/bin/sh",
      arguments: [
        "-c", "while read -r line; do if cat \(secret) >/dev/null 2>&1; then echo ok; else echo no; fi; done",
      ],
      environment: ["PATH": "/usr/bin:/bin"], confinement: Confinement())
    let pool = PersistentPool(spec: spec, size: 1)
    let worker = try await pool.acquire(deadline: .now + .seconds(5))
    let reply = await worker.call(
      Array("go\n".utf8), timeout: .seconds(5), outputLimit: 1 << 10, onStderr: nil)
    pool.release(worker)
    await pool.shutdown()
    guard case .reply(let line) = reply else {
      Issue.record("no reply: \(reply)")
      return
    }
    #expect(String(decoding: line, as: UTF8.self) == "no")
  }

  @Test func whatCannotBeEnforcedDoesNotRun() async throws {
    let none = ConfinementSupport(landlockABI: nil, landlockMissing: "this kernel has no Landlock", socketFilter: true)
    #expect(none.problem(for: Confinement()) == "this kernel has no Landlock")
    let old = ConfinementSupport(landlockABI: 3, landlockMissing: nil, socketFilter: true)
    #expect(old.problem(for: Confinement()) == nil)
    #expect(old.problem(for: Confinement(network: .tcpPorts([443])))?.contains("ABI 4") == true)
    let noFilter = ConfinementSupport(landlockABI: 6, landlockMissing: nil, socketFilter: false)
    #expect(noFilter.problem(for: Confinement())?.contains("seccomp") == true)
    #expect(noFilter.problem(for: Confinement(network: .unrestricted))?.contains("seccomp") == true)
    let truncates = ConfinementSupport(landlockABI: 2, landlockMissing: nil, socketFilter: true)
    #expect(truncates.problem(for: Confinement())?.contains("Linux 6.2") == true)
  }
}
