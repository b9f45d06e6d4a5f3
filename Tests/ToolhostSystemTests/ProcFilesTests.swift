import CToolhostSupport
import Foundation
import Synchronization
import Testing
import ToolhostTestSupport

@testable import ToolhostSystem

/// What containment reads in /proc and cgroupfs: key-value files and a process's children.
@Suite struct ProcFilesTests {
  @Test func aKeyValueFileGivesTheValueOfItsKeyOnly() throws {
    let folder = try TemporaryFolder.make(prefix: "toolhost-procfiles")
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("memory.events").path
    try "low 0\nhigh 12\nmax 3\noom 0\noom_kill 7\n".write(toFile: path, atomically: true, encoding: .utf8)
    #expect(toolhost_read_key_value(path, "oom_kill") == 7)
    #expect(toolhost_read_key_value(path, "high") == 12)
    #expect(toolhost_read_key_value(path, "low") == 0)
    // A key is a whole word: "oom" is not "oom_kill", and a prefix of a key is not the key.
    #expect(toolhost_read_key_value(path, "oom") == 0)
    #expect(toolhost_read_key_value(path, "hig") == 0)
    #expect(toolhost_read_key_value(path, "absent") == 0)
    #expect(toolhost_read_key_value(folder.appendingPathComponent("none").path, "max") == -1)
    #expect(ContainmentCell.event(folder.path, "memory.events", "max") == 3)
    #expect(ContainmentCell.event(folder.path, "no.such.file", "max") == 0)
  }

  /// An orphan re-parented to this process (a subreaper, as containment makes it) is among the children the sweep
  /// reads, whichever thread started its parent.
  @Test func anAdoptedOrphanIsAmongTheAdoptiveChildren() async throws {
    _ = Containment.shared
    let isSubreaper = Containment.isSubreaper.load(ordering: .acquiring)
    try #require(isSubreaper, "containment did not make this process a subreaper")
    let folder = try TemporaryFolder.make(prefix: "toolhost-procfiles")
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("orphan").path
    let shell = Process()
    shell.executableURL = URL(fileURLWithPath: "/bin/sh")
    shell.arguments = ["-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $! > \(file)"]
    // A marker of no containment's: the end-of-call sweep of a test running beside this one kills an adopted orphan
    // without a marker, and leaves one marked by another containment to it.
    var environment = ProcessInfo.processInfo.environment
    environment[Containment.markerVariable] = "procfiles-test-\(getpid())"
    shell.environment = environment
    try shell.run()
    shell.waitUntilExit()
    let orphan = try #require(
      Int32(String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
    defer {
      kill(orphan, SIGKILL)
      Containment.reap(orphan, within: .seconds(1))
    }
    var adopted: [Int32] = []
    for _ in 0..<200 {
      adopted = Containment.adoptiveChildren()
      if adopted.contains(orphan) { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(adopted.contains(orphan), "\(orphan) is not among \(adopted)")
    #expect(Containment.children(of: getpid()).contains(orphan))
  }

  @Test func theChildrenOfAProcessAreAllCountedEvenBeyondTheRoomGiven() async throws {
    let shell = Process()
    shell.executableURL = URL(fileURLWithPath: "/bin/sh")
    shell.arguments = ["-c", "sleep 30 & sleep 30 & sleep 30 & wait"]
    try shell.run()
    // SIGKILL: the shell inherits this process's blocked signals, so SIGTERM (and the SIGCHLD its `wait` needs) would
    // stay pending.
    defer {
      for child in Containment.children(of: shell.processIdentifier) { kill(child, SIGKILL) }
      kill(shell.processIdentifier, SIGKILL)
      shell.waitUntilExit()
    }
    // Each child is counted from its fork; it is `sleep` once it has run its exec.
    func comm(_ pid: Int32) -> String { String(decoding: (try? readFile("/proc/\(pid)/comm")) ?? [], as: UTF8.self) }
    var children: [Int32] = []
    for _ in 0..<500 {
      children = Containment.children(of: shell.processIdentifier)
      if children.count == 3, children.allSatisfy({ comm($0) == "sleep\n" }) { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(children.count == 3)
    #expect(children.allSatisfy { comm($0) == "sleep\n" }, "\(children.map(comm))")
    var one: [pid_t] = [0]
    #expect(toolhost_children_of(shell.processIdentifier, &one, 1) == 3)
    #expect(children.contains(one[0]))
    #expect(toolhost_children_of(-5, &one, 1) == -1)
  }
}
