import Dispatch
public import Foundation
import ToolhostJSON
public import ToolhostPlugins
import ToolhostSchema
import ToolhostSystem
import ToolhostTools

/// MCP stdio servers declared in plugin folders (`"mcp"` in a `toolhost.json`), as catalog tools.
///
/// ```json
/// {"manifestVersion": 1, "timeout": 20,
///  "mcp": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"], "name": "time"}}
/// ```
/// Discovery starts every declared server at once, runs the handshake and lists its tools, each server within its
/// `startupTimeout` (10 s when absent); a server that fails or hangs becomes a diagnostic, never a hang. The
/// server keeps running for the calls; see ``MCPServerConnection`` for time limits, restarts and shutdown.
public enum MCPPlugins {
  /// Discovers plugin folders with MCP servers loaded: ``PluginCatalog`` discovery with a ``Loader``.
  public static func discover(
    folders: [String], required: Set<String> = [],
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) async -> PluginCatalog {
    await PluginCatalog.discover(folders: folders, required: required, environment: environment, mcp: Loader())
  }

  /// The loader: one ``MCPServerConnection`` per server, started in parallel.
  ///
  /// With a ``MCPToolListCache``, a server whose kept list is fresh is not started to list its tools: its tools
  /// come from the list, and the server starts when one of them is first called. Every list a started server gives
  /// is kept.
  public struct Loader: PluginServerLoader {
    /// Where tool lists are kept between runs; `nil`: nowhere, every server is started.
    public var cache: MCPToolListCache?
    /// Whether servers are started and listed even when a fresh list is kept (`list --start-servers`).
    public var refresh: Bool
    /// How remote servers (`"mcp": {"url": …}`) are reached: a transport opener for a URL and a bearer token
    /// (ToolhostMCPHTTP's `MCPHTTPClientTransport.remote`); `nil`: they are not, and say so.
    public var remote: (@Sendable (_ url: String, _ bearerToken: String?) -> MCPTransportOpener)?

    /// Makes a loader.
    public init(
      cache: MCPToolListCache? = nil, refresh: Bool = false,
      remote: (@Sendable (_ url: String, _ bearerToken: String?) -> MCPTransportOpener)? = nil
    ) {
      self.cache = cache
      self.refresh = refresh
      self.remote = remote
    }

    /// Starts every server at once (except those whose kept list is fresh, unless ``refresh``), waits for each
    /// one's tool list until its startup timeout, and makes its tools.
    public func loadTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>] {
      await withTaskGroup(of: (Int, Result<PluginServerTools, PluginServerLoadError>).self) { group in
        for (index, server) in servers.enumerated() {
          if !refresh, let kept = cache?.fresh(for: server) {
            group.addTask { (index, tools(kept.tools, server: server)) }
          } else {
            group.addTask { (index, await load(server)) }
          }
        }
        var results = [Result<PluginServerTools, PluginServerLoadError>?](repeating: nil, count: servers.count)
        for await (index, result) in group { results[index] = result }
        return results.map { $0! }
      }
    }

    /// The tools of the servers whose kept list is fresh, from that list; the servers are not started (each starts
    /// when one of its tools is first called).
    public func cachedTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>?] {
      servers.map { server in cache?.fresh(for: server).map { tools($0.tools, server: server) } }
    }

    /// Starts one server and lists its tools within its startup timeout, keeping the list in `cache`; a server that
    /// fails or is too slow is stopped.
    func load(_ server: PluginServer) async -> Result<PluginServerTools, PluginServerLoadError> {
      let connection: MCPServerConnection
      switch configuration(server) {
      case .failure(let error): return .failure(error)
      case .success(let c): connection = MCPServerConnection(c)
      }
      let limit = connection.configuration.startupTimeout
      // The listing races the startup time limit; the loser is cancelled.
      let listed = await withTaskGroup(of: Result<MCPToolList, MCPConnectionError>?.self) { group in
        group.addTask {
          do throws(MCPConnectionError) { return .success(try await connection.toolList()) } catch {
            return .failure(error)
          }
        }
        group.addTask {
          try? await Task.sleep(for: limit)
          return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
      }
      guard let listed else {
        let log = connection.log
        connection.stopServer(reason: "did not list its tools in time")
        return .failure(
          PluginServerLoadError(
            message: "the MCP server did not start and list its tools within \(limit.messageText), so it was stopped"
              + MCPConnectionError.logLine(log) + " (raise mcp.startupTimeout if it is just slow)"))
      }
      switch listed {
      case .failure(let error):
        connection.stopServer(reason: "its tools could not be listed")
        return .failure(PluginServerLoadError(message: "the MCP server cannot be used: \(error.description)"))
      case .success(let list):
        cache?.store(list, for: server)
        return tools(list.tools, server: server, connection: connection)
      }
    }

    /// How to start or reach `server`; an error for a remote server this loader cannot reach, or whose token is
    /// missing.
    func configuration(_ server: PluginServer) -> Result<MCPServerConfiguration, PluginServerLoadError> {
      let m = server.manifest
      let declared = m.mcp!
      var transport: MCPTransportOpener?
      let executable: String
      switch server.endpoint {
      case .command(let program):
        executable = program
      case .url(let url):
        executable = url
        guard let remote else {
          return .failure(
            PluginServerLoadError(
              message: "a remote MCP server (\(url)), skipped: this program does not reach servers over HTTP "
                + "(discovery with MCPPlugins.Loader(remote: MCPHTTPClientTransport.remote) does)"))
        }
        var token: String?
        if let name = declared.bearerTokenEnv {
          guard let value = server.hostEnvironment[name], !value.isEmpty else {
            return .failure(
              PluginServerLoadError(
                message: "the remote MCP server \(url) needs a bearer token in the environment variable \(name) "
                  + "(bearerTokenEnv), which is not set"))
          }
          token = value
        }
        transport = remote(url, token)
      }
      // A server on stdio is confined as its manifest's "sandbox" says; a remote one runs nothing here (its
      // confinement is .unconfined).
      let confinement = PluginConfinement.of(m, executable: executable, hostEnvironment: server.hostEnvironment)
      let confined: Confinement?
      do { confined = try confinement.prepare(executable: executable) } catch {
        return .failure(PluginServerLoadError(message: "not started: \(error.description)"))
      }
      var configuration = MCPServerConfiguration(
        name: declared.name, executable: executable, arguments: declared.arguments,
        environment: confinement.environment(
          PluginTool.baseEnvironment(server.hostEnvironment, allowed: declared.environment)),
        workingDirectory: m.directory,
        startupTimeout: Duration(seconds: declared.startupTimeout ?? 10),
        limits: ResourceLimits.pluginDefaults.overridden(by: m.limits), transport: transport)
      configuration.confinement = confined
      return .success(configuration)
    }

    /// The server's tools as PluginTools; names outside toolhost's rule are adjusted, and input schemas the
    /// validator cannot use are relaxed to any object (the server still validates), each with a note.
    func tools(
      _ infos: [MCPToolInfo], server: PluginServer,
      connection given: MCPServerConnection? = nil
    )
      -> Result<PluginServerTools, PluginServerLoadError>
    {
      let connection: MCPServerConnection
      if let given {
        connection = given
      } else {
        switch configuration(server) {
        case .failure(let error): return .failure(error)
        case .success(let c): connection = MCPServerConnection(c)
        }
      }
      var result = PluginServerTools(tools: [])
      let path = server.manifest.path
      for info in infos {
        let name = Self.toolName(info.name)
        if name != info.name {
          result.notes.append(
            PluginDiagnostic(
              kind: .adjusted, path: path, tool: info.name,
              message: "offered as \(name): tool names are 1 to 64 characters of A-Z a-z 0-9 _ . -",
              isError: false))
        }
        var definition = ToolDefinition(
          name: name, title: info.title,
          description: info.description.isEmpty
            ? "The \(info.name) tool of the \(server.manifest.mcp!.name) MCP server."
            : info.description,
          inputSchema: info.inputSchema, outputSchema: info.outputSchema, arguments: [],
          timeout: nil,
          annotations: info.annotations)
        if definition.annotations.title == nil { definition.annotations.title = info.title }
        let backend = MCPToolBackend(connection: connection, remoteName: info.name)
        do {
          result.tools.append(
            try PluginTool(
              definition: definition, manifest: server.manifest, endpoint: server.endpoint, backend: backend,
              hostEnvironment: server.hostEnvironment))
        } catch {
          definition.inputSchema = ["type": "object"]
          result.notes.append(
            PluginDiagnostic(
              kind: .adjusted, path: path, tool: name,
              message:
                "its inputSchema cannot be checked here (\(error.description)), so any object is passed on and the server validates",
              isError: false))
          if let tool = try? PluginTool(
            definition: definition, manifest: server.manifest, endpoint: server.endpoint, backend: backend,
            hostEnvironment: server.hostEnvironment)
          {
            result.tools.append(tool)
          }
        }
      }
      // MCP's naming rule: a tool is also known as `server.tool`, the name it is offered by when the manifest asks
      // for prefixes, or when an earlier tool has its own name.
      let declared = server.manifest.mcp!
      for index in result.tools.indices {
        let name = result.tools[index].name
        let qualified = Self.qualifiedName(name, server: declared.name)
        if declared.prefixTools {
          result.tools[index] = result.tools[index].renamed(qualified)
        } else {
          result.qualifiedNames[name] = qualified
        }
      }
      return .success(result)
    }

    /// `server.tool`, fitted to toolhost's 64-character limit (``ToolName/fitted(_:)``): the name an MCP server's
    /// tool is offered by when its own is taken, or when the manifest asks for prefixes
    /// (``PluginManifest/MCPServer/prefixTools``).
    static func qualifiedName(_ tool: String, server: String) -> String {
      ToolName.fitted("\(server).\(tool)")
    }

    /// A name that follows toolhost's rule: other characters become `_`, and a name over 64 characters is cut
    /// with a hash of the whole (``ToolName/fitted(_:)``).
    static func toolName(_ raw: String) -> String {
      let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
      let cleaned = String(raw.map { allowed.contains($0) ? $0 : "_" })
      return cleaned.isEmpty ? "tool" : ToolName.fitted(cleaned)
    }
  }
}
