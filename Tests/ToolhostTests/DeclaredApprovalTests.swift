import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

/// What runs nothing: the tools of these tests are judged, never called.
private struct UnusedBackend: PluginToolBackend {
  func call(_ tool: PluginTool, arguments: JSONValue, context: ToolCallContext) async throws -> ToolOutput {
    throw ToolFailure.refused(reason: "not run by this test")
  }
  func shutdown() async {}
}

/// An MCP loader that starts nothing: every server lists `names`, each tool claiming to be read-only.
private struct ListingLoader: PluginServerLoader {
  let names: [String]

  func loadTools(_ servers: [PluginServer]) async -> [Result<PluginServerTools, PluginServerLoadError>] {
    servers.map { server in
      do {
        let tools = try names.map { try DeclaredApprovalTests.serverTool($0, manifest: server.manifest) }
        return .success(PluginServerTools(tools: tools))
      } catch {
        return .failure(PluginServerLoadError(message: "\(error)"))
      }
    }
  }
}

/// A trusted MCP server manifest's `mcp.approvals`, and the user's rules over it (issue 30).
@Suite("Approvals a trusted manifest declares")
struct DeclaredApprovalTests {
  /// The time server's manifest in folder `time-mcp`, declaring `approvals` (a JSON object's text).
  static func manifest(approvals: String, trusted: Bool = true) throws -> PluginManifest {
    var manifest = try PluginManifest.parse(
      Array(
        #"{"manifestVersion": 1, "mcp": {"name": "time", "command": "/bin/cat", "approvals": \#(approvals)}}"#.utf8),
      path: "/p/time-mcp/toolhost.json")
    manifest.isTrusted = trusted
    return manifest
  }

  /// A tool `name` of the manifest's server, which says of itself that it is read-only.
  static func serverTool(_ name: String, manifest: PluginManifest) throws(SchemaError) -> PluginTool {
    try PluginTool(
      definition: ToolDefinition(
        name: name, description: "d", inputSchema: ["type": "object"],
        annotations: ToolAnnotations(readOnlyHint: true, destructiveHint: false)),
      manifest: manifest, endpoint: .command(executable: "/bin/cat"), backend: UnusedBackend())
  }

  static let declared = #"{"get_current_time": "auto", "convert_time": "auto"}"#

  func config(_ json: String = "{}") throws -> UserConfiguration {
    try UserConfiguration.parse(JSONValue.parse(json), path: "/c/config.json")
  }

  func tool(_ name: String = "get_current_time", approvals: String = declared, trusted: Bool = true) throws
    -> PluginTool
  {
    try Self.serverTool(name, manifest: Self.manifest(approvals: approvals, trusted: trusted))
  }

  @Test func aTrustedManifestsDeclarationIsTheDefault() throws {
    let decision = try config().approval(for: tool())
    #expect(decision.mode == .auto)
    #expect(
      decision.reason
        == #"declared by the trusted manifest /p/time-mcp/toolhost.json, mcp.approvals "get_current_time""#)
    #expect(!decision.isUserRule)
    // ask and deny are declared the same way.
    #expect(try config().approval(for: tool(approvals: #"{"get_current_time": "deny"}"#)).mode == .deny)
    #expect(try config().approval(for: tool(approvals: #"{"get_current_time": "ask"}"#)).mode == .ask)
  }

  @Test func theUsersDenyWins() throws {
    for rules in [
      #"{"approvals": {"tools": {"get_current_time": "deny"}}}"#, #"{"approvals": {"tools": {"get_*": "deny"}}}"#,
      #"{"approvals": {"tools": {"*": "deny"}}}"#, #"{"approvals": {"plugins": {"time-mcp": "deny"}}}"#,
      #"{"approvals": {"plugins": {"/p/*": "deny"}}}"#,
      // A deny rule also wins over an "always" the user gave.
      #"{"approvals": {"tools": {"get_current_time": "deny"}, "remembered": [{"tool": "get_current_time", "from": "/p/time-mcp", "mode": "auto"}]}}"#,
    ] {
      let decision = try config(rules).approval(for: tool())
      #expect(decision.mode == .deny, "\(rules)")
      #expect(decision.isUserRule && decision.reason.contains("/c/config.json"), "\(rules): \(decision.reason)")
    }
  }

  @Test func theUsersAskWins() throws {
    for rules in [
      #"{"approvals": {"tools": {"get_current_time": "ask"}}}"#, #"{"approvals": {"tools": {"*": "ask"}}}"#,
      #"{"approvals": {"plugins": {"time-mcp": "ask"}}}"#,
    ] {
      let decision = try config(rules).approval(for: tool())
      #expect(decision.mode == .ask, "\(rules)")
      #expect(decision.isUserRule, "\(rules): \(decision.reason)")
    }
  }

  @Test func theUsersOwnAnswersWinTheOtherWayToo() throws {
    // The user's rules replace the declaration: a rule or an "always" of the user's runs what the manifest denies.
    let denied = #"{"get_current_time": "deny"}"#
    #expect(
      try config(#"{"approvals": {"tools": {"get_current_time": "auto"}}}"#).approval(for: tool(approvals: denied))
        .mode == .auto)
    let always = try config(
      #"{"approvals": {"remembered": [{"tool": "get_current_time", "from": "/p/time-mcp", "mode": "auto"}]}}"#)
    #expect(always.approval(for: try tool(approvals: denied)).mode == .auto)
  }

  @Test func anUntrustedManifestDeclaresNothing() throws {
    let untrusted = try tool(trusted: false)
    #expect(untrusted.declaredApproval == nil)
    let decision = try config().approval(for: untrusted)
    #expect(decision.mode == .ask)
    #expect(decision.reason.contains("whose hints toolhost does not trust"), "\(decision.reason)")
  }

  @Test func anUndeclaredToolGetsNothingUnlessTheManifestSaysStar() throws {
    // The server lists a tool the manifest does not name: it asks, whatever the server says of it.
    let other = try tool("set_time")
    #expect(other.annotations.readOnlyHint == true)
    #expect(try config().approval(for: other).mode == .ask)
    let star = try tool("set_time", approvals: #"{"get_current_time": "auto", "*": "deny"}"#)
    #expect(try config().approval(for: star).mode == .deny)
    #expect(try config().approval(for: star).reason.hasSuffix(#"mcp.approvals "*""#))
    // The tool's own entry comes before "*".
    let named = try tool(approvals: #"{"get_current_time": "auto", "*": "deny"}"#)
    #expect(try config().approval(for: named).mode == .auto)
  }

  @Test func aToolOfferedUnderAnotherNameKeepsItsDeclaration() throws {
    // Offered as time.get_current_time when another plugin has the name: the manifest names it as the server does.
    let renamed = try tool().renamed("time.get_current_time")
    #expect(renamed.listedName == "get_current_time")
    #expect(try config().approval(for: renamed).mode == .auto)
    // The user's rules know it by the name it is offered under.
    let rules = try config(#"{"approvals": {"tools": {"time.*": "deny"}}}"#)
    #expect(rules.approval(for: renamed).mode == .deny)
  }

  @Test func discoveryTrustsTheDeclarationsOfWhatTheUserChose() async throws {
    let home = TemporaryFolder(prefix: "toolhost-declared")
    home.write("own/time-mcp/toolhost.json", Self.manifestText)
    home.write("project/time-mcp/toolhost.json", Self.manifestText)
    let loader = ListingLoader(names: ["get_current_time", "set_time"])
    func approvals(_ folder: ToolhostPlugins.PluginFolder, trust: DiscoveryTrust) async -> [String: ApprovalMode] {
      let catalog = await PluginCatalog.discover(in: [folder], trust: trust, mcp: loader)
      return catalog.tools.reduce(into: [:]) { $0[$1.name] = trust.configuration.approval(for: $1).mode }
    }
    // A folder of the user's own.
    let own = ToolhostPlugins.PluginFolder(path: home.file("own"), origin: .explicit)
    #expect(await approvals(own, trust: DiscoveryTrust()) == ["get_current_time": .auto, "set_time": .ask])
    // A project folder the user pinned; its manifest as it was.
    let project = ToolhostPlugins.PluginFolder(path: home.file("project"), origin: .project)
    var store = TrustStore(path: "")
    store.trust(folder: project.path)
    let pinned = DiscoveryTrust(store: store)
    #expect(await approvals(project, trust: pinned) == ["get_current_time": .auto, "set_time": .ask])
    // Changed since: not loaded at all, so nothing it declares counts.
    home.write(
      "project/time-mcp/toolhost.json", Self.manifestText.replacingOccurrences(of: "\"ask\"", with: "\"auto\""))
    #expect(await approvals(project, trust: pinned).isEmpty)
    // The user's deny over the pinned declaration.
    let denying = DiscoveryTrust(
      store: store, configuration: try config(#"{"approvals": {"tools": {"get_current_time": "deny"}}}"#))
    #expect(await approvals(own, trust: denying) == ["get_current_time": .deny, "set_time": .ask])
  }

  /// A manifest declaring get_current_time `auto` and convert_time `ask`.
  static let manifestText =
    #"{"manifestVersion": 1, "mcp": {"name": "time", "command": "/bin/cat", "approvals": {"get_current_time": "auto", "convert_time": "ask"}}}"#

  /// The manifest error for `approvals`, or `nil` when it reads.
  func problem(_ approvals: String) -> ManifestError? {
    do {
      _ = try Self.manifest(approvals: approvals)
      return nil
    } catch {
      return error as? ManifestError
    }
  }

  @Test func aBadDeclarationSaysWhichFieldAndWhatItMayBe() throws {
    let value = try #require(problem(#"{"get_current_time": "yes"}"#))
    #expect(value.kind == .schemaViolation)
    #expect(
      value.message
        == #""mcp.approvals" gives "get_current_time" "yes": a tool's approval is "auto", "ask" or "deny""#,
      "\(value.message)")
    let notAnObject = try #require(problem(#""auto""#))
    #expect(notAnObject.message.hasPrefix(#""mcp.approvals" must be an object"#), "\(notAnObject.message)")
    #expect(notAnObject.message.contains(#""auto", "ask" or "deny""#), "\(notAnObject.message)")
    let name = try #require(problem(#"{"get time": "auto"}"#))
    #expect(name.message.contains(#"names "get time", which is not a tool name"#), "\(name.message)")
    #expect(problem(#"{"get_current_time": "auto", "*": "ask", "a.b-c_9": "deny"}"#) == nil)
    #expect(problem("{}") == nil)
    // The shipped schema says so too, for editors and other readers of schemas/manifest.schema.json.
    let bad = try JSONValue.parse(
      #"{"manifestVersion": 1, "mcp": {"command": "x", "approvals": {"get_current_time": "yes"}}}"#)
    #expect(PluginManifest.schema.validate(bad).contains { $0.instanceLocation == "/mcp/approvals/get_current_time" })
    let badName = try JSONValue.parse(#"{"manifestVersion": 1, "mcp": {"command": "x", "approvals": {"a b": "ask"}}}"#)
    #expect(!PluginManifest.schema.validate(badName).isEmpty)
  }

  @Test func aBadDeclarationIsADiscoveryDiagnostic() async throws {
    let home = TemporaryFolder(prefix: "toolhost-declared")
    home.write(
      "time-mcp/toolhost.json",
      #"{"manifestVersion": 1, "mcp": {"command": "/bin/cat", "approvals": {"convert_time": "always"}}}"#)
    let catalog = await PluginCatalog.discover(folders: [home.path], mcp: ListingLoader(names: ["convert_time"]))
    #expect(catalog.tools.isEmpty)
    let diagnostic = try #require(catalog.diagnostics.first)
    #expect(diagnostic.kind == .schemaViolation && diagnostic.isError)
    #expect(diagnostic.path == home.file("time-mcp/toolhost.json"))
    #expect(diagnostic.message.contains(#""mcp.approvals" gives "convert_time" "always""#), "\(diagnostic.message)")
  }

  @Test func theExampleTimeServerDeclaresItsTwoReadOnlyToolsAuto() throws {
    let shipped = try PluginManifest.load(path: TestPackage.plugins.path + "/time-mcp/toolhost.json")
    #expect(shipped.mcp?.approvals == ["get_current_time": .auto, "convert_time": .auto])
  }
}
