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
  /// The caller's W3C trace context (`traceparent`), handed on to the plugin: `TRACEPARENT` in a spawned plugin's
  /// environment, `traceparent` in a persistent plugin's request, `_meta.traceparent` to an MCP server. A value that
  /// is not a well-formed `traceparent` is not handed on.
  public var traceParent: String? {
    get { storedTraceParent }
    set { storedTraceParent = newValue.flatMap { Self.isTraceParent($0) ? $0 : nil } }
  }
  private var storedTraceParent: String?

  /// Whether `value` is a W3C `traceparent` (version 00: `00-` 32 hex digits `-` 16 hex digits `-` 2 hex digits,
  /// neither id all zeros).
  public static func isTraceParent(_ value: String) -> Bool {
    let parts = value.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2 else {
      return false
    }
    let hex = Set("0123456789abcdef")
    guard parts.dropFirst().allSatisfy({ $0.allSatisfy(hex.contains) }) else { return false }
    return parts[1].contains { $0 != "0" } && parts[2].contains { $0 != "0" }
  }

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
