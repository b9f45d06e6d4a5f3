import Foundation
public import ToolhostJSON
import ToolhostPlugins
public import ToolhostSystem
public import ToolhostTools

/// The MCP protocol versions this implementation speaks, newest first.
public enum MCPProtocol {
  /// Every version toolhost negotiates with `initialize`, newest first. Clients ask for the first; servers answer
  /// the client's version when it is one of these, else the first.
  public static let supportedVersions: [String] = [
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
  ]
  /// The newest version negotiated with `initialize`.
  public static var latestVersion: String { supportedVersions[0] }
  /// The versions without a handshake (each request says its version; `server/discover` tells what a server
  /// speaks), newest first. toolhost asks a server for these first and falls back to `initialize`.
  public static let modernVersions: [String] = ["2026-07-28"]
}

/// How to start an MCP server (a stdio child process, or a transport such as HTTP) and how long to wait for it.
public struct MCPServerConfiguration: Sendable {
  /// A name for messages (the manifest's server name).
  public var name: String
  /// The absolute path of the server's executable.
  public var executable: String
  /// Its arguments.
  public var arguments: [String]
  /// Its complete environment (nothing of the host's is added).
  public var environment: [String: String]
  /// Its working directory; the host's when `nil`.
  public var workingDirectory: String?
  /// How long the server has to start and answer `initialize`.
  public var startupTimeout: Duration
  /// The time limit of requests other than tool calls (`tools/list`, `ping`).
  public var requestTimeout: Duration
  /// How long a server gets to exit after its stdin is closed, before its process group is ended.
  public var shutdownGrace: Duration
  /// After a tool call times out, the server must answer `ping` within this time or it is considered hung: it is
  /// stopped, and started again on the next call.
  public var healthCheckTimeout: Duration
  /// Receives the server's stderr as it is written (on the server's I/O thread; keep it quick).
  public var onStderr: (@Sendable ([UInt8]) -> Void)?
  /// The server process's resource limits for its lifetime (none unless set; plugins' servers get the manifest's
  /// over ``ResourceLimits/pluginDefaults``).
  public var limits: ResourceLimits
  /// The output limit of a tool call that sets none: ``limits``' `outputBytes`, else
  /// ``ResourceLimits/defaultOutputBytes``. A reply over its call's limit fails that call
  /// (``MCPConnectionError/resultTooLarge(limit:)``); a message over every pending call's limit ends a server on
  /// stdio (``MCPConnectionError/replyTooLarge(limit:)``), which starts again on the next call.
  public var outputLimit: Int { limits.outputBytes ?? ResourceLimits.defaultOutputBytes }
  /// How to reach the server when it is not a child process on stdio (a remote server over HTTP); `nil`: start
  /// ``executable``.
  public var transport: MCPTransportOpener?
  /// What the server process on stdio may reach, enforced by the kernel; `nil` (the default): everything the user
  /// can reach. A plugin's server gets its manifest's `"sandbox"` (``PluginConfinement``).
  public var confinement: Confinement?

  /// What tells this server from others for approvals: its executable (for a remote server, its URL) and
  /// arguments, as one line.
  public var identity: String { ([executable] + arguments).joined(separator: " ") }

  /// Makes a configuration: 10 s to start, 30 s per request, 2 s to exit, 2 s to answer a health check.
  public init(
    name: String, executable: String, arguments: [String] = [], environment: [String: String] = [:],
    workingDirectory: String? = nil, startupTimeout: Duration = .seconds(10),
    requestTimeout: Duration = .seconds(30),
    shutdownGrace: Duration = .seconds(2), healthCheckTimeout: Duration = .seconds(2),
    onStderr: (@Sendable ([UInt8]) -> Void)? = nil, limits: ResourceLimits = .none,
    transport: MCPTransportOpener? = nil
  ) {
    self.transport = transport
    self.name = name
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.startupTimeout = startupTimeout
    self.requestTimeout = requestTimeout
    self.shutdownGrace = shutdownGrace
    self.healthCheckTimeout = healthCheckTimeout
    self.onStderr = onStderr
    self.limits = limits
  }
}

/// What a server said about itself in its `initialize` result.
public struct MCPServerInfo: Sendable, Hashable {
  /// `serverInfo.name`.
  public var name: String
  /// `serverInfo.version`.
  public var version: String
  /// The protocol version both sides use.
  public var protocolVersion: String
  /// The server's capabilities object.
  public var capabilities: JSONValue
  /// The server's instructions for models, if any.
  public var instructions: String?
}

/// A server's whole tool list and how long it may be reused.
public struct MCPToolList: Sendable, Hashable {
  /// The tools, in the server's order.
  public var tools: [MCPToolInfo]
  /// How long the list stays fresh after it was received, in milliseconds (the server's `ttlMs`; 0: not at all).
  public var ttlMilliseconds: Int64

  /// Makes a list.
  public init(tools: [MCPToolInfo], ttlMilliseconds: Int64) {
    self.tools = tools
    self.ttlMilliseconds = ttlMilliseconds
  }
}

/// A tool as an MCP server lists it.
public struct MCPToolInfo: Sendable, Hashable {
  /// The tool's name on the server.
  public var name: String
  /// A title for people.
  public var title: String?
  /// What it does.
  public var description: String
  /// The JSON Schema of its arguments.
  public var inputSchema: JSONValue
  /// The JSON Schema of its structured result, if declared.
  public var outputSchema: JSONValue?
  /// Its hints.
  public var annotations: ToolAnnotations

  /// Reads one entry of a `tools/list` result.
  ///
  /// - Throws: ``MCPConnectionError/invalidResponse(_:)`` when it has no name; a missing input schema becomes
  ///   `{"type": "object"}`.
  public init(json: JSONValue) throws(MCPConnectionError) {
    guard let name = json["name"]?.stringValue, !name.isEmpty else {
      throw .invalidResponse("a tools/list entry has no \"name\": \(Self.excerpt(json))")
    }
    self.name = name
    let a = json["annotations"]
    title = json["title"]?.stringValue ?? a?["title"]?.stringValue
    description = json["description"]?.stringValue ?? ""
    if let schema = json["inputSchema"], schema.objectValue != nil {
      inputSchema = schema
    } else {
      inputSchema = ["type": "object"]
    }
    outputSchema = json["outputSchema"].flatMap { $0.objectValue == nil ? nil : $0 }
    annotations = ToolAnnotations(
      title: a?["title"]?.stringValue, readOnlyHint: a?["readOnlyHint"]?.boolValue,
      destructiveHint: a?["destructiveHint"]?.boolValue,
      idempotentHint: a?["idempotentHint"]?.boolValue,
      openWorldHint: a?["openWorldHint"]?.boolValue)
  }

  /// The tool as a `tools/list` entry (what ``init(json:)`` reads back).
  public var json: JSONValue {
    var o: JSONObject = ["name": .string(name)]
    if let title { o["title"] = .string(title) }
    o["description"] = .string(description)
    o["inputSchema"] = inputSchema
    if let outputSchema { o["outputSchema"] = outputSchema }
    if let a = annotations.json.objectValue, !a.isEmpty { o["annotations"] = .object(a) }
    return .object(o)
  }

  static func excerpt(_ value: JSONValue) -> String {
    let text = value.serialized()
    return text.count > 200 ? String(text.prefix(200)) + "…" : text
  }
}

/// Why a request to an MCP server failed.
public enum MCPConnectionError: Error, Sendable, CustomStringConvertible {
  /// The server's executable could not be started.
  case launchFailed(ProcessLaunchError)
  /// The server did not answer `initialize` in time; it was stopped. `log` is the end of its stderr.
  case startupTimedOut(limit: Duration, log: String)
  /// The server answered `initialize` with an error or a result toolhost cannot use.
  case handshakeFailed(reason: String, log: String)
  /// The server chose a protocol version toolhost does not speak.
  case unsupportedProtocolVersion(String)
  /// The server exited (or was stopped); `log` is the end of its stderr.
  case serverExited(termination: ProcessOutcome.Termination, log: String)
  /// The server stopped answering and was stopped; it is started again on the next request.
  case unresponsive(reason: String)
  /// A request had no answer in time; `notifications/cancelled` was sent.
  case requestTimedOut(method: String, limit: Duration)
  /// The server answered with a JSON-RPC error.
  case errorResponse(JSONRPCError)
  /// The server's answer is not what the protocol says.
  case invalidResponse(String)
  /// The server sent a line longer than `limit` bytes (a reply too large to read), so it was stopped.
  case replyTooLarge(limit: Int)
  /// A reply was longer than the request's own limit of `limit` bytes (a tool call's output limit), or than an
  /// HTTP transport's message limit; the server goes on.
  case resultTooLarge(limit: Int)
  /// The calling task was cancelled; `notifications/cancelled` was sent.
  case cancelled
  /// The connection was shut down.
  case shutDown

  /// One line a user can act on.
  public var description: String {
    switch self {
    case .launchFailed(let e):
      return "\(e.description); check the manifest's mcp.command (`toolhost doctor`)"
    case .startupTimedOut(let limit, let log):
      return "the server did not finish starting within \(limit.messageText), so it was stopped"
        + Self.logLine(log) + " (raise mcp.startupTimeout if it is just slow)"
    case .handshakeFailed(let reason, let log):
      return "the MCP handshake failed: \(reason)" + Self.logLine(log)
    case .unsupportedProtocolVersion(let v):
      return
        "the server speaks MCP protocol version \(v), which toolhost does not (it speaks "
        + (MCPProtocol.modernVersions + MCPProtocol.supportedVersions).joined(separator: ", ") + ")"
    case .serverExited(let termination, let log):
      return "the server \(termination)" + Self.logLine(log) + "; it is started again on the next call"
    case .unresponsive(let reason):
      return
        "the server stopped answering (\(reason)), so it was stopped; it is started again on the next call"
    case .requestTimedOut(let method, let limit):
      return "\(method) had no answer within \(limit.messageText); the request was cancelled"
    case .errorResponse(let e):
      return "the server answered with an error: \(e.message) (JSON-RPC error \(e.code))"
    case .invalidResponse(let why):
      return "the server's answer does not follow the MCP protocol: \(why)"
    case .replyTooLarge(let limit):
      return
        "the server sent a message over \(byteCountText(limit)), so it was stopped; it is started again on the next call"
    case .resultTooLarge(let limit):
      return "the server's reply is over the limit of \(byteCountText(limit))"
    case .cancelled:
      return "cancelled; the server was told (notifications/cancelled)"
    case .shutDown:
      return "the connection to the server was shut down"
    }
  }

  /// The failure as a tool call sees it.
  public func toolFailure(executable: String, limit: Duration) -> ToolFailure {
    switch self {
    case .launchFailed(let e): .launchFailed(executable: e.executable, reason: e.reason)
    case .startupTimedOut, .handshakeFailed, .unsupportedProtocolVersion:
      .launchFailed(executable: executable, reason: description)
    case .serverExited(.exited(let s), let log): .exited(status: s, stderr: log)
    case .serverExited(.signaled(let s), let log): .signaled(signal: s, stderr: log)
    case .unresponsive: .timedOut(limit: limit)
    // The request's own limit: progress may have stretched it past `limit`.
    case .requestTimedOut(_, let own): .timedOut(limit: max(own, limit))
    case .errorResponse(let e):
      .toolReported(
        message: "the MCP server refused the call: \(e.message)", code: e.codeName, data: e.data)
    case .invalidResponse(let why): .invalidReply(reason: why, excerpt: "")
    case .replyTooLarge(let limit), .resultTooLarge(let limit): .outputTooLarge(limit: limit)
    case .cancelled, .shutDown: .cancelled
    }
  }

  static func logLine(_ log: String) -> String {
    let lines = log.split(separator: "\n", omittingEmptySubsequences: true).suffix(3)
    guard !lines.isEmpty else { return "" }
    let text = lines.joined(separator: " | ")
    return "; its log ends: " + (text.count > 400 ? "…" + String(text.suffix(400)) : text)
  }
}
