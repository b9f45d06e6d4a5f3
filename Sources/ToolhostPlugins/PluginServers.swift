import Foundation
public import ToolhostJSON
import ToolhostSchema
import ToolhostSystem
public import ToolhostTools

/// Runs a plugin's tool some other way than spawning the manifest's command for each call: through an MCP server
/// connection, for example (ToolhostMCP provides that one), for the tools of a ``PluginServer``.
public protocol PluginToolBackend: Sendable {
  /// Runs `tool` with `arguments`, which the caller has validated against its input schema.
  ///
  /// - Throws: ``ToolFailure`` for every failure (timeout, cancellation, the server's death, the tool's own error).
  func call(_ tool: PluginTool, arguments: JSONValue, context: ToolCallContext) async throws
    -> ToolOutput

  /// Stops whatever the backend keeps running (the server process); safe to call more than once.
  func shutdown() async
}

/// A server that a manifest declares and a ``PluginServerLoader`` lists the tools of, instead of a program that
/// discovery runs per call (an MCP server, for example, which ToolhostMCP loads).
public struct PluginServer: Sendable {
  /// Where the server is: a program this machine starts, or an address it reaches.
  public enum Endpoint: Sendable, Hashable {
    /// A program started here: the manifest's command, resolved to an executable path.
    case command(executable: String)
    /// A server reached at this URL (a remote server); nothing runs here.
    case url(String)
  }

  /// The manifest that declares the server (``PluginManifest/mcp`` for an MCP server).
  public var manifest: PluginManifest
  /// Where the server is.
  public var endpoint: Endpoint
  /// The host environment, from which the base variables and the manifest's `env` names are passed on.
  public var hostEnvironment: [String: String]

  /// Makes a server description.
  public init(manifest: PluginManifest, endpoint: Endpoint, hostEnvironment: [String: String]) {
    self.manifest = manifest
    self.endpoint = endpoint
    self.hostEnvironment = hostEnvironment
  }

  /// The executable of a server started here; `nil` for a remote one.
  public var executable: String? {
    if case .command(let executable) = endpoint { return executable }
    return nil
  }
}

/// The tools of one server, as PluginTools whose ``PluginTool/backend`` calls the server; plus notes about tools
/// that needed adjusting.
public struct PluginServerTools: Sendable {
  /// The tools in the server's order, each under the name it is offered by when no earlier tool has it.
  public var tools: [PluginTool]
  /// For a tool of ``tools``, by its name there: the name it is offered by instead when an earlier tool (a plugin's,
  /// or another server's) has that one. A tool without one is shadowed by the earlier tool. The loader applies its
  /// protocol's naming rule here (MCP's: `server.tool`); discovery only picks.
  public var qualifiedNames: [String: String]
  /// Notes such as "its inputSchema uses keywords the validator does not support, so the server validates".
  public var notes: [PluginDiagnostic]

  /// Makes a result.
  public init(tools: [PluginTool], qualifiedNames: [String: String] = [:], notes: [PluginDiagnostic] = []) {
    self.tools = tools
    self.qualifiedNames = qualifiedNames
    self.notes = notes
  }
}

/// Why a server's tools could not be listed: it did not start, failed the handshake, or timed out.
public struct PluginServerLoadError: Error, Sendable, CustomStringConvertible {
  /// What went wrong and what to do, with the end of the server's stderr when it helps.
  public var message: String

  /// Makes an error.
  public init(message: String) { self.message = message }

  /// The message.
  public var description: String { message }
}

/// Starts the servers manifests declare and lists their tools. ToolhostMCP provides one for MCP servers
/// (`MCPPlugins.Loader()`); pass it to ``PluginCatalog/discover(folders:required:runner:environment:mcp:)`` (there
/// is no global default: discovery without a loader starts no server).
public protocol PluginServerLoader: Sendable {
  /// Starts every server at once and waits until each has listed its tools or passed its startup timeout.
  ///
  /// Never throws: each server's failure is its own result, in the order of `servers`.
  func loadTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>]

  /// The tools of each of `servers` that can be had without starting it (a listing kept from an earlier run that
  /// is still fresh), or `nil` for each that cannot; in the order of `servers`. Starts nothing, never throws.
  func cachedTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>?]
}

extension PluginServerLoader {
  /// No listing is kept: `nil` for every server.
  public func cachedTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>?] {
    Array(repeating: nil, count: servers.count)
  }
}

extension PluginCatalog {
  /// Ends the processes the catalog's tools keep running: persistent plugins' pools and MCP servers (stdin closed,
  /// a moment to exit, then the process group ended). Later calls of those tools fail with
  /// ``ToolFailure/cancelled``. Does not throw.
  public func shutdown() async {
    var pools: [ObjectIdentifier: PersistentPool] = [:]
    var backends: [any PluginToolBackend] = []
    for tool in tools {
      if let pool = tool.pool { pools[ObjectIdentifier(pool)] = pool }
      if let backend = tool.backend { backends.append(backend) }
    }
    let allPools = Array(pools.values)
    await withTaskGroup(of: Void.self) { group in
      for pool in allPools { group.addTask { await pool.shutdown() } }
      for backend in backends { group.addTask { await backend.shutdown() } }
    }
  }
}
