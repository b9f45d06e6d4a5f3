import Crypto
import Foundation
import ToolhostJSON
public import ToolhostSystem
package import ToolhostTools

/// What a manifest declares its plugin (or the MCP server it starts) may reach: its `"sandbox"`.
///
/// Absent, a plugin has no network; it reads its own folder, where its command and interpreter are installed and
/// the system (``Confinement/systemPaths``); it writes to its own temporary folder only. `"sandbox": "none"` runs
/// it unconfined.
///
/// ```json
/// "sandbox": {"network": [443], "read": ["~/.config/weather"], "write": ["data/"]}
/// ```
public struct PluginSandbox: Sendable, Equatable {
  /// Whether the manifest asks to run unconfined (`"sandbox": "none"`).
  public var isUnconfined: Bool
  /// What it may do on the network.
  public var network: Confinement.Network
  /// The paths it may also read, as written (`~/…`, absolute, or relative to the manifest's folder).
  public var read: [String]
  /// The paths it may write, as written; one ending in `/` is a folder made when missing.
  public var write: [String]

  /// The confinement of a manifest without `"sandbox"`.
  public static let standard = PluginSandbox(isUnconfined: false, network: .none, read: [], write: [])
  /// `"sandbox": "none"`.
  public static let none = PluginSandbox(isUnconfined: true, network: .unrestricted, read: [], write: [])

  /// Makes a sandbox declaration.
  public init(isUnconfined: Bool, network: Confinement.Network, read: [String], write: [String]) {
    self.isUnconfined = isUnconfined
    self.network = network
    self.read = read
    self.write = write
  }

  /// Reads a manifest's `"sandbox"` value, which the manifest schema has checked; absent is ``standard``.
  init(json: JSONValue?) {
    guard let json else {
      self = .standard
      return
    }
    if json.stringValue == "none" {
      self = .none
      return
    }
    let network: Confinement.Network =
      switch json["network"] {
      case .bool(true): .unrestricted
      case .array(let ports): .tcpPorts(ports.compactMap { $0.integerValue.map { Int($0) } })
      default: .none
      }
    self.init(
      isUnconfined: false, network: network, read: json["read"]?.arrayValue?.compactMap(\.stringValue) ?? [],
      write: json["write"]?.arrayValue?.compactMap(\.stringValue) ?? [])
  }

  /// `path` as an absolute path: `~` and `~/…` in `home`, a relative one in `directory`.
  static func absolute(_ path: String, directory: String, home: String) -> String {
    var full = path
    if path == "~" || path.hasPrefix("~/") {
      full = home + path.dropFirst()
    } else if !path.hasPrefix("/") {
      full = directory + "/" + path
    }
    let trailing = full.hasSuffix("/") && full.count > 1
    let normalized = (full as NSString).standardizingPath
    return trailing ? normalized + "/" : normalized
  }

  /// Where a program is installed, to read: for one in a version manager's `shims` folder (pyenv, rbenv, asdf) that
  /// manager's folder; for one in a `bin` folder that folder and its siblings `lib`, `lib64`, `libexec` and a
  /// virtual environment's `pyvenv.cfg` (so `~/.cargo/bin/tool` gives nothing of `~/.cargo`'s credentials); else
  /// the program's own folder. For `path` and, when it is a link, for the file it names. Never `/`, the home folder
  /// or a folder above it: such a grant falls back to the program file alone.
  static func installation(of path: String, home: String) -> [String] {
    var out: [String] = []
    func exists(_ path: String) -> Bool {
      var info = stat()
      return stat(path, &info) == 0
    }
    func tooWide(_ grant: String) -> Bool {
      grant == "/" || grant.isEmpty || grant == home || home.hasPrefix(grant + "/")
    }
    let standardized = (path as NSString).standardizingPath
    for program in Set([standardized, (standardized as NSString).resolvingSymlinksInPath]).sorted() {
      let folder = (program as NSString).deletingLastPathComponent
      let name = (folder as NSString).lastPathComponent
      let above = (folder as NSString).deletingLastPathComponent
      var grants: [String]
      if name == "shims" {
        grants = [above]
      } else if name == "bin" || name == "sbin", !tooWide(above) {
        grants =
          [folder]
          + ["lib", "lib64", "libexec", "pyvenv.cfg"].map { (above as NSString).appendingPathComponent($0) }.filter(
            exists)
      } else {
        grants = [folder]
      }
      if grants.contains(where: tooWide) { grants = [program] }
      for grant in grants where !out.contains(grant) { out.append(grant) }
    }
    return out
  }

  /// The interpreter a script's `#!` line names (through `env` on `searchPath` too): an executable file, or `nil`
  /// for a program that is not a script or names none.
  static func interpreter(of executable: String, searchPath: String?) -> String? {
    guard let handle = FileHandle(forReadingAtPath: executable) else { return nil }
    defer { try? handle.close() }
    let head = (try? handle.read(upToCount: 256)) ?? Data()
    guard head.starts(with: Array("#!".utf8)) else { return nil }
    let line = String(decoding: head.dropFirst(2).prefix { $0 != 0x0A }, as: UTF8.self)
    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    guard let first = words.first else { return nil }
    func executableFile(_ path: String) -> String? {
      var info = stat()
      guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o111 != 0 else { return nil }
      return (path as NSString).standardizingPath
    }
    guard (first as NSString).lastPathComponent == "env" else { return executableFile(first) }
    // env's own options come first: those that take a value (-u NAME, -C DIR) with it, and NAME=VALUE settings.
    var rest = words.dropFirst()[...]
    while let word = rest.first, word.hasPrefix("-") || word.contains("=") {
      rest = rest.dropFirst()
      if ["-u", "--unset", "-C", "--chdir"].contains(word) { rest = rest.dropFirst() }
    }
    guard let name = rest.first else { return nil }
    if name.contains("/") { return executableFile(name) }
    for folder in (searchPath ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where folder.hasPrefix("/") {
      if let found = executableFile(String(folder) + "/" + name) { return found }
    }
    return nil
  }

  /// Why writing `writes` would let a plugin widen its own confinement, or `nil`: a write path that holds its own
  /// manifest (it could rewrite its `"sandbox"`; a folder of the user's own is not pinned) or toolhost's
  /// configuration folder (config.json's `allowUnconfined`, trust.json, the user's plugins). Links are followed.
  static func selfWidening(writes: [String], manifest: String, configuration: String) -> String? {
    func real(_ path: String) -> String {
      var trimmed = path
      while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
      return (trimmed as NSString).resolvingSymlinksInPath
    }
    func covers(_ folder: String, _ path: String) -> Bool { path == folder || path.hasPrefix(folder + "/") }
    let manifestPath = real(manifest)
    let configurationPath = real(configuration)
    for write in writes {
      let target = real(write)
      if covers(target, manifestPath) {
        return "its sandbox lets it write \(write), which holds its own manifest: it could widen its own "
          + "confinement. Declare a folder that does not hold toolhost.json (such as \"data/\")"
      }
      if covers(target, configurationPath) || covers(configurationPath, target) {
        return "its sandbox lets it write \(write), in toolhost's configuration (\(configuration)): it could allow "
          + "itself anything there. Declare a folder outside it"
      }
    }
    return nil
  }

  /// The home folder `~` stands for: `HOME` of `environment`, else `/`.
  static func home(_ environment: [String: String]) -> String {
    environment["HOME"].flatMap { $0.isEmpty ? nil : ($0 as NSString).standardizingPath } ?? "/"
  }

  /// Whether `path` is one of the system's folders every confined process reads already.
  static func isSystemPath(_ path: String) -> Bool {
    Confinement.systemPaths.contains { path == $0 || path.hasPrefix($0 + "/") }
  }

  /// Where the programs a plugin runs are installed, outside the system's folders: its command's installation and
  /// its interpreter's (a `#!` line), so that a script run by a virtual environment's or pyenv's Python starts; and
  /// the folder of each of its fixed arguments that is an absolute path to a file (`python3 /opt/x/server.py`).
  static func runtimePaths(executable: String, arguments: [String], searchPath: String?, home: String) -> [String] {
    var programs = [executable]
    if let interpreter = interpreter(of: executable, searchPath: searchPath) { programs.append(interpreter) }
    var out: [String] = []
    for program in programs {
      for path in installation(of: program, home: home) where !isSystemPath(path) && !out.contains(path) {
        out.append(path)
      }
    }
    for argument in arguments where argument.hasPrefix("/") {
      var info = stat()
      guard stat(argument, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
      let folder = (argument as NSString).deletingLastPathComponent
      let path = folder == home || folder == "/" ? argument : folder
      if !isSystemPath(path) && !out.contains(path) { out.append(path) }
    }
    return out
  }

  /// The plugin's own temporary folder (its `TMPDIR`): `toolhost-UID/NAME-DIGEST` in the host's temporary folder,
  /// one per plugin location.
  static func temporaryFolder(location: String, name: String, environment: [String: String]) -> String {
    let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    let digest = SHA256.hash(data: Data(location.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    return (base as NSString).standardizingPath + "/toolhost-\(getuid())/\(name)-\(digest)"
  }
}

/// How a plugin's processes run, worked out once from its manifest's ``PluginSandbox``, this machine's
/// ``ConfinementSupport`` and the user's `allowUnconfined`.
public enum PluginConfinement: Sendable, Equatable {
  /// Confined: the ``Confinement`` and the plugin's own temporary folder (made before each start), with the
  /// write folders to make when missing.
  case confined(Confinement, temporaryFolder: String, foldersToMake: [String])
  /// Unconfined: the manifest asked for it (`"sandbox": "none"`), or the machine cannot confine and the user
  /// allowed unconfined runs.
  case unconfined
  /// Not run: the machine cannot confine it and the user did not allow unconfined runs. The reason says what is
  /// missing and how to allow it.
  case refused(String)

  /// The confinement of the plugin of `manifest` that runs `executable`.
  public static func of(
    _ manifest: PluginManifest, executable: String, hostEnvironment: [String: String],
    support: ConfinementSupport = .current
  ) -> PluginConfinement {
    let sandbox = manifest.sandbox
    // A remote server runs nothing here.
    if sandbox.isUnconfined || manifest.mcp?.url != nil { return .unconfined }
    let home = PluginSandbox.home(hostEnvironment)
    func absolute(_ path: String) -> String {
      PluginSandbox.absolute(path, directory: manifest.directory, home: home)
    }
    let temporary = PluginSandbox.temporaryFolder(
      location: manifest.location, name: manifest.folderName, environment: hostEnvironment)
    let writes = sandbox.write.map(absolute)
    if let problem = PluginSandbox.selfWidening(
      writes: writes, manifest: manifest.path, configuration: UserConfiguration.folder(environment: hostEnvironment))
    {
      return .refused(problem)
    }
    var reads = [manifest.directory]
    for path in PluginSandbox.runtimePaths(
      executable: executable, arguments: manifest.arguments, searchPath: hostEnvironment["PATH"], home: home)
      + sandbox.read.map(absolute) where !reads.contains(path)
    {
      reads.append(path)
    }
    let confinement = Confinement(
      network: sandbox.network, readable: reads,
      writable: [temporary] + writes.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    if let problem = support.problem(for: confinement) {
      if manifest.unconfinedRunsAllowed { return .unconfined }
      return .refused(
        "\(problem). It is not run unconfined: give its manifest \"sandbox\": \"none\" if you trust it with "
          + "everything you can reach, or allow every plugin to run unconfined on this machine with "
          + "\"allowUnconfined\": true in toolhost's config.json")
    }
    return .confined(
      confinement, temporaryFolder: temporary,
      foldersToMake: writes.filter { $0.hasSuffix("/") }.map { String($0.dropLast()) })
  }

  /// The confinement to start a process with, after making the plugin's temporary folder and its declared write
  /// folders; `nil` when it runs unconfined.
  /// - Throws: ``ToolFailure/launchFailed(executable:reason:)`` when it is refused or a folder cannot be made.
  package func prepare(executable: String) throws(ToolFailure) -> Confinement? {
    switch self {
    case .unconfined: return nil
    case .refused(let reason): throw .launchFailed(executable: executable, reason: reason)
    case .confined(let confinement, let temporary, let folders):
      do {
        try FileSafety.makePrivateFolder(temporary)
        for folder in folders { try FileSafety.makePrivateFolder(folder) }
      } catch {
        throw .launchFailed(
          executable: executable, reason: "could not make the folders it may write: \(error.localizedDescription)")
      }
      if let problem = FileSafety.privateFolderProblem((temporary as NSString).deletingLastPathComponent) {
        throw .launchFailed(executable: executable, reason: "its temporary folder is not safe: \(problem)")
      }
      return confinement
    }
  }

  /// What the plugin of `manifest` may reach, in one line for a person (`trust`, `describe`, doctor): "confined: no
  /// network; reads its folder, the system, ~/.pyenv; writes its temporary folder", or why it runs unconfined or not
  /// at all.
  public static func reach(
    of manifest: PluginManifest, executable: String, hostEnvironment: [String: String],
    support: ConfinementSupport = .current
  ) -> String {
    of(manifest, executable: executable, hostEnvironment: hostEnvironment, support: support).reach(
      of: manifest, hostEnvironment: hostEnvironment)
  }

  /// What this confinement, of the plugin of `manifest`, lets it reach, in one line for a person (see
  /// ``reach(of:executable:hostEnvironment:support:)``).
  public func reach(of manifest: PluginManifest, hostEnvironment: [String: String]) -> String {
    if manifest.mcp?.url != nil { return "runs nothing here (a remote server)" }
    let home = PluginSandbox.home(hostEnvironment)
    func shown(_ path: String) -> String {
      if path == manifest.directory { return "its folder" }
      if home != "/", path.hasPrefix(home + "/") { return "~" + path.dropFirst(home.count) }
      return path
    }
    switch self {
    case .unconfined where manifest.sandbox.isUnconfined:
      return "unconfined (\"sandbox\": \"none\"): it can read, write and reach everything you can"
    case .unconfined:
      return "unconfined: this machine cannot confine it, and config.json has \"allowUnconfined\": true"
    case .refused(let reason):
      return "not run: \(reason)"
    case .confined(let confinement, let temporary, _):
      let network: String =
        switch confinement.network {
        case .none: "no network"
        case .unrestricted: "network: any host and port, and local services (D-Bus, a container engine's socket)"
        case .tcpPorts(let ports):
          "network: TCP port\(ports.count == 1 ? "" : "s") \(ports.map(String.init).joined(separator: ", ")) of any "
            + "host, and UDP"
        }
      let reads = ["its folder", "the system"] + confinement.readable.filter { $0 != manifest.directory }.map(shown)
      let writes = confinement.writable.map { $0 == temporary ? "its temporary folder" : shown($0) }
      return "confined: \(network); reads \(reads.joined(separator: ", ")); writes \(writes.joined(separator: ", "))"
    }
  }

  /// The environment of a confined process: `TMPDIR` is its own temporary folder.
  package func environment(_ environment: [String: String]) -> [String: String] {
    guard case .confined(_, let temporary, _) = self else { return environment }
    var environment = environment
    environment["TMPDIR"] = temporary
    return environment
  }
}
