import Foundation
import Synchronization
import Testing
import Toolhost
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
    let wipe = WipeTool(calls: Counter())
    #expect(await approver.decide(call("wipe"), tool: wipe) == .allow)
    #expect(await approver.decide(call("wipe"), tool: wipe) == .allow)
    #expect(asked.withLock { $0 } == 1)  // the second call was allowed by the remembered rule
    let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    #expect(mode == 0o600)
    let saved = try JSONValue.parse(String(contentsOfFile: path, encoding: .utf8))
    #expect(saved["approvals"]?["tools"]?["wipe"] == "auto")
    // A new run reads it back.
    let reread = try UserConfiguration.load(environment: ["XDG_CONFIG_HOME": folder])
    #expect(reread.approval(for: wipe).mode == .auto)
  }

  @Test func noAndDenyAndYes() async throws {
    var rules = UserConfiguration(path: folder + "/config.json")
    rules.toolRules = [.init(pattern: "wipe", value: .deny)]
    let wipe = WipeTool(calls: Counter())
    let yes = ToolApprover(configuration: rules, assumeYes: true, ask: nil)
    guard case .refuse(let reason) = await yes.decide(call("wipe"), tool: wipe) else {
      Issue.record("--yes let a denied tool run")
      return
    }
    #expect(reason.contains("denied by config.json"))
    let declined = ToolApprover(configuration: UserConfiguration(path: ""), ask: { _, _, _ in .no })
    #expect(await declined.decide(call("wipe"), tool: wipe) == .refuse(reason: "the user declined to run wipe"))
    let unattended = ToolApprover(configuration: UserConfiguration(path: ""), assumeYes: true, ask: nil)
    #expect(await unattended.decide(call("wipe"), tool: wipe) == .allow)
  }
}
