import Foundation
import ToolhostJSON
import ToolhostSchema

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

/// The tools found in plugin folders, and the diagnostics of the plugins that could not be used.
public struct PluginCatalog: Sendable {
  /// A found tool and where it came from.
  public struct Entry: Sendable {
    /// The tool.
    public var tool: PluginTool
    /// The plugin folder it was found in.
    public var folder: String
  }

  /// Usable tools in discovery order; names are unique (the first folder wins).
  public var entries: [Entry]
  /// Problems found, in discovery order.
  public var diagnostics: [PluginDiagnostic]
  /// The folders searched, in order.
  public var folders: [String]

  /// The tools.
  public var tools: [PluginTool] { entries.map(\.tool) }

  /// Whether any diagnostic is an error (shadowing is not).
  public var hasErrors: Bool { diagnostics.contains { $0.isError } }

  /// The plugin folders in search order: each `explicit` folder, then `$TOOLHOST_PLUGIN_PATH` (colon-separated),
  /// then `./plugins`, then `$XDG_CONFIG_HOME/toolhost/plugins` (default `~/.config/toolhost/plugins`).
  public static func searchFolders(
    explicit: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    currentDirectory: String = FileManager.default.currentDirectoryPath
  ) -> [String] {
    func absolute(_ p: String) -> String {
      let expanded = (p as NSString).expandingTildeInPath
      let full = expanded.hasPrefix("/") ? expanded : (currentDirectory as NSString).appendingPathComponent(expanded)
      return (full as NSString).standardizingPath
    }
    var folders = explicit.map(absolute)
    folders += (environment["TOOLHOST_PLUGIN_PATH"] ?? "").split(separator: ":").map { absolute(String($0)) }
    folders.append(absolute("plugins"))
    let config =
      environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(".config")
    folders.append(absolute((config as NSString).appendingPathComponent("toolhost/plugins")))
    var seen = Set<String>()
    return folders.filter { seen.insert($0).inserted }
  }

  /// The manifests of one folder: `DIR/*/toolhost.json` and `DIR/*.toolhost.json`, sorted by name.
  public static func manifests(in folder: String) -> [String] {
    let fm = FileManager.default
    guard let names = try? fm.contentsOfDirectory(atPath: folder) else { return [] }
    var found: [String] = []
    for name in names.sorted() where !name.hasPrefix(".") {
      let path = (folder as NSString).appendingPathComponent(name)
      if name.hasSuffix(".toolhost.json") {
        found.append(path)
        continue
      }
      let manifest = (path as NSString).appendingPathComponent("toolhost.json")
      if fm.fileExists(atPath: manifest) { found.append(manifest) }
    }
    return found
  }

  /// Discovers the plugins of `folders`, in order.
  ///
  /// Folders that do not exist are skipped, except those in `required` (the ones the user named), which become
  /// diagnostics. MCP server manifests are started (all at once, each within its startup timeout) through `mcp`
  /// and their tools listed; without a loader they become notes. An MCP tool whose name a tool found earlier has
  /// taken is offered as `server.tool` (see ``PluginManifest/MCPServer/name``). Never throws: every problem is a
  /// ``PluginDiagnostic``.
  public static func discover(
    folders: [String], required: Set<String> = [], runner: ProcessRunner = .shared,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    mcp: (any MCPPluginLoader)? = PluginCatalog.mcpLoader
  ) -> PluginCatalog {
    enum Found {
      case native(PluginManifest, executable: String, folder: String, path: String)
      case server(Int, folder: String, path: String)
      case problem(PluginDiagnostic)
    }
    // First the list of manifests, in order; then the expensive part (read, parse, schema-check, resolve the
    // command, compile the tools' schemas) for all of them in parallel; then everything in order again.
    enum Place {
      case missing(String)
      case manifest(folder: String, path: String)
    }
    var places: [Place] = []
    let fm = FileManager.default
    for folder in folders {
      var isDir: ObjCBool = false
      guard fm.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
        if required.contains(folder) { places.append(.missing(folder)) }
        continue
      }
      places += manifests(in: folder).map { .manifest(folder: folder, path: $0) }
    }
    typealias Compiled = [Result<(JSONSchema, JSONSchema?), SchemaError>]
    typealias Loaded = Result<(PluginManifest, String, Compiled), ManifestError>
    let searchPath = environment["PATH"]
    @Sendable func load(_ path: String) -> Loaded {
      do {
        let manifest = try PluginManifest.load(path: path)
        let executable = try manifest.resolveExecutable(searchPath: searchPath)
        let compiled: Compiled = manifest.tools.map { d in
          Result { () throws(SchemaError) in try PluginTool.compile(d) }
        }
        return .success((manifest, executable, compiled))
      } catch {
        return .failure(error)
      }
    }
    let paths: [String?] = places.map { if case .manifest(_, let path) = $0 { path } else { nil } }
    var results = [Loaded?](repeating: nil, count: places.count)
    results.withUnsafeMutableBufferPointer { buffer in
      // Safe: each iteration writes only its own element, and the buffer outlives concurrentPerform.
      nonisolated(unsafe) let slots = buffer
      DispatchQueue.concurrentPerform(iterations: paths.count) { i in
        if let path = paths[i] { slots[i] = load(path) }
      }
    }

    var found: [Found] = []
    var servers: [MCPPluginServer] = []
    var compiledTools: [String: Compiled] = [:]
    for (i, place) in places.enumerated() {
      guard case .manifest(let folder, let path) = place else {
        if case .missing(let folder) = place {
          found.append(
            .problem(
              PluginDiagnostic(
                kind: .missingFolder, path: folder, tool: nil, message: "plugin folder does not exist", isError: true)
            ))
        }
        continue
      }
      do {
        let (manifest, executable, compiled) = try results[i]!.get()
        compiledTools[path] = compiled
        if manifest.mcp != nil {
          if mcp == nil {
            found.append(
              .problem(
                PluginDiagnostic(
                  kind: .serverFailed, path: path, tool: nil,
                  message:
                    "an MCP server, skipped: this program does not load MCP servers (ToolhostMCP's MCPPlugins.install() enables them)",
                  isError: false)))
          } else {
            found.append(.server(servers.count, folder: folder, path: path))
            servers.append(MCPPluginServer(manifest: manifest, executable: executable, hostEnvironment: environment))
          }
        } else {
          found.append(.native(manifest, executable: executable, folder: folder, path: path))
        }
      } catch {
        found.append(
          .problem(
            PluginDiagnostic(
              kind: PluginDiagnostic.Kind(rawValue: error.kind.rawValue) ?? .schemaViolation, path: path,
              tool: nil, message: error.message, isError: true)))
      }
    }

    // MCP servers start at once; each has its own startup timeout.
    let loaded = servers.isEmpty ? [] : (mcp?.loadTools(servers) ?? [])
    var catalog = PluginCatalog(entries: [], diagnostics: [], folders: folders)
    var names: [String: String] = [:]  // tool name -> manifest path
    for item in found {
      switch item {
      case .problem(let d):
        catalog.diagnostics.append(d)
      case .server(let index, let folder, let path):
        let server = servers[index].manifest.mcp!
        guard index < loaded.count else { continue }
        switch loaded[index] {
        case .failure(let error):
          catalog.diagnostics.append(
            PluginDiagnostic(kind: .serverFailed, path: path, tool: nil, message: error.message, isError: true))
        case .success(let result):
          catalog.diagnostics += result.notes
          for tool in result.tools {
            var offered = server.prefixTools ? "\(server.name).\(tool.name)" : tool.name
            if !server.prefixTools, names[offered] != nil {
              offered = "\(server.name).\(tool.name)"
              catalog.diagnostics.append(
                PluginDiagnostic(
                  kind: .adjusted, path: path, tool: tool.name,
                  message: "offered as \(offered): the name \(tool.name) was taken by a tool in \(names[tool.name]!)",
                  isError: false))
            }
            if let first = names[offered] {
              catalog.diagnostics.append(
                PluginDiagnostic(
                  kind: .shadowed, path: path, tool: offered,
                  message: "shadowed by the tool of the same name in \(first), which was found first", isError: false))
              continue
            }
            names[offered] = path
            catalog.entries.append(Entry(tool: offered == tool.name ? tool : tool.renamed(offered), folder: folder))
          }
        }
      case .native(let manifest, let executable, let folder, let path):
        // The tools of a persistent plugin share its processes.
        let pool =
          manifest.persistent
          ? PersistentPool(
            spec: PluginTool.persistentSpec(manifest: manifest, executable: executable, hostEnvironment: environment),
            size: manifest.poolSize) : nil
        for (index, definition) in manifest.tools.enumerated() {
          if let first = names[definition.name] {
            catalog.diagnostics.append(
              PluginDiagnostic(
                kind: .shadowed, path: path, tool: definition.name,
                message: "shadowed by the tool of the same name in \(first), which was found first", isError: false))
            continue
          }
          do {
            let compiled = try compiledTools[path]![index].get()
            let tool = try PluginTool(
              definition: definition, manifest: manifest, executable: executable, runner: runner,
              hostEnvironment: environment, pool: pool, compiled: compiled)
            names[definition.name] = path
            catalog.entries.append(Entry(tool: tool, folder: folder))
          } catch {
            catalog.diagnostics.append(
              PluginDiagnostic(
                kind: .unsupportedSchema, path: path, tool: definition.name,
                message: "its schema cannot be used: \(error.description)", isError: true))
          }
        }
      }
    }
    return catalog
  }

  /// A registry of the catalog's tools.
  public func registry() -> ToolRegistry {
    // PluginTools carry compiled schemas, so this cannot fail.
    (try? ToolRegistry(tools)) ?? (try! ToolRegistry([]))
  }
}
