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
      summary: TrustSummary.lines(of: bytes, path: manifest, configuration: configuration))
  }

  /// The user's own plugin folder, `$XDG_CONFIG_HOME/toolhost/plugins` (``UserConfiguration/folder(environment:)``).
  public static func userFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    (UserConfiguration.folder(environment: environment) as NSString).appendingPathComponent("plugins")
  }

  /// Copies the folder to ``destination`` (its modes kept), or with `link` makes ``destination`` a symbolic link
  /// to it, after making the user's plugin folder (mode 0700) when it does not exist.
  ///
  /// - Throws: ``Failure`` when the folder cannot be made, or the copy or link fails (a partial copy is removed).
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
