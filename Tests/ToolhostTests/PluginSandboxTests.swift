import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

/// A manifest's `"sandbox"` (issue 48): how it is read and checked, how its paths resolve, what a plugin reads
/// besides, and how its confinement is decided where the kernel can confine and where it cannot.
@Suite("Plugin sandboxes")
struct PluginSandboxTests {
  static let withLandlock = ConfinementSupport(landlockABI: 6, landlockMissing: nil, socketFilter: true)
  static let withoutLandlock = ConfinementSupport(
    landlockABI: nil, landlockMissing: "this kernel has no Landlock", socketFilter: true)

  func manifest(_ sandbox: String?, extra: String = "") throws -> PluginManifest {
    let member = sandbox.map { #", "sandbox": \#($0)"# } ?? ""
    let text = #"""
      {"manifestVersion": 1, "command": "run"\#(member)\#(extra),
       "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}}]}
      """#
    return try PluginManifest.parse(Array(text.utf8), path: "/srv/plugins/p/toolhost.json")
  }

  @Test func theDeclarationIsRead() throws {
    #expect(try manifest(nil).sandbox == .standard)
    #expect(try manifest(#""none""#).sandbox == .none)
    let open = try manifest(#"{"network": true, "read": ["~/a"], "write": ["b/"]}"#).sandbox
    #expect(open == PluginSandbox(isUnconfined: false, network: .unrestricted, read: ["~/a"], write: ["b/"]))
    #expect(try manifest(#"{"network": [443, 8443]}"#).sandbox.network == .tcpPorts([443, 8443]))
    #expect(try manifest(#"{"network": false}"#).sandbox.network == Confinement.Network.none)
  }

  @Test func whatIsNotASandboxIsRefused() throws {
    for bad in [#""full""#, #"{"network": "yes"}"#, #"{"network": [0]}"#, #"{"read": "~"}"#, #"{"cpu": 1}"#] {
      #expect(throws: ManifestError.self, "\(bad)") { try manifest(bad) }
    }
    // The error names the member that is wrong, not only the sandbox.
    let wrong = #expect(throws: ManifestError.self) { try manifest(#"{"network": "yes"}"#) }
    #expect(
      wrong?.message.contains("/sandbox/network: expected boolean or array") == true, "\(String(describing: wrong))")
    let remote = #"""
      {"manifestVersion": 1, "sandbox": {}, "mcp": {"url": "https://tools.example/mcp"}}
      """#
    do {
      _ = try PluginManifest.parse(Array(remote.utf8), path: "/srv/plugins/r/toolhost.json")
      Issue.record("a remote server's manifest took a sandbox")
    } catch {
      #expect(error.message.contains("runs nothing here"), "\(error.message)")
    }
  }

  @Test func pathsResolveInHomeAndTheManifestsFolder() {
    let dir = "/srv/plugins/p"
    #expect(PluginSandbox.absolute("~", directory: dir, home: "/home/u") == "/home/u")
    #expect(PluginSandbox.absolute("~/.ssh", directory: dir, home: "/home/u") == "/home/u/.ssh")
    #expect(PluginSandbox.absolute("data", directory: dir, home: "/home/u") == "/srv/plugins/p/data")
    #expect(PluginSandbox.absolute("../../calls", directory: dir, home: "/home/u") == "/srv/calls")
    #expect(PluginSandbox.absolute("out/", directory: dir, home: "/home/u") == "/srv/plugins/p/out/")
    #expect(PluginSandbox.absolute("/var/x/", directory: dir, home: "/home/u") == "/var/x/")
  }

  @Test func whereItsProgramsAreInstalledIsReadable() throws {
    let home = TemporaryFolder(prefix: "toolhost-sandbox-home")
    let interpreter = home.write(".venv/bin/python9", "#!/bin/sh\n", executable: true)
    home.write(".venv/lib/python9/site.py", "")
    home.write(".venv/pyvenv.cfg", "home = /usr/bin\n")
    let script = home.write("plugin/run.py", "#!/usr/bin/env -S -u HOME python9 -u\nprint()\n", executable: true)
    let data = home.write("srv/server.py", "")
    let paths = PluginSandbox.runtimePaths(
      executable: script, arguments: [data, "relative.py", "/usr/bin/env"], searchPath: home.file(".venv/bin"),
      home: home.path)
    // The script's folder; its interpreter's bin, lib and pyvenv.cfg, not the rest of the environment; the
    // argument's folder.
    #expect(
      paths == [
        home.file("plugin"), home.file(".venv/bin"), home.file(".venv/lib"), home.file(".venv/pyvenv.cfg"),
        home.file("srv"),
      ], "\(paths)")
    #expect(PluginSandbox.interpreter(of: script, searchPath: home.file(".venv/bin")) == interpreter)
    // A version manager's shims give the manager's folder; a user install its bin and lib.
    let shim = home.write(".pyenv/shims/python9", "#!/bin/sh\n", executable: true)
    #expect(PluginSandbox.installation(of: shim, home: home.path) == [home.file(".pyenv")])
    let user = home.write(".local/bin/tool", "#!/bin/sh\n", executable: true)
    home.write(".local/lib/x", "")
    #expect(
      PluginSandbox.installation(of: user, home: home.path) == [home.file(".local/bin"), home.file(".local/lib")])
    // A program in ~/bin gives ~/bin; a system program gives nothing.
    let own = home.write("bin/tool", "#!/bin/sh\n", executable: true)
    #expect(
      PluginSandbox.runtimePaths(executable: own, arguments: [], searchPath: nil, home: home.path) == [
        home.file("bin")
      ])
    #expect(PluginSandbox.runtimePaths(executable: "/bin/sh", arguments: [], searchPath: nil, home: home.path).isEmpty)
  }

  /// A `#!` line cannot make the home folder, or one above it, readable: not with env's options, not with `.`.
  @Test func aScriptCannotWidenWhatItReads() throws {
    let home = TemporaryFolder(prefix: "toolhost-sandbox-home")
    for line in ["#!/usr/bin/env -S -u \(home.path)/. python3", "#!\(home.path)/.", "#!/usr/bin/env \(home.path)/."] {
      let script = home.write("plugin/run", line + "\n", executable: true)
      let paths = PluginSandbox.runtimePaths(executable: script, arguments: [], searchPath: "/usr/bin", home: home.path)
      #expect(!paths.contains { home.path.hasPrefix($0) || $0 == "/" || $0.hasSuffix("/.") }, "\(line): \(paths)")
    }
    // A program right in the home folder is read alone.
    let loose = home.write("tool", "#!/bin/sh\n", executable: true)
    #expect(PluginSandbox.installation(of: loose, home: home.path) == [loose])
  }

  @Test func aConfinedPluginReadsItsFolderAndWritesItsTemporaryFolder() throws {
    let m = try manifest(#"{"read": ["~/notes"], "write": ["~/out/", "log.txt"]}"#)
    let environment = ["HOME": "/home/u", "TMPDIR": "/var/tmp", "PATH": "/usr/bin:/bin"]
    let confinement = PluginConfinement.of(
      m, executable: "/srv/plugins/p/run", hostEnvironment: environment, support: Self.withLandlock)
    guard case .confined(let c, let temporary, let folders) = confinement else {
      Issue.record("not confined: \(confinement)")
      return
    }
    #expect(temporary.hasPrefix("/var/tmp/toolhost-\(getuid())/p-"), "\(temporary)")
    #expect(c.network == .none)
    #expect(c.readable == ["/srv/plugins/p", "/home/u/notes"])
    #expect(c.writable == [temporary, "/home/u/out", "/srv/plugins/p/log.txt"])
    #expect(folders == ["/home/u/out"])
    #expect(confinement.environment(["TMPDIR": "/tmp"])["TMPDIR"] == temporary)
    let reach = PluginConfinement.reach(
      of: m, executable: "/srv/plugins/p/run", hostEnvironment: environment, support: Self.withLandlock)
    #expect(
      reach == "confined: no network; reads its folder, the system, ~/notes; writes its temporary folder, ~/out, "
        + "/srv/plugins/p/log.txt")
  }

  /// A plugin may not write where it could widen its own confinement: its own manifest, or toolhost's configuration.
  @Test func aSandboxCannotLetAPluginWidenItself() throws {
    let environment = ["HOME": "/home/u", "PATH": "/usr/bin:/bin"]
    for (write, words) in [
      (#"["."]"#, "holds its own manifest"), (#"["../"]"#, "holds its own manifest"),
      (#"["~"]"#, "toolhost's configuration"), (#"["~/.config/toolhost/plugins/"]"#, "toolhost's configuration"),
    ] {
      let m = try manifest(#"{"write": \#(write)}"#)
      let confinement = PluginConfinement.of(
        m, executable: "/srv/plugins/p/run", hostEnvironment: environment, support: Self.withLandlock)
      guard case .refused(let reason) = confinement else {
        Issue.record("\(write): not refused: \(confinement)")
        continue
      }
      #expect(reason.contains(words), "\(write): \(reason)")
    }
    let data = try manifest(#"{"write": ["data/", "~/.local/share/p/"]}"#)
    let allowed = PluginConfinement.of(
      data, executable: "/srv/plugins/p/run", hostEnvironment: environment, support: Self.withLandlock)
    guard case .confined = allowed else {
      Issue.record("a data folder was refused: \(allowed)")
      return
    }
  }

  @Test func whereTheKernelCannotConfineItDoesNotRunUnlessAllowed() throws {
    var m = try manifest(nil)
    let environment = ["HOME": "/home/u"]
    let refused = PluginConfinement.of(
      m, executable: "/srv/plugins/p/run", hostEnvironment: environment, support: Self.withoutLandlock)
    guard case .refused(let reason) = refused else {
      Issue.record("not refused: \(refused)")
      return
    }
    #expect(reason.hasPrefix("this kernel has no Landlock. It is not run unconfined"), "\(reason)")
    #expect(reason.contains("\"allowUnconfined\": true") && reason.contains("\"sandbox\": \"none\""), "\(reason)")
    #expect(throws: ToolFailure.self) { try refused.prepare(executable: "/srv/plugins/p/run") }
    m.unconfinedRunsAllowed = true
    #expect(
      PluginConfinement.of(m, executable: "/x", hostEnvironment: environment, support: Self.withoutLandlock)
        == .unconfined)
    let none = try manifest(#""none""#)
    #expect(
      PluginConfinement.of(none, executable: "/x", hostEnvironment: environment, support: Self.withoutLandlock)
        == .unconfined)
    #expect(
      PluginConfinement.reach(of: none, executable: "/x", hostEnvironment: environment).hasPrefix(
        "unconfined (\"sandbox\": \"none\")"))
  }

  @Test func theUserMayAllowUnconfinedRuns() throws {
    let allowed = try UserConfiguration.parse(["allowUnconfined": true], path: "config.json")
    #expect(allowed.allowUnconfined)
    #expect(try UserConfiguration.parse([:], path: "config.json").allowUnconfined == false)
    #expect(throws: ConfigurationError.self) {
      try UserConfiguration.parse(["allowUnconfined": "yes"], path: "config.json")
    }
  }

  /// A plugin called through its tool runs confined: it cannot read a file its manifest does not declare, and
  /// writes its own temporary folder.
  @Test func aToolCallRunsConfined() async throws {
    try #require(ConfinementSupport.current.landlockABI != nil, "this kernel has no Landlock")
    let outside = TemporaryFolder(prefix: "toolhost-sandbox-outside")
    let secret = outside.write("secret", "s3cret")
    let plugins = TemporaryFolder(prefix: "toolhost-sandbox-plugins")
    plugins.shTool(
      "peek",
      body: "cat >/dev/null; if cat '\(secret)' >/dev/null 2>&1; then r=read; else r=refused; fi; "
        + "echo x > \"$TMPDIR/scratch\" && w=wrote; printf '{\"result\": \"%s %s\"}' \"$r\" \"$w\"")
    // A plugin that fails on what it was refused is told where to declare it.
    plugins.shTool("steal", body: "cat >/dev/null; exec cat '\(secret)'")
    let catalog = await PluginCatalog.discover(
      folders: [plugins.path], environment: ProcessInfo.processInfo.environment)
    let output = try await catalog.registry().call("peek", arguments: [:])
    #expect(output.value == "refused wrote")
    do {
      _ = try await catalog.registry().call("steal", arguments: [:])
      Issue.record("the secret was read")
    } catch {
      #expect("\(error)".contains("Permission denied"), "\(error)")
      #expect("\(error)".contains("reaches only what its manifest's \"sandbox\" declares"), "\(error)")
    }
  }
}
