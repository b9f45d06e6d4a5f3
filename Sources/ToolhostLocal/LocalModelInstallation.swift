public import Foundation
public import ToolhostSession
import ToolhostSystem

/// Where `scripts/install-local-model` put llama.cpp (a Python environment with llama-cpp-python's server) and the
/// default model.
///
/// The installation is a folder with `venv/bin/python`, `models/`, `logs/` and a `ready` file written last, when the
/// set-up has finished and its smoke test passed.
public struct LocalModelInstallation: Sendable, Equatable {
  /// The command that sets up the local model (in the per-user folder, or `$TOOLHOST_LOCAL_DIR`).
  public static let setupCommand = "toolhost model install"
  /// The default model's file name in `models/`: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, which `local` and `local:1.5b`
  /// run.
  public static let defaultModelFile = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
  /// The installation's folder inside a toolhost checkout.
  public static let folderInCheckout = ".toolhost/local-model"

  /// The installation's folder.
  public var directory: String

  /// Makes an installation description for `directory` (nothing is checked).
  public init(directory: String) {
    self.directory = directory
  }

  /// The Python interpreter of its environment.
  public var python: String { directory + "/venv/bin/python" }
  /// The default model's path.
  public var defaultModel: String { directory + "/models/" + Self.defaultModelFile }
  /// The smaller model's file name (Qwen2.5-Coder-0.5B-Instruct Q4_K_M), which `--with-0.5b` installs: about twice
  /// as fast as the default, and wrong more often.
  public static let smallModelFile = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
  /// The smaller model, `local:0.5b`.
  public var smallModel: String { directory + "/models/" + Self.smallModelFile }
  /// The folder of the server's log.
  public var logDirectory: String { directory + "/logs" }
  /// The server's log file.
  public var serverLog: String { logDirectory + "/server.log" }
  /// The folder of shared servers' state and lock files (see ``SharedModelServer``).
  public var runDirectory: String { directory + "/run" }
  /// Where servers save the model's state after the system message (``LocalServerConfiguration/promptCacheDirectory``).
  public var promptCacheDirectory: String { directory + "/cache" }
  /// Whether the set-up finished here.
  public var isReady: Bool {
    FileManager.default.fileExists(atPath: directory + "/ready")
      && FileManager.default.isExecutableFile(atPath: python)
  }

  /// The per-user installation's folder: `$XDG_DATA_HOME/toolhost/local-model`, else
  /// `~/.local/share/toolhost/local-model`. A relative `XDG_DATA_HOME` is ignored, as the XDG specification says (it
  /// would make the current directory, perhaps a cloned repository, the home of the Python toolhost runs).
  public static func userDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    let base =
      environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(".local/share")
    return (base as NSString).appendingPathComponent("toolhost/local-model")
  }

  /// Where `toolhost model install` puts the installation: `$TOOLHOST_LOCAL_DIR` when set, else
  /// ``userDirectory(environment:)``.
  public static func installDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    if let dir = environment["TOOLHOST_LOCAL_DIR"], !dir.isEmpty { return dir }
    return userDirectory(environment: environment)
  }

  /// Finds the installation: `$TOOLHOST_LOCAL_DIR` when set; else `.toolhost/local-model` in the closest folder
  /// above toolhost's executable (a checkout's `.build/…/toolhost`, for development) that has one; else the
  /// per-user folder (``userDirectory(environment:)``). The current directory is not searched: a cloned repository
  /// could bring a `.toolhost/local-model` whose Python toolhost would run. An installation another user could
  /// change (StrictModes, see ``FileSafety``), wherever it was found, `$TOOLHOST_LOCAL_DIR`'s included, is refused.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` naming ``setupCommand`` when there is no finished
  ///   installation.
  public static func locate(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    searchingFrom starts: [String] = LocalModelInstallation.defaultSearchStarts()
  ) throws(LanguageModelError) -> LocalModelInstallation {
    if let dir = environment["TOOLHOST_LOCAL_DIR"], !dir.isEmpty {
      let installation = LocalModelInstallation(directory: dir)
      guard installation.isReady else {
        throw LanguageModelError(
          kind: .configuration,
          message:
            "TOOLHOST_LOCAL_DIR is \(dir), which holds no finished local-model set-up (no \(dir)/ready); "
            + "run `TOOLHOST_LOCAL_DIR=\(dir) \(setupCommand)`, or unset TOOLHOST_LOCAL_DIR")
      }
      return try installation.checkedOwnership(namedBy: "TOOLHOST_LOCAL_DIR")
    }
    var seen = Set<String>()
    for start in starts {
      var dir = URL(fileURLWithPath: start).standardizedFileURL
      while true {
        let path = dir.path
        if !seen.insert(path).inserted { break }
        let candidate = LocalModelInstallation(directory: dir.appendingPathComponent(folderInCheckout).path)
        if candidate.isReady { return try candidate.checkedOwnership() }
        let parent = dir.deletingLastPathComponent()
        if parent.path == path { break }
        dir = parent
      }
    }
    let user = LocalModelInstallation(directory: userDirectory(environment: environment))
    if user.isReady { return try user.checkedOwnership() }
    throw LanguageModelError(
      kind: .configuration,
      message:
        "the local model is not set up: run `\(setupCommand)` (it installs llama.cpp and a default model into "
        + "\(user.directory), about 10 minutes the first time), or set TOOLHOST_LOCAL_DIR to a folder it set up")
  }

  /// The installation itself, when only its owner (or root) can change it and the Python it runs; `setting` names
  /// the environment variable that chose it, for the message.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` saying what another user could change.
  func checkedOwnership(namedBy setting: String? = nil) throws(LanguageModelError) -> LocalModelInstallation {
    let folder = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
    if let problem = FileSafety.folderProblem(folder) ?? FileSafety.pathProblem(python) {
      let which = setting.map { "the local model's set-up \($0) names (\(directory))" } ?? "the local model's set-up"
      throw LanguageModelError(kind: .configuration, message: "\(which) is refused: \(problem)")
    }
    return self
  }

  /// Where ``locate(environment:searchingFrom:)`` looks: the folder of the running executable (symbolic links
  /// resolved), and nothing else.
  public static func defaultSearchStarts() -> [String] {
    var starts: [String] = []
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      starts.append(URL(fileURLWithPath: exe).deletingLastPathComponent().path)
    } else if let exe = Bundle.main.executableURL {
      starts.append(exe.resolvingSymlinksInPath().deletingLastPathComponent().path)
    }
    return starts
  }
}

/// Which GGUF model a `--model local…` value names.
public enum LocalModelSpecifier {
  /// Whether `name` asks for a local model: `local` or `local:PATH`.
  public static func isLocal(_ name: String) -> Bool {
    name == "local" || name.hasPrefix("local:")
  }

  /// The model file `name` names: the installation's default model for `local` (and `local:1.5b`, its name), its
  /// smaller model for `local:0.5b`, `PATH` (with `~` expanded, relative to the current directory) for `local:PATH`.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when the file is missing, unreadable or not a GGUF
  ///   file, or when `name` is not a local model.
  public static func modelPath(for name: String, installation: LocalModelInstallation) throws(LanguageModelError)
    -> String
  {
    guard isLocal(name) else {
      throw LanguageModelError(
        kind: .configuration, message: "\(name) is not a local model (use `local` or `local:/path/model.gguf`)")
    }
    var path = installation.defaultModel
    var missing = "the default local model \(path) is missing; run `\(LocalModelInstallation.setupCommand)` again"
    if name == "local:0.5b" {
      path = installation.smallModel
      missing = "the 0.5B local model is not installed; run `\(LocalModelInstallation.setupCommand) --with-0.5b`"
    } else if name.hasPrefix("local:"), name != "local:1.5b" {
      path = (String(name.dropFirst("local:".count)) as NSString).expandingTildeInPath
      if path.isEmpty {
        throw LanguageModelError(
          kind: .configuration, message: "`local:` names no file; use `local:/path/model.gguf`")
      }
      if !path.hasPrefix("/") {
        path = FileManager.default.currentDirectoryPath + "/" + path
      }
      missing = "no model file at \(path); name an existing GGUF file, as `local:/path/to/model.gguf`"
    }
    try checkGGUF(path, missing: missing)
    return path
  }

  /// Checks that `path` is a readable file that starts with the GGUF magic; `missing` is the message when there is
  /// no file at `path`.
  static func checkGGUF(_ path: String, missing: String) throws(LanguageModelError) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
      throw LanguageModelError(kind: .configuration, message: missing, setting: .model)
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw LanguageModelError(kind: .configuration, message: "cannot read the model file \(path) (permissions?)")
    }
    defer { try? handle.close() }
    let magic = (try? handle.read(upToCount: 4)) ?? Data()
    guard magic == Data("GGUF".utf8) else {
      throw LanguageModelError(
        kind: .configuration,
        message: "\(path) is not a GGUF model file (llama.cpp runs .gguf files; convert or download one)")
    }
  }
}
