import Foundation

/// How a child is stopped and its pipes drained, as a pure state machine: stop → grace → kill → drain.
///
/// Both I/O loops (one-shot calls in ``IOLoop``, persistent processes in `PersistentLoop`) own one per child. They
/// tell it what happened (a stop was asked, the child exited) and the time; it answers with what to do to the
/// child's processes and pipes, and when it next needs the time. It does no I/O, so it is tested without processes.
struct ChildLifecycle: Sendable {
  /// What the loop must do.
  enum Action: Sendable, Equatable {
    /// SIGTERM to every process of the child's cell.
    case terminateAll
    /// SIGKILL to every process of the child's cell.
    case killAll
    /// Close the child's stdin: it has exited, nothing it left behind should be fed.
    case closeInput
    /// Close every pipe still open: something outside the cell holds them, and waiting longer would hang.
    case closePipes
  }

  /// How long pipes may stay open after the child exited or was killed: 0.5 s.
  static let drainWait: Duration = .milliseconds(500)

  /// Time between SIGTERM and SIGKILL.
  let killGrace: Duration
  /// Whether the child has exited (and been reaped).
  private(set) var exited = false
  /// When SIGKILL follows the SIGTERM already sent.
  private(set) var killAt: ContinuousClock.Instant?
  /// After the child exited or was killed: when to stop waiting for pipes held open by something the kill did
  /// not reach.
  private(set) var drainDeadline: ContinuousClock.Instant?
  private var terminating = false

  init(killGrace: Duration) { self.killGrace = killGrace }

  /// A stop was asked: SIGTERM now and SIGKILL after the grace period. Nothing once the child has exited, or when
  /// it is already being stopped.
  mutating func terminate(now: ContinuousClock.Instant) -> [Action] {
    guard !exited, !terminating else { return [] }
    terminating = true
    killAt = now + killGrace
    return [.terminateAll]
  }

  /// The child must end at once (an output flood, a process storm, an explicit kill): SIGKILL now, then drain.
  mutating func kill(now: ContinuousClock.Instant) -> [Action] {
    guard !exited else { return [] }
    terminating = true
    killAt = nil
    armDrain(now)
    return [.killAll]
  }

  /// The child has exited and been reaped: whatever it left in its cell is killed, its stdin closed, and its pipes
  /// get ``drainWait`` to finish.
  mutating func childExited(now: ContinuousClock.Instant) -> [Action] {
    guard !exited else { return [] }
    exited = true
    killAt = nil
    armDrain(now)
    return [.killAll, .closeInput]
  }

  /// The actions whose time has come, and the next time this machine needs (`nil` when it waits for nothing).
  mutating func timersDue(now: ContinuousClock.Instant) -> (actions: [Action], next: ContinuousClock.Instant?) {
    var actions: [Action] = []
    if let k = killAt, now >= k {
      killAt = nil
      actions.append(.killAll)
      armDrain(now)
    }
    if let d = drainDeadline, now >= d {
      actions.append(.closePipes)
      // A child that has not exited yet keeps being waited for (its pidfd or reaping ends the wait).
      drainDeadline = exited ? nil : now + Self.drainWait
    }
    let next = [killAt, drainDeadline].compactMap { $0 }.min()
    return (actions, next)
  }

  private mutating func armDrain(_ now: ContinuousClock.Instant) {
    if drainDeadline == nil { drainDeadline = now + Self.drainWait }
  }
}
