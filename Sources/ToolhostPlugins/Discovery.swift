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
    // First the list of manifests, in order; then the expensive part (read, parse, schema-check, resolve the
    // command, compile the tools' schemas) for all of them in parallel; then everything in order again.
    let (places, untrusted) = manifestPlaces(in: folders, trust: trust, required: required)
    let checker = FileSafety.Checker(user: trust.user)
    let searchPath = environment["PATH"]
    @Sendable func load(_ path: String, in folder: PluginFolder) -> Loaded {
      loadManifest(path, in: folder, trust: trust, checker: checker, searchPath: searchPath)
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

    let (found, servers, compiledTools) = sorted(places, results, loadsServers: mcp != nil, environment: environment)

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
        catalog.addServerTools(loaded[index], of: servers[index], folder: folder, path: path, names: &names)
      case .native(let manifest, let executable, let folder, let path):
        catalog.addPluginTools(
          of: manifest, executable: executable, compiled: compiledTools[path]!, folder: folder, path: path,
          runner: runner, environment: environment, names: &names)
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
