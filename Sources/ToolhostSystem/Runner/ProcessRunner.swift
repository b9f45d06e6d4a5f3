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
  /// The child's resource limits (none by default; plugins get ``ResourceLimits/pluginDefaults``).
  public var limits: ResourceLimits
  /// What the child may reach, enforced by the kernel; `nil` (the default) leaves it everything the user can reach.
  /// A confinement this machine cannot enforce makes the run fail to start.
  public var confinement: Confinement?

  /// Makes a spec with the default limits: ``ResourceLimits/defaultOutputBytes`` (8 MiB) of stdout, 8 KiB of stderr
  /// tail, 200 ms grace, no resource limits.
  public init(
    executable: String, arguments: [String] = [], environment: [String: String] = [:],
    workingDirectory: String? = nil, input: [UInt8] = [], timeout: Duration? = nil,
    outputLimit: Int = ResourceLimits.defaultOutputBytes, stderrTailLimit: Int = 8 << 10,
    killGrace: Duration = .milliseconds(200),
    onStderr: (@Sendable ([UInt8]) -> Void)? = nil, limits: ResourceLimits = .none, confinement: Confinement? = nil
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
    self.limits = limits
    self.confinement = confinement
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
  /// A resource limit the runner saw the call exceed (its cgroup's events, or more processes than allowed), if any.
  /// ``ResourceLimits/exceeded(by:)`` also looks at the signal and the log.
  public var limitExceeded: ResourceLimits.Kind?
  /// The CPU time the child itself used (user and system), as its exit reported it.
  public var cpuTime: Duration

  /// Makes an outcome (the runner does; persistent calls and tests make their own).
  public init(
    termination: Termination, stopReason: StopReason?, stdout: [UInt8], stderrTail: [UInt8], stderrByteCount: Int,
    duration: Duration, pid: Int32, limitExceeded: ResourceLimits.Kind? = nil, cpuTime: Duration = .zero
  ) {
    self.termination = termination
    self.stopReason = stopReason
    self.stdout = stdout
    self.stderrTail = stderrTail
    self.stderrByteCount = stderrByteCount
    self.duration = duration
    self.pid = pid
    self.limitExceeded = limitExceeded
    self.cpuTime = cpuTime
  }

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

/// Runs subprocesses with stdin, stdout and stderr on pipes served by one I/O thread, each call contained.
///
/// Every child starts in a session of its own (no controlling terminal), inside its call's cgroup where the machine
/// allows one, with the spec's resource limits (see ``Containment``). The call's end is decided only by what no
/// descendant can hold open: the child's exit (a pidfd), the call's own pipes, its time limit and cancellation. A
/// time limit or the calling task's cancellation ends every process of the call (SIGTERM, a grace period, SIGKILL);
/// an output flood kills them at once; when the child itself exits, whatever it left behind (in its group, its
/// cgroup, or re-parented to the host) is killed too. Pipes are close-on-exec, so one call's pipe never reaches
/// another call's child. SIGPIPE is blocked on the I/O thread, so a child that exits without reading its input
/// cannot kill the host.
///
/// ```swift
/// let outcome = try await ProcessRunner.shared.run(
///   ProcessSpec(executable: "/bin/echo", arguments: ["hi"], timeout: .seconds(5), limits: .pluginDefaults))
/// print(outcome.termination, String(decoding: outcome.stdout, as: UTF8.self))
/// ```
public final class ProcessRunner: Sendable {
  /// The shared runner, contained as ``Containment/shared`` says.
  public static let shared = ProcessRunner()

  private let loop: IOLoop
  /// How this runner's calls are contained.
  public let containment: Containment

  /// Makes a runner with its own I/O thread (started on first use).
  public init(containment: Containment = .shared) {
    loop = IOLoop()
    self.containment = containment
  }

  /// Runs `spec` to completion and returns how it ended; a time limit, a flood, a resource limit or cancellation is
  /// reported in the outcome (``ProcessOutcome/stopReason``, ``ProcessOutcome/limitExceeded``), not thrown.
  ///
  /// Cancelling the calling task ends the call's processes and returns with `.cancelled`.
  /// - Throws: ``ProcessLaunchError`` when the executable cannot be started (missing, not executable, bad
  ///   interpreter, no such working directory, arguments and environment too large). Nothing else.
  public func run(_ spec: ProcessSpec) async throws(ProcessLaunchError) -> ProcessOutcome {
    let started = ContinuousClock.now
    let child = try spawnChild(
      executable: spec.executable, arguments: spec.arguments, environment: spec.environment,
      workingDirectory: spec.workingDirectory, input: .pipe, containment: containment, limits: spec.limits,
      confinement: spec.confinement)
    let cell = child.cell
    // Without the pids controller, the process limit is watched in the call's cgroup.
    let watched =
      cell.cgroup != nil && !containment.controllers.contains("pids") ? spec.limits.processes : nil
    let job = IOJob(
      id: loop.nextID(), pid: child.pid, pidfd: child.pidfd, cell: cell, stdinFD: child.stdin,
      stdoutFD: child.stdout, stderrFD: child.stderr, input: spec.input, outputLimit: spec.outputLimit,
      stderrTailLimit: spec.stderrTailLimit, timeout: spec.timeout, killGrace: spec.killGrace,
      processLimit: watched, onStderr: spec.onStderr)
    let loop = self.loop
    let io = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<IOResult, Never>) in
        job.onDone = { continuation.resume(returning: $0) }
        loop.send(.add(job))
      }
    } onCancel: {
      job.cancelRequested.store(true, ordering: .releasing)
      loop.send(.cancel(job.id))
    }
    return ProcessOutcome(
      termination: io.termination, stopReason: io.stopReason, stdout: io.stdout, stderrTail: io.stderrTail,
      stderrByteCount: io.stderrByteCount, duration: ContinuousClock.now - started, pid: child.pid,
      limitExceeded: io.limitExceeded, cpuTime: io.cpuTime)
  }

  /// The number of calls the runner's I/O thread is serving right now.
  public var activeCalls: Int { loop.activeCount.load(ordering: .relaxed) }
}
