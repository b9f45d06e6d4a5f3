import Synchronization
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// A custom session property: whether the user asked for the adder.
enum AdderUnlocked: SessionPropertyKey {
  static let defaultValue = false
}

extension SessionPropertyValues {
  var adderUnlocked: Bool {
    get { self[AdderUnlocked.self] }
    set { self[AdderUnlocked.self] = newValue }
  }
}

/// "Required until the first tool call, then allowed", as FoundationModels' guide writes it.
struct RequiredUntilCalled: LanguageModelSession.DynamicProfile {
  @LanguageModelSession.SessionProperty(\.history) var history

  var body: some LanguageModelSession.DynamicProfile {
    LanguageModelSession.Profile {
      "Add with the tool."
      AddTool()
    }
    .toolCallingMode(history.calledToolSinceLastPrompt ? .allowed : .required)
  }
}

/// Tools and instructions that follow a property a hook sets, and hooks that record what they hear.
struct Unlocking: LanguageModelSession.DynamicProfile {
  @LanguageModelSession.SessionProperty(\.adderUnlocked) var unlocked
  let heard: Heard

  var body: some LanguageModelSession.DynamicProfile {
    LanguageModelSession.Profile {
      if unlocked {
        "You may add."
        AddTool()
      } else {
        "Say you cannot add yet."
      }
    }
    .onPrompt { [heard, _unlocked] prompt in
      heard.append("prompt \(prompt.text)")
      if prompt.text.contains("unlock") { _unlocked.wrappedValue = true }
    }
    .onToolCall { [heard] call in heard.append("call \(call.toolName)") }
    .onToolOutput { [heard] call, output in heard.append("output \(call.toolName) \(output.text)") }
    .onResponse { [heard] response in heard.append("response \(response.text)") }
  }
}

final class Heard: Sendable {
  private let lines = Mutex<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

struct FailingHook: LanguageModelSession.DynamicProfile {
  struct Stop: Error {}
  var body: some LanguageModelSession.DynamicProfile {
    LanguageModelSession.Profile { AddTool() }
      .onToolCall { _ in throw Stop() }
  }
}

/// Dynamic profiles: instructions, tools and tool-calling mode worked out before every model turn from the session's
/// properties, and the hooks.
struct DynamicProfileTests {
  @Test func requiredUntilTheFirstToolCallThenAllowed() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("add", ["a": 1, "b": 2], id: "c1")]), ModelTurn(text: "3"),
    ])
    let session = LanguageModelSession(model: model, profile: RequiredUntilCalled())
    #expect(try await session.respond(to: "1+2?").content == "3")
    #expect(model.requests.map(\.toolChoice) == [.required, .auto])
    #expect(model.requests[0].tools.map(\.name) == ["add"])
    guard case .instructions(let instructions)? = session.transcript.first else {
      Issue.record("no instructions entry: \(session.transcript.entries)")
      return
    }
    #expect(instructions.text == "Add with the tool.")
    #expect(instructions.toolDefinitions.map(\.name) == ["add"])
    // The next request starts required again.
    _ = try? await session.respond(to: "again")
    #expect(model.requests.count >= 3)
    #expect(model.requests[2].toolChoice == .required)
  }

  @Test func toolsAndInstructionsFollowAPropertyAHookSets() async throws {
    let heard = Heard()
    let model = ScriptedModel([
      { _ in ModelTurn(text: "I cannot add yet.") },
      { _ in ModelTurn(toolCalls: [call("add", ["a": 2, "b": 2], id: "c1")]) },
      { _ in ModelTurn(text: "4") },
    ])
    let session = LanguageModelSession(model: model, profile: Unlocking(heard: heard))
    _ = try await session.respond(to: "add 2 and 2")
    #expect(model.requests[0].tools.isEmpty)
    #expect(model.requests[0].toolChoice == .none)
    #expect(session.properties.adderUnlocked == false)

    let answer = try await session.respond(to: "unlock, then add 2 and 2")
    #expect(answer.content == "4")
    #expect(session.properties.adderUnlocked)
    #expect(model.requests[1].tools.map(\.name) == ["add"])
    #expect(session.tools.tools.map(\.name) == ["add"])
    guard case .instructions(let instructions)? = session.transcript.first else {
      Issue.record("no instructions entry")
      return
    }
    #expect(instructions.text == "You may add.")
    #expect(
      heard.all == [
        "prompt add 2 and 2", "response I cannot add yet.", "prompt unlock, then add 2 and 2", "call add",
        #"output add {"sum":4}"#, "response 4",
      ])
  }

  @Test func aHookThatThrowsEndsTheRequestAndLeavesTheTranscript() async throws {
    let model = ScriptedModel(turns: [ModelTurn(toolCalls: [call("add", ["a": 1, "b": 1], id: "c1")])])
    let session = LanguageModelSession(model: model, profile: FailingHook())
    await #expect(throws: FailingHook.Stop.self) { _ = try await session.respond(to: "1+1") }
    #expect(session.transcript.isEmpty)
  }
}
