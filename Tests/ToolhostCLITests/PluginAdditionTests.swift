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
}
