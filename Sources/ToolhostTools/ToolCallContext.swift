public import ToolhostSystem

/// Per-call settings that reach tools through a task-local value, so ``Tool/call(arguments:)`` keeps its
/// FoundationModels shape.
public struct ToolCallContext: Sendable {
  /// Overrides the tool's time limit.
  public var timeout: Duration?
  /// Overrides the tool's output limit, in bytes (`--max-output`); it comes before ``limits``' `outputBytes`.
  public var outputLimit: Int?
  /// Receives the plugin's stderr as it is written (for `--verbose`).
  public var onStderr: (@Sendable (_ tool: String, _ chunk: [UInt8]) -> Void)?
  /// A unique id of the call.
  public var callID: String?
  /// Resource limits over the tool's own (each value set here wins).
  public var limits: ResourceLimits
  /// Receives the progress a tool reports while it runs (an MCP server's `notifications/progress`), on the
  /// server's I/O thread; keep it quick. Set, it also asks the tool for progress (a `progressToken`).
  public var onProgress: (@Sendable (_ tool: String, _ progress: ToolProgress) -> Void)?
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
    self.onStderr = onStderr
    self.callID = callID
    self.limits = limits
    self.outputLimit = outputLimit
  }

  /// The context of the running task.
  @TaskLocal public static var current = ToolCallContext()
}

/// How far a running tool says it is (MCP `notifications/progress`).
public struct ToolProgress: Sendable, Equatable {
  /// The amount done so far; it only grows.
  public var progress: Double
  /// The whole amount, when the tool knows it.
  public var total: Double?
  /// What it is doing, in words (untrusted text: make it visible before showing it on a terminal).
  public var message: String?

  /// Makes a progress report.
  public init(progress: Double, total: Double? = nil, message: String? = nil) {
    self.progress = progress
    self.total = total
    self.message = message
  }

  /// `40%` (with a total) or `4` (without), then the message: one short line.
  public var summary: String {
    var text: String
    if let total, total > 0 {
      text = "\(Int((progress / total * 100).rounded()))%"
    } else {
      text = progress == progress.rounded() && abs(progress) < 1e15 ? "\(Int(progress))" : "\(progress)"
    }
    if let message, !message.isEmpty { text += " " + message }
    return text
  }
}
