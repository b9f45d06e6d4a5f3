import CToolhostSupport
import Foundation
import Synchronization

/// A long-lived subprocess that reads lines on stdin and writes lines on stdout: a persistent plugin or an MCP
/// server.
///
/// The child is contained as a ``ProcessRunner`` call is, for its whole lifetime: a session of its own, its own cell
/// (cgroup or marker), its resource limits, close-on-exec descriptors. Its stdin is one end of a Unix stream socket pair rather than a pipe, so a caller can write a
/// request straight from its own thread with `send(MSG_NOSIGNAL | MSG_DONTWAIT)`: no SIGPIPE can reach the host and
/// no write ever blocks; what does not fit is left to the I/O thread. (Programs read a socket on stdin as they read
/// a pipe: `read(2)`, stdio, Python's `sys.stdin`, Node's `process.stdin` all work.)
///
/// One thread of its own serves the rest with poll(2): it writes what callers could not, splits stdout into lines
/// and hands each to `onLine`, keeps the tail of stderr as the process's log, notices the child's exit through a
/// pidfd, and keeps the process's alarm (a time limit for the request in flight). When the child exits, whatever it
/// left in its group is killed, the pipes are drained, and `onExit` is called once, last. Callbacks run on that
/// thread: keep them quick and never block in them.
///
/// Stopping always reaches every process of its cell: ``terminate()`` sends SIGTERM then SIGKILL after the grace period,
/// ``kill()`` sends SIGKILL, ``shutdown(grace:)`` closes stdin first and waits for a clean exit. Processes still
/// running when the host exits are shut down the same way by an `atexit` handler, so none is left behind.
public final class PersistentProcess: Sendable {
  /// Why the host ended the process, when it did.
  public enum StopReason: Sendable, Equatable {
    /// ``terminate()``, ``kill()`` or ``shutdown(grace:)`` was called.
    case requested
    /// A stdout line passed the output limit (``PersistentProcessSpec/outputLimit``, or ``setOutputLimit(_:)``'s).
    case outputTooLarge
  }

  /// How the process ended.
  public struct Exit: Sendable, Equatable {
    /// How the child itself ended.
    public var termination: ProcessOutcome.Termination
    /// Why the host ended it, if it did.
    public var stopReason: StopReason?
    /// The last bytes it wrote to stderr, as text, trimmed.
    public var stderrTail: String
  }

  /// What the process's thread calls.
  public struct Handlers: Sendable {
    /// Each complete stdout line, without its line feed (a trailing carriage return is removed too); blank lines
    /// are skipped.
    public var onLine: @Sendable ([UInt8]) -> Void
    /// Each chunk written to stderr.
    public var onStderr: (@Sendable ([UInt8]) -> Void)?
    /// Once, after the last line, when the process has ended and its pipes are closed.
    public var onExit: @Sendable (Exit) -> Void

    /// Makes handlers.
    public init(
      onLine: @escaping @Sendable ([UInt8]) -> Void, onStderr: (@Sendable ([UInt8]) -> Void)? = nil,
      onExit: @escaping @Sendable (Exit) -> Void = { _ in }
    ) {
      self.onLine = onLine
      self.onStderr = onStderr
      self.onExit = onExit
    }
  }

  /// What callers and the I/O thread share, behind one lock.
  ///
  /// The stdin descriptor lives here: whoever holds the lock may write to it; only the I/O thread closes it (while
  /// holding the lock), so a writer never sees a closed or reused descriptor.
  struct Shared {
    var stdinFD: Int32 = -1
    /// Bytes accepted but not yet written, from `pendingOffset` on; written in order.
    var pending: [UInt8] = []
    var pendingOffset = 0
    /// No more input is accepted (close requested, the peer went away, or the process ended).
    var inputClosed = false
    var closeRequested = false
    var kill = false
    var terminate = false
    var stopReason: StopReason?
    var exit: Exit?
    var exitWaiters: [@Sendable (Exit) -> Void] = []
    var stderrTail: ByteTail
    var alarm: Alarm?
    var alarmCount = 0

    var hasPending: Bool { pendingOffset < pending.count }

    /// Writes what it can of `pending` without blocking; returns false when the peer has gone.
    mutating func flush() -> Bool {
      while hasPending, stdinFD >= 0 {
        let n = pending.withUnsafeBytes { raw in
          Glibc.send(
            stdinFD, raw.baseAddress! + pendingOffset, pending.count - pendingOffset,
            Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        if n > 0 {
          pendingOffset += n
        } else if n < 0 && errno == EINTR {
          continue
        } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
          return true
        } else {
          pending = []
          pendingOffset = 0
          inputClosed = true
          return false
        }
      }
      if !hasPending {
        pending.removeAll(keepingCapacity: true)
        pendingOffset = 0
      }
      return true
    }
  }

  struct Alarm {
    var at: ContinuousClock.Instant
    var id: Int
    var action: @Sendable () -> Void
  }

  /// The child's process id, also its process group id.
  public let pid: Int32
  /// The executable it runs.
  public let executable: String
  /// The longest stdout line accepted now, in bytes.
  let outputLimitBytes: Atomic<Int>
  let shared: LockedState<Shared>
  /// The wake-up pipe of the I/O thread. Both ends stay open until the owner is gone, so a late ``kill()`` never
  /// writes to a closed pipe (SIGPIPE) or to a reused descriptor.
  let wakeFD: Int32
  let wakeReadFD: Int32

  private init(
    pid: Int32, executable: String, outputLimit: Int, wake: (read: Int32, write: Int32), shared: LockedState<Shared>
  ) {
    self.pid = pid
    self.executable = executable
    self.outputLimitBytes = Atomic(outputLimit)
    self.wakeFD = wake.write
    self.wakeReadFD = wake.read
    self.shared = shared
  }

  deinit {
    close(wakeFD)
    close(wakeReadFD)
  }

  /// Starts the process and its I/O thread.
  ///
  /// - Throws: ``ProcessLaunchError`` when the executable cannot be started (missing, not executable, bad
  ///   interpreter, no such working directory) or pipes cannot be made. Nothing else.
  public static func launch(_ spec: PersistentProcessSpec, handlers: Handlers)
    throws(ProcessLaunchError)
    -> PersistentProcess
  {
    var wake: [Int32] = [-1, -1]
    if toolhost_pipe_cloexec(&wake) != 0 {
      throw ProcessLaunchError(
        executable: spec.executable, reason: "cannot create pipes: \(String(cString: strerror(errno)))")
    }
    let child: SpawnedChild
    do {
      child = try spawnChild(
        executable: spec.executable, arguments: spec.arguments, environment: spec.environment,
        workingDirectory: spec.workingDirectory, input: .socket, containment: spec.containment, limits: spec.limits,
        confinement: spec.confinement)
    } catch {
      close(wake[0])
      close(wake[1])
      throw error
    }
    toolhost_set_nonblocking(wake[0])
    toolhost_set_nonblocking(wake[1])
    let shared = LockedState(Shared(stderrTail: ByteTail(limit: spec.stderrTailLimit)))
    shared.withLock { $0.stdinFD = child.stdin }
    let me = PersistentProcess(
      pid: child.pid, executable: spec.executable, outputLimit: spec.outputLimit, wake: (wake[0], wake[1]),
      shared: shared)
    let loop = PersistentLoop(
      owner: me, child: child, wakeRead: wake[0], outputLimit: spec.outputLimit,
      killGrace: spec.killGrace, handlers: handlers)
    LiveProcesses.shared.add(me)
    let thread = Thread { loop.run() }
    thread.name = "toolhost-persistent-\(child.pid)"
    thread.stackSize = 512 << 10
    thread.start()
    return me
  }

  /// The longest stdout line accepted now, in bytes: the spec's ``PersistentProcessSpec/outputLimit`` until
  /// ``setOutputLimit(_:)`` or ``raiseOutputLimit(to:)`` changes it.
  public var outputLimit: Int { outputLimitBytes.load(ordering: .relaxed) }

  /// Holds the lines read from now on to `bytes`: the limit of the one call a persistent plugin's process serves
  /// next (set before its request is sent). A longer line ends the process (stop reason ``StopReason/outputTooLarge``).
  public func setOutputLimit(_ bytes: Int) {
    outputLimitBytes.store(bytes, ordering: .relaxed)
  }

  /// Accepts lines of up to `bytes` from now on when the limit is lower; never lowers it. For a process that serves
  /// several requests at once (an MCP server), each with a limit of its own that the caller checks.
  public func raiseOutputLimit(to bytes: Int) {
    var current = outputLimitBytes.load(ordering: .relaxed)
    while current < bytes {
      let (exchanged, original) = outputLimitBytes.compareExchange(
        expected: current, desired: bytes, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }

  /// Writes bytes to the child's stdin, in order: at once as far as the socket takes them, the rest from the I/O
  /// thread. Never blocks.
  ///
  /// - Returns: `false` when stdin is closed or the process has ended (the bytes are dropped).
  @discardableResult
  public func send(_ bytes: [UInt8]) -> Bool {
    enqueue(bytes, alarm: nil) != nil
  }

  /// Writes bytes as ``send(_:)`` does and sets the process's alarm: `action` runs on the I/O thread once `timeout`
  /// has passed, unless ``cancelAlarm(_:)`` comes first. One alarm at a time: a new one replaces the old.
  ///
  /// - Returns: the alarm's id for ``cancelAlarm(_:)``, or `nil` when stdin is closed or the process has ended
  ///   (nothing is written or armed).
  public func send(
    _ bytes: [UInt8], alarmAfter timeout: Duration, action: @escaping @Sendable () -> Void
  ) -> Int? {
    enqueue(bytes, alarm: (timeout, action))
  }

  private func enqueue(_ bytes: [UInt8], alarm: (Duration, @Sendable () -> Void)?) -> Int? {
    let outcome = shared.withLock { s -> (id: Int, wake: Bool)? in
      guard !s.inputClosed, !s.closeRequested, s.exit == nil, s.stdinFD >= 0 else { return nil }
      let wasIdle = !s.hasPending
      s.pending.append(contentsOf: bytes)
      // Nothing queued before: write now from this thread. Otherwise the I/O thread is already on it.
      let peerGone = wasIdle && !s.flush()
      var wake = peerGone || (wasIdle && s.hasPending)
      var id = 0
      if let (timeout, action) = alarm {
        s.alarmCount &+= 1
        id = s.alarmCount
        let at = ContinuousClock.now + timeout
        s.alarm = Alarm(at: at, id: id, action: action)
        // A caller now waits for a reply: wake the I/O thread (while the child works) so that it watches for
        // the reply actively for a moment (see `PersistentLoop.replySpin`) and sees the alarm.
        wake = true
      }
      return (id, wake)
    }
    guard let outcome else { return nil }
    if outcome.wake { wake() }
    return outcome.id
  }

  /// Cancels the alarm `id` set by ``send(_:alarmAfter:action:)``, if it has not gone off. Cheap: it does not wake
  /// the I/O thread.
  public func cancelAlarm(_ id: Int) {
    shared.withLock { s in
      if s.alarm?.id == id { s.alarm = nil }
    }
  }

  /// Closes the child's stdin once everything queued has been written.
  public func closeInput() {
    shared.withLock { $0.closeRequested = true }
    wake()
  }

  /// Sends SIGTERM to the child's process group now and SIGKILL after the grace period.
  public func terminate() {
    shared.withLock {
      $0.terminate = true
      if $0.stopReason == nil { $0.stopReason = .requested }
    }
    wake()
  }

  /// Sends SIGKILL to the child's process group.
  public func kill() {
    shared.withLock {
      $0.kill = true
      if $0.stopReason == nil { $0.stopReason = .requested }
    }
    wake()
  }

  /// Closes stdin, gives the child `grace` to exit by itself, then ends its process group (SIGTERM, SIGKILL).
  ///
  /// - Returns: how it ended. Does not throw.
  @discardableResult
  public func shutdown(grace: Duration = .seconds(2)) async -> Exit {
    closeInput()
    let stopper = Task { [self] in
      try? await Task.sleep(for: grace)
      if !Task.isCancelled { terminate() }
    }
    let exit = await waitForExit()
    stopper.cancel()
    return exit
  }

  /// Waits until the process has ended and its `onExit` handler has run.
  public func waitForExit() async -> Exit {
    await withCheckedContinuation { (c: CheckedContinuation<Exit, Never>) in
      let done = shared.withLock { s -> Exit? in
        if let e = s.exit { return e }
        s.exitWaiters.append { c.resume(returning: $0) }
        return nil
      }
      if let done { c.resume(returning: done) }
    }
  }

  /// Whether the process has not ended yet (as far as the I/O thread knows).
  public var isRunning: Bool { shared.withLock { $0.exit == nil } }

  /// How it ended, once it has.
  public var exit: Exit? { shared.withLock { $0.exit } }

  /// The last bytes the child wrote to stderr, as text, trimmed.
  public var stderrTail: String {
    shared.withLock { $0.stderrTail }.text
  }

  func wake() {
    var byte: UInt8 = 1
    _ = write(wakeFD, &byte, 1)
  }

  /// Shuts down every persistent process still running: closes their stdin, waits up to `grace` for them to exit,
  /// then ends their process groups. Blocks the calling thread (at most `grace` plus about a second).
  public static func shutdownAll(grace: Duration = .seconds(1)) {
    let all = LiveProcesses.shared.snapshot()
    guard !all.isEmpty else { return }
    for p in all { p.closeInput() }
    let start = ContinuousClock.now
    func waitAll(until deadline: ContinuousClock.Instant) {
      while ContinuousClock.now < deadline, all.contains(where: \.isRunning) { usleep(2000) }
    }
    waitAll(until: start + grace)
    for p in all where p.isRunning { p.terminate() }
    waitAll(until: .now + .seconds(1))
  }
}
