import Toolhost
import ToolhostSession

/// Why a chat could not be set up: a tool that cannot be offered, or a model that cannot be made.
///
/// The messages say what is wrong in the library's terms; a program adds how its user fixes it (the command line
/// adds its options and commands).
public enum ChatSetupError: Error, Sendable, CustomStringConvertible {
  /// No tool in the catalog has this name; `suggestions` are the nearest names.
  case unknownTool(name: String, suggestions: [String])
  /// The tool's plugin is broken, so it is not in the catalog; `diagnostic` says why.
  case brokenTool(name: String, diagnostic: PluginDiagnostic)
  /// The user's approval rules deny the tool, so it may never run; `reason` is the rule's.
  case deniedTool(name: String, reason: String)
  /// The chosen tools cannot be offered together (a parameters schema that does not compile).
  case unusableTools(ToolCallError)
  /// A base URL was given for a local model, which runs its own server.
  case baseURLForLocalModel
  /// The model cannot be made: its set-up is missing or its settings are wrong.
  case model(LanguageModelError)

  /// What went wrong, without any program's options.
  public var description: String {
    switch self {
    case .unknownTool(let name, let suggestions):
      let near = suggestions.isEmpty ? "" : " (did you mean \(suggestions.joined(separator: ", "))?)"
      return "no tool named \(name)\(near)"
    case .brokenTool(let name, let diagnostic):
      return "tool \(name) is broken: \(diagnostic)"
    case .deniedTool(let name, let reason):
      return "\(name) is denied by config.json (\(reason))"
    case .unusableTools(let error):
      return error.description
    case .baseURLForLocalModel:
      return "a base URL is for HTTP models; a local model runs its own server"
    case .model(let error):
      return error.description
    }
  }
}
