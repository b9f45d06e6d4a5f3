public import Foundation
import ToolhostSystem

/// `toolhost model install`: runs the local model's installer, the text of `scripts/install-local-model`
/// (``EmbeddedInstaller``), with `sh` into ``LocalModelInstallation/installDirectory(environment:)``. Its progress
/// (`==> step` lines, a line every 30 s of a long build, pip's download bars) goes straight to the terminal.
public enum LocalModelInstaller {
  /// Why the installer did not run or did not finish.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in words.
    public var description: String
    /// The installer's exit status, or `nil` when it was not started.
    public var status: Int32?
  }

  /// Installs the local model (and with `withSmall` the 0.5B model too) for the user, or finds it in place, and
  /// returns the installation's folder. Refuses a folder another user could change (``FileSafety``), as
  /// ``LocalModelInstallation/locate(environment:searchingFrom:)`` would refuse to use it.
  ///
  /// - Throws: ``Failure`` when the folder is refused, the installer cannot be written or started, or it fails
  ///   (it has said why on stderr).
  public static func install(withSmall: Bool, environment: [String: String] = ProcessInfo.processInfo.environment)
    throws(Failure) -> String
  {
    let destination = LocalModelInstallation.installDirectory(environment: environment)
    guard destination.hasPrefix("/") else {
      throw Failure(description: "TOOLHOST_LOCAL_DIR must be an absolute path, not \(destination)", status: nil)
    }
    if let problem = FileSafety.folderProblem(existingAncestor(of: destination)) {
      throw Failure(description: "refusing to install the local model into \(destination): \(problem)", status: nil)
    }
    let work = NSTemporaryDirectory() + "toolhost-model-install-\(getpid())-\(UUID().uuidString.prefix(8))"
    do {
      try FileSafety.makePrivateFolder(work)
    } catch {
      throw Failure(description: "cannot make the folder \(work): \(error)", status: nil)
    }
    defer { try? FileManager.default.removeItem(atPath: work) }
    let script = work + "/install-local-model"
    let requirements = work + "/local-model-requirements.txt"
    do {
      try Data((EmbeddedInstaller.script + "\n").utf8).write(to: URL(fileURLWithPath: script))
      try Data((EmbeddedInstaller.requirements + "\n").utf8).write(to: URL(fileURLWithPath: requirements))
    } catch {
      throw Failure(description: "cannot write the installer into \(work): \(error)", status: nil)
    }
    var childEnvironment = environment
    childEnvironment["TOOLHOST_LOCAL_DIR"] = destination
    childEnvironment["TOOLHOST_LOCAL_REQUIREMENTS"] = requirements
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [script] + (withSmall ? ["--with-0.5b"] : [])
    process.environment = childEnvironment
    do {
      try process.run()
    } catch {
      throw Failure(description: "cannot start /bin/sh for the installer: \(error)", status: nil)
    }
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      let how =
        process.terminationReason == .exit
        ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
      throw Failure(
        description: "the local model's installer failed (\(how)); what it printed above says why",
        status: process.terminationStatus)
    }
    return destination
  }

  /// `path`, or the closest folder above it that exists (the one whose ownership decides who could change it).
  static func existingAncestor(of path: String) -> String {
    var current = path
    while !FileManager.default.fileExists(atPath: current) {
      let parent = (current as NSString).deletingLastPathComponent
      if parent == current || parent.isEmpty { break }
      current = parent
    }
    return current
  }
}

extension LocalModelInstallation {
  /// What `toolhost model status` says of the installation: its folder, whether it is ready, its size, and each
  /// model file with its size.
  public var summaryLines: [String] {
    var lines = ["local model: \(directory) (\(isReady ? "ready" : "not finished: no ready file"))"]
    lines.append("  size: \(Self.sizeText(Self.bytes(under: directory))) in all")
    let models = directory + "/models"
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []).filter { $0.hasSuffix(".gguf") }
    for name in names.sorted() {
      lines.append("  \(name): \(Self.sizeText(Self.bytes(under: models + "/" + name)))")
    }
    return lines
  }

  /// The bytes of the files at or under `path` (symbolic links not followed).
  static func bytes(under path: String) -> Int64 {
    let manager = FileManager.default
    guard let attributes = try? manager.attributesOfItem(atPath: path) else { return 0 }
    if attributes[.type] as? FileAttributeType != .typeDirectory {
      return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
    var total: Int64 = 0
    guard let enumerator = manager.enumerator(atPath: path) else { return 0 }
    for case let relative as String in enumerator {
      let item = (try? manager.attributesOfItem(atPath: path + "/" + relative)) ?? [:]
      if item[.type] as? FileAttributeType == .typeRegular {
        total += (item[.size] as? NSNumber)?.int64Value ?? 0
      }
    }
    return total
  }

  /// `bytes` as a person reads it: `491 MB`, `1.1 GB`, `12 KB`.
  static func sizeText(_ bytes: Int64) -> String {
    let value = Double(bytes)
    if value >= 1e9 { return String(format: "%.1f GB", value / 1e9) }
    if value >= 1e6 { return "\(Int((value / 1e6).rounded())) MB" }
    if value >= 1e3 { return "\(Int((value / 1e3).rounded())) KB" }
    return "\(bytes) bytes"
  }
}
