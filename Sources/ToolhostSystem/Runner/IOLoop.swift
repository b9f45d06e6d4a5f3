import CToolhostSupport
import Foundation
import Synchronization

/// What the I/O thread hands back when a call's process has exited and been reaped, and its pipes are done.
struct IOResult: Sendable {
  var termination: ProcessOutcome.Termination
  var stdout: [UInt8]
  var stderrTail: [UInt8]
  var stderrByteCount: Int
  var stopReason: ProcessOutcome.StopReason?
  var limitExceeded: ResourceLimits.Kind?
  var cpuTime: Duration
}

/// One call's descriptors and buffers.
///
/// `@unchecked Sendable`: a job is created by the calling task, handed to the I/O thread through the loop's
/// mutex-protected inbox, and from then on read and written only by that thread; the calling task never touches
/// it again (cancellation goes through the atomic flag and the inbox).
final class IOJob: @unchecked Sendable {
  let id: Int
  let pid: Int32
  var pidfd: Int32
  let cell: ContainmentCell
  /// Set when the calling task is cancelled, which may happen before the job reaches the loop.
  let cancelRequested = Atomic<Bool>(false)
  var stdinFD: Int32
  var stdoutFD: Int32
  var stderrFD: Int32
  let input: [UInt8]
  var inputOffset = 0
  let outputLimit: Int
  /// The most processes the call may have in its cgroup, watched by the loop (when no pids controller does it).
  let processLimit: Int?
  let onStderr: (@Sendable ([UInt8]) -> Void)?
  /// Set by the caller before the job is handed to the loop.
  var onDone: @Sendable (IOResult) -> Void = { _ in }

  var stdout: [UInt8] = []
  var stderrTail: ByteTail
  var stopReason: ProcessOutcome.StopReason?
  var limitExceeded: ResourceLimits.Kind?
  var termination: ProcessOutcome.Termination?
  var cpuTime: Duration = .zero
  /// When the time limit passes.
  var deadline: ContinuousClock.Instant?
  /// Stopping, killing and draining.
  var life: ChildLifecycle
  /// When to look at the process count (or, without a pidfd, for the child's exit) next.
  var nextCheck: ContinuousClock.Instant?

  init(
    id: Int, pid: Int32, pidfd: Int32, cell: ContainmentCell, stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32,
    input: [UInt8], outputLimit: Int, stderrTailLimit: Int, timeout: Duration?, killGrace: Duration,
    processLimit: Int?, onStderr: (@Sendable ([UInt8]) -> Void)?
  ) {
    self.id = id
    self.pid = pid
    self.pidfd = pidfd
    self.cell = cell
    self.stdinFD = stdinFD
    self.stdoutFD = stdoutFD
    self.stderrFD = stderrFD
    self.input = input
    self.outputLimit = outputLimit
    self.stderrTail = ByteTail(limit: stderrTailLimit)
    self.life = ChildLifecycle(killGrace: killGrace)
    self.processLimit = processLimit
    self.onStderr = onStderr
    let now = ContinuousClock.now
    if let timeout { deadline = now + timeout }
    if processLimit != nil || pidfd < 0 { nextCheck = now + IOJob.checkInterval }
  }

  /// How often the process count is looked at, and the exit without a pidfd: 20 ms.
  static let checkInterval: Duration = .milliseconds(20)

  var exited: Bool { termination != nil }
  var isDone: Bool { exited && stdinFD < 0 && stdoutFD < 0 && stderrFD < 0 }

  /// Reaps the child if it has exited; true once it has.
  func reap() -> Bool {
    guard termination == nil else { return true }
    guard let ended = reapChild(pid) else { return false }
    termination = ended.termination
    cpuTime = ended.cpuTime
    return true
  }
}

/// A poll(2) loop on a thread of its own that serves the pipes of every running call.
final class IOLoop: Sendable {
  enum Command: Sendable {
    case add(IOJob)
    case cancel(Int)
  }

  private let inbox = Mutex<[Command]>([])
  private let wake: (read: Int32, write: Int32)
  private let started = Atomic<Bool>(false)
  private let ids = Atomic<Int>(0)
  let activeCount = Atomic<Int>(0)

  init() {
    var fds: [Int32] = [-1, -1]
    if toolhost_pipe_cloexec(&fds) != 0 { fatalError("toolhost: cannot create the runner's wake-up pipe") }
    toolhost_set_nonblocking(fds[0])
    toolhost_set_nonblocking(fds[1])
    wake = (fds[0], fds[1])
  }

  func nextID() -> Int { ids.add(1, ordering: .relaxed).newValue }

  func send(_ command: Command) {
    if !started.load(ordering: .acquiring),
      started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    {
      let thread = Thread { [self] in run() }
      thread.name = "toolhost-io"
      thread.stackSize = 1 << 20
      thread.start()
    }
    inbox.withLock { $0.append(command) }
    var byte: UInt8 = 1
    _ = write(wake.write, &byte, 1)
  }

  private func run() -> Never {
    toolhost_block_sigpipe_on_this_thread()
    var jobs: [Int: IOJob] = [:]
    var buffer = [UInt8](repeating: 0, count: 65536)
    var polled = PollSet<IOJob>()

    while true {
      takeCommands(into: &jobs)

      let nextTimer = runTimers(of: jobs, now: ContinuousClock.now)
      finishDone(&jobs)

      // Poll.
      polled.reset(wake: wake.read)
      for job in jobs.values {
        polled.watch(job, stdin: job.stdinFD, stdout: job.stdoutFD, stderr: job.stderrFD, pidfd: job.pidfd)
      }
      if polled.poll(until: nextTimer) <= 0 { continue }
      polled.forEachReady { job, stream in
        guard let job else {
          while read(wake.read, &buffer, buffer.count) > 0 {}
          return
        }
        switch stream {
        case .input: writeInput(job)
        case .output: readOutput(job, &buffer)
        case .error: readError(job, &buffer)
        case .exit, .wake:
          if job.reap() {
            closeFD(&job.pidfd)
            childExited(job)
          }
        }
      }
      finishDone(&jobs)
    }
  }

  /// Takes the callers' commands: new jobs join `jobs` (a job cancelled before it arrived is stopped at once),
  /// cancelled ones are stopped.
  private func takeCommands(into jobs: inout [Int: IOJob]) {
    for command in inbox.withLock({ c -> [Command] in
      defer { c.removeAll(keepingCapacity: true) }
      return c
    }) {
      switch command {
      case .add(let job):
        jobs[job.id] = job
        activeCount.add(1, ordering: .relaxed)
        if job.input.isEmpty { closeFD(&job.stdinFD) }
        // Notices sent before the job arrived are in its flags (their commands found no job and were dropped).
        if job.cancelRequested.load(ordering: .acquiring) { stop(job, .cancelled) }
      case .cancel(let id):
        if let job = jobs[id] { stop(job, .cancelled) }
      }
    }
  }

  /// Runs what is due at `now` for each job (its deadline, its periodic check of the exit and the process limit,
  /// its lifecycle's timers) and returns when the next timer is due, if any.
  private func runTimers(of jobs: [Int: IOJob], now t: ContinuousClock.Instant) -> ContinuousClock.Instant? {
    var nextTimer: ContinuousClock.Instant?
    for job in jobs.values {
      if let d = job.deadline {
        if t >= d {
          job.deadline = nil
          stop(job, .timedOut)
        } else {
          nextTimer = earliest(nextTimer, d)
        }
      }
      if let c = job.nextCheck {
        if t >= c {
          job.nextCheck = job.exited ? nil : t + IOJob.checkInterval
          if job.pidfd < 0, job.reap() {
            childExited(job)
          } else if let limit = job.processLimit, !job.exited, job.cell.members().count > limit {
            job.limitExceeded = .processes
            killNow(job, at: t)
          }
          if let next = job.nextCheck { nextTimer = earliest(nextTimer, next) }
        } else {
          nextTimer = earliest(nextTimer, c)
        }
      }
      let (actions, next) = job.life.timersDue(now: t)
      perform(actions, on: job)
      if let next { nextTimer = earliest(nextTimer, next) }
    }
    return nextTimer
  }

  private func finishDone(_ jobs: inout [Int: IOJob]) {
    for (id, job) in jobs where job.isDone {
      jobs[id] = nil
      closeFD(&job.pidfd)
      activeCount.subtract(1, ordering: .relaxed)
      let limit = job.limitExceeded ?? job.cell.cgroupLimitHit
      job.cell.release()
      job.onDone(
        IOResult(
          termination: job.termination ?? .signaled(SIGKILL), stdout: job.stdout, stderrTail: job.stderrTail.bytes,
          stderrByteCount: job.stderrTail.byteCount, stopReason: job.stopReason, limitExceeded: limit,
          cpuTime: job.cpuTime))
    }
  }

  /// Does what the job's ``ChildLifecycle`` asks.
  private func perform(_ actions: [ChildLifecycle.Action], on job: IOJob) {
    for action in actions {
      switch action {
      case .terminateAll: job.cell.signalAll(SIGTERM, leader: job.pid)
      case .killAll: job.cell.killAll(leader: job.pid)
      case .closeInput: closeFD(&job.stdinFD)
      case .closePipes:
        // Something outside the child's group holds its pipes open: stop waiting for it.
        closeFD(&job.stdinFD)
        closeFD(&job.stdoutFD)
        closeFD(&job.stderrFD)
      }
    }
  }

  /// The child has exited and been reaped: end whatever it left behind, and give its pipes a moment to drain.
  private func childExited(_ job: IOJob) {
    job.deadline = nil
    perform(job.life.childExited(now: .now), on: job)
  }

  /// Stops a running call: SIGTERM to its processes now, SIGKILL to all of them after the grace period; an output
  /// flood or a process storm is killed at once.
  private func stop(_ job: IOJob, _ reason: ProcessOutcome.StopReason) {
    if job.stopReason == nil { job.stopReason = reason }
    let now = ContinuousClock.now
    if reason == .outputTooLarge { return killNow(job, at: now) }
    job.deadline = nil
    perform(job.life.terminate(now: now), on: job)
  }

  /// Kills every process of a running call at once.
  private func killNow(_ job: IOJob, at now: ContinuousClock.Instant) {
    job.deadline = nil
    perform(job.life.kill(now: now), on: job)
  }

  private func writeInput(_ job: IOJob) {
    while job.stdinFD >= 0 {
      let remaining = job.input.count - job.inputOffset
      if remaining == 0 {
        closeFD(&job.stdinFD)
        return
      }
      let n = job.input.withUnsafeBytes { write(job.stdinFD, $0.baseAddress! + job.inputOffset, remaining) }
      if n > 0 {
        job.inputOffset += n
      } else if n < 0 && errno == EINTR {
        continue
      } else if n < 0 && errno == EAGAIN {
        return
      } else {
        // EPIPE: the child closed its stdin without reading all of it. Not an error of ours.
        closeFD(&job.stdinFD)
        return
      }
    }
  }

  private func readOutput(_ job: IOJob, _ buffer: inout [UInt8]) {
    readAvailable(&job.stdoutFD, into: &buffer) { chunk, fd in
      if job.stdout.count + chunk.count > job.outputLimit {
        closeFD(&fd)
        stop(job, .outputTooLarge)
      } else {
        job.stdout.append(contentsOf: chunk)
      }
    }
  }

  private func readError(_ job: IOJob, _ buffer: inout [UInt8]) {
    readAvailable(&job.stderrFD, into: &buffer) { chunk, _ in
      job.stderrTail.append(chunk)
      job.onStderr?(Array(chunk))
    }
  }
}

func closeFD(_ fd: inout Int32) {
  if fd >= 0 {
    close(fd)
    fd = -1
  }
}

/// The earlier of a loop's next timer so far (`nil`: none yet) and `instant`.
func earliest(_ timer: ContinuousClock.Instant?, _ instant: ContinuousClock.Instant) -> ContinuousClock.Instant {
  timer.map { min($0, instant) } ?? instant
}
