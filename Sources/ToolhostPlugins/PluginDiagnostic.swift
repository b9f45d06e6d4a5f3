/// Something wrong with a plugin found during discovery. A broken plugin never hides the good ones: it becomes a
/// diagnostic and the rest load.
public struct PluginDiagnostic: Sendable, Hashable, Codable, CustomStringConvertible {
  /// What kind of problem it is.
  public enum Kind: String, Sendable, Codable {
    /// A plugin folder given with `--plugins` does not exist.
    case missingFolder = "missing_folder"
    /// The manifest cannot be read.
    case unreadable
    /// The manifest is not valid JSON.
    case invalidJSON = "invalid_json"
    /// The manifest breaks the manifest schema.
    case schemaViolation = "schema_violation"
    /// A tool name breaks the naming rule.
    case badToolName = "bad_tool_name"
    /// The command does not exist.
    case commandMissing = "command_missing"
    /// The command is not executable.
    case commandNotExecutable = "command_not_executable"
    /// A tool's inputSchema or outputSchema is invalid or uses keywords the validator does not support.
    case unsupportedSchema = "unsupported_schema"
    /// A tool of the same name was found earlier; this one is ignored.
    case shadowed
    /// An MCP server did not start, failed the handshake or did not list its tools in time (or no MCP loader is
    /// installed, as a note).
    case serverFailed = "server_failed"
    /// An MCP server's tool is offered under another name (prefixed with the server's name) because its own name
    /// was taken, or its schema was relaxed; a note.
    case adjusted
    /// A plugin folder, manifest or command that another user could change (StrictModes); refused.
    case unsafePermissions = "unsafe_permissions"
    /// A manifest of a trusted project folder that changed, or was added, since the folder was trusted; not loaded.
    case untrusted
    /// An MCP server that was not started, so its tools are not listed; a note.
    case notStarted = "not_started"
    /// A plugin asks for an environment variable that looks like a secret and the user has not approved; a note.
    case secretEnvironment = "secret_environment"
  }

  /// What kind of problem.
  public var kind: Kind
  /// The manifest (or folder) concerned.
  public var path: String
  /// The tool concerned, if one.
  public var tool: String?
  /// What is wrong and what to do, in words.
  public var message: String
  /// `true` for problems that make a tool unusable; `false` for notes such as shadowing.
  public var isError: Bool

  /// Makes a diagnostic.
  public init(kind: Kind, path: String, tool: String? = nil, message: String, isError: Bool) {
    self.kind = kind
    self.path = path
    self.tool = tool
    self.message = message
    self.isError = isError
  }

  /// `path: [tool] message`.
  public var description: String {
    "\(path): " + (tool.map { "\($0): " } ?? "") + message
  }
}
