public import ToolhostJSON
public import ToolhostSchema
public import ToolhostSystem

/// A tool call failed: which tool, and why. Shaped like FoundationModels' `LanguageModelSession.ToolCallError`.
///
/// `underlyingError` is a ``ToolFailure`` for everything the host detects (invalid arguments, launch failure,
/// timeout, exit status, signal, bad reply, output flood, the tool's own error, cancellation), or whatever an
/// in-process Swift tool threw.
public struct ToolCallError: Error, Sendable, CustomStringConvertible {
  /// The tool's name as the caller gave it (for an unknown tool, the name that matched none).
  public var toolName: String
  /// The tool. For a name that matched no tool, an ``UnknownTool`` of that name (FoundationModels' `tool` is never
  /// `nil`, so `error.tool.name` always reads).
  public var tool: any Tool
  /// Why the call failed.
  public var underlyingError: any Error

  /// Makes an error for `tool`.
  public init(tool: any Tool, underlyingError: any Error) {
    self.toolName = tool.name
    self.tool = tool
    self.underlyingError = underlyingError
  }

  /// Makes an error for a tool name that may match no tool.
  public init(toolName: String, underlyingError: any Error) {
    self.toolName = toolName
    self.tool = UnknownTool(name: toolName)
    self.underlyingError = underlyingError
  }

  /// The host-detected failure, or `nil` when a Swift tool threw an error of its own.
  public var failure: ToolFailure? { underlyingError as? ToolFailure }

  /// One line a user can act on: `getWeather: timed out after 5 s; ...`.
  public var description: String {
    let why = (underlyingError as? ToolFailure)?.description ?? String(describing: underlyingError)
    return "\(toolName): \(why)"
  }
}

/// The tool of a ``ToolCallError`` whose name matched no tool: it has the name the model or caller used, and calling
/// it fails with ``ToolFailure/unknownTool(suggestions:)``.
public struct UnknownTool: Tool {
  /// The name that matched no tool.
  public let name: String
  /// Says that no such tool exists.
  public var description: String { "no tool is named \(name)" }
  /// Any object.
  public var parameters: JSONValue { ["type": "object"] }

  /// A tool standing for `name`.
  public init(name: String) { self.name = name }

  /// Fails: there is no such tool.
  public func call(arguments: JSONValue) async throws -> ToolOutput {
    throw ToolFailure.unknownTool(suggestions: [])
  }
}

/// Why a tool call failed, as the host sees it.
public enum ToolFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// The arguments do not match the tool's input schema; every issue is listed.
  case invalidArguments([ValidationIssue])
  /// No tool has this name; `suggestions` are the nearest names.
  case unknownTool(suggestions: [String])
  /// The plugin's executable could not be started.
  case launchFailed(executable: String, reason: String)
  /// The call ran past its time limit; the plugin's process group was ended.
  case timedOut(limit: Duration)
  /// The plugin exited with a non-zero status without a reply; `stderr` is the end of its log.
  case exited(status: Int32, stderr: String)
  /// A signal ended the plugin.
  case signaled(signal: Int32, stderr: String)
  /// The plugin's stdout is not a valid reply; `excerpt` is the start of what it printed.
  case invalidReply(reason: String, excerpt: String)
  /// The plugin printed more than `limit` bytes on stdout; the call was stopped.
  case outputTooLarge(limit: Int)
  /// The plugin ran into one of its resource limits (`limit` in words, such as `512 MiB`); the call's processes
  /// were stopped.
  case limitExceeded(ResourceLimits.Kind, limit: String)
  /// The tool itself reported an error.
  case toolReported(message: String, code: String?, data: JSONValue?)
  /// The call was cancelled; the plugin's process group was ended.
  case cancelled
  /// A host tool refused to run (for example a destructive tool without confirmation).
  case refused(reason: String)

  /// A short machine-readable name of the case (`timed_out`, `invalid_arguments`, ...).
  public var code: String {
    switch self {
    case .invalidArguments: "invalid_arguments"
    case .unknownTool: "unknown_tool"
    case .launchFailed: "launch_failed"
    case .timedOut: "timed_out"
    case .exited: "exited"
    case .signaled: "signaled"
    case .invalidReply: "invalid_reply"
    case .outputTooLarge: "output_too_large"
    case .limitExceeded: "limit_exceeded"
    case .toolReported: "tool_error"
    case .cancelled: "cancelled"
    case .refused: "refused"
    }
  }

  /// One line a user or a model can act on. It names no command-line option: `toolhost` adds those where they help.
  public var description: String {
    switch self {
    case .invalidArguments(let issues):
      return "invalid arguments: " + issues.map(\.description).joined(separator: "; ")
    case .unknownTool(let suggestions):
      return "no such tool\(didYouMean(suggestions))"
    case .launchFailed(let executable, let reason):
      return "cannot start \(executable): \(reason); check the manifest's command"
    case .timedOut(let limit):
      return
        "timed out after \(limit.messageText); its processes were stopped (the manifest's timeout raises the limit)"
    case .exited(let status, let stderr):
      return "exited with status \(status)" + Self.log(stderr)
    case .signaled(let signal, let stderr):
      return "killed by signal \(signal)\(Self.signalName(signal).map { " (\($0))" } ?? "")" + Self.log(stderr)
    case .invalidReply(let reason, let excerpt):
      let shown = excerpt.isEmpty ? "nothing" : "«\(excerpt)»"
      return
        "invalid reply: \(reason); it printed \(shown) (a plugin prints one JSON object, see schemas/reply.schema.json)"
    case .outputTooLarge(let limit):
      return
        "printed more than \(byteCountText(limit)) on stdout, so the call was stopped"
    case .limitExceeded(let kind, let limit):
      return
        "exceeded its \(kind.words) limit of \(limit); its processes were stopped (the manifest's \"limits\" raise it)"
    case .toolReported(let message, let code, _):
      return message + (code.map { " [\($0)]" } ?? "")
    case .cancelled:
      return "cancelled; its processes were stopped"
    case .refused(let reason):
      return "refused: \(reason)"
    }
  }

  static func log(_ stderr: String) -> String {
    let lines = stderr.split(separator: "\n", omittingEmptySubsequences: true).suffix(3)
    guard !lines.isEmpty else { return " and printed nothing on stderr" }
    let text = lines.joined(separator: " | ")
    return ": " + (text.count > 400 ? "…" + String(text.suffix(400)) : text)
  }

  static func signalName(_ s: Int32) -> String? {
    let names: [Int32: String] = [
      1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
      11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ",
    ]
    return names[s]
  }
}

extension ToolCallError {
  /// The error as JSON, `{"error": {"code", "message", "tool", ...}}`: the shape `toolhost call --json`, `batch`
  /// and the session's tool outputs use. Does not throw.
  public var json: JSONValue {
    let error = self
    var e: JSONObject = ["tool": .string(error.toolName)]
    if let f = error.failure {
      e["code"] = .string(f.code)
      e["message"] = .string(f.description)
      switch f {
      case .toolReported(_, let code, let data):
        if let code { e["toolCode"] = .string(code) }
        if let data { e["data"] = data }
      case .invalidArguments(let issues):
        e["issues"] = .array(
          issues.map {
            ["path": .string($0.instanceLocation), "keyword": .string($0.keyword), "message": .string($0.message)]
          })
      case .exited(let status, let stderr):
        e["status"] = .integer(Int64(status))
        e["stderr"] = .string(stderr)
      case .signaled(let signal, let stderr):
        e["signal"] = .integer(Int64(signal))
        e["stderr"] = .string(stderr)
      case .timedOut(let limit):
        e["limitSeconds"] = .real(limit.seconds)
      case .limitExceeded(let kind, let limit):
        e["limit"] = .string(kind.rawValue)
        e["limitValue"] = .string(limit)
      default: break
      }
    } else {
      e["code"] = "error"
      e["message"] = .string(String(describing: error.underlyingError))
    }
    return ["error": .object(e)]
  }
}
