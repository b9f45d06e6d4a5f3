import Toolhost

/// What the command line adds to a library's error: the option or command that fixes it. The libraries describe the
/// problem only, since a Swift caller or a model has no flags to pass.
enum CommandLineHints {
  /// `getWeather: timed out after 5 s; ...; --timeout raises the limit`: the error and, when an option or command
  /// helps, that.
  static func describe(_ error: ToolCallError) -> String {
    guard let failure = error.failure, let hint = hint(for: failure) else { return error.description }
    return "\(error.description); \(hint)"
  }

  /// The option or command that helps with a failure; `nil` when none does.
  static func hint(for failure: ToolFailure) -> String? {
    switch failure {
    case .unknownTool: "`toolhost list` shows the tools"
    case .launchFailed: "`toolhost doctor` checks every plugin"
    case .timedOut: "--timeout raises the limit for one call"
    case .outputTooLarge: "--max-output raises the limit"
    case .limitExceeded(let kind, _): "\(option(for: kind)) raises it for one call"
    default: nil
    }
  }

  /// The `toolhost call` option that overrides a resource limit.
  static func option(for kind: ResourceLimits.Kind) -> String {
    switch kind {
    case .memory: "--memory-limit"
    case .cpuTime: "--cpu-limit"
    case .processes: "--process-limit"
    case .fileSize: "--file-size-limit"
    case .openFiles: "--open-files-limit"
    }
  }
}
