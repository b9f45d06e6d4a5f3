import Foundation
import Testing
import ToolhostCommandLine
import ToolhostCore
import ToolhostTestSupport

/// `toolhost plugins add`: a plugin folder copied or linked into `$XDG_CONFIG_HOME/toolhost/plugins`.
@Suite struct PluginAdditionTests {
  private let manifest = """
    {"manifestVersion": 1, "command": "./run", "tools": [{"name": "hello", "description": "Says hello.",
     "inputSchema": {"type": "object", "properties": {}}}]}
    """

  /// A plugin `greeter` in `home`, and its addition to `home`'s own plugin folder.
  private func greeter(in home: TemporaryFolder) throws -> (source: String, addition: PluginAddition) {
    let source = home.plugin("greeter", manifest: manifest, script: "#!/bin/sh\necho '{\"result\": \"hi\"}'\n")
    let addition = try PluginAddition.prepare(
      source: source, configuration: UserConfiguration(path: ""), environment: userEnvironment(of: home))
    return (source, addition)
  }

  /// The user environment of `home`.
  private func userEnvironment(of home: TemporaryFolder) -> [String: String] {
    ["HOME": home.path, "XDG_CONFIG_HOME": home.file("config")]
  }

  @Test func copiesAFolderAndShowsWhatItRuns() throws {
    let home = TemporaryFolder(prefix: "toolhost-plugins-add")
    let (source, addition) = try greeter(in: home)
    let environment = userEnvironment(of: home)
    #expect(addition.destination == home.file("config/toolhost/plugins/greeter"))
    #expect(addition.summary.contains { $0.hasPrefix("runs: ") && $0.contains("greeter/run") }, "\(addition.summary)")
    #expect(addition.summary.contains { $0.hasPrefix("tool hello: ") }, "\(addition.summary)")
    try addition.perform(link: false)
    #expect(FileManager.default.isExecutableFile(atPath: addition.destination + "/run"))
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: addition.destination)) == nil)
    #expect(PluginAddition.userFolder(environment: environment) == home.file("config/toolhost/plugins"))

    // The same name again is refused, whatever is there.
    #expect {
      try PluginAddition.prepare(source: source, configuration: UserConfiguration(path: ""), environment: environment)
    } throws: { error in
      "\(error)".contains("already exists")
    }
  }

  @Test func linksAFolder() throws {
    let home = TemporaryFolder(prefix: "toolhost-plugins-add")
    let (source, addition) = try greeter(in: home)
    try addition.perform(link: true)
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: addition.destination) == source)
  }

  @Test func refusesFoldersThatAreNotPluginsOrThatOthersCouldChange() throws {
    let home = TemporaryFolder(prefix: "toolhost-plugins-add")
    let environment = userEnvironment(of: home)
    let configuration = UserConfiguration(path: "")
    home.write("empty/README", "no manifest")
    #expect {
      try PluginAddition.prepare(source: home.file("empty"), configuration: configuration, environment: environment)
    } throws: { error in
      "\(error)".contains("has no toolhost.json")
    }
    #expect {
      try PluginAddition.prepare(source: home.file("missing"), configuration: configuration, environment: environment)
    } throws: { error in
      "\(error)".contains("there is no folder")
    }
    let open = home.plugin("open", manifest: manifest, script: "#!/bin/sh\n")
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open)
    #expect {
      try PluginAddition.prepare(source: open, configuration: configuration, environment: environment)
    } throws: { error in
      "\(error)".contains("is writable by every user")
    }
    #expect(!FileManager.default.fileExists(atPath: home.file("config/toolhost/plugins")))
  }

  /// `toolhost plugins add` as a user runs it, in `home` (its config folder `config` there), stopped after 20 s: a run that
  /// had to be stopped fails the test instead of hanging the suite.
  private func add(_ arguments: [String], home: TemporaryFolder, config: String = "config") async throws
    -> Subprocess.Output
  {
    var environment = Subprocess.cleanEnvironment(home: home.path)
    environment["XDG_CONFIG_HOME"] = home.file(config)
    return try await ToolhostProcess.finish(
      ["plugins", "add"] + arguments, environment: environment, in: home.url, timeout: 20)
  }

  /// A FIFO in the folder is refused at once, naming it, rather than copied (which read it and waited for ever);
  /// a link reads nothing in the folder, so it is made.
  @Test func aFIFOInTheFolderIsRefusedWithoutWaitingOnIt() async throws {
    let home = TemporaryFolder(prefix: "toolhost-plugins-add")
    let source = home.plugin("piped", manifest: manifest, script: "#!/bin/sh\n")
    try home.folder("piped/data")
    #expect(mkfifo(home.file("piped/data/pipe"), 0o600) == 0)
    let copy = try await add([source], home: home)
    #expect(copy.status == 64, "\(copy.allText)")
    #expect(copy.stderrText.contains("\(source)/data/pipe is a FIFO"), "\(copy.stderrText)")
    let folder = home.file("config/toolhost/plugins")
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).isEmpty)

    let link = try await add(["--link", source], home: home)
    #expect(link.status == 0, "\(link.allText)")
  }

  /// A link to a folder inside a git work tree says that what a later `git pull` brings runs unpinned; a copy, and
  /// a link to a folder in no work tree, say nothing of it.
  @Test func aLinkIntoAGitWorkTreeSaysLaterChangesRunUnpinned() async throws {
    let home = TemporaryFolder(prefix: "toolhost-plugins-add")
    try home.folder("checkout/.git")
    let inTree = home.plugin("checkout/plugins/greeter", manifest: manifest, script: "#!/bin/sh\n")
    let linked = try await add(["--link", inTree], home: home)
    #expect(linked.status == 0, "\(linked.allText)")
    #expect(
      linked.stderrText.contains("inside the git work tree \(home.file("checkout"))"), "\(linked.stderrText)")
    #expect(linked.stderrText.contains("git pull"), "\(linked.stderrText)")
    #expect(linked.stderrText.contains("unpinned"), "\(linked.stderrText)")

    let copied = try await add([inTree], home: home, config: "other-config")
    #expect(copied.status == 0, "\(copied.allText)")
    #expect(!copied.stderrText.contains("git"), "\(copied.stderrText)")

    let outside = home.plugin("loose", manifest: manifest, script: "#!/bin/sh\n")
    let plain = try await add(["--link", outside], home: home)
    #expect(plain.status == 0, "\(plain.allText)")
    #expect(!plain.stderrText.contains("git"), "\(plain.stderrText)")
  }
}
