public import ToolhostJSON
public import ToolhostPlugins
public import ToolhostSchema
import ToolhostSystem
public import ToolhostTools

/// A tool of an MCP server, callable like any other ``Tool``: arguments are validated against the server's input
/// schema, then sent as `tools/call` through the ``MCPServerConnection``.
public struct MCPTool: PrecompiledTool, ExternalTool {
  /// The argument object as it is.
  public typealias Arguments = JSONValue
  /// The call's structured content and text.
  public typealias Output = ToolOutput

  /// The connection that calls the server.
  public let connection: MCPServerConnection
  /// The tool as the server listed it.
  public let info: MCPToolInfo
  /// The name the tool is offered by (the server's, unless renamed).
  public let name: String
  /// The time limit of a call, unless ``ToolCallContext/timeout`` sets one.
  public let timeout: Duration
  /// The compiled input schema.
  public let compiledParameters: JSONSchema

  /// Makes a tool, compiling its input schema.
  ///
  /// - Throws: ``SchemaError`` when the input schema is invalid or uses keywords the validator does not support.
  public init(
    info: MCPToolInfo, connection: MCPServerConnection, name: String? = nil,
    timeout: Duration = .seconds(30)
  ) throws(SchemaError) {
    self.info = info
    self.connection = connection
    self.name = name ?? info.name
    self.timeout = timeout
    compiledParameters = try JSONSchema(info.inputSchema)
  }

  /// The server's description of the tool.
  public var description: String { info.description }
  /// The input schema.
  public var parameters: JSONValue { info.inputSchema }
  /// The output schema, if the server declares one.
  public var outputSchema: JSONValue? { info.outputSchema }
  /// The server's hints (with the tool's title).
  public var annotations: ToolAnnotations {
    var a = info.annotations
    if a.title == nil { a.title = info.title }
    return a
  }

  /// The server's name (``MCPServerConfiguration/name``), which the program connecting it chose.
  public var pluginName: String { connection.configuration.name }
  /// The server: its URL, or its command line.
  public var source: ToolSource { ToolSource(location: connection.configuration.identity) }
  /// `false`: an MCP server's hints are its own claims, so its tools ask before they run unless the user says
  /// otherwise.
  public var annotationsAreTrusted: Bool { false }

  /// Calls the tool on the server.
  ///
  /// - Throws: ``ToolFailure`` as ``MCPServerConnection/callTool(_:arguments:timeout:)`` says.
  public func call(arguments: JSONValue) async throws -> ToolOutput {
    let context = ToolCallContext.current
    return try await connection.callTool(
      info.name, arguments: arguments, timeout: context.timeout ?? timeout, outputLimit: context.outputLimit)
  }
}

/// Runs a catalog's MCP tool through its server connection.
struct MCPToolBackend: PluginToolBackend {
  let connection: MCPServerConnection
  let remoteName: String

  func call(_ tool: PluginTool, arguments: JSONValue, context: ToolCallContext) async throws
    -> ToolOutput
  {
    let name = tool.name
    var onLog: (@Sendable ([UInt8]) -> Void)?
    if let sink = context.onStderr {
      onLog = { @Sendable bytes in sink(name, bytes) }
    }
    var onProgress: (@Sendable (ToolProgress) -> Void)?
    if let sink = context.onProgress {
      onProgress = { @Sendable progress in sink(name, progress) }
    }
    // The manifest's maxTimeout: how far progress reports may stretch the call's time limit.
    let maximum = tool.manifest.maxTimeout.map { Duration(seconds: $0) }
    return try await connection.callTool(
      remoteName, arguments: arguments, timeout: context.timeout ?? tool.timeout,
      outputLimit: tool.outputLimit(in: context),
      onLog: onLog, traceParent: context.traceParent, onProgress: onProgress, maximumTimeout: maximum)
  }

  func shutdown() async { await connection.shutdown() }
}
