import Testing

@testable import ToolhostSystem

/// The stop → grace → kill → drain state machine both runners share, and the byte tail they keep, without processes.
@Suite struct ChildLifecycleTests {
  /// An instant `ms` milliseconds after the test's own start.
  let start = ContinuousClock.now
  func at(_ ms: Int64) -> ContinuousClock.Instant { start + .milliseconds(ms) }

  @Test func terminateSendsSIGTERMOnceThenKillsAfterTheGrace() {
    var life = ChildLifecycle(killGrace: .milliseconds(200))
    #expect(life.terminate(now: at(10_000)) == [.terminateAll])
    #expect(life.terminate(now: at(10_050)) == [])
    var due = life.timersDue(now: at(10_100))
    #expect(due.actions == [])
    #expect(due.next == at(10_200))
    due = life.timersDue(now: at(10_200))
    #expect(due.actions == [.killAll])
    // After the kill, the pipes get the drain time; the child has not exited, so the wait goes on.
    #expect(due.next == at(10_200) + ChildLifecycle.drainWait)
    due = life.timersDue(now: at(10_700))
    #expect(due.actions == [.closePipes])
    #expect(due.next == at(10_700) + ChildLifecycle.drainWait)
  }

  @Test func anExitEndsTheLeftoversClosesStdinAndStopsTheKillTimer() {
    var life = ChildLifecycle(killGrace: .seconds(1))
    _ = life.terminate(now: at(0))
    #expect(life.childExited(now: at(100)) == [.killAll, .closeInput])
    #expect(life.childExited(now: at(200)) == [])
    #expect(life.killAt == nil)
    var due = life.timersDue(now: at(500))
    #expect(due.actions == [])
    #expect(due.next == at(100) + ChildLifecycle.drainWait)
    due = life.timersDue(now: at(600))
    #expect(due.actions == [.closePipes])
    #expect(due.next == nil)
    // Nothing more is asked of an exited child.
    #expect(life.terminate(now: at(1000)) == [])
    #expect(life.kill(now: at(1000)) == [])
  }

  @Test func killIsAtOnceAndReplacesAPendingGracePeriod() {
    var life = ChildLifecycle(killGrace: .seconds(5))
    _ = life.terminate(now: at(0))
    #expect(life.kill(now: at(1000)) == [.killAll])
    #expect(life.killAt == nil)
    #expect(life.timersDue(now: at(1200)).next == at(1000) + ChildLifecycle.drainWait)
    // A terminate after the kill sends no SIGTERM.
    #expect(life.terminate(now: at(1300)) == [])
  }

  @Test func aQuietChildNeedsNoTime() {
    var life = ChildLifecycle(killGrace: .milliseconds(200))
    let due = life.timersDue(now: at(3000))
    #expect(due.actions.isEmpty)
    #expect(due.next == nil)
  }

  /// poll(2)'s timeout in whole milliseconds, never shorter than the time left.
  @Test func aDurationRoundsUpToWholeMilliseconds() {
    #expect(Duration.milliseconds(20).millisecondsRoundedUp == 20)
    #expect(Duration.microseconds(20_001).millisecondsRoundedUp == 21)
    #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
    #expect(Duration.zero.millisecondsRoundedUp == 0)
    #expect(Duration.seconds(3).millisecondsRoundedUp == 3000)
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
