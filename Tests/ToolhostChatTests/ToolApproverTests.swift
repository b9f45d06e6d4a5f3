import Foundation
import Synchronization
import Testing
import ToolhostChat
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

@Suite("Tool approver")
struct ToolApproverTests {
  let folder = TemporaryFolder.uniquePath(prefix: "toolhost-approver")

  func call(_ name: String) -> Transcript.ToolCall {
    Transcript.ToolCall(id: "c1", toolName: name, arguments: [:])
  }

  @Test func alwaysIsRememberedInAPrivateConfigFile() async throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/toolhost/config.json"
    let asked = Mutex(0)
    let approver = ToolApprover(
      configuration: UserConfiguration(path: path),
      ask: { _, _, decision in
        asked.withLock { $0 += 1 }
        #expect(decision.mode == .ask)
        return .always
      })
    let wipe = WipeTool(calls: CallCounter())
    #expect(await approver.decide(call("wipe"), tool: wipe) == .allow)
    #expect(await approver.decide(call("wipe"), tool: wipe) == .allow)
    #expect(asked.withLock { $0 } == 1)  // the second call was allowed by the remembered rule
    let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    #expect(mode == 0o600)
    let saved = try JSONValue.parse(String(contentsOfFile: path, encoding: .utf8))
    // Bound to where the tool comes from (this program), not a rule for every tool named wipe.
    #expect(saved["approvals"]?["tools"] == nil, "\(saved)")
    #expect(saved["approvals"]?["remembered"] == [["tool": "wipe", "from": "in-process", "mode": "auto"]], "\(saved)")
    // A new run reads it back.
    let reread = try UserConfiguration.load(environment: ["XDG_CONFIG_HOME": folder])
    #expect(reread.approval(for: wipe).mode == .auto)
  }

  @Test func noAndDenyAndYes() async throws {
    var rules = UserConfiguration(path: folder + "/config.json")
    rules.toolRules = [.init(pattern: "wipe", value: .deny)]
    let wipe = WipeTool(calls: CallCounter())
    let yes = ToolApprover(configuration: rules, assumeYes: true, ask: nil)
    guard case .refuse(let reason) = await yes.decide(call("wipe"), tool: wipe) else {
      Issue.record("--yes let a denied tool run")
      return
    }
    #expect(reason == "the user does not allow wipe to run")
    let declined = ToolApprover(configuration: UserConfiguration(path: ""), ask: { _, _, _ in .no })
    #expect(await declined.decide(call("wipe"), tool: wipe) == .refuse(reason: "the user declined to run wipe"))
    let unattended = ToolApprover(configuration: UserConfiguration(path: ""), assumeYes: true, ask: nil)
    #expect(await unattended.decide(call("wipe"), tool: wipe) == .allow)
  }

  /// A plugin's or server's tool as approvals see it: a name and where it comes from.
  struct SourcedTool: ExternalTool {
    var name = "cleanup"
    var location: String
    var digest: String? = nil
    var pluginName: String { (location as NSString).lastPathComponent }
    var source: ToolSource { ToolSource(location: location, manifestDigest: digest) }
    var annotationsAreTrusted: Bool { true }
    var description: String { "Removes things." }
    var parameters: JSONValue { ["type": "object"] }
    func call(arguments: JSONValue) async throws -> String { "done" }
  }

  @Test func alwaysIsBoundToWhereTheToolComesFrom() async throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let asked = Mutex<[String]>([])
    let approver = ToolApprover(
      configuration: UserConfiguration(path: folder + "/config.json"),
      ask: { _, tool, _ in
        asked.withLock { $0.append((tool as! SourcedTool).location) }
        return .always
      })
    let mine = SourcedTool(location: "/home/me/plugins/cleaner")
    let theirs = SourcedTool(location: "/srv/other-server")
    #expect(await approver.decide(call("cleanup"), tool: mine) == .allow)
    #expect(await approver.decide(call("cleanup"), tool: mine) == .allow)
    #expect(asked.withLock { $0 } == ["/home/me/plugins/cleaner"])
    // The same name from elsewhere asks: the answer was for the first one only.
    #expect(await approver.decide(call("cleanup"), tool: theirs) == .allow)
    #expect(asked.withLock { $0 } == ["/home/me/plugins/cleaner", "/srv/other-server"])

    // A project's plugin is remembered with its manifest: a changed manifest asks again.
    let project = SourcedTool(location: "/src/app/plugins/cleaner", digest: "aa")
    #expect(await approver.decide(call("cleanup"), tool: project) == .allow)
    let changed = SourcedTool(location: "/src/app/plugins/cleaner", digest: "bb")
    #expect(approver.rules.approval(for: project).mode == .auto)
    #expect(approver.rules.approval(for: changed).mode == .ask)
  }

  @Test func withNoOneToAskTheModelIsToldOnlyThatTheUserDidNotApprove() async throws {
    let notes = Mutex<[String]>([])
    let approver = ToolApprover(
      configuration: UserConfiguration(path: "/home/me/.config/toolhost/config.json"), ask: nil,
      onNote: { note in notes.withLock { $0.append(note) } }, unattendedHint: "allow it with --yes")
    let wipe = WipeTool(calls: CallCounter())
    let first = await approver.decide(call("wipe"), tool: wipe)
    #expect(first == .refuse(reason: "the user has not approved running wipe"))
    #expect(await approver.decide(call("wipe"), tool: wipe) == first)
    // The user is told how to allow it, once.
    let told = notes.withLock { $0 }
    #expect(told.count == 1, "\(told)")
    #expect(told.first?.contains("allow it with --yes") == true, "\(told)")
    #expect(told.first?.contains("/home/me/.config/toolhost/config.json") == true, "\(told)")
  }
}
