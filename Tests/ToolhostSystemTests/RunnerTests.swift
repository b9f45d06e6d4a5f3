import CToolhostSupport
import Foundation
import Testing
import ToolhostTestSupport

@testable import ToolhostSystem

func sh(_ script: String, timeout: Duration? = .seconds(10), input: [UInt8] = [], limit: Int = 16 << 20) -> ProcessSpec
{
  ProcessSpec(
    executable: "/bin/sh", arguments: ["-c", script], environment: ["PATH": "/usr/bin:/bin"], input: input,
    timeout: timeout, outputLimit: limit)
}

@Suite("Process runner")
struct RunnerTests {
  let runner = ProcessRunner()

  @Test func echoesInputAndReportsStatus() async throws {
    let out = try await runner.run(sh("cat; echo oops >&2; exit 3", input: Array("hello".utf8)))
    #expect(String(decoding: out.stdout, as: UTF8.self) == "hello")
    #expect(out.stderrText == "oops")
    #expect(out.termination == .exited(3))
    #expect(out.stopReason == nil)
  }

  @Test func reportsSignals() async throws {
    let out = try await runner.run(sh("kill -SEGV $$"))
    #expect(out.termination == .signaled(SIGSEGV))
  }

  @Test func launchFailureSaysWhy() async throws {
    await #expect(throws: ProcessLaunchError.self) {
      try await runner.run(ProcessSpec(executable: "/nonexistent/tool"))
    }
    let plain = TemporaryFolder.uniquePath(prefix: "toolhost-plain")
    FileManager.default.createFile(
      atPath: plain, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644])
    defer { try? FileManager.default.removeItem(atPath: plain) }
    do {
      _ = try await runner.run(ProcessSpec(executable: plain))
      Issue.record("a non-executable file started")
    } catch {
      #expect(error.reason.contains("not executable"))
    }
    let garbage = TemporaryFolder.uniquePath(prefix: "toolhost-garbage")
    FileManager.default.createFile(
      atPath: garbage, contents: Data("#!/nonexistent/interpreter\n".utf8), attributes: [.posixPermissions: 0o755])
    defer { try? FileManager.default.removeItem(atPath: garbage) }
    do {
      _ = try await runner.run(ProcessSpec(executable: garbage))
      Issue.record("a script with a missing interpreter started")
    } catch {
      #expect(error.reason.contains("interpreter"))
    }
  }

  @Test func hundredMegabytesOnBothStreamsDoNotDeadlock() async throws {
    let script = "head -c 104857600 /dev/zero & head -c 104857600 /dev/zero >&2; wait"
    var spec = sh(script, timeout: .seconds(60), limit: 200 << 20)
    spec.stderrTailLimit = 1024
    let out = try await runner.run(spec)
    #expect(out.termination == .exited(0))
    #expect(out.stdout.count == 104_857_600)
    #expect(out.stderrByteCount == 104_857_600)
    #expect(out.stderrTail.count == 1024)
  }

  @Test func timeoutEndsTheWholeTreeEvenWhenAGrandchildHoldsThePipe() async throws {
    // The grandchild inherits stdout and ignores SIGTERM; only SIGKILL to the group ends it.
    let script = "sh -c 'trap \"\" TERM; sleep 100' & trap '' TERM; sleep 100"
    let t0 = ContinuousClock.now
    let out = try await runner.run(sh(script, timeout: .milliseconds(500)))
    let elapsed = ContinuousClock.now - t0
    #expect(out.stopReason == .timedOut)
    #expect(elapsed < .milliseconds(1000), "returned after \(elapsed)")
    #expect(await groupIsGone(out.pid), "left behind: \(ProcessProbe.inGroup(out.pid, includingZombies: true))")
  }

  @Test func cancellationEndsTheTree() async throws {
    let task = Task { try await runner.run(sh("sleep 100 & sleep 100", timeout: nil)) }
    try await Task.sleep(for: .milliseconds(300))
    let t0 = ContinuousClock.now
    task.cancel()
    let out = try await task.value
    #expect(out.stopReason == .cancelled)
    #expect(ContinuousClock.now - t0 < .milliseconds(800))
    #expect(await groupIsGone(out.pid), "left behind: \(ProcessProbe.inGroup(out.pid, includingZombies: true))")
  }

  @Test func leftoverBackgroundProcessesAreEndedWhenTheChildExits() async throws {
    let t0 = ContinuousClock.now
    let out = try await runner.run(sh("sleep 100 & echo done", timeout: nil))
    #expect(ContinuousClock.now - t0 < .seconds(2))
    #expect(String(decoding: out.stdout, as: UTF8.self) == "done\n")
    #expect(await groupIsGone(out.pid), "left behind: \(ProcessProbe.inGroup(out.pid, includingZombies: true))")
  }

  @Test func childThatIgnoresALargeRequestDoesNotKillTheHost() async throws {
    let big = [UInt8](repeating: 65, count: 8 << 20)
    let out = try await runner.run(sh("exit 0", input: big))
    #expect(out.termination == .exited(0))
    let out2 = try await runner.run(sh("head -c 10", input: big))
    #expect(out2.stdout.count == 10)
  }

  @Test func outputPastTheCapStopsTheCall() async throws {
    let t0 = ContinuousClock.now
    let out = try await runner.run(sh("yes flood", timeout: .seconds(20), limit: 1 << 20))
    #expect(out.stopReason == .outputTooLarge)
    #expect(out.stdout.count <= 1 << 20)
    #expect(ContinuousClock.now - t0 < .seconds(5))
  }

  @Test func environmentIsExactlyWhatWasGiven() async throws {
    setenv("TOOLHOST_TEST_SECRET", "s3cret", 1)
    var spec = sh("env")
    spec.environment = ["PATH": "/usr/bin:/bin", "ONLY": "this"]
    let out = try await runner.run(spec)
    let lines = Set(String(decoding: out.stdout, as: UTF8.self).split(separator: "\n").map(String.init))
    #expect(!lines.contains { $0.hasPrefix("TOOLHOST_TEST_SECRET") })
    #expect(lines.contains("ONLY=this"))
  }

  @Test func childrenStartWithNoSignalsBlocked() async throws {
    let out = try await runner.run(sh("grep SigBlk /proc/self/status"))
    #expect(String(decoding: out.stdout, as: UTF8.self).contains("0000000000000000"))
  }

  @Test func noPipeOfOneCallReachesAnotherCallsChild() async throws {
    // Each child lists its descriptors beyond 0-2 that are pipes; with 32 calls in flight there must be none.
    let script = "sleep 0.05; for f in /proc/self/fd/*; do n=${f##*/}; [ $n -gt 2 ] && readlink $f; done; true"
    let leaked = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<200 {
        group.addTask { String(decoding: try await runner.run(sh(script)).stdout, as: UTF8.self) }
      }
      var all: [String] = []
      for try await s in group { all += s.split(separator: "\n").map(String.init).filter { $0.hasPrefix("pipe:") } }
      return all
    }
    #expect(leaked.isEmpty, "pipes leaked into children: \(leaked.prefix(5))")
  }

  @Test func noDescriptorLeaksOverTenThousandCalls() async throws {
    _ = try await runner.run(sh("true"))  // start the I/O thread
    let before = toolhost_count_open_fds()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<10_000 {
        if i >= 16 { try await group.next() }
        group.addTask {
          let out = try await runner.run(ProcessSpec(executable: "/bin/true"))
          #expect(out.termination == .exited(0))
        }
      }
      try await group.waitForAll()
    }
    try await Task.sleep(for: .milliseconds(200))
    let after = toolhost_count_open_fds()
    #expect(after <= before, "open descriptors: \(before) before, \(after) after")
  }
}
