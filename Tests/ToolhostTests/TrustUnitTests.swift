import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

@Suite("Terminal-safe text")
struct TerminalTextTests {
  @Test func controlCharactersBecomeVisible() {
    #expect(TerminalText.visible("plain text\nwith a\ttab, ünïcödé") == "plain text\nwith a\ttab, ünïcödé")
    #expect(TerminalText.visible("\u{1B}]0;pwned\u{07}") == "^[]0;pwned^G")
    #expect(TerminalText.visible("\u{1B}[2J\r\u{7F}") == "^[[2J^M^?")
    #expect(TerminalText.visible("a\u{9B}31mb") == "a<U+009B>31mb")
    #expect(TerminalText.visible("rm \u{202E}txt.exe") == "rm <U+202E>txt.exe")
    #expect(TerminalText.visible("\u{2066}x\u{2069}\u{200F}") == "<U+2066>x<U+2069><U+200F>")
    #expect(TerminalText.visible("\u{0}") == "^@")
  }
}

@Suite("Approvals and the user's configuration")
struct ApprovalTests {
  struct Fake: ExternalTool {
    var name: String
    var pluginName = "todo"
    var source = ToolSource(location: "/p/todo")
    var annotationsAreTrusted = true
    var annotations = ToolAnnotations()
    var description: String { "fake" }
    var parameters: JSONValue { ["type": "object"] }
    func call(arguments: JSONValue) async throws -> String { "" }
  }

  func config(_ json: String) throws -> UserConfiguration {
    try UserConfiguration.parse(JSONValue.parse(json), path: "/c/config.json")
  }

  /// What is wrong with the configuration `json`, or `nil` when it reads.
  func problem(_ json: String) -> String? {
    do {
      _ = try config(json)
      return nil
    } catch {
      return (error as? ConfigurationError)?.message
    }
  }

  @Test func globs() {
    #expect(glob("todo*", matches: "todoAdd"))
    #expect(glob("*", matches: ""))
    #expect(glob("t?do", matches: "todo"))
    #expect(!glob("t?do", matches: "tdo"))
    #expect(glob("*Remove", matches: "todoRemove"))
    #expect(!glob("todo", matches: "todoAdd"))
    #expect(glob("a*b*c", matches: "aXbYbZc"))
  }

  @Test func defaultsFollowTrustedAnnotationsOnly() throws {
    let none = try config("{}")
    #expect(none.approval(for: Fake(name: "x")).mode == .ask)
    #expect(none.approval(for: Fake(name: "x", annotations: ToolAnnotations(readOnlyHint: true))).mode == .auto)
    #expect(none.approval(for: Fake(name: "x", annotations: ToolAnnotations(destructiveHint: false))).mode == .auto)
    #expect(none.approval(for: Fake(name: "x", annotations: ToolAnnotations(destructiveHint: true))).mode == .ask)
    let server = Fake(name: "x", annotationsAreTrusted: false, annotations: ToolAnnotations(readOnlyHint: true))
    let decision = none.approval(for: server)
    #expect(decision.mode == .ask)
    #expect(decision.reason.contains("MCP server"))
  }

  @Test func rulesExactThenLongestGlobThenPlugin() throws {
    let c = try config(
      #"{"approvals": {"tools": {"todo*": "deny", "todoA*": "ask", "todoAdd": "auto", "*": "ask"},"#
        + #" "plugins": {"weath*": "auto"}}}"#)
    #expect(c.approval(for: Fake(name: "todoAdd")).mode == .auto)
    #expect(c.approval(for: Fake(name: "todoAll")).mode == .ask)
    #expect(c.approval(for: Fake(name: "todoRemove")).mode == .deny)
    #expect(c.approval(for: Fake(name: "todoRemove")).reason.contains("\"todo*\" in /c/config.json"))
    // A tool rule, even "*", comes before a plugin rule.
    #expect(c.approval(for: Fake(name: "getWeather", pluginName: "weather")).mode == .ask)
    // Of equally long globs the strictest wins, whatever the order of the file.
    let tie = try config(#"{"approvals": {"tools": {"get*": "auto", "*ete": "deny"}}}"#)
    #expect(tie.approval(for: Fake(name: "getDelete")).mode == .deny)
    let p = try config(#"{"approvals": {"plugins": {"weath*": "auto"}}}"#)
    #expect(p.approval(for: Fake(name: "getWeather", pluginName: "weather")).mode == .auto)
    #expect(p.approval(for: Fake(name: "getWeather", pluginName: "weather")).isUserRule)
  }

  @Test func rememberedAnswersMatchTheirSourceOnly() throws {
    let c = try config(
      #"{"approvals": {"remembered": [{"tool": "cleanup", "from": "/p/cleaner", "mode": "auto"},"#
        + #" {"tool": "build", "from": "/src/app/plugins/make", "manifestSHA256": "aa", "mode": "auto"}]}}"#)
    let mine = Fake(name: "cleanup", source: ToolSource(location: "/p/cleaner"))
    #expect(c.approval(for: mine).mode == .auto)
    #expect(c.approval(for: mine).reason.contains("answered \"always\" for cleanup from /p/cleaner"))
    // The same name from another plugin folder or server is not covered.
    #expect(c.approval(for: Fake(name: "cleanup", source: ToolSource(location: "/p/other"))).mode == .ask)
    #expect(c.approval(for: Fake(name: "cleanup", source: ToolSource(location: "https://x.example/mcp"))).mode == .ask)
    // A project folder's answer holds for the manifest it was given for.
    let pinned = ToolSource(location: "/src/app/plugins/make", manifestDigest: "aa")
    #expect(c.approval(for: Fake(name: "build", source: pinned)).mode == .auto)
    var changed = pinned
    changed.manifestDigest = "bb"
    #expect(c.approval(for: Fake(name: "build", source: changed)).mode == .ask)
    // A rule of the user's that denies wins over a remembered answer.
    let denied = try config(
      #"{"approvals": {"tools": {"clean*": "deny"}, "remembered": [{"tool": "cleanup", "from": "/p/cleaner", "mode": "auto"}]}}"#
    )
    #expect(denied.approval(for: mine).mode == .deny)
  }

  @Test func pluginRulesNameTheFolderNotTheServer() throws {
    // An MCP manifest in a folder "evil" whose server calls itself "time".
    let manifest = try PluginManifest.parse(
      Array(#"{"manifestVersion": 1, "mcp": {"name": "time", "command": "/bin/true"}}"#.utf8),
      path: "/p/evil/toolhost.json")
    #expect(manifest.name == "time")
    #expect(manifest.folderName == "evil")
    #expect(manifest.location == "/p/evil")
    let single = try PluginManifest.parse(
      Array(
        #"{"manifestVersion": 1, "command": "run", "tools": [{"name": "hi", "description": "d", "inputSchema": {"type": "object"}}]}"#
          .utf8), path: "/p/hello.toolhost.json")
    #expect(single.folderName == "hello" && single.location == "/p/hello.toolhost.json")
    let c = try config(#"{"approvals": {"plugins": {"time": "auto", "/p/ev*": "deny"}}}"#)
    #expect(c.mode(forTool: "get_time", plugin: manifest.folderName, pluginLocation: manifest.location)?.mode == .deny)
    #expect(c.mode(forTool: "get_time", plugin: "time", pluginLocation: "/q/time")?.mode == .auto)
  }

  @Test func rememberedRulesThatAreWrongSaySo() {
    #expect(problem(#"{"approvals": {"remembered": {}}}"#)?.contains("must be a list") == true)
    #expect(problem(#"{"approvals": {"remembered": [{"tool": "x"}]}}"#)?.contains("remembered[0] must be") == true)
    #expect(
      problem(#"{"approvals": {"remembered": [{"tool": "x", "from": "/p", "mode": "yes"}]}}"#)?.contains("mode must be")
        == true)
    #expect(
      problem(#"{"approvals": {"remembered": [{"tool": "x", "from": "/p", "mode": "auto", "by": 1}]}}"#)?.contains(
        "unknown key") == true)
  }

  @Test func aRemoteServersTokenIsAlwaysASecretToApprove() throws {
    let manifest = try PluginManifest.parse(
      Array(#"{"manifestVersion": 1, "mcp": {"url": "https://tools.example/mcp", "bearerTokenEnv": "MY_VAR"}}"#.utf8),
      path: "/p/remote/toolhost.json")
    #expect(manifest.requestedVariables == ["MY_VAR"])
    #expect(try config("{}").unapprovedSecrets(of: manifest) == ["MY_VAR"])
    #expect(try config(#"{"environment": {"remote": ["MY_VAR"]}}"#).unapprovedSecrets(of: manifest).isEmpty)
    let notes = PluginCatalog.secretEnvironmentNotes(manifest, trust: DiscoveryTrust())
    #expect(notes.count == 1)
    #expect(notes.first?.message.contains("sends the value of MY_VAR to https://tools.example/mcp") == true, "\(notes)")
  }

  @Test func aRelativeConfigHomeIsIgnored() {
    #expect(UserConfiguration.folder(environment: ["XDG_CONFIG_HOME": "cfg", "HOME": "/h"]) == "/h/.config/toolhost")
    #expect(UserConfiguration.folder(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/toolhost")
  }

  @Test func badConfigurationsSayWhatIsWrong() {
    #expect(
      problem(#"{"approvals": {"tools": {"x": "sometimes"}}}"#)?.contains("\"auto\", \"ask\" or \"deny\"") == true)
    #expect(problem(#"{"aprovals": {}}"#)?.contains("unknown key \"aprovals\"") == true)
    #expect(problem(#"{"strictModes": "no"}"#)?.contains("true or false") == true)
    #expect(problem(#"{"history": "off"}"#) == "\"history\" must be true or false")
    #expect(problem(#"{"environment": {"weather": "KEY"}}"#)?.contains("list of variable names") == true)
    #expect(problem("[]")?.contains("one JSON object") == true)
  }

  @Test func historyIsOnUnlessTurnedOff() throws {
    #expect(try config("{}").history)
    #expect(try !config(#"{"history": false}"#).history)
  }

  @Test func approvedEnvironmentBySecretName() throws {
    let c = try config(#"{"environment": {"weather": ["OPENWEATHER_API_KEY"], "*": ["GITHUB_TOKEN"]}}"#)
    #expect(c.approvedEnvironment(plugin: "weather") == ["OPENWEATHER_API_KEY", "GITHUB_TOKEN"])
    #expect(c.approvedEnvironment(plugin: "todo") == ["GITHUB_TOKEN"])
    for name in ["OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SSH_AUTH_SOCK", "aws_secret"] {
      #expect(SecretNames.looksSecret(name), "\(name)")
    }
    for name in ["OPENAI_APIKEY", "DB_PASS", "KEY"] { #expect(SecretNames.looksSecret(name), "\(name)") }
    for name in ["LANG", "WEATHER_UNITS", "KEYBOARD_LAYOUT", "TOKENIZERS_PARALLELISM", "MONKEY", "BYPASS"] {
      #expect(!SecretNames.looksSecret(name), "\(name)")
    }
  }
}

@Suite("Trust store and file safety")
struct TrustStoreTests {
  let folder = TemporaryFolder.uniquePath(prefix: "toolhost-trust")

  init() throws {
    try FileManager.default.createDirectory(atPath: folder + "/plugins/a", withIntermediateDirectories: true)
    try Data("{\"manifestVersion\": 1}".utf8).write(to: URL(fileURLWithPath: folder + "/plugins/a/toolhost.json"))
  }

  func mode(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? NSNumber)?.intValue ?? -1
  }

  @Test func verdictsAndChanges() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let plugins = folder + "/plugins"
    let manifest = plugins + "/a/toolhost.json"
    var store = TrustStore(path: folder + "/config/toolhost/trust.json")
    let bytes = Array("{\"manifestVersion\": 1}".utf8)
    #expect(store.verdict(manifest: manifest, bytes: bytes, folder: plugins) == .untrusted)
    let (record, unreadable) = store.trust(folder: plugins)
    #expect(unreadable.isEmpty)
    #expect(record.manifests["a/toolhost.json"] == TrustStore.digest(bytes))
    #expect(store.verdict(manifest: manifest, bytes: bytes, folder: plugins) == .trusted)
    #expect(store.verdict(manifest: manifest, bytes: bytes + [32], folder: plugins) == .changed)
    #expect(store.verdict(manifest: plugins + "/b.toolhost.json", bytes: bytes, folder: plugins) == .added)
    try store.save()
    #expect(mode(store.path) == 0o600)
    let reread = try TrustStore.load(environment: ["XDG_CONFIG_HOME": folder + "/config"])
    #expect(reread.record(for: plugins) == record)
    try Data("{}".utf8).write(to: URL(fileURLWithPath: manifest))
    #expect(reread.changes(of: record)?.changed == ["a/toolhost.json"])
    let revoked = store.revoke(folder: plugins)
    let again = store.revoke(folder: plugins)
    #expect(revoked && !again)
    // The SHA-256 of "abc" (FIPS 180-2).
    #expect(
      TrustStore.digest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  }

  @Test func secretFilesAre0600AndKeepTheirMode() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/secret.jsonl"
    try FileSafety.writeSecretFile(path, Array("one".utf8))
    #expect(mode(path) == 0o600)
    chmod(path, 0o640)
    try FileSafety.writeSecretFile(path, Array("two".utf8))
    #expect(mode(path) == 0o640)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "two")
    // No temporary file is left beside it.
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tmp") }.isEmpty)
  }

  @Test func onlySmallRegularFilesAreRead() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(throws: FileSafety.ReadProblem.self) { try FileSafety.readRegularFile("/dev/zero", user: nil) }
    let fifo = folder + "/fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect { try FileSafety.readRegularFile(fifo, user: nil) } throws: { error in
      (error as? FileSafety.ReadProblem)?.description.contains("FIFO") == true
    }
    let big = folder + "/big"
    try Data(count: (1 << 20) + 1).write(to: URL(fileURLWithPath: big))
    #expect { try FileSafety.readRegularFile(big, user: nil) } throws: { error in
      (error as? FileSafety.ReadProblem)?.description.contains("1 MiB") == true
    }
    let manifest = folder + "/plugins/a/toolhost.json"
    chmod(manifest, 0o666)
    #expect { try FileSafety.readRegularFile(manifest, user: getuid()) } throws: { error in
      let problem = error as? FileSafety.ReadProblem
      return problem?.isOwnership == true && problem?.description.contains("chmod go-w") == true
    }
    chmod(manifest, 0o644)
    #expect(try FileSafety.readRegularFile(manifest, user: getuid()).count > 0)
  }

  @Test func aProgramIsCheckedWhereItReallyIs() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let shared = folder + "/shared"
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    FileManager.default.createFile(atPath: shared + "/tool", contents: Data("#!/bin/sh\n".utf8))
    chmod(shared + "/tool", 0o755)
    try FileManager.default.createSymbolicLink(atPath: folder + "/plugins/a/run", withDestinationPath: shared + "/tool")
    #expect(FileSafety.programProblem(folder + "/plugins/a/run") == nil)
    chmod(shared, 0o777)  // anyone could swap the file the link points to
    #expect(
      FileSafety.programProblem(folder + "/plugins/a/run")?.contains("\(shared) is writable by every user") == true)
    #expect(FileSafety.programProblem("/bin/sh") == nil)
  }

  @Test func foldersAboveAreCheckedButStickyOnesPass() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(FileSafety.folderProblem(folder + "/plugins") == nil)  // /tmp is 1777: sticky
    chmod(folder, 0o777)
    #expect(FileSafety.folderProblem(folder + "/plugins")?.contains("writable by every user") == true)
    chmod(folder, 0o1777)
    #expect(FileSafety.folderProblem(folder + "/plugins") == nil)
    chmod(folder + "/plugins", 0o1777)  // the plugin folder itself may not be world-writable, sticky or not
    #expect(FileSafety.folderProblem(folder + "/plugins") != nil)
    chmod(folder, 0o755)
  }
}
