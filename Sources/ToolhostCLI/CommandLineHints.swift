import Foundation
import ToolhostChat
import ToolhostCommandLine
import ToolhostPlugins
import ToolhostSession
import ToolhostSystem
import ToolhostTools

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

  /// A model's error and the option that changes the setting it points at: `--base-url` (or `$TOOLHOST_BASE_URL`)
  /// for an HTTP model's server, `--model` for the model.
  static func describe(_ error: LanguageModelError) -> String {
    switch error.setting {
    case .baseURL: "\(error.description); --base-url (or TOOLHOST_BASE_URL) sets the server"
    case .model: "\(error.description); --model picks the model"
    case nil: error.description
    }
  }

  /// A session's error and the option that raises its limit.
  static func describe(_ error: LanguageModelSessionError) -> String {
    if case .toolRoundLimitReached = error { return "\(error.description); --max-tool-rounds raises the limit" }
    return error.description
  }

  /// A chat's set-up error and what helps: `toolhost list` for an unknown tool, the option for a model's setting.
  static func describe(_ error: ChatSetupError) -> String {
    switch error {
    case .missingTool(let missing): describe(missing)
    case .baseURLForLocalModel: "--base-url is for HTTP models; a local model runs its own server"
    case .model(let error): describe(error)
    default: error.description
    }
  }

  /// `call`'s own options that take a value, which may come after the tool's name by mistake.
  static let callOptionsWithValues: Set<String> = [
    "--plugins", "--timeout", "--max-output", "--memory-limit", "--cpu-limit", "--process-limit", "--file-size-limit",
    "--open-files-limit",
  ]
  /// `call`'s own switches.
  static let callSwitches: Set<String> = ["--verbose", "-v", "--json", "--raw"]

  /// When `arguments` (what came after the tool's name, read as the tool's flags) hold `call`'s own options: which,
  /// and the command line with them before the name (`toolhost call --plugins plugins getWeather --city Boston`);
  /// `nil` when they hold none.
  static func misplacedCallOptions(tool: String, arguments: [String]) -> String? {
    var own: [String] = []
    var rest: [String] = []
    var found: [String] = []
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      let name = String(argument.prefix { $0 != "=" })
      if callOptionsWithValues.contains(name) {
        found.append(name)
        own.append(argument)
        if !argument.contains("="), index + 1 < arguments.count {
          index += 1
          own.append(arguments[index])
        }
      } else if callSwitches.contains(argument) {
        found.append(argument)
        own.append(argument)
      } else {
        rest.append(argument)
      }
      index += 1
    }
    guard !found.isEmpty else { return nil }
    let quoted = (["toolhost", "call"] + own + [tool] + rest).map(shellWord).joined(separator: " ")
    let names = found.joined(separator: ", ")
    return "\(names) came after the tool's name, where \(found.count == 1 ? "it is" : "they are") read as flags of "
      + "\(tool); toolhost's own options go before the name: \(quoted)"
  }

  /// `word` as a shell reads it back: as it is when it is plain, else in single quotes.
  static func shellWord(_ word: String) -> String {
    let plain = !word.isEmpty && word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,@%+".contains($0) }
    return plain ? word : "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
  }

  /// A missing tool and, when no plugin declares it, the command that shows the tools.
  static func describe(_ missing: MissingTool) -> String {
    if case .broken = missing { return missing.description }
    return "\(missing.description); `toolhost list` shows the tools"
  }

  /// A plugin's diagnostic, with the command that starts an MCP server that was not started (in every output,
  /// `--json` too).
  static func hinted(_ diagnostic: PluginDiagnostic) -> PluginDiagnostic {
    guard diagnostic.kind == .notStarted else { return diagnostic }
    var hinted = diagnostic
    hinted.message += " (`toolhost list --start-servers` starts it and lists them)"
    return hinted
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
