public import Foundation
import ToolhostJSON
import ToolhostSchema
public import ToolhostSystem
public import ToolhostTools

/// The tools found in plugin folders, and the diagnostics of the plugins that could not be used.
///
/// ```swift
/// let catalog = await PluginCatalog.discover(folders: ["/opt/toolhost/plugins"])
/// for problem in catalog.diagnostics where problem.isError { print(problem.message) }
/// let registry = try ToolRegistry(catalog.tools)
/// let output = try await registry.call("getWeather", arguments: ["city": "Boston"])
/// ```
public struct PluginCatalog: Sendable {
  /// A project folder that was not used because the user has not trusted it.
  public struct UntrustedFolder: Sendable, Hashable {
    /// The folder.
    public var path: String
    /// How many manifests it has (none was read).
    public var manifests: Int
  }

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
  /// Project folders left out because they are not trusted (`toolhost trust` trusts them).
  public var untrusted: [UntrustedFolder] = []
  /// What discovery trusted: the trust store and the user's settings it ran with.
  public var trust = DiscoveryTrust()

  /// The tools.
  public var tools: [PluginTool] { entries.map(\.tool) }

  /// Whether any diagnostic is an error (shadowing is not).
  public var hasErrors: Bool { diagnostics.contains { $0.isError } }

  /// The plugin folders in search order: each `explicit` folder, then `$TOOLHOST_PLUGIN_PATH` (colon-separated;
  /// relative entries are project folders),
  /// then `$XDG_CONFIG_HOME/toolhost/plugins` (default `~/.config/toolhost/plugins`), then `./plugins` of
  /// `currentDirectory`, which is a ``PluginFolder/Origin/project`` folder: used only once trusted. A folder is
  /// listed once, with its first origin.
  public static func pluginFolders(
    explicit: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    currentDirectory: String = FileManager.default.currentDirectoryPath
  ) -> [PluginFolder] {
    func absolute(_ p: String) -> String {
      let expanded = (p as NSString).expandingTildeInPath
      let full = expanded.hasPrefix("/") ? expanded : (currentDirectory as NSString).appendingPathComponent(expanded)
      return (full as NSString).standardizingPath
    }
    var folders = explicit.map { PluginFolder(path: absolute($0), origin: .explicit) }
    // A relative entry names a folder of whatever directory toolhost runs in: a project folder, trusted or not.
    folders += (environment["TOOLHOST_PLUGIN_PATH"] ?? "").split(separator: ":").map {
      PluginFolder(path: absolute(String($0)), origin: $0.hasPrefix("/") || $0.hasPrefix("~") ? .environment : .project)
    }
    let config = UserConfiguration.folder(environment: environment)
    folders.append(PluginFolder(path: absolute((config as NSString).appendingPathComponent("plugins")), origin: .user))
    folders.append(PluginFolder(path: absolute("plugins"), origin: .project))
    var seen = Set<String>()
    return folders.filter { seen.insert($0.path).inserted }
  }

  /// The paths of ``pluginFolders(explicit:environment:currentDirectory:)``.
  public static func searchFolders(
    explicit: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    currentDirectory: String = FileManager.default.currentDirectoryPath
  ) -> [String] {
    pluginFolders(explicit: explicit, environment: environment, currentDirectory: currentDirectory).map(\.path)
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

  /// Discovers the plugins of `folders`, in order, all of them trusted as the program's own choice.
  ///
  /// The same as ``discover(in:trust:required:runner:environment:mcp:startServers:)`` with every folder
  /// ``PluginFolder/Origin/explicit``, StrictModes on and no trust store. Never throws.
  public static func discover(
    folders: [String], required: Set<String> = [], runner: ProcessRunner = .shared,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    mcp: (any PluginServerLoader)? = nil
  ) async -> PluginCatalog {
    await discover(
      in: folders.map { PluginFolder(path: $0, origin: .explicit) }, required: required, runner: runner,
      environment: environment, mcp: mcp)
  }

  /// Discovers the plugins of `folders`, in order.
  ///
  /// Folders that do not exist are skipped, except those in `required` (the ones the user named), which become
  /// diagnostics. A ``PluginFolder/Origin/project`` folder is used only when `trust` has a record of it, and then
  /// only its manifests that have not changed since; an untrusted one is only counted (``untrusted``). With
  /// StrictModes on (``UserConfiguration/strictModes``), folders (and the folders above them), plugin folders,
  /// manifests and commands another user could change are refused. A manifest is read only if it is a regular file
  /// of at most 1 MiB, without blocking.
  ///
  /// MCP server manifests are started (all at once, each within its startup timeout) through `mcp` and their tools
  /// listed, unless `startServers` is `false` (then no process is started at all: a server's tools are those the
  /// loader kept from an earlier run while fresh, ``PluginServerLoader/cachedTools(_:)``, else it is a note); without a
  /// loader they become notes. A server's tool whose name a tool found earlier has taken is offered under the
  /// qualified name its loader gives (``PluginServerTools/qualifiedNames``; MCP's: `server.tool`, see
  /// ``PluginManifest/MCPServer/name``). Never throws: every problem is a ``PluginDiagnostic``.
  public static func discover(
    in folders: [PluginFolder], trust: DiscoveryTrust = DiscoveryTrust(), required: Set<String> = [],
    runner: ProcessRunner = .shared, environment: [String: String] = ProcessInfo.processInfo.environment,
    mcp: (any PluginServerLoader)? = nil, startServers: Bool = true
  ) async -> PluginCatalog {
    enum Found {
      case native(PluginManifest, executable: String, folder: String, path: String)
      case server(Int, folder: String, path: String)
      case problem(PluginDiagnostic)
    }
    // First the list of manifests, in order; then the expensive part (read, parse, schema-check, resolve the
    // command, compile the tools' schemas) for all of them in parallel; then everything in order again.
    enum Place {
      case problem(PluginDiagnostic)
      case manifest(folder: PluginFolder, path: String)
    }
    var places: [Place] = []
    var untrusted: [UntrustedFolder] = []
    let fm = FileManager.default
    let strict = trust.configuration.strictModes
    let checker = FileSafety.Checker(user: trust.user)
    for folder in folders {
      var isDir: ObjCBool = false
      guard fm.fileExists(atPath: folder.path, isDirectory: &isDir), isDir.boolValue else {
        if required.contains(folder.path) {
          places.append(
            .problem(
              PluginDiagnostic(
                kind: .missingFolder, path: folder.path, message: "plugin folder does not exist", isError: true)))
        }
        continue
      }
      if folder.origin == .project && trust.store.record(for: folder.path) == nil {
        let count = manifests(in: folder.path).count
        if count > 0 { untrusted.append(UntrustedFolder(path: folder.path, manifests: count)) }
        continue
      }
      if strict, let problem = checker.folderProblem(folder.path) {
        places.append(
          .problem(
            PluginDiagnostic(
              kind: .unsafePermissions, path: folder.path,
              message: "refused: \(problem); \(trust.override)", isError: true)))
        continue
      }
      places += manifests(in: folder.path).map { .manifest(folder: folder, path: $0) }
    }
    typealias Compiled = [Result<(JSONSchema, JSONSchema?), SchemaError>]
    typealias Loaded = Result<(PluginManifest, PluginServer.Endpoint, Compiled, [PluginDiagnostic]), ManifestError>
    let searchPath = environment["PATH"]
    @Sendable func load(_ path: String, in folder: PluginFolder) -> Loaded {
      do throws(ManifestError) {
        let bytes = try readManifest(path, in: folder, trust: trust, checker: checker)
        var manifest = try PluginManifest.parse(bytes, path: path)
        if folder.origin == .project { manifest.projectDigest = TrustStore.digest(bytes) }
        // Read from a folder of the user's own, or pinned by the user as it is (readManifest refuses the rest).
        manifest.isTrusted = true
        manifest.unconfinedRunsAllowed = trust.configuration.allowUnconfined
        // A remote server runs nothing here: it is reached at its URL.
        let endpoint: PluginServer.Endpoint
        if let url = manifest.mcp?.url {
          endpoint = .url(url)
        } else {
          let executable = try manifest.resolveExecutable(searchPath: searchPath)
          if strict, let problem = checker.programProblem(executable) {
            throw ManifestError(
              path: path, kind: .unsafePermissions, message: "its command is refused: \(problem); \(trust.override)")
          }
          endpoint = .command(executable: executable)
        }
        let options = PluginSchemaFiles.options(manifestPath: path, user: strict ? trust.user : nil)
        let compiled: Compiled = manifest.tools.map { d in
          Result { () throws(SchemaError) in try PluginTool.compile(d, options: options) }
        }
        return .success((manifest, endpoint, compiled, secretEnvironmentNotes(manifest, trust: trust)))
      } catch {
        return .failure(error)
      }
    }
    let work: [(String, PluginFolder)?] = places.map {
      if case .manifest(let folder, let path) = $0 { (path, folder) } else { nil }
    }
    // Reading and compiling manifests blocks on files, so it runs on a thread of its own (spreading over
    // Dispatch's workers), never on Swift's cooperative pool.
    let results = await onThreadOfItsOwn(name: "toolhost-discovery") { () -> [Loaded?] in
      var results = [Loaded?](repeating: nil, count: work.count)
      results.withUnsafeMutableBufferPointer { buffer in
        // Safe: each iteration writes only its own element, and the buffer outlives concurrentPerform.
        nonisolated(unsafe) let slots = buffer
        DispatchQueue.concurrentPerform(iterations: work.count) { i in
          if let (path, folder) = work[i] { slots[i] = load(path, in: folder) }
        }
      }
      return results
    }

    var found: [Found] = []
    var servers: [PluginServer] = []
    var compiledTools: [String: Compiled] = [:]
    for (i, place) in places.enumerated() {
      guard case .manifest(let folder, let path) = place else {
        if case .problem(let d) = place { found.append(.problem(d)) }
        continue
      }
      do {
        let (manifest, endpoint, compiled, notes) = try results[i]!.get()
        compiledTools[path] = compiled
        found += notes.map { .problem($0) }
        if manifest.mcp != nil {
          if mcp == nil {
            found.append(
              .problem(
                PluginDiagnostic(
                  kind: .serverFailed, path: path, tool: nil,
                  message:
                    "an MCP server, skipped: this program does not load MCP servers (discovery with ToolhostMCP's MCPPlugins.Loader() does)",
                  isError: false)))
          } else {
            found.append(.server(servers.count, folder: folder.path, path: path))
            servers.append(PluginServer(manifest: manifest, endpoint: endpoint, hostEnvironment: environment))
          }
        } else if case .command(let executable) = endpoint {
          found.append(.native(manifest, executable: executable, folder: folder.path, path: path))
        }
      } catch {
        found.append(
          .problem(
            PluginDiagnostic(kind: error.kind, path: path, tool: nil, message: error.message, isError: true)))
      }
    }

    // MCP servers start at once; each has its own startup timeout. Not started, a server's tools are those of a
    // fresh listing kept from an earlier run, if any.
    var loaded: [Result<PluginServerTools, PluginServerLoadError>?] = []
    if let mcp, !servers.isEmpty {
      loaded = startServers ? (await mcp.loadTools(servers)).map { $0 } : await mcp.cachedTools(servers)
    }
    var catalog = PluginCatalog(entries: [], diagnostics: [], folders: folders.map(\.path), untrusted: untrusted)
    var names: [String: String] = [:]  // tool name -> manifest path
    // Plugins' tools take their names first, in folder order, then MCP servers' tools: a name means the same tool
    // whether or not the servers were started (a server's tool whose name is taken is offered by its qualified name).
    let plugins = found.filter { if case .server = $0 { false } else { true } }
    let serverTools = found.filter { if case .server = $0 { true } else { false } }
    for item in plugins + serverTools {
      switch item {
      case .problem(let d):
        catalog.diagnostics.append(d)
      case .server(let index, let folder, let path):
        guard index < loaded.count else { continue }
        guard let result = loaded[index] else {
          catalog.diagnostics.append(
            PluginDiagnostic(
              kind: .notStarted, path: path, tool: nil,
              message: "an MCP server (\(servers[index].manifest.command)), not started, so its tools are not listed",
              isError: false))
          continue
        }
        switch result {
        case .failure(let error):
          catalog.diagnostics.append(
            PluginDiagnostic(kind: .serverFailed, path: path, tool: nil, message: error.message, isError: true))
        case .success(let result):
          catalog.diagnostics += result.notes
          for tool in result.tools {
            var offered = tool.name
            if let first = names[offered], let qualified = result.qualifiedNames[tool.name] {
              offered = qualified
              catalog.diagnostics.append(
                PluginDiagnostic(
                  kind: .adjusted, path: path, tool: tool.name,
                  message: "offered as \(offered): the name \(tool.name) was taken by a tool in \(first)",
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
            if let problem = PluginTool.exampleProblem(definition, input: compiled.0) {
              catalog.diagnostics.append(
                PluginDiagnostic(
                  kind: .schemaViolation, path: path, tool: definition.name, message: problem, isError: true))
              continue
            }
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

  /// Reads a manifest found in `folder`: a regular file of at most 1 MiB read without blocking; with StrictModes,
  /// its plugin folder and itself must be the user's (or root's) and writable by no one else; in a project folder,
  /// unchanged since the folder was trusted.
  static func readManifest(
    _ path: String, in folder: PluginFolder, trust: DiscoveryTrust, checker: FileSafety.Checker
  ) throws(ManifestError) -> [UInt8] {
    let strict = trust.configuration.strictModes
    let directory = FileSafety.Checker.parent(of: path) ?? "/"
    if strict, directory != folder.path, let problem = checker.folderProblem(directory) {
      throw ManifestError(path: path, kind: .unsafePermissions, message: "refused: \(problem); \(trust.override)")
    }
    let bytes: [UInt8]
    do { bytes = try FileSafety.readRegularFile(path, user: strict ? trust.user : nil) } catch {
      throw ManifestError(
        path: path, kind: error.isOwnership ? .unsafePermissions : .unreadable,
        message: error.isOwnership ? "refused: \(error.description); \(trust.override)" : error.description)
    }
    if folder.origin == .project {
      let again = "`toolhost trust \(folder.path)` shows it and trusts the folder as it is now"
      switch trust.store.verdict(manifest: path, bytes: bytes, folder: folder.path) {
      case .trusted: break
      case .changed:
        throw ManifestError(
          path: path, kind: .untrusted, message: "changed since you trusted \(folder.path), so not loaded (\(again))")
      case .added:
        throw ManifestError(
          path: path, kind: .untrusted,
          message: "was added since you trusted \(folder.path), so not loaded (\(again))")
      case .untrusted:
        throw ManifestError(
          path: path, kind: .untrusted, message: "\(folder.path) is not trusted (`toolhost trust \(folder.path)`)")
      }
    }
    return bytes
  }

  /// A note for each environment variable a manifest asks for that looks like a secret, and for a remote MCP
  /// server's `bearerTokenEnv` (always a secret: it is sent to the server), that the user has not approved for the
  /// plugin (`trust.configuration`'s `environment`). Does not throw.
  public static func secretEnvironmentNotes(_ manifest: PluginManifest, trust: DiscoveryTrust) -> [PluginDiagnostic] {
    let secret = trust.configuration.unapprovedSecrets(of: manifest)
    guard !secret.isEmpty else { return [] }
    let file = trust.configuration.displayPath
    let approve = { (name: String) in
      "approve it with \"environment\": {\"\(manifest.folderName)\": [\"\(name)\"]} in \(file)"
    }
    return secret.map { name in
      let message =
        name == manifest.mcp?.bearerTokenEnv && !manifest.environment.contains(name)
        ? "sends the value of \(name) to \(manifest.mcp?.url ?? "its server") as its bearer token (\(approve(name)), "
          + "or remove \"bearerTokenEnv\" from the manifest)"
        : "asks for \(name), which looks like a secret; the plugin gets it on every call (\(approve(name)), or "
          + "remove it from the manifest's \"env\")"
      return PluginDiagnostic(kind: .secretEnvironment, path: manifest.path, message: message, isError: false)
    }
  }

  /// A registry of the catalog's tools.
  public func registry() -> ToolRegistry {
    // PluginTools carry compiled schemas, so this cannot fail.
    (try? ToolRegistry(tools)) ?? (try! ToolRegistry([]))
  }
}
