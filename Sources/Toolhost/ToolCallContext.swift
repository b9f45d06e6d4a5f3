/// Per-call settings that reach tools through a task-local value, so ``Tool/call(arguments:)`` keeps its
/// FoundationModels shape.
public struct ToolCallContext: Sendable {
  /// Overrides the tool's time limit.
  public var timeout: Duration?
  /// Overrides the stdout cap of plugin calls.
  public var outputLimit: Int?
  /// Receives the plugin's stderr as it is written (for `--verbose`).
  public var onStderr: (@Sendable (_ tool: String, _ chunk: [UInt8]) -> Void)?
  /// A unique id of the call.
  public var callID: String?
  /// Resource limits over the tool's own (each value set here wins).
  public var limits: ResourceLimits

  /// Makes a context; everything defaults to the tool's own settings.
  public init(
    timeout: Duration? = nil, outputLimit: Int? = nil,
    onStderr: (@Sendable (_ tool: String, _ chunk: [UInt8]) -> Void)? = nil, callID: String? = nil,
    limits: ResourceLimits = ResourceLimits()
  ) {
    self.timeout = timeout
    self.outputLimit = outputLimit
    self.onStderr = onStderr
    self.callID = callID
    self.limits = limits
  }

  /// The context of the running task.
  @TaskLocal public static var current = ToolCallContext()
}
