import CToolhostSupport
import Foundation
import Synchronization

/// What the I/O thread hands back when a call's pipes are done and its process has exited.
struct IOResult: Sendable {
  var stdout: [UInt8]
  var stderrTail: [UInt8]
  var stderrByteCount: Int
  var stopReason: ProcessOutcome.StopReason?
}

/// One call's descriptors and buffers.
///
/// `@unchecked Sendable`: a job is created by the calling task, handed to the I/O thread through the loop's
/// mutex-protected inbox, and from then on read and written only by that thread; the calling task never touches
/// it again.
final class IOJob: @unchecked Sendable {
  let id: Int
  /// Set by the caller after launch, before the job is handed to the loop.
  var pid: Int32 = 0
  var pidfd: Int32 = -1
  /// Set from Foundation's termination handler, which may run before the job reaches the loop.
  let terminated = Atomic<Bool>(false)
  /// Set when the calling task is cancelled, which may happen before the job reaches the loop.
  let cancelRequested = Atomic<Bool>(false)
  var stdinFD: Int32
  var stdoutFD: Int32
  var stderrFD: Int32
  let input: [UInt8]
  var inputOffset = 0
  let outputLimit: Int
  let stderrTailLimit: Int
  let killGrace: Double
  let onStderr: (@Sendable ([UInt8]) -> Void)?
  let onDone: @Sendable (IOResult) -> Void

  var stdout: [UInt8] = []
  var stderrTail: [UInt8] = []
  var stderrByteCount = 0
  var stopReason: ProcessOutcome.StopReason?
  var exited = false
  /// When the time limit passes (monotonic seconds).
  var deadline: Double?
  /// When SIGKILL follows the SIGTERM already sent.
  var killAt: Double?
  /// After the child exited: when to stop waiting for pipes held open by something outside its group.
  var drainDeadline: Double?

  init(
    id: Int, stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32, input: [UInt8],
    outputLimit: Int, stderrTailLimit: Int, timeout: Duration?, killGrace: Duration,
    onStderr: (@Sendable ([UInt8]) -> Void)?, onDone: @escaping @Sendable (IOResult) -> Void
  ) {
    self.id = id
    self.stdinFD = stdinFD
    self.stdoutFD = stdoutFD
    self.stderrFD = stderrFD
    self.input = input
    self.outputLimit = outputLimit
    self.stderrTailLimit = stderrTailLimit
    self.killGrace = killGrace.seconds
    self.onStderr = onStderr
    self.onDone = onDone
    if let timeout { deadline = monotonicSeconds() + timeout.seconds }
  }

  var isDone: Bool { exited && stdinFD < 0 && stdoutFD < 0 && stderrFD < 0 }

  /// Signals the child's whole process group; never signals our own group.
  func signalGroup(_ signal: Int32) {
    guard pid > 0 else { return }
    kill(-pid, signal)
  }
}

/// A poll(2) loop on a thread of its own that serves the pipes of every running call.
final class IOLoop: Sendable {
  enum Command: Sendable {
    case add(IOJob)
    case cancel(Int)
    case exited(Int)
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
    var pollfds: [pollfd] = []
    var owners: [(IOJob, Int)] = []  // which job and which stream (0 in, 1 out, 2 err, 3 pidfd) a pollfd is

    while true {
      // Commands.
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
          if job.terminated.load(ordering: .acquiring) { childExited(job) }
        case .cancel(let id):
          if let job = jobs[id] { stop(job, .cancelled) }
        case .exited(let id):
          if let job = jobs[id] { childExited(job) }
        }
      }

      // Timers.
      let t = monotonicSeconds()
      var nextTimer = Double.infinity
      for job in jobs.values {
        if let d = job.deadline {
          if t >= d {
            job.deadline = nil
            stop(job, .timedOut)
          } else {
            nextTimer = min(nextTimer, d)
          }
        }
        if let k = job.killAt {
          if t >= k {
            job.killAt = nil
            job.signalGroup(SIGKILL)
            if job.drainDeadline == nil { job.drainDeadline = t + 0.5 }
          } else {
            nextTimer = min(nextTimer, k)
          }
        }
        if let d = job.drainDeadline {
          if t >= d {
            // Something outside the child's group holds its pipes open: stop waiting for it.
            closeFD(&job.stdinFD)
            closeFD(&job.stdoutFD)
            closeFD(&job.stderrFD)
            if job.exited { job.drainDeadline = nil } else { job.drainDeadline = t + 0.5 }
          } else {
            nextTimer = min(nextTimer, d)
          }
        }
      }
      finishDone(&jobs)

      // Poll.
      pollfds.removeAll(keepingCapacity: true)
      owners.removeAll(keepingCapacity: true)
      pollfds.append(pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0))
      for job in jobs.values {
        if job.stdinFD >= 0 {
          pollfds.append(pollfd(fd: job.stdinFD, events: Int16(POLLOUT), revents: 0))
          owners.append((job, 0))
        }
        if job.stdoutFD >= 0 {
          pollfds.append(pollfd(fd: job.stdoutFD, events: Int16(POLLIN), revents: 0))
          owners.append((job, 1))
        }
        if job.stderrFD >= 0 {
          pollfds.append(pollfd(fd: job.stderrFD, events: Int16(POLLIN), revents: 0))
          owners.append((job, 2))
        }
        if job.pidfd >= 0 {
          pollfds.append(pollfd(fd: job.pidfd, events: Int16(POLLIN), revents: 0))
          owners.append((job, 3))
        }
      }
      var timeoutMS: Int32 = -1
      if nextTimer.isFinite {
        timeoutMS = Int32(max(0, min(60_000, ((nextTimer - monotonicSeconds()) * 1000).rounded(.up))))
      }
      let n = poll(&pollfds, nfds_t(pollfds.count), timeoutMS)
      if n <= 0 { continue }
      if pollfds[0].revents != 0 {
        while read(wake.read, &buffer, buffer.count) > 0 {}
      }
      for i in 1..<pollfds.count where pollfds[i].revents != 0 {
        let (job, stream) = owners[i - 1]
        switch stream {
        case 0: writeInput(job)
        case 1: readOutput(job, &buffer)
        case 2: readError(job, &buffer)
        default:
          closeFD(&job.pidfd)
          childExited(job)
        }
      }
      finishDone(&jobs)
    }
  }

  private func finishDone(_ jobs: inout [Int: IOJob]) {
    for (id, job) in jobs where job.isDone {
      jobs[id] = nil
      closeFD(&job.pidfd)
      activeCount.subtract(1, ordering: .relaxed)
      job.onDone(
        IOResult(
          stdout: job.stdout, stderrTail: job.stderrTail, stderrByteCount: job.stderrByteCount,
          stopReason: job.stopReason))
    }
  }

  /// The child has exited: end whatever it left in its group, and give its pipes a moment to drain.
  private func childExited(_ job: IOJob) {
    guard !job.exited else { return }
    job.exited = true
    job.signalGroup(SIGKILL)
    job.killAt = nil
    job.deadline = nil
    // stdin can no longer be read by anyone that matters.
    closeFD(&job.stdinFD)
    if job.drainDeadline == nil { job.drainDeadline = monotonicSeconds() + 0.5 }
  }

  /// Stops a running child: SIGTERM to its group now, SIGKILL after the grace period.
  private func stop(_ job: IOJob, _ reason: ProcessOutcome.StopReason) {
    if job.stopReason == nil { job.stopReason = reason }
    job.deadline = nil
    guard !job.exited else { return }
    if reason == .outputTooLarge {
      job.signalGroup(SIGKILL)
      if job.drainDeadline == nil { job.drainDeadline = monotonicSeconds() + 0.5 }
      return
    }
    job.signalGroup(SIGTERM)
    if job.killAt == nil { job.killAt = monotonicSeconds() + job.killGrace }
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
    while job.stdoutFD >= 0 {
      let n = read(job.stdoutFD, &buffer, buffer.count)
      if n > 0 {
        if job.stdout.count + n > job.outputLimit {
          closeFD(&job.stdoutFD)
          stop(job, .outputTooLarge)
          return
        }
        job.stdout.append(contentsOf: buffer[0..<n])
      } else if n < 0 && errno == EINTR {
        continue
      } else if n < 0 && errno == EAGAIN {
        return
      } else {
        closeFD(&job.stdoutFD)
      }
    }
  }

  private func readError(_ job: IOJob, _ buffer: inout [UInt8]) {
    while job.stderrFD >= 0 {
      let n = read(job.stderrFD, &buffer, buffer.count)
      if n > 0 {
        job.stderrByteCount += n
        let chunk = Array(buffer[0..<n])
        job.stderrTail.append(contentsOf: chunk)
        if job.stderrTail.count > 2 * job.stderrTailLimit {
          job.stderrTail.removeFirst(job.stderrTail.count - job.stderrTailLimit)
        }
        job.onStderr?(chunk)
      } else if n < 0 && errno == EINTR {
        continue
      } else if n < 0 && errno == EAGAIN {
        return
      } else {
        closeFD(&job.stderrFD)
        if job.stderrTail.count > job.stderrTailLimit {
          job.stderrTail.removeFirst(job.stderrTail.count - job.stderrTailLimit)
        }
      }
    }
  }
}

func closeFD(_ fd: inout Int32) {
  if fd >= 0 {
    close(fd)
    fd = -1
  }
}

/// Monotonic seconds since an arbitrary start.
func monotonicSeconds() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

extension Duration {
  /// The duration in seconds.
  var seconds: Double {
    let c = components
    return Double(c.seconds) + Double(c.attoseconds) / 1e18
  }
}
