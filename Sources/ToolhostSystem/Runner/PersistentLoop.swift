import CToolhostSupport
import Foundation

/// The state of one persistent process's I/O thread.
///
/// `@unchecked Sendable`: it is made by ``PersistentProcess/launch(_:handlers:)`` and handed to the thread it
/// starts; from then on only that thread reads or writes its mutable fields. Callers reach the thread only through
/// the owner's mutex-protected ``PersistentProcess/Shared`` and the wake-up pipe.
final class PersistentLoop: @unchecked Sendable {
  typealias Handlers = PersistentProcess.Handlers
  let owner: PersistentProcess
  let cell: ContainmentCell
  var pidfd: Int32
  var stdoutFD: Int32
  var stderrFD: Int32
  let wakeRead: Int32
  let handlers: Handlers

  /// How long the thread watches actively for an awaited reply before it sleeps in poll(2): 50 µs.
  static let replySpin: Duration = .microseconds(50)

  /// Stdout, split into reply lines.
  var lines: LineSplitter
  var polled = PollSet<Void>()
  /// Stopping, killing and draining.
  var life: ChildLifecycle
  var stopReason: PersistentProcess.StopReason?

  init(
    owner: PersistentProcess, child: SpawnedChild, wakeRead: Int32, outputLimit: Int, killGrace: Duration,
    handlers: Handlers
  ) {
    self.owner = owner
    self.cell = child.cell
    self.pidfd = child.pidfd
    self.stdoutFD = child.stdout
    self.stderrFD = child.stderr
    self.wakeRead = wakeRead
    self.lines = LineSplitter(maxLineLength: outputLimit)
    self.life = ChildLifecycle(killGrace: killGrace)
    self.handlers = handlers
  }

  /// Reaps the child if it has exited.
  func reap() -> ProcessOutcome.Termination? { reapChild(owner.pid)?.termination }

  func run() {
    toolhost_block_sigpipe_on_this_thread()
    var buffer = [UInt8](repeating: 0, count: 65536)
    var termination: ProcessOutcome.Termination?
    while true {
      // Commands from callers, the alarm, and stdin (written here when callers could not finish, closed here).
      let now = ContinuousClock.now
      let c = takeCommands(now: now)
      c.due?()
      if c.stopReason != nil, stopReason == nil { stopReason = c.stopReason }
      if c.kill { perform(life.kill(now: now)) }
      if c.terminate { perform(life.terminate(now: now)) }
      if pidfd < 0, termination == nil, let t = reap() {
        // No pidfd on this system: the exit is looked for on every turn (at least every 20 ms, below).
        termination = t
        childExited()
      }

      // Timers.
      var nextTimer: ContinuousClock.Instant? = pidfd < 0 && termination == nil ? now + .milliseconds(20) : nil
      let (actions, next) = life.timersDue(now: now)
      perform(actions)
      if let next { nextTimer = earliest(nextTimer, next) }
      if let termination, stdoutFD < 0, stderrFD < 0 {
        finish(termination)
        return
      }

      polled.reset(wake: wakeRead)
      polled.watch((), stdin: c.stdinFD, stdout: stdoutFD, stderr: stderrFD, pidfd: pidfd)
      // A caller arming an alarm wakes this thread, so the alarm seen here is the one to sleep for.
      let (alarmAt, awaited) = owner.shared.withLock { s in
        (s.alarm?.at, s.alarm != nil)
      }
      let n = waitForEvents(awaitingReply: awaited, until: alarmAt.map { earliest(nextTimer, $0) } ?? nextTimer)
      if n <= 0 { continue }
      polled.forEachReady { _, stream in
        switch stream {
        case .wake: while read(wakeRead, &buffer, buffer.count) > 0 {}
        case .input: break  // written at the top of the loop
        case .output: readOutput(&buffer)
        case .error: readError(&buffer)
        case .exit:
          if let t = reap() {
            closeFD(&pidfd)
            termination = t
            childExited()
          }
        }
      }
    }
  }

  /// Takes what callers asked for since the last turn (kill, terminate, the stop reason, an alarm that is due),
  /// writes what stdin can take of the pending input, and closes stdin once it is no longer needed.
  private func takeCommands(now: ContinuousClock.Instant) -> Commands {
    owner.shared.withLock { s in
      var c = Commands()
      c.kill = s.kill
      s.kill = false
      c.terminate = s.terminate
      c.stopReason = s.stopReason
      if let a = s.alarm, now >= a.at {
        c.due = a.action
        s.alarm = nil
      }
      if s.hasPending, !s.flush() { c.peerGone = true }
      if s.stdinFD >= 0, s.inputClosed || (s.closeRequested && !s.hasPending) || life.exited {
        close(s.stdinFD)
        s.stdinFD = -1
        s.inputClosed = true
        s.pending = []
        s.pendingOffset = 0
      }
      c.stdinFD = s.hasPending ? s.stdinFD : -1
      return c
    }
  }

  /// Polls the watched descriptors until one is ready or `deadline`; returns how many are ready.
  ///
  /// While a reply is awaited, it watches actively for a moment first: fast plugins answer within tens of
  /// microseconds, and a thread already awake saves a wake-up on the reply's path (a third of a persistent call's
  /// cost here); sched_yield leaves the CPU to the child meanwhile.
  private func waitForEvents(awaitingReply: Bool, until deadline: ContinuousClock.Instant?) -> Int32 {
    if awaitingReply, stdoutFD >= 0 {
      let spinEnd = ContinuousClock.now + Self.replySpin
      repeat {
        let n = polled.poll(until: nil, now: true)
        if n != 0 { return n }
        sched_yield()
      } while ContinuousClock.now < spinEnd
    }
    return polled.poll(until: deadline)
  }

  struct Commands {
    var kill = false
    var terminate = false
    var stopReason: PersistentProcess.StopReason?
    var due: (@Sendable () -> Void)?
    var peerGone = false
    var stdinFD: Int32 = -1
  }

  /// Does what the ``ChildLifecycle`` asks.
  func perform(_ actions: [ChildLifecycle.Action]) {
    for action in actions {
      switch action {
      case .terminateAll: cell.signalAll(SIGTERM, leader: owner.pid)
      case .killAll: cell.killAll(leader: owner.pid)
      case .closeInput: closeStdin()
      case .closePipes:
        // Something outside the child's group holds its pipes open: stop waiting for it.
        closeStdin()
        closeFD(&stdoutFD)
        closeFD(&stderrFD)
      }
    }
  }

  /// The child has exited (or its pidfd says so): end whatever it left in its group and drain the pipes.
  func childExited() { perform(life.childExited(now: .now)) }

  func closeStdin() {
    owner.shared.withLock { s in
      if s.stdinFD >= 0 {
        close(s.stdinFD)
        s.stdinFD = -1
      }
      s.inputClosed = true
      s.pending = []
      s.pendingOffset = 0
    }
  }

  func finish(_ termination: ProcessOutcome.Termination) {
    closeFD(&pidfd)
    closeStdin()
    let tail = owner.shared.withLock { $0.stderrTail.text }
    let exit = PersistentProcess.Exit(termination: termination, stopReason: stopReason, stderrTail: tail)
    handlers.onExit(exit)
    let waiters = owner.shared.withLock { s -> [@Sendable (PersistentProcess.Exit) -> Void] in
      s.exit = exit
      s.alarm = nil
      defer { s.exitWaiters = [] }
      return s.exitWaiters
    }
    for w in waiters { w(exit) }
    LiveProcesses.shared.remove(owner)
    cell.release()
  }

  func readOutput(_ buffer: inout [UInt8]) {
    lines.maxLineLength = owner.outputLimit
    readAvailable(&stdoutFD, into: &buffer, stopAtShortRead: true) { chunk, fd in
      if !lines.feed(chunk, onLine: handlers.onLine) {
        lineTooLong()
        closeFD(&fd)
      }
    }
    // At the end of the output, a last line without a line feed.
    if stdoutFD < 0, !lines.finish(onLine: handlers.onLine) { lineTooLong() }
  }

  func lineTooLong() {
    if stopReason == nil { stopReason = .outputTooLarge }
    perform(life.kill(now: .now))
  }

  func readError(_ buffer: inout [UInt8]) {
    readAvailable(&stderrFD, into: &buffer) { chunk, _ in
      owner.shared.withLock { $0.stderrTail.append(chunk) }
      handlers.onStderr?(Array(chunk))
    }
  }
}
