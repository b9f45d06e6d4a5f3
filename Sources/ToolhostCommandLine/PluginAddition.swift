public import Foundation
public import ToolhostPlugins
import ToolhostSystem

/// `toolhost plugins add DIR`: a plugin folder copied (or linked) into the user's own plugin folder,
/// `$XDG_CONFIG_HOME/toolhost/plugins`, where any toolhost finds it without a checkout.
///
/// ```swift
/// let addition = try PluginAddition.prepare(source: "plugins/weather", configuration: config)
/// for line in addition.summary { print(line) }
/// try addition.perform(link: false)
/// ```
public struct PluginAddition: Sendable {
  /// The plugin folder given (absolute, standardized).
  public var source: String
  /// Where it goes: the user's plugin folder and the source folder's name.
  public var destination: String
  /// What the plugin runs, as `toolhost trust` shows it (``TrustSummary/lines(of:path:configuration:searchPath:)``).
  public var summary: [String]
  /// The git work tree the folder is in (the nearest folder, the plugin folder itself or one above it, with a
  /// `.git` entry; through the path given, else the real one), or `nil`. A link to such a folder runs whatever a later `git pull` brings, unseen.
  public var gitWorkTree: String?

  /// Why a plugin folder cannot be added.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    /// What is wrong, and what to do, in words.
    public var description: String
  }

  /// Checks `source` (a folder with a `toolhost.json`) and says where it would go and what it runs; changes
  /// nothing. The folder, the folders above it and its manifest must pass the ownership checks discovery makes
  /// (``FileSafety``, unless the user turned StrictModes off), and nothing may exist yet at the destination.
  ///
  /// - Parameter currentDirectory: what a relative `source` is relative to.
  /// - Throws: ``Failure`` saying what is wrong.
  public static func prepare(
    source: String, configuration: UserConfiguration,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    currentDirectory: String = FileManager.default.currentDirectoryPath
  ) throws(Failure) -> PluginAddition {
    let expanded = (source as NSString).expandingTildeInPath
    let path =
      ((expanded.hasPrefix("/") ? expanded : (currentDirectory as NSString).appendingPathComponent(expanded))
      as NSString).standardizingPath
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw Failure(description: "there is no folder \(path)")
    }
    let manifest = (path as NSString).appendingPathComponent("toolhost.json")
    guard FileManager.default.fileExists(atPath: manifest) else {
      throw Failure(description: "\(path) is not a plugin folder: it has no toolhost.json")
    }
    if configuration.strictModes, let problem = FileSafety.folderProblem(path) {
      throw Failure(description: "refused: \(problem)")
    }
    let bytes: [UInt8]
    do {
      bytes = try FileSafety.readRegularFile(manifest, user: configuration.strictModes ? getuid() : nil)
    } catch {
      throw Failure(description: "refused: \(error.description)")
    }
    let name = (path as NSString).lastPathComponent
    let folder = userFolder(environment: environment)
    let destination = (folder as NSString).appendingPathComponent(name)
    var existing = stat()
    if lstat(destination, &existing) == 0 {
      throw Failure(
        description:
          "\(destination) already exists: remove it first to replace it (a plugin named \(name) is installed)")
    }
    return PluginAddition(
      source: path, destination: destination,
      summary: TrustSummary.lines(of: bytes, path: manifest, configuration: configuration),
      gitWorkTree: gitWorkTree(containing: path)
        ?? gitWorkTree(containing: URL(fileURLWithPath: path).resolvingSymlinksInPath().path))
  }

  /// The nearest of `folder` and the folders above it that has a `.git` entry (a folder, or the file of a linked
  /// work tree or submodule), or `nil`; git itself is not run.
  static func gitWorkTree(containing folder: String) -> String? {
    var current: String? = folder
    while let path = current {
      var info = stat()
      if lstat((path as NSString).appendingPathComponent(".git"), &info) == 0 { return path }
      let parent = (path as NSString).deletingLastPathComponent
      current = parent == path || parent.isEmpty ? nil : parent
    }
    return nil
  }

  /// What the note on a link into a git work tree says: the link pins nothing, so what the folder holds after a
  /// `git pull` runs without being shown or trusted again. `nil` when the folder is in no work tree.
  public var linkNote: String? {
    gitWorkTree.map {
      "note: \(source) is inside the git work tree \($0): a link runs whatever the folder holds later, so what a "
        + "`git pull` (or any other change there) brings runs unpinned, without being shown or trusted again; "
        + "add it without --link to run only the copy shown here"
    }
  }

  /// The first file under `folder` (links not followed) that is neither a regular file, a folder nor a symbolic
  /// link (a FIFO, a device, a socket), with what it is; `nil` when there is none. Copying such a file would read it:
  /// a FIFO blocks the copy for ever, a device may never end.
  static func specialFile(under folder: String) -> (path: String, kind: String)? {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
    for name in names.sorted() {
      let path = (folder as NSString).appendingPathComponent(name)
      var info = stat()
      guard lstat(path, &info) == 0 else { continue }
      switch info.st_mode & S_IFMT {
      case S_IFREG, S_IFLNK: continue
      case S_IFDIR: if let found = specialFile(under: path) { return found }
      default: return (path, FileSafety.kindName(info.st_mode))
      }
    }
    return nil
  }

  /// The user's own plugin folder, `$XDG_CONFIG_HOME/toolhost/plugins` (``UserConfiguration/folder(environment:)``).
  public static func userFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    (UserConfiguration.folder(environment: environment) as NSString).appendingPathComponent("plugins")
  }

  /// Copies the folder to ``destination`` (its modes kept), or with `link` makes ``destination`` a symbolic link
  /// to it, after making the user's plugin folder (mode 0700) when it does not exist. A folder holding a FIFO, a
  /// device or a socket is not copied (reading it could block for ever).
  ///
  /// - Throws: ``Failure`` when the folder cannot be made, holds a file that is not a regular file, a folder or a
  ///   link (for a copy), or the copy or link fails (a partial copy is removed).
  public func perform(link: Bool) throws(Failure) {
    let folder = (destination as NSString).deletingLastPathComponent
    do {
      try FileSafety.makePrivateFolder(folder)
    } catch {
      throw Failure(description: "cannot make \(folder): \(error)")
    }
    if let problem = FileSafety.folderProblem(folder) {
      throw Failure(description: "refused: \(problem)")
    }
    if link {
      do {
        try FileManager.default.createSymbolicLink(atPath: destination, withDestinationPath: source)
      } catch {
        throw Failure(description: "cannot link \(destination) to \(source): \(error.localizedDescription)")
      }
      return
    }
    if let special = Self.specialFile(under: source) {
      throw Failure(
        description: "refused: \(special.path) is \(special.kind), which a copy cannot hold (copying it would read "
          + "it, and wait on it for ever): remove it from the plugin folder, or add the folder with --link")
    }
    // Copied beside the destination first and renamed into place, so a failed copy leaves nothing under the name.
    let partial = (folder as NSString).appendingPathComponent(
      ".\((destination as NSString).lastPathComponent).partial-\(getpid())")
    do {
      try FileManager.default.copyItem(atPath: source, toPath: partial)
    } catch {
      try? FileManager.default.removeItem(atPath: partial)
      throw Failure(description: "cannot copy \(source) to \(partial): \(error.localizedDescription)")
    }
    var existing = stat()
    if lstat(destination, &existing) == 0 || rename(partial, destination) != 0 {
      let why = lstat(destination, &existing) == 0 ? "it exists now" : String(cString: strerror(errno))
      try? FileManager.default.removeItem(atPath: partial)
      throw Failure(description: "cannot put the copy at \(destination): \(why)")
    }
  }
}
