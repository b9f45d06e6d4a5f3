import Foundation
public import ToolhostJSON
import ToolhostSchema
import ToolhostSystem
public import ToolhostTools

/// Runs a plugin's tool some other way than spawning the manifest's command for each call: through an MCP server
/// connection, for example (ToolhostMCP provides that one).
public protocol PluginToolBackend: Sendable {
  /// Runs `tool` with `arguments`, which the caller has validated against its input schema.
  ///
  /// - Throws: ``ToolFailure`` for every failure (timeout, cancellation, the server's death, the tool's own error).
  func call(_ tool: PluginTool, arguments: JSONValue, context: ToolCallContext) async throws
    -> ToolOutput

  /// Stops whatever the backend keeps running (the server process); safe to call more than once.
  func shutdown() async
}

/// An MCP server manifest that discovery hands to an ``MCPPluginLoader``.
public struct MCPPluginServer: Sendable {
  /// The manifest; ``PluginManifest/mcp`` is set.
  public var manifest: PluginManifest
  /// The server's resolved executable.
  public var executable: String
  /// The host environment, from which the base variables and the manifest's `env` names are passed on.
  public var hostEnvironment: [String: String]

  /// Makes a server description.
  public init(manifest: PluginManifest, executable: String, hostEnvironment: [String: String]) {
    self.manifest = manifest
    self.executable = executable
    self.hostEnvironment = hostEnvironment
  }
}

/// The tools of one MCP server, as PluginTools whose ``PluginTool/backend`` calls the server, with the names the
/// server gave them; plus notes about tools that needed adjusting.
public struct MCPPluginTools: Sendable {
  /// The tools in the server's order.
  public var tools: [PluginTool]
  /// Notes such as "its inputSchema uses keywords the validator does not support, so the server validates".
  public var notes: [PluginDiagnostic]

  /// Makes a result.
  public init(tools: [PluginTool], notes: [PluginDiagnostic] = []) {
    self.tools = tools
    self.notes = notes
  }
}

/// Why an MCP server's tools could not be listed: it did not start, failed the handshake, or timed out.
public struct MCPPluginLoadError: Error, Sendable, CustomStringConvertible {
  /// What went wrong and what to do, with the end of the server's stderr when it helps.
  public var message: String

  /// Makes an error.
  public init(message: String) { self.message = message }

  /// The message.
  public var description: String { message }
}

/// Starts MCP servers declared by manifests and lists their tools. ToolhostMCP provides one (`MCPPlugins.Loader()`);
/// pass it to ``PluginCatalog/discover(folders:required:runner:environment:mcp:)`` (there is no global default:
/// discovery without a loader starts no server).
public protocol MCPPluginLoader: Sendable {
  /// Starts every server at once and waits until each has listed its tools or passed its startup timeout.
  ///
  /// Never throws: each server's failure is its own result, in the order of `servers`.
  func loadTools(_ servers: [MCPPluginServer]) async -> [Result<MCPPluginTools, MCPPluginLoadError>]

  /// The tools of each of `servers` that can be had without starting it (a listing kept from an earlier run that
  /// is still fresh), or `nil` for each that cannot; in the order of `servers`. Starts nothing, never throws.
  func cachedTools(_ servers: [MCPPluginServer]) async -> [Result<MCPPluginTools, MCPPluginLoadError>?]
}

extension MCPPluginLoader {
  /// No listing is kept: `nil` for every server.
  public func cachedTools(_ servers: [MCPPluginServer]) async -> [Result<MCPPluginTools, MCPPluginLoadError>?] {
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
