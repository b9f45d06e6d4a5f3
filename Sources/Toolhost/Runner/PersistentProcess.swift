import CToolhostSupport
import Foundation
import Synchronization

/// What to run as a long-lived subprocess that exchanges lines on stdin and stdout.
public struct PersistentProcessSpec: Sendable {
  /// The absolute path of the executable.
  public var executable: String
  /// Arguments after the executable's name.
  public var arguments: [String]
  /// The complete environment of the child (nothing of the host's is added).
  public var environment: [String: String]
  /// The child's working directory; the host's when `nil`.
  public var workingDirectory: String?
  /// The longest stdout line accepted; past it the process group is killed (stop reason `.outputTooLarge`).
  public var maxLineLength: Int
  /// How many of the last stderr bytes are kept as the process's log.
  public var stderrTailLimit: Int
  /// Time between SIGTERM and SIGKILL when the process is stopped.
  public var killGrace: Duration
  /// Its resource limits for its whole lifetime (none by default).
  public var limits: ResourceLimits
  /// How it and everything it starts are contained.
  public var containment: Containment

  /// Makes a spec with the default limits: 16 MiB lines, 8 KiB of stderr tail, 200 ms grace, no resource limits.
  public init(
    executable: String, arguments: [String] = [], environment: [String: String] = [:],
    workingDirectory: String? = nil, maxLineLength: Int = 16 << 20, stderrTailLimit: Int = 8 << 10,
    killGrace: Duration = .milliseconds(200), limits: ResourceLimits = .none, containment: Containment = .shared
  ) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.maxLineLength = maxLineLength
    self.stderrTailLimit = stderrTailLimit
    self.killGrace = killGrace
    self.limits = limits
    self.containment = containment
  }
}

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
    /// A stdout line passed ``PersistentProcessSpec/maxLineLength``.
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
    var signal: Int32 = 0
    var terminate = false
    var stopReason: StopReason?
    var exit: Exit?
    var exitWaiters: [@Sendable (Exit) -> Void] = []
    var stderrTail: [UInt8] = []
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
    var at: Double
    var id: Int
    var action: @Sendable () -> Void
  }

  /// The child's process id, also its process group id.
  public let pid: Int32
  /// The executable it runs.
  public let executable: String
  let shared: LockedState<Shared>
  /// The wake-up pipe of the I/O thread. Both ends stay open until the owner is gone, so a late ``kill()`` never
  /// writes to a closed pipe (SIGPIPE) or to a reused descriptor.
  let wakeFD: Int32
  let wakeReadFD: Int32
  let stderrTailLimit: Int

  private init(
    pid: Int32, executable: String, wake: (read: Int32, write: Int32), stderrTailLimit: Int,
    shared: LockedState<Shared>
  ) {
    self.pid = pid
    self.executable = executable
    self.wakeFD = wake.write
    self.wakeReadFD = wake.read
    self.stderrTailLimit = stderrTailLimit
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
    // stdin (parent's end, child's end), stdout, stderr, wake-up.
    var fds: [[Int32]] = Array(repeating: [-1, -1], count: 4)
    func closeAll() {
      for pair in fds { for fd in pair where fd >= 0 { close(fd) } }
    }
    var stdinPair: [Int32] = [-1, -1]
    let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    if socketpair(AF_UNIX, socketType, 0, &stdinPair) != 0 {
      throw ProcessLaunchError(
        executable: spec.executable,
        reason: "cannot create a socket pair: \(String(cString: strerror(errno)))")
    }
    fds[0] = stdinPair
    // The child only reads its stdin; the parent only writes.
    _ = Glibc.shutdown(stdinPair[0], Int32(SHUT_RD))
    for i in 1..<4 where toolhost_pipe_cloexec(&fds[i]) != 0 {
      let reason = String(cString: strerror(errno))
      closeAll()
      throw ProcessLaunchError(
        executable: spec.executable, reason: "cannot create pipes: \(reason)")
    }

    let shared = LockedState(Shared())
    let wakeWrite = fds[3][1]
    let cell = spec.containment.makeCell(limits: spec.limits)
    let pid: Int32
    do {
      pid = try spawnProcess(
        executable: spec.executable, arguments: spec.arguments, environment: spec.environment,
        workingDirectory: spec.workingDirectory, stdio: (fds[0][1], fds[1][1], fds[2][1]), cell: cell,
        limits: spec.limits)
    } catch {
      closeAll()
      cell.release()
      throw error
    }
    // The child has its own copies now.
    close(fds[0][1])
    close(fds[1][1])
    close(fds[2][1])
    for fd in [fds[0][0], fds[1][0], fds[2][0], fds[3][0], fds[3][1]] {
      toolhost_set_nonblocking(fd)
    }
    shared.withLock { $0.stdinFD = fds[0][0] }

    let me = PersistentProcess(
      pid: pid, executable: spec.executable, wake: (fds[3][0], wakeWrite),
      stderrTailLimit: spec.stderrTailLimit,
      shared: shared)
    let loop = PersistentLoop(
      owner: me, cell: cell, pidfd: toolhost_pidfd_open(pid), stdoutFD: fds[1][0],
      stderrFD: fds[2][0],
      wakeRead: fds[3][0], maxLineLength: spec.maxLineLength, killGrace: spec.killGrace.seconds,
      handlers: handlers)
    LiveProcesses.shared.add(me)
    let thread = Thread { loop.run() }
    thread.name = "toolhost-persistent-\(pid)"
    thread.stackSize = 512 << 10
    thread.start()
    return me
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
        let at = monotonicSeconds() + timeout.seconds
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
      $0.signal = SIGKILL
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
    let timer = DispatchWorkItem { [self] in terminate() }
    DispatchQueue.global().asyncAfter(deadline: .now() + grace.seconds, execute: timer)
    let exit = await waitForExit()
    timer.cancel()
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
    String(decoding: shared.withLock { $0.stderrTail }, as: UTF8.self).trimmingCharacters(
      in: .whitespacesAndNewlines)
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
    let start = monotonicSeconds()
    func waitAll(until deadline: Double) {
      while monotonicSeconds() < deadline, all.contains(where: \.isRunning) { usleep(2000) }
    }
    waitAll(until: start + grace.seconds)
    for p in all where p.isRunning { p.terminate() }
    waitAll(until: monotonicSeconds() + 1.0)
  }
}

/// A mutex-protected value in a class, so callers and an I/O thread can share it.
final class LockedState<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>

  init(_ value: Value) { mutex = Mutex(value) }

  func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
    mutex.withLock { body(&$0) }
  }
}

/// Every persistent process still running, for the `atexit` clean-up.
final class LiveProcesses: Sendable {
  static let shared = LiveProcesses()
  private let processes = Mutex<[ObjectIdentifier: PersistentProcess]>([:])
  private let installed = Atomic<Bool>(false)

  func add(_ p: PersistentProcess) {
    processes.withLock { $0[ObjectIdentifier(p)] = p }
    if installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
      .exchanged
    {
      atexit { PersistentProcess.shutdownAll() }
    }
  }

  func remove(_ p: PersistentProcess) {
    _ = processes.withLock { $0.removeValue(forKey: ObjectIdentifier(p)) }
  }

  func snapshot() -> [PersistentProcess] { processes.withLock { Array($0.values) } }
}

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
  let maxLineLength: Int
  let killGrace: Double
  let handlers: Handlers

  /// How long the thread watches actively for an awaited reply before it sleeps in poll(2): 50 µs.
  static let replySpin = 50e-6

  var line: [UInt8] = []
  var pollFDs: [pollfd] = []
  var pollKinds: [Int] = []
  var exited = false
  var killAt: Double?
  var drainDeadline: Double?
  var stopReason: PersistentProcess.StopReason?
  var stderrTail: [UInt8] = []

  init(
    owner: PersistentProcess, cell: ContainmentCell, pidfd: Int32, stdoutFD: Int32, stderrFD: Int32,
    wakeRead: Int32,
    maxLineLength: Int, killGrace: Double, handlers: Handlers
  ) {
    self.owner = owner
    self.cell = cell
    self.pidfd = pidfd
    self.stdoutFD = stdoutFD
    self.stderrFD = stderrFD
    self.wakeRead = wakeRead
    self.maxLineLength = maxLineLength
    self.killGrace = killGrace
    self.handlers = handlers
  }

  func signalGroup(_ signal: Int32) {
    if signal == SIGKILL { cell.killAll(leader: owner.pid) } else { cell.signalAll(signal, leader: owner.pid) }
  }

  /// Reaps the child if it has exited.
  func reap() -> ProcessOutcome.Termination? { reapChild(owner.pid)?.termination }

  func run() {
    toolhost_block_sigpipe_on_this_thread()
    var buffer = [UInt8](repeating: 0, count: 65536)
    var termination: ProcessOutcome.Termination?
    var terminated = false
    while true {
      // Commands from callers, the alarm, and stdin (written here when callers could not finish, closed here).
      let now = monotonicSeconds()
      let c = owner.shared.withLock { s in
        var c = Commands()
        c.signal = s.signal
        s.signal = 0
        c.terminate = s.terminate
        c.stopReason = s.stopReason
        if let a = s.alarm, now >= a.at {
          c.due = a.action
          s.alarm = nil
        }
        if s.hasPending, !s.flush() { c.peerGone = true }
        if s.stdinFD >= 0, s.inputClosed || (s.closeRequested && !s.hasPending) || exited {
          close(s.stdinFD)
          s.stdinFD = -1
          s.inputClosed = true
          s.pending = []
          s.pendingOffset = 0
        }
        c.stdinFD = s.hasPending ? s.stdinFD : -1
        return c
      }
      c.due?()
      if c.stopReason != nil, stopReason == nil { stopReason = c.stopReason }
      if c.signal != 0, !exited { signalGroup(c.signal) }
      if c.terminate, !terminated, !exited {
        terminated = true
        signalGroup(SIGTERM)
        killAt = monotonicSeconds() + killGrace
      }
      if pidfd < 0, termination == nil, let t = reap() {
        // No pidfd on this system: the exit is looked for on every turn (at least every 20 ms, below).
        termination = t
        childExited()
      }

      // Timers.
      var nextTimer = pidfd < 0 && termination == nil ? now + 0.02 : Double.infinity
      if let k = killAt {
        if now >= k {
          killAt = nil
          signalGroup(SIGKILL)
        } else {
          nextTimer = min(nextTimer, k)
        }
      }
      if let d = drainDeadline {
        if now >= d {
          // Something outside the child's group holds its pipes open: stop waiting for it.
          closeFD(&stdoutFD)
          closeFD(&stderrFD)
          drainDeadline = nil
        } else {
          nextTimer = min(nextTimer, d)
        }
      }
      if let termination, stdoutFD < 0, stderrFD < 0 {
        finish(termination)
        return
      }

      pollFDs.removeAll(keepingCapacity: true)
      pollKinds.removeAll(keepingCapacity: true)
      func watch(_ fd: Int32, _ events: Int32, _ kind: Int) {
        pollFDs.append(pollfd(fd: fd, events: Int16(events), revents: 0))
        pollKinds.append(kind)
      }
      watch(wakeRead, POLLIN, -1)
      if c.stdinFD >= 0 { watch(c.stdinFD, POLLOUT, 0) }
      if stdoutFD >= 0 { watch(stdoutFD, POLLIN, 1) }
      if stderrFD >= 0 { watch(stderrFD, POLLIN, 2) }
      if pidfd >= 0 { watch(pidfd, POLLIN, 3) }
      // A caller arming an alarm wakes this thread, so the alarm seen here is the one to sleep for.
      let (alarmAt, awaited) = owner.shared.withLock { s in
        (s.alarm?.at ?? .infinity, s.alarm != nil)
      }
      let sleepUntil = min(nextTimer, alarmAt)
      var n: Int32 = 0
      if awaited, stdoutFD >= 0 {
        // A reply is awaited: watch for it actively for a moment before sleeping. Fast plugins answer within
        // tens of microseconds, and a thread already awake saves a wake-up on the reply's path (a third of a
        // persistent call's cost here); sched_yield leaves the CPU to the child meanwhile.
        let spinEnd = monotonicSeconds() + Self.replySpin
        repeat {
          n = poll(&pollFDs, nfds_t(pollFDs.count), 0)
          if n != 0 { break }
          sched_yield()
        } while monotonicSeconds() < spinEnd
      }
      if n == 0 {
        var timeoutMS: Int32 = -1
        if sleepUntil.isFinite {
          timeoutMS = Int32(
            max(0, min(60_000, ((sleepUntil - monotonicSeconds()) * 1000).rounded(.up))))
        }
        n = poll(&pollFDs, nfds_t(pollFDs.count), timeoutMS)
      }
      if n <= 0 { continue }
      for i in pollFDs.indices where pollFDs[i].revents != 0 {
        switch pollKinds[i] {
        case -1: while read(wakeRead, &buffer, buffer.count) > 0 {}
        case 0: break  // written at the top of the loop
        case 1: readOutput(&buffer)
        case 2: readError(&buffer)
        default:
          if let t = reap() {
            closeFD(&pidfd)
            termination = t
            childExited()
          }
        }
      }
    }
  }

  struct Commands {
    var signal: Int32 = 0
    var terminate = false
    var stopReason: PersistentProcess.StopReason?
    var due: (@Sendable () -> Void)?
    var peerGone = false
    var stdinFD: Int32 = -1
  }

  /// The child has exited (or its pidfd says so): end whatever it left in its group and drain the pipes.
  func childExited() {
    guard !exited else { return }
    exited = true
    signalGroup(SIGKILL)
    killAt = nil
    closeStdin()
    if drainDeadline == nil { drainDeadline = monotonicSeconds() + 0.5 }
  }

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
    let tail = String(decoding: stderrTail.suffix(owner.stderrTailLimit), as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let exit = PersistentProcess.Exit(
      termination: termination, stopReason: stopReason, stderrTail: tail)
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
    while stdoutFD >= 0 {
      let n = read(stdoutFD, &buffer, buffer.count)
      if n > 0 {
        var start = 0
        while start < n, stdoutFD >= 0 {
          let newline = buffer.withUnsafeBytes { raw -> Int? in
            guard let p = memchr(raw.baseAddress! + start, 0x0A, n - start) else { return nil }
            return raw.baseAddress!.distance(to: UnsafeRawPointer(p))
          }
          guard let newline else { break }
          line.append(contentsOf: buffer[start..<newline])
          emitLine()
          start = newline + 1
        }
        if stdoutFD < 0 { return }
        line.append(contentsOf: buffer[start..<n])
        // Drained: poll says when there is more.
        if n < buffer.count && line.count <= maxLineLength { return }
        if line.count > maxLineLength {
          line = []
          if stopReason == nil { stopReason = .outputTooLarge }
          closeFD(&stdoutFD)
          signalGroup(SIGKILL)
          return
        }
      } else if n < 0 && errno == EINTR {
        continue
      } else if n < 0 && errno == EAGAIN {
        return
      } else {
        closeFD(&stdoutFD)
        emitLine()
      }
    }
  }

  func emitLine() {
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    if line.count > maxLineLength {
      if stopReason == nil { stopReason = .outputTooLarge }
      closeFD(&stdoutFD)
      signalGroup(SIGKILL)
    } else if !line.isEmpty, !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
      handlers.onLine(line)
    }
    line.removeAll(keepingCapacity: true)
  }

  func readError(_ buffer: inout [UInt8]) {
    while stderrFD >= 0 {
      let n = read(stderrFD, &buffer, buffer.count)
      if n > 0 {
        let chunk = Array(buffer[0..<n])
        stderrTail.append(contentsOf: chunk)
        if stderrTail.count > 2 * owner.stderrTailLimit {
          stderrTail.removeFirst(stderrTail.count - owner.stderrTailLimit)
        }
        let tail = stderrTail
        owner.shared.withLock { $0.stderrTail = tail }
        handlers.onStderr?(chunk)
      } else if n < 0 && errno == EINTR {
        continue
      } else if n < 0 && errno == EAGAIN {
        return
      } else {
        closeFD(&stderrFD)
      }
    }
  }
}
