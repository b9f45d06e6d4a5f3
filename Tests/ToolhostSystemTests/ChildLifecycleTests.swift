import Testing

@testable import ToolhostSystem

/// The stop → grace → kill → drain state machine both runners share, and the byte tail they keep, without processes.
@Suite struct ChildLifecycleTests {
  @Test func terminateSendsSIGTERMOnceThenKillsAfterTheGrace() {
    var life = ChildLifecycle(killGrace: 0.2)
    #expect(life.terminate(now: 10) == [.terminateAll])
    #expect(life.terminate(now: 10.05) == [])
    var due = life.timersDue(now: 10.1)
    #expect(due.actions == [])
    #expect(due.next == 10.2)
    due = life.timersDue(now: 10.2)
    #expect(due.actions == [.killAll])
    // After the kill, the pipes get the drain time; the child has not exited, so the wait goes on.
    #expect(due.next == 10.2 + ChildLifecycle.drainWait)
    due = life.timersDue(now: 10.7)
    #expect(due.actions == [.closePipes])
    #expect(due.next == 10.7 + ChildLifecycle.drainWait)
  }

  @Test func anExitEndsTheLeftoversClosesStdinAndStopsTheKillTimer() {
    var life = ChildLifecycle(killGrace: 1)
    _ = life.terminate(now: 0)
    #expect(life.childExited(now: 0.1) == [.killAll, .closeInput])
    #expect(life.childExited(now: 0.2) == [])
    #expect(life.killAt == nil)
    var due = life.timersDue(now: 0.5)
    #expect(due.actions == [])
    #expect(due.next == 0.1 + ChildLifecycle.drainWait)
    due = life.timersDue(now: 0.6)
    #expect(due.actions == [.closePipes])
    #expect(due.next == nil)
    // Nothing more is asked of an exited child.
    #expect(life.terminate(now: 1) == [])
    #expect(life.kill(now: 1) == [])
  }

  @Test func killIsAtOnceAndReplacesAPendingGracePeriod() {
    var life = ChildLifecycle(killGrace: 5)
    _ = life.terminate(now: 0)
    #expect(life.kill(now: 1) == [.killAll])
    #expect(life.killAt == nil)
    #expect(life.timersDue(now: 1.2).next == 1 + ChildLifecycle.drainWait)
    // A terminate after the kill sends no SIGTERM.
    #expect(life.terminate(now: 1.3) == [])
  }

  @Test func aQuietChildNeedsNoTime() {
    var life = ChildLifecycle(killGrace: 0.2)
    let due = life.timersDue(now: 3)
    #expect(due.actions.isEmpty)
    #expect(due.next == nil)
  }

  @Test func aByteTailKeepsTheLastBytesAndCountsAll() {
    var tail = ByteTail(limit: 4)
    tail.append(Array("abc".utf8)[...])
    tail.append(Array("defgh".utf8)[...])
    #expect(tail.bytes == Array("efgh".utf8))
    #expect(tail.byteCount == 8)
    tail.append(Array(" \n".utf8)[...])
    #expect(tail.text == "gh")
  }
}
