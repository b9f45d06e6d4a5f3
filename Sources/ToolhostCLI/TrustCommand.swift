import ArgumentParser
import Foundation
import ToolhostCommandLine
import ToolhostPlugins
import ToolhostSystem

/// `toolhost trust [DIR]`, `--list`, `--revoke`: the project plugin folders toolhost may use.
struct Trust: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Trust a project's plugin folder (./plugins by default), so toolhost uses it.",
    discussion: """
      toolhost runs the plugins of ./plugins only once you trust the folder: this shows what each manifest runs (each \
      tool's whole command line), whether each tool runs without asking when a model calls it, and which \
      environment variables it asks for, starts nothing, and records the SHA-256 of every manifest (in \
      trust.json beside config.json, mode 0600). A manifest that changes, or is added, afterwards is not loaded \
      until you trust the folder again. The programs a manifest names are not pinned: a folder you trust runs as you.
      """)

  @Flag(help: "List the trusted folders and whether they changed since.") var list = false
  @Flag(help: "Stop trusting the folder.") var revoke = false
  @OptionGroup var output: OutputOptions
  @Argument(help: "The plugin folder (default: ./plugins).") var folder: String?

  func validate() throws {
    if list && (revoke || folder != nil) { throw ValidationError("--list takes no folder and no --revoke") }
  }

  func run() async throws {
    let printer = output.printer
    var store: TrustStore
    let config: UserConfiguration
    do {
      store = try TrustStore.load()
      config = try UserConfiguration.load()
    } catch {
      printer.warn("toolhost: \(error.description)")
      throw ExitCode(Status.usage)
    }
    if list {
      showList(store, printer: printer)
      return
    }
    let cwd = FileManager.default.currentDirectoryPath
    let given = ((folder ?? "plugins") as NSString).expandingTildeInPath
    let path = ((given.hasPrefix("/") ? given : (cwd as NSString).appendingPathComponent(given)) as NSString)
      .standardizingPath
    if revoke {
      guard store.revoke(folder: path) else {
        printer.warn("toolhost: \(path) is not trusted (`toolhost trust --list` shows the trusted folders)")
        throw ExitCode(Status.usage)
      }
      try save(store, printer: printer)
      printer.say("\(path) is no longer trusted; toolhost will not load its plugins")
      return
    }
    try await trust(path, store: &store, config: config, printer: printer)
  }

  private func trust(_ path: String, store: inout TrustStore, config: UserConfiguration, printer: Printer) async throws
  {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
      printer.warn("toolhost: there is no folder \(path)")
      throw ExitCode(Status.usage)
    }
    let manifests = PluginCatalog.manifests(in: path)
    guard !manifests.isEmpty else {
      printer.warn(
        "toolhost: no plugins in \(path) (a plugin is \(path)/NAME/toolhost.json or \(path)/NAME.toolhost.json)")
      throw ExitCode(Status.usage)
    }
    // The checks discovery makes (StrictModes for the folder and those above it, plugin folders, manifests and
    // commands; small regular files), run the same way, starting nothing: a folder that would be refused is not
    // trusted.
    let checked = await PluginCatalog.discover(
      in: [PluginFolder(path: path, origin: .explicit)], trust: DiscoveryTrust(configuration: config),
      environment: ProcessInfo.processInfo.environment, mcp: nil, startServers: false)
    let refusals = checked.diagnostics.filter { $0.kind == .unsafePermissions || $0.kind == .unreadable }
    if let folder = refusals.first(where: { $0.path == path }) {
      printer.warn("toolhost: not trusted: \(folder.message)")
      throw ExitCode(Status.toolFailed)
    }
    var contents: [(path: String, bytes: [UInt8])] = []
    for manifest in manifests {
      printer.say(manifest)
      if let refusal = refusals.first(where: { $0.path == manifest }) {
        printer.say("  refused: \(refusal.message)")
        continue
      }
      let bytes: [UInt8]
      do { bytes = try FileSafety.readRegularFile(manifest, user: config.strictModes ? getuid() : nil) } catch {
        printer.say("  refused: \(error.description)")
        continue
      }
      contents.append((manifest, bytes))
      for line in TrustSummary.lines(of: bytes, path: manifest, configuration: config) { printer.say("  " + line) }
    }
    guard contents.count == manifests.count else {
      let n = manifests.count - contents.count
      printer.warn(
        "toolhost: \(path) is not trusted: \(n) of its manifests \(n == 1 ? "is" : "are") refused (above); fix "
          + "\(n == 1 ? "it" : "them") or remove \(n == 1 ? "it" : "them"), then trust the folder again")
      throw ExitCode(Status.toolFailed)
    }
    let record = store.trust(folder: path, contents: contents)
    try save(store, printer: printer)
    let n = record.manifests.count
    printer.say(
      "trusted \(path): \(n) manifest\(n == 1 ? "" : "s") pinned by SHA-256 in \(store.path); a manifest that "
        + "changes needs `toolhost trust` again")
  }

  private func showList(_ store: TrustStore, printer: Printer) {
    guard !store.records.isEmpty else {
      printer.say("no folder is trusted (`toolhost trust DIR` trusts one)")
      return
    }
    for folder in store.records.keys.sorted() {
      let record = store.records[folder]!
      let n = record.manifests.count
      var status = "ok"
      if let (changed, added, removed) = store.changes(of: record) {
        var parts: [String] = []
        if !changed.isEmpty { parts.append("\(changed.count) changed (\(changed.joined(separator: ", ")))") }
        if !added.isEmpty { parts.append("\(added.count) added (\(added.joined(separator: ", ")))") }
        if !removed.isEmpty { parts.append("\(removed.count) removed") }
        if !parts.isEmpty { status = "changed: " + parts.joined(separator: ", ") + "; `toolhost trust \(folder)`" }
      } else {
        status = "missing: the folder is gone (`toolhost trust --revoke \(folder)`)"
      }
      printer.say("\(folder)  \(n) manifest\(n == 1 ? "" : "s")  trusted \(record.trustedAt)  \(status)")
    }
  }

  private func save(_ store: TrustStore, printer: Printer) throws {
    do { try store.save() } catch {
      printer.warn("toolhost: \(error.description)")
      throw ExitCode(Status.toolFailed)
    }
  }
}
