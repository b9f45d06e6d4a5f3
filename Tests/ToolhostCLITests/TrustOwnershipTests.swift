import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Trust (issue 11): StrictModes-like ownership checks of plugin folders and manifests, and manifests that are not
/// small regular files.
extension TrustTests {
  // MARK: 6. Ownership

  /// A tree with one plugin, safeTool, in `outer/plugs/safe`.
  private func safePlugin() throws -> TrustTree {
    let tree = try TrustTree()
    try tree.textPlugin(at: "outer/plugs/safe", tool: "safeTool", marker: "safe", output: "safe ran")
    return tree
  }

  /// Expects the plugin refused with an unsafe_permissions error naming `path` and `fix`, and `doctor` to fail; then
  /// with `"strictModes": false` the tool to load and run.
  private func expectRefused(_ tree: TrustTree, naming path: String, fix: String, _ label: String) throws {
    let plugins = tree.path("outer/plugs")
    let listing = try tree.list(["--plugins", plugins])
    #expect(!listing.toolNames.contains("safeTool"), "\(label): the tool loaded: \(listing.summary)")
    let unsafe = listing.diagnostics("unsafe_permissions")
    #expect(!unsafe.isEmpty, "\(label): no unsafe_permissions diagnostic: \(listing.summary)")
    #expect(unsafe.allSatisfy(TrustListing.isError), "\(label): \(listing.summary)")
    if let named = unsafe.first(where: { tree.mentions(TrustListing.text($0), path) }) {
      let text = TrustListing.text(named)
      #expect(text.contains(fix), "\(label): the message does not say \(fix): \(text)")
      #expect(text.contains("strictModes"), "\(label): the message does not mention strictModes: \(text)")
    } else {
      Issue.record("\(label): no unsafe_permissions diagnostic names \(path): \(listing.summary)")
    }
    let doctor = try tree.run(["doctor", "--plugins", plugins])
    #expect(doctor.status == 1, "\(label): doctor exited \(doctor.status)")
    let call = try tree.run(["call", "--plugins", plugins, "safeTool"])
    #expect(call.status != 0, "\(label): the refused tool ran")
    #expect(!tree.hasMarker("safe"), "\(label): the refused plugin ran")

    try tree.writeConfig(#"{"strictModes": false}"#)
    let relaxed = try tree.list(["--plugins", plugins])
    #expect(relaxed.toolNames.contains("safeTool"), "\(label), strictModes false: \(relaxed.summary)")
    #expect(
      !relaxed.diagnostics("unsafe_permissions").contains(where: TrustListing.isError),
      "\(label), strictModes false: \(relaxed.summary)")
    let ran = try tree.run(["call", "--plugins", plugins, "safeTool"])
    #expect(ran.status == 0, "\(label), strictModes false: \(ran.stderrText)")
    #expect(ran.stdoutText.contains("safe ran"))
  }

  @Test(arguments: UnsafeSpot.allCases)
  func writablePluginFilesAreRefused(_ spot: UnsafeSpot) throws {
    let tree = try safePlugin()
    let (relative, mode) = spot.damage
    chmod(tree.path(relative), mode)
    #expect(tree.mode(relative) == mode)
    try expectRefused(tree, naming: tree.path(relative), fix: "chmod", spot.rawValue)
  }

  @Test(.enabled(if: getuid() == 0, "only root can give a manifest to another user"))
  func aManifestOwnedBySomeoneElseIsRefused() throws {
    let tree = try safePlugin()
    let manifest = tree.path("outer/plugs/safe/toolhost.json")
    #expect(chown(manifest, 65534, 65534) == 0, "chown failed: errno \(errno)")
    try expectRefused(tree, naming: manifest, fix: "chown", "owned by uid 65534")
  }

  @Test func aStickyWorldWritableAncestorIsFine() throws {
    let tree = try safePlugin()
    chmod(tree.path("outer"), 0o1777)
    let listing = try tree.list(["--plugins", tree.path("outer/plugs")])
    #expect(listing.toolNames.contains("safeTool"), "\(listing.summary)")
    #expect(listing.diagnostics("unsafe_permissions").isEmpty, "\(listing.summary)")
  }

  @Test func manifestsThatAreNotSmallRegularFilesAreUnreadableAtOnce() throws {
    let tree = try safePlugin()
    try tree.folder("outer/plugs/zero")
    try FileManager.default.createSymbolicLink(
      atPath: tree.path("outer/plugs/zero/toolhost.json"), withDestinationPath: "/dev/zero")
    try tree.folder("outer/plugs/fifo")
    #expect(mkfifo(tree.path("outer/plugs/fifo/toolhost.json"), 0o644) == 0, "mkfifo failed: errno \(errno)")
    chmod(tree.path("outer/plugs/fifo/toolhost.json"), 0o644)
    try tree.file("outer/plugs/big/toolhost.json", "{" + String(repeating: " ", count: 2 << 20) + "}")
    let plugins = tree.path("outer/plugs")

    for arguments in [["list", "--json"], ["doctor"], ["describe", "safeTool"]] {
      let start = Date()
      let out = try tree.run(arguments + ["--plugins", plugins], timeout: 30)
      let seconds = Date().timeIntervalSince(start)
      let label = arguments.joined(separator: " ")
      #expect(!out.timedOut && seconds < 10, "\(label) took \(seconds) s")
      if arguments == ["doctor"] { #expect(out.status == 1, "doctor exited \(out.status)") }
      if arguments == ["describe", "safeTool"] { #expect(out.status == 0, "\(out.stderrText)") }
      guard arguments == ["list", "--json"] else { continue }
      guard let json = try? JSONValue.parse(out.stdoutText) else {
        Issue.record("list --json printed no JSON: \(out.stdoutText.prefix(500)) \(out.stderrText.prefix(500))")
        continue
      }
      let listing = TrustListing(json: json, stderr: out.stderrText)
      #expect(listing.toolNames.contains("safeTool"), "\(listing.summary)")
      for name in ["zero", "fifo", "big"] {
        let found = listing.allDiagnostics.filter { TrustListing.text($0).contains("/\(name)/toolhost.json") }
        #expect(
          found.contains { $0["kind"]?.stringValue == "unreadable" && TrustListing.isError($0) },
          "\(name): \(found.map { $0.serialized() })")
      }
    }
  }
}
