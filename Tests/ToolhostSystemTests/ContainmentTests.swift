import CToolhostSupport
import Foundation
import Testing
import ToolhostTestSupport

@testable import ToolhostSystem

/// A scratch folder with a file that test scripts append their pids to (`$F`); removed at the end.
final class PidFile: Sendable {
  private let scratch = TemporaryFolder(prefix: "toolhost-containment")
  var folder: String { scratch.path }
  var path: String { scratch.file("pids") }

  /// The pids written so far.
  var pids: [Int32] {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
  }
}

/// The runner's containment, run the same way with each mechanism: the machine's strongest (a cgroup here when
/// toolhost may create one) and the subreaper with the marker.
@Suite("Containment", .serialized)
struct ContainmentTests {
  static let runners = [
    ProcessRunner(containment: Containment(preference: .automatic)),
    ProcessRunner(containment: Containment(preference: .subreaper)),
  ]

  /// Each way of leaving the process group: setsid, setpgid (through a job-control shell), a double fork with a
  /// cleared environment.
  static let escapes = [
    "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >> $F",
    #"perl -e 'if (fork == 0) { setpgrp(0, 0); open(F, ">>", $ENV{F}); print F "$$\n"; close F; exec "sleep", "60" }' </dev/null >/dev/null 2>&1"#,
    "(setsid sh -c 'env -i sleep 60 </dev/null >/dev/null 2>&1 & echo $! >> $F' &)",
  ]

  @Test(arguments: 0..<2, 0..<3)
  func aCallThatLeavesADaemonEndsAtOnceAndTheDaemonGoes(runner index: Int, escape: Int) async throws {
    let runner = Self.runners[index]
    let file = PidFile()
    let started = ContinuousClock.now
    let out = try await runner.run(sh("export F=\(file.path); \(Self.escapes[escape]); sleep 0.2; echo done"))
    #expect(ContinuousClock.now - started < .seconds(3), "the call waited for its daemon")
    #expect(String(decoding: out.stdout, as: UTF8.self) == "done\n")
    #expect(out.termination == .exited(0))
    let daemons = file.pids
    #expect(daemons.count == 1, "the script did not record its daemon")
    for pid in daemons { #expect(await ProcessProbe.waitForEnd(pid, timeout: 1), "daemon \(pid) outlived its call") }
  }

  @Test(arguments: 0..<2)
  func aTimeoutEndsEveryProcessOfTheCall(runner index: Int) async throws {
    let runner = Self.runners[index]
    let file = PidFile()
    let script = "trap '' TERM; \(Self.escapes[0]); \(Self.escapes[2]); echo $$ >> $F; sleep 60"
    let started = ContinuousClock.now
    let out = try await runner.run(sh("export F=\(file.path); " + script, timeout: .milliseconds(500)))
    let elapsed = ContinuousClock.now - started
    #expect(out.stopReason == .timedOut)
    #expect(elapsed < .milliseconds(500 + 200 + 500), "took \(elapsed)")
    let all = file.pids
    #expect(all.count == 3)
    for pid in all { #expect(await ProcessProbe.waitForEnd(pid, timeout: 1), "process \(pid) outlived the timeout") }
  }

  @Test(arguments: 0..<2)
  func cancellationEndsEveryProcessOfTheCall(runner index: Int) async throws {
    let runner = Self.runners[index]
    let file = PidFile()
    let task = Task { try await runner.run(sh("export F=\(file.path); \(Self.escapes[0]); sleep 60", timeout: nil)) }
    for _ in 0..<250 where file.pids.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
    #expect(!file.pids.isEmpty, "the script did not start its daemon")
    task.cancel()
    let out = try await task.value
    #expect(out.stopReason == .cancelled)
    for pid in file.pids { #expect(await ProcessProbe.waitForEnd(pid, timeout: 1)) }
  }

  @Test(arguments: 0..<2)
  func aPersistentPluginIsContainedForItsLifetime(runner index: Int) async throws {
    let file = PidFile()
    let spec = PersistentProcessSpec(
      executable: "/bin/sh", arguments: ["-c", "\(Self.escapes[2]); echo ready; cat"],
      environment: ["PATH": "/usr/bin:/bin", "F": file.path],
      containment: Self.runners[index].containment)
    let process = try PersistentProcess.launch(spec, handlers: .init(onLine: { _ in }))
    for _ in 0..<250 where file.pids.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
    #expect(file.pids.count == 1, "the plugin did not start its daemon")
    let exit = await process.shutdown(grace: .milliseconds(500))
    #expect(exit.termination == .exited(0))
    for pid in file.pids {
      #expect(await ProcessProbe.waitForEnd(pid, timeout: 1), "daemon \(pid) outlived its persistent plugin")
    }
  }

  /// Each way a process of a call can move itself out of the call's cgroup (with ``escapeScript``): itself keeping
  /// its environment, itself with an empty one, and from under a parent that stays in the cgroup until the call ends.
  static let cgroupEscapes = [
    #"setsid sh "$E" keep"#,
    #"setsid sh "$E" clear"#,
    #"setsid sh -c 'sh "$E" clear & exec sleep 60'"#,
  ]

  /// Moves its process into the nearest cgroup above the call's that takes it (`$G`, the host's folder of call
  /// cgroups, then the folders above), records its pid in `$F`, and becomes `sleep 60` (with an empty environment
  /// when `$1` is `clear`).
  static let escapeScript = #"""
    d=$G
    while [ -n "$d" ] && ! echo $$ 2>/dev/null >"$d/cgroup.procs"; do d=${d%/*}; done
    [ -n "$d" ] || exit 1
    echo $$ >>"$F"
    [ "$1" = clear ] && exec env -i sleep 60
    exec sleep 60
    """#

  @Test(
    .enabled(
      if: ContainmentTests.runners[0].containment.mechanism == .cgroup,
      """
      needs cgroup containment (a cgroup v2 toolhost may create: as root, in a container or in a delegated systemd \
      scope); aCellWithACgroupAlsoSweepsWhatLeftIt covers the sweep without one
      """),
    arguments: 0..<3)
  func aProcessThatMovesItselfOutOfTheCallsCgroupEndsWithTheCall(escape: Int) async throws {
    let runner = Self.runners[0]
    let file = PidFile()
    let script = file.folder + "/escape.sh"
    try Self.escapeScript.write(toFile: script, atomically: true, encoding: .utf8)
    var spec = sh(
      Self.cgroupEscapes[escape] + " </dev/null >/dev/null 2>&1 &\n"
        + #"n=0; while [ ! -s "$F" ] && [ $n -lt 500 ]; do sleep 0.01; n=$((n + 1)); done; echo done"#)
    spec.environment["F"] = file.path
    spec.environment["E"] = script
    spec.environment["G"] = try #require(runner.containment.cgroupFolder)
    let out = try await runner.run(spec)
    let escaped = file.pids
    defer { for pid in escaped { kill(pid, SIGKILL) } }
    #expect(String(decoding: out.stdout, as: UTF8.self) == "done\n")
    #expect(escaped.count == 1, "the process could not move itself out of the call's cgroup")
    for pid in escaped {
      #expect(await ProcessProbe.waitForEnd(pid, timeout: 1), "\(pid) left the call's cgroup and outlived the call")
    }
  }

  /// The sweep decision, on any machine: a cell with a cgroup (an empty stand-in folder here), when it ends its
  /// processes, also ends an orphan of the host that carries its marker, as a process that moved itself out of
  /// the cgroup is by then.
  @Test func aCellWithACgroupAlsoSweepsWhatLeftIt() async throws {
    // A subreaper, as toolhost is with either mechanism: this process adopts orphans from here on.
    let containment = Containment(preference: .subreaper)
    let file = PidFile()
    let standIn = file.folder + "/cgroup"
    try FileManager.default.createDirectory(atPath: standIn, withIntermediateDirectories: true)
    try "populated 0\n".write(toFile: standIn + "/cgroup.events", atomically: true, encoding: .utf8)
    let cell = ContainmentCell(
      owner: containment, marker: containment.hostMarker + ".1", cgroup: .init(path: standIn, procsFD: -1))
    let orphans = try await Self.startOrphan(
      "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >> \"$F\"", file: file,
      environment: [Containment.markerVariable: cell.marker])
    defer { for pid in orphans { kill(pid, SIGKILL) } }
    #expect(orphans.count == 1, "the script did not record its orphan")
    cell.killAll(leader: 0)
    for pid in orphans {
      #expect(await ProcessProbe.waitForEnd(pid, timeout: 1), "the orphan carrying the cell's marker outlived it")
    }
  }

  /// A program toolhost starts to outlive it (the local model's shared server) is re-parented to toolhost when its
  /// first process exits, like a plugin's escaped process; no sweep ends it, not even the one at toolhost's exit.
  @Test func aDetachedProgramOutlivesEverySweep() async throws {
    let containment = Containment(preference: .subreaper)
    let file = PidFile()
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    let first = try await runDaemonizing(
      executable: "/bin/sh", arguments: ["-c", "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >> \"$F\""],
      environment: ["PATH": "/usr/bin:/bin", "F": file.path], workingDirectory: nil, stdio: (null, null, null))
    let daemons = file.pids
    defer { for pid in daemons { kill(pid, SIGKILL) } }
    #expect(first == .exited(0))
    #expect(daemons.count == 1, "the script did not record its daemon")
    // The program is running (as the shared server is once started), not still being exec'd by setsid.
    for pid in daemons {
      for _ in 0..<200 {
        let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        if comm?.hasPrefix("sleep") == true { break }
        try await Task.sleep(for: .milliseconds(5))
      }
    }
    containment.sweepOrphans(marker: nil)
    for pid in daemons { #expect(ProcessProbe.isAlive(pid), "the sweep ended a program started to outlive toolhost") }
  }

  /// Runs `script` with `/bin/sh` outside any cell (its stdio on /dev/null, `F` the pid file) and waits for it to
  /// end; the pids it recorded, whose processes are then orphans of this process.
  static func startOrphan(_ script: String, file: PidFile, environment: [String: String]) async throws -> [Int32] {
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    let shell = try spawnProcess(
      executable: "/bin/sh", arguments: ["-c", script],
      environment: environment.merging(["PATH": "/usr/bin:/bin", "F": file.path]) { $1 }, workingDirectory: nil,
      stdio: (null, null, null), cell: nil, limits: .none)
    while reapChild(shell) == nil { try await Task.sleep(for: .milliseconds(5)) }
    return file.pids
  }

  @Test func pluginsHaveNoControllingTerminalAndTheirOwnSession() async throws {
    // Fields 6 and 7 of /proc/PID/stat: the session and the controlling terminal (0: none).
    let out = try await ProcessRunner.shared.run(
      sh("cut -d' ' -f6,7 /proc/$$/stat; (echo x > /dev/tty) 2>/dev/null && echo tty-open || echo no-tty"))
    let lines = String(decoding: out.stdout, as: UTF8.self).split(separator: "\n")
    #expect(lines.last == "no-tty")
    let fields = lines.first?.split(separator: " ") ?? []
    #expect(Int32(fields.first ?? "") == out.pid, "the plugin is not the leader of its own session")
    #expect(fields.last == "0")
  }

  @Test func signalsHaveTheirDefaultActionsInThePlugin() async throws {
    // The host ignores SIGINT while it waits for a call; the plugin must not inherit that.
    let previous = signal(SIGINT, SIG_IGN)
    defer { signal(SIGINT, previous) }
    let out = try await ProcessRunner.shared.run(sh("grep -E '^Sig(Ign|Blk)' /proc/self/status"))
    let text = String(decoding: out.stdout, as: UTF8.self)
    // Bits 0-30 are the standard signals 1-31 (glibc keeps 32 and 33 for itself).
    for line in text.split(separator: "\n") {
      let mask = UInt64(line.split(separator: "\t").last ?? "", radix: 16) ?? .max
      #expect(mask & 0x7fff_ffff == 0, "\(line)")
    }
  }

  @Test func limitsReachThePlugin() async throws {
    var spec = sh("ulimit -n; ulimit -f; ulimit -t; ulimit -d")
    spec.limits = ResourceLimits(memoryBytes: 256 << 20, cpuSeconds: 7, fileSizeBytes: 1 << 20, openFiles: 64)
    let out = try await ProcessRunner.shared.run(spec)
    // dash reports -f in 512-byte blocks and -d in KiB.
    #expect(String(decoding: out.stdout, as: UTF8.self) == "64\n2048\n7\n262144\n")
  }

  @Test func limitsAreNamedWhenReached() async throws {
    var cpu = sh("while :; do :; done", timeout: .seconds(10))
    cpu.limits = ResourceLimits(cpuSeconds: 1)
    let burnt = try await ProcessRunner.shared.run(cpu)
    #expect(cpu.limits.exceeded(by: burnt) == .cpuTime)

    var file = sh("head -c 3000000 /dev/zero > big.bin")
    let scratch = PidFile()
    file.workingDirectory = scratch.folder
    file.limits = ResourceLimits(fileSizeBytes: 1 << 20)
    let written = try await ProcessRunner.shared.run(file)
    #expect(file.limits.exceeded(by: written) == .fileSize)

    var memory = sh("python3 -c 'bytearray(600 << 20)'")
    memory.limits = ResourceLimits(memoryBytes: 256 << 20)
    let hog = try await ProcessRunner.shared.run(memory)
    #expect(memory.limits.exceeded(by: hog) == .memory, "\(hog.stderrText)")

    // A plain failure is not blamed on a limit.
    let plain = try await ProcessRunner.shared.run(sh("echo 'disk on fire' >&2; exit 3"))
    #expect(ResourceLimits.pluginDefaults.exceeded(by: plain) == nil)
  }

  @Test func theProcessLimitEndsAForkStormInACgroup() async throws {
    let runner = Self.runners[0]
    guard runner.containment.mechanism == .cgroup else { return }
    var spec = sh("for i in $(seq 100); do sleep 30 & done; wait", timeout: .seconds(10))
    spec.limits = ResourceLimits(processes: 32)
    let started = ContinuousClock.now
    let out = try await runner.run(spec)
    #expect(out.limitExceeded == .processes)
    #expect(ContinuousClock.now - started < .seconds(3))
  }

  @Test func descriptorsStayFlatOverManyContainedCalls() async throws {
    for runner in Self.runners {
      _ = try await runner.run(sh("setsid sleep 30 </dev/null >/dev/null 2>&1 & echo hi"))
      let before = toolhost_count_open_fds()
      for _ in 0..<200 { _ = try await runner.run(sh("setsid sleep 30 </dev/null >/dev/null 2>&1 & echo hi")) }
      // No growth: a leak would be one or more descriptors a call. (Fewer is fine: an earlier test's processes may
      // close their last descriptors meanwhile.)
      #expect(toolhost_count_open_fds() <= before)
    }
  }
}
