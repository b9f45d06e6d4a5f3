public import ToolhostPlugins
public import ToolhostSession
public import ToolhostTools

/// Why a chat could not be set up: a tool that cannot be offered, or a model that cannot be made.
///
/// The messages say what is wrong in the library's terms; a program adds how its user fixes it (the command line
/// adds its options and commands).
public enum ChatSetupError: Error, Sendable, CustomStringConvertible {
  /// The catalog has no tool by this name: it is unknown (with the nearest names) or its plugin is broken.
  case missingTool(MissingTool)
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
    case .missingTool(let missing):
      return missing.description
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
