import Foundation

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
  /// The longest stdout line accepted, in bytes (a reply of a persistent plugin or a message of an MCP server);
  /// past it the process group is killed (stop reason `.outputTooLarge`). ``PersistentProcess/setOutputLimit(_:)``
  /// changes it for the calls that follow.
  public var outputLimit: Int
  /// How many of the last stderr bytes are kept as the process's log.
  public var stderrTailLimit: Int
  /// Time between SIGTERM and SIGKILL when the process is stopped.
  public var killGrace: Duration
  /// Its resource limits for its whole lifetime (none by default).
  public var limits: ResourceLimits
  /// How it and everything it starts are contained.
  public var containment: Containment
  /// What it may reach, enforced by the kernel; `nil` (the default) leaves it everything the user can reach.
  public var confinement: Confinement?

  /// Makes a spec with the default limits: lines of ``ResourceLimits/defaultOutputBytes`` (8 MiB), 8 KiB of stderr
  /// tail, 200 ms grace, no resource limits.
  public init(
    executable: String, arguments: [String] = [], environment: [String: String] = [:],
    workingDirectory: String? = nil, outputLimit: Int = ResourceLimits.defaultOutputBytes,
    stderrTailLimit: Int = 8 << 10,
    killGrace: Duration = .milliseconds(200), limits: ResourceLimits = .none, containment: Containment = .shared,
    confinement: Confinement? = nil
  ) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.outputLimit = outputLimit
    self.stderrTailLimit = stderrTailLimit
    self.killGrace = killGrace
    self.limits = limits
    self.containment = containment
    self.confinement = confinement
  }
}
