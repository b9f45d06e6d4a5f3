import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

/// Which arguments a plugin also gets as TOOLHOST_ARG_ variables, within the environment's budget.
@Suite("Argument variables")
struct ArgumentVariableTests {
  func tool(declaring names: [String] = (0..<40).map { "a\($0)" } + ["withNul"]) throws -> PluginTool {
    let properties = JSONObject(names.map { ($0, ["type": "string"] as JSONValue) })
    let definition = ToolDefinition(
      name: "t", description: "d", inputSchema: ["type": "object", "properties": .object(properties)])
    let manifest = PluginManifest(
      path: "/tmp/x/toolhost.json", directory: "/tmp/x", command: "run", arguments: [], timeout: nil,
      environment: [], output: .json, tools: [definition])
    return try PluginTool(definition: definition, manifest: manifest, executable: "/bin/true", hostEnvironment: [:])
  }

  @Test func tooMuchForTheEnvironmentIsLeftOutInOrder() throws {
    let big = String(repeating: "x", count: 15 << 10)
    var arguments: JSONObject = [:]
    for i in 0..<40 { arguments["a\(i)"] = .string(big) }
    arguments["withNul"] = .string("a\u{0}b")
    let env = try tool().environment(arguments: .object(arguments), callID: "c")
    let kept = env.keys.filter { $0.hasPrefix("TOOLHOST_ARG_") }
    let total = kept.reduce(0) { $0 + $1.utf8.count + env[$1]!.utf8.count + 2 }
    #expect(total <= PluginTool.argumentVariablesBudget)
    #expect(kept.count == 17)
    #expect(env["TOOLHOST_ARG_A0"] != nil && env["TOOLHOST_ARG_A16"] != nil && env["TOOLHOST_ARG_A17"] == nil)
    #expect(env["TOOLHOST_ARG_WITH_NUL"] == nil)
  }

  @Test func onlyDeclaredPropertiesBecomeVariables() throws {
    let env = try tool(declaring: ["path"]).environment(
      arguments: ["path": "safe", "extra": "../../etc"], callID: "c")
    #expect(env["TOOLHOST_ARG_PATH"] == "safe")
    #expect(env["TOOLHOST_ARG_EXTRA"] == nil)
  }

  @Test func twoNamesForOneVariableAreRefused() throws {
    #expect {
      _ = try tool(declaring: ["path", "Path"]).environment(
        arguments: ["path": "safe", "Path": "../../etc; rm -rf ~"], callID: "c")
    } throws: { error in
      guard case .invalidArguments(let issues) = error as? ToolFailure else { return false }
      return issues.first?.message.contains("TOOLHOST_ARG_PATH") == true
    }
    // An undeclared spelling collides too: which of the two reaches the plugin must never depend on key order.
    #expect(throws: ToolFailure.self) {
      _ = try tool(declaring: ["path"]).environment(arguments: ["Path": "x", "path": "y"], callID: "c")
    }
  }
}
