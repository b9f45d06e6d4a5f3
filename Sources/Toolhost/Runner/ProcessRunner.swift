import CToolhostSupport
import Foundation
import Synchronization

/// What to run as a subprocess, with its input, limits and time limit.
public struct ProcessSpec: Sendable {
  /// The absolute path of the executable.
  public var executable: String
  /// Arguments after the executable's name.
  public var arguments: [String]
  /// The complete environment of the child (nothing of the host's is added).
  public var environment: [String: String]
  /// The child's working directory; the host's when `nil`.
  public var workingDirectory: String?
  /// Bytes written to the child's stdin, which is then closed.
  public var input: [UInt8]
  /// The time limit; the child's whole process group is ended when it passes. `nil` means none.
  public var timeout: Duration?
  /// The most stdout bytes kept; past it the process group is killed and the outcome says `.outputTooLarge`.
  public var outputLimit: Int
  /// How many of the last stderr bytes are kept for error messages.
  public var stderrTailLimit: Int
  /// Time between SIGTERM and SIGKILL when a call is stopped.
  public var killGrace: Duration
  /// Called on the runner's I/O thread with each chunk the child writes to stderr; keep it quick.
  public var onStderr: (@Sendable ([UInt8]) -> Void)?

  /// Makes a spec with the default limits: 16 MiB of stdout, 8 KiB of stderr tail, 200 ms grace.
  public init(
    executable: String, arguments: [String] = [], environment: [String: String] = [:],
    workingDirectory: String? = nil, input: [UInt8] = [], timeout: Duration? = nil,
    outputLimit: Int = 16 << 20, stderrTailLimit: Int = 8 << 10, killGrace: Duration = .milliseconds(200),
    onStderr: (@Sendable ([UInt8]) -> Void)? = nil
  ) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.input = input
    self.timeout = timeout
    self.outputLimit = outputLimit
    self.stderrTailLimit = stderrTailLimit
    self.killGrace = killGrace
    self.onStderr = onStderr
  }
}

/// How a subprocess call ended.
public struct ProcessOutcome: Sendable {
  /// How the child itself ended.
  public enum Termination: Sendable, Equatable, CustomStringConvertible {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    /// `exited with status N` or `was killed by signal N`, to follow "the process" in a message.
    public var description: String {
      switch self {
      case .exited(let status): "exited with status \(status)"
      case .signaled(let signal): "was killed by signal \(signal)"
      }
    }
  }

  /// Why the runner stopped the child early.
  public enum StopReason: Sendable, Equatable {
    /// The time limit passed.
    case timedOut
    /// stdout passed the output limit.
    case outputTooLarge
    /// The calling task was cancelled.
    case cancelled
  }

  /// How the child ended.
  public var termination: Termination
  /// Why the runner stopped it, if it did.
  public var stopReason: StopReason?
  /// Everything the child wrote to stdout (up to the limit).
  public var stdout: [UInt8]
  /// The last bytes the child wrote to stderr.
  public var stderrTail: [UInt8]
  /// How many bytes the child wrote to stderr in all.
  public var stderrByteCount: Int
  /// Wall time from launch to the end of the call.
  public var duration: Duration
  /// The child's process id (also its process group id).
  public var pid: Int32

  /// The stderr tail as text, trimmed, invalid UTF-8 repaired.
  public var stderrText: String {
    String(decoding: stderrTail, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

/// The subprocess could not be started.
public struct ProcessLaunchError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The executable that failed to start.
  public var executable: String
  /// Why, in words (the system's reason).
  public var reason: String

  /// Makes an error.
  public init(executable: String, reason: String) {
    self.executable = executable
    self.reason = reason
  }

  /// `cannot start /path: reason`.
  public var description: String { "cannot start \(executable): \(reason)" }
}

/// Runs subprocesses through Foundation `Process` with stdin, stdout and stderr on pipes served by one I/O thread.
///
/// Every child runs in its own process group. A time limit, an output flood or the calling task's cancellation
/// ends the whole group (SIGTERM, a grace period, SIGKILL); when the child itself exits, whatever it left behind in
/// its group is killed too, so no call leaves a process behind or waits on a pipe a grandchild holds open. Pipes are
/// close-on-exec, so one call's pipe never reaches another call's child. SIGPIPE is blocked on the I/O thread, so a
/// child that exits without reading its input cannot kill the host.
public final class ProcessRunner: Sendable {
  /// The shared runner.
  public static let shared = ProcessRunner()

  private let loop: IOLoop

  /// Makes a runner with its own I/O thread (started on first use).
  public init() {
    loop = IOLoop()
  }

  /// Runs `spec` to completion and returns how it ended; a time limit, a flood or cancellation is reported in
  /// ``ProcessOutcome/stopReason``, not thrown.
  ///
  /// Cancelling the calling task ends the child's process group and returns with `.cancelled`.
  /// - Throws: ``ProcessLaunchError`` when the executable cannot be started (missing, not executable, bad
  ///   interpreter, no such working directory). Nothing else.
  public func run(_ spec: ProcessSpec) async throws(ProcessLaunchError) -> ProcessOutcome {
    let started = ContinuousClock.now
    var stdinPipe: [Int32] = [-1, -1]
    var stdoutPipe: [Int32] = [-1, -1]
    var stderrPipe: [Int32] = [-1, -1]
    func closeAll() {
      for fd in stdinPipe + stdoutPipe + stderrPipe where fd >= 0 { close(fd) }
    }
    guard toolhost_pipe_cloexec(&stdinPipe) == 0, toolhost_pipe_cloexec(&stdoutPipe) == 0,
      toolhost_pipe_cloexec(&stderrPipe) == 0
    else {
      let reason = String(cString: strerror(errno))
      closeAll()
      throw ProcessLaunchError(executable: spec.executable, reason: "cannot create pipes: \(reason)")
    }

    let process = Process()
    process.executableURL = URL(fileURLWithPath: spec.executable)
    process.arguments = spec.arguments
    process.environment = spec.environment
    if let dir = spec.workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: dir, isDirectory: true) }
    process.standardInput = FileHandle(fileDescriptor: stdinPipe[0], closeOnDealloc: false)
    process.standardOutput = FileHandle(fileDescriptor: stdoutPipe[1], closeOnDealloc: false)
    process.standardError = FileHandle(fileDescriptor: stderrPipe[1], closeOnDealloc: false)

    let id = loop.nextID()
    let call = CallState()
    let loop = self.loop
    let job = IOJob(
      id: id, stdinFD: stdinPipe[1], stdoutFD: stdoutPipe[0], stderrFD: stderrPipe[0], input: spec.input,
      outputLimit: spec.outputLimit, stderrTailLimit: spec.stderrTailLimit, timeout: spec.timeout,
      killGrace: spec.killGrace, onStderr: spec.onStderr, onDone: { io in call.finish(io: io) })
    process.terminationHandler = { p in
      let termination: ProcessOutcome.Termination =
        p.terminationReason == .uncaughtSignal ? .signaled(p.terminationStatus) : .exited(p.terminationStatus)
      call.finish(termination: termination)
      job.terminated.store(true, ordering: .releasing)
      loop.send(.exited(id))
    }

    do {
      try process.runWithSignalsUnblocked()
    } catch {
      closeAll()
      throw ProcessLaunchError(executable: spec.executable, reason: Self.launchReason(error, spec: spec))
    }
    // The child has its own copies now.
    close(stdinPipe[0])
    close(stdoutPipe[1])
    close(stderrPipe[1])
    let pid = process.processIdentifier
    toolhost_set_nonblocking(stdinPipe[1])
    toolhost_set_nonblocking(stdoutPipe[0])
    toolhost_set_nonblocking(stderrPipe[0])
    job.pid = pid
    // Fails (ESRCH) when the child is already gone; its termination handler then tells the loop.
    job.pidfd = toolhost_pidfd_open(pid)

    let (termination, io) = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        call.wait(continuation)
        loop.send(.add(job))
      }
    } onCancel: {
      job.cancelRequested.store(true, ordering: .releasing)
      loop.send(.cancel(id))
    }
    _ = process  // keep Foundation's object alive until the end
    return ProcessOutcome(
      termination: termination, stopReason: io.stopReason, stdout: io.stdout, stderrTail: io.stderrTail,
      stderrByteCount: io.stderrByteCount, duration: ContinuousClock.now - started, pid: pid)
  }

  /// Words for a launch failure that say what to do.
  static func launchReason(_ error: any Error, spec: ProcessSpec) -> String {
    let fm = FileManager.default
    var isDir: ObjCBool = false
    if !fm.fileExists(atPath: spec.executable, isDirectory: &isDir) { return "no such file" }
    if isDir.boolValue { return "it is a directory" }
    // access(X_OK) succeeds for root on files with no execute bit at all, so look at the mode bits.
    var info = stat()
    if stat(spec.executable, &info) == 0, info.st_mode & 0o111 == 0 || !fm.isExecutableFile(atPath: spec.executable) {
      return "not executable (chmod +x \(spec.executable))"
    }
    if let dir = spec.workingDirectory, !fm.fileExists(atPath: dir) { return "working directory \(dir) does not exist" }
    let ns = error as NSError
    if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
      if posix.code == Int(ENOENT) || posix.code == Int(ENOEXEC) {
        return "the interpreter named on its #! line was not found or it is not a valid executable"
      }
      return String(cString: strerror(Int32(posix.code)))
    }
    return ns.localizedDescription
  }

  /// The number of calls the runner's I/O thread is serving right now.
  public var activeCalls: Int { loop.activeCount.load(ordering: .relaxed) }
}

/// Joins the two halves of a call's end: the I/O thread's and Foundation's termination report.
final class CallState: Sendable {
  private struct State {
    var io: IOResult?
    var termination: ProcessOutcome.Termination?
    var continuation: CheckedContinuation<(ProcessOutcome.Termination, IOResult), Never>?
  }
  private let state = Mutex(State())

  func wait(_ continuation: CheckedContinuation<(ProcessOutcome.Termination, IOResult), Never>) {
    resumeIfDone { $0.continuation = continuation }
  }

  func finish(io: IOResult) { resumeIfDone { $0.io = io } }

  func finish(termination: ProcessOutcome.Termination) { resumeIfDone { $0.termination = termination } }

  private func resumeIfDone(_ update: (inout State) -> Void) {
    let ready:
      (CheckedContinuation<(ProcessOutcome.Termination, IOResult), Never>, ProcessOutcome.Termination, IOResult)? =
        state.withLock { s in
          update(&s)
          guard let c = s.continuation, let t = s.termination, let io = s.io else { return nil }
          s.continuation = nil
          return (c, t, io)
        }
    if let (c, t, io) = ready { c.resume(returning: (t, io)) }
  }
}

extension Process {
  /// `run()` with the calling thread's signal mask cleared for the moment of the spawn: children inherit the
  /// spawning thread's mask, and Swift's threads block SIGTERM, SIGINT and SIGCHLD, which would make plugins
  /// immune to SIGTERM.
  ///
  /// - Throws: what `run()` throws.
  func runWithSignalsUnblocked() throws {
    var saved = sigset_t()
    toolhost_unblock_all_signals(&saved)
    defer { toolhost_restore_signals(&saved) }
    try run()
  }
}
