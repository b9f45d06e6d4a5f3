import Foundation
import ToolhostJSON
import ToolhostSchema
import ToolhostSystem
import ToolhostTools

/// The steps of ``PluginCatalog/discover(in:trust:required:runner:environment:mcp:startServers:)``, each with one job:
/// list the manifests, load one, sort what was loaded, and add a server's or a plugin's tools to the catalog.
extension PluginCatalog {
  /// A manifest's tools compiled, in order: each tool's input and output schemas, or why they cannot be used.
  typealias Compiled = [Result<(JSONSchema, JSONSchema?), SchemaError>]
  /// A manifest read, parsed, its command resolved and its tools compiled, with its notes; or why it cannot be used.
  typealias Loaded = Result<(PluginManifest, PluginServer.Endpoint, Compiled, [PluginDiagnostic]), ManifestError>

  /// Reads, parses and checks the manifest at `path`, resolves its command on `searchPath` and compiles its tools'
  /// schemas: the part of discovery that runs for all manifests at once.
  static func loadManifest(
    _ path: String, in folder: PluginFolder, trust: DiscoveryTrust, checker: FileSafety.Checker, searchPath: String?
  ) -> Loaded {
    let strict = trust.configuration.strictModes
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

  /// The manifests loaded, in discovery's order: plugins, servers (made here, for `loadsServers`) and problems, with
  /// each manifest's compiled tools by path.
  static func sorted(
    _ places: [Place], _ results: [Loaded?], loadsServers: Bool, environment: [String: String]
  ) -> (found: [Found], servers: [PluginServer], compiled: [String: Compiled]) {
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
          if !loadsServers {
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
    return (found, servers, compiledTools)
  }

  /// What discovery found at one place, in order.
  enum Found {
    case native(PluginManifest, executable: String, folder: String, path: String)
    case server(Int, folder: String, path: String)
    case problem(PluginDiagnostic)
  }

  /// A manifest to read, or a folder's problem, in discovery's order.
  enum Place {
    case problem(PluginDiagnostic)
    case manifest(folder: PluginFolder, path: String)
  }

  /// The manifests of `folders` to read, in order, with the folders' problems in their places; and the project
  /// folders not trusted yet, only counted.
  static func manifestPlaces(in folders: [PluginFolder], trust: DiscoveryTrust, required: Set<String>) -> (
    [Place], [UntrustedFolder]
  ) {
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
    return (places, untrusted)
  }

  /// Adds the tools a server listed (or its failure, or a note that it was not started), each under its own name
  /// unless a tool found earlier (`names`: name → manifest path) took it.
  mutating func addServerTools(
    _ result: Result<PluginServerTools, PluginServerLoadError>?, of server: PluginServer, folder: String,
    path: String, names: inout [String: String]
  ) {
    guard let result else {
      diagnostics.append(
        PluginDiagnostic(
          kind: .notStarted, path: path, tool: nil,
          message: "an MCP server (\(server.manifest.command)), not started, so its tools are not listed",
          isError: false))
      return
    }
    switch result {
    case .failure(let error):
      diagnostics.append(
        PluginDiagnostic(kind: .serverFailed, path: path, tool: nil, message: error.message, isError: true))
    case .success(let result):
      diagnostics += result.notes
      for tool in result.tools {
        var offered = tool.name
        if let first = names[offered], let qualified = result.qualifiedNames[tool.name] {
          offered = qualified
          diagnostics.append(
            PluginDiagnostic(
              kind: .adjusted, path: path, tool: tool.name,
              message: "offered as \(offered): the name \(tool.name) was taken by a tool in \(first)",
              isError: false))
        }
        if let first = names[offered] {
          diagnostics.append(
            PluginDiagnostic(
              kind: .shadowed, path: path, tool: offered,
              message: "shadowed by the tool of the same name in \(first), which was found first", isError: false))
          continue
        }
        names[offered] = path
        entries.append(Entry(tool: offered == tool.name ? tool : tool.renamed(offered), folder: folder))
      }
    }
  }

  /// Adds a plugin's tools whose names no tool found earlier (`names`: name → manifest path) took; a tool whose
  /// schema or examples cannot be used is a diagnostic.
  mutating func addPluginTools(
    of manifest: PluginManifest, executable: String,
    compiled compiledTools: [Result<(JSONSchema, JSONSchema?), SchemaError>],
    folder: String, path: String, runner: ProcessRunner, environment: [String: String], names: inout [String: String]
  ) {
    // The tools of a persistent plugin share its processes.
    let pool =
      manifest.persistent
      ? PersistentPool(
        spec: PluginTool.persistentSpec(manifest: manifest, executable: executable, hostEnvironment: environment),
        size: manifest.poolSize) : nil
    for (index, definition) in manifest.tools.enumerated() {
      if let first = names[definition.name] {
        diagnostics.append(
          PluginDiagnostic(
            kind: .shadowed, path: path, tool: definition.name,
            message: "shadowed by the tool of the same name in \(first), which was found first", isError: false))
        continue
      }
      do {
        let compiled = try compiledTools[index].get()
        if let problem = PluginTool.exampleProblem(definition, input: compiled.0) {
          diagnostics.append(
            PluginDiagnostic(
              kind: .schemaViolation, path: path, tool: definition.name, message: problem, isError: true))
          continue
        }
        let tool = try PluginTool(
          definition: definition, manifest: manifest, executable: executable, runner: runner,
          hostEnvironment: environment, pool: pool, compiled: compiled)
        names[definition.name] = path
        entries.append(Entry(tool: tool, folder: folder))
      } catch {
        diagnostics.append(
          PluginDiagnostic(
            kind: .unsupportedSchema, path: path, tool: definition.name,
            message: "its schema cannot be used: \(error.description)", isError: true))
      }
    }
  }
}
