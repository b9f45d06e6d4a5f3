import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostSchema
import ToolhostSession
import ToolhostTestSupport

/// A model's call is validated once, by the session; the registry's own entry points still validate for everyone
/// else (`toolhost call`, Swift callers).
@Suite("Validated calls")
struct ValidatedCallTests {
  @Test func theRegistryValidatesItsCallersArguments() async throws {
    let registry = try ToolRegistry([AddTool()])
    do {
      _ = try await registry.call("add", arguments: ["a": 1, "b": 2000])
      Issue.record("invalid arguments ran")
    } catch {
      guard case .invalidArguments(let issues) = error.failure else {
        Issue.record("not invalid arguments: \(error)")
        return
      }
      #expect(issues.map(\.message) == registry.validate(["a": 1, "b": 2000], for: "add").map(\.message))
      #expect(error.description.contains("/b: 2000 is greater than the maximum 1000"), "\(error.description)")
    }
    let results = await registry.callAll([ToolCallRequest(tool: "add", arguments: ["a": 1, "b": 2000])])
    guard case .failure(let error) = results[0], case .invalidArguments = error.failure else {
      Issue.record("callAll ran invalid arguments: \(results[0])")
      return
    }
  }

  /// The entry point for arguments already validated does not check them again (what it is given, it runs), and
  /// still reports an unknown tool.
  @Test func theValidatedEntryPointDoesNotCheckAgain() async throws {
    let registry = try ToolRegistry([AddTool()])
    let output = try await registry.call(validated: "add", arguments: ["a": 1, "b": 2000])
    #expect(output.value == ["sum": 2001])
    do {
      _ = try await registry.call(validated: "addd", arguments: [:])
      Issue.record("an unknown tool ran")
    } catch {
      guard case .unknownTool(let suggestions) = error.failure else {
        Issue.record("not an unknown tool: \(error)")
        return
      }
      #expect(suggestions == ["add"])
    }
  }

  /// The session's repair message for invalid arguments is the registry's, word for word, and a valid call runs.
  @Test func theSessionReportsTheSameIssuesAndRunsValidCalls() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2000], id: "bad")], finishReason: "tool_calls"),
      ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2], id: "good")], finishReason: "tool_calls"),
      ModelTurn(text: "3", finishReason: "stop"),
    ])
    let registry = try ToolRegistry([AddTool()])
    let session = try LanguageModelSession(model: model, tools: [AddTool()])
    _ = try await session.respond(to: "1+2?")
    let outputs = session.transcript.compactMap { e -> Transcript.ToolOutput? in
      if case .toolOutput(let o) = e { return o } else { return nil }
    }
    #expect(outputs.count == 2)
    var expected = ""
    do { _ = try await registry.call("add", arguments: ["a": 1, "b": 2000]) } catch {
      expected = LanguageModelSession.modelText(for: error, tools: registry)
    }
    #expect(outputs[0].text == expected)
    #expect(outputs[0].isError)
    #expect(outputs[1].text == "{\"sum\":3}")
  }
}
