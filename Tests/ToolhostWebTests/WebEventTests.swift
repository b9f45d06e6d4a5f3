/// The chat page's events: one schema (``WebEvent/schema``) that every event the engine sends is held to (here for
/// each kind, and in ``WebChatEngineTests`` for every event of its turns), and that the page's script reads: it has a
/// branch for every type but those it ignores, and no branch for a type that is not one.
import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostWeb

@Suite("chat page: the events")
struct WebEventTests {
  /// ``WebEvent/schema``, compiled.
  static let schema: JSONSchema = {
    do { return try JSONSchema(WebEvent.schema) } catch { fatalError("WebEvent.schema does not compile: \(error)") }
  }()

  /// One event of every kind, with the members a real one has.
  static let samples: [WebEvent] = {
    let call: JSONValue = [
      "id": "c1", "tool": "getWeather", "arguments": ["city": "Oslo"], "status": "running", "durationMs": .null,
      "output": .null,
    ]
    let finished: JSONValue = [
      "id": "c1", "tool": "getWeather", "arguments": ["city": "Oslo"], "status": "ok", "durationMs": .real(12.5),
      "output": ["text": "7 °C", "value": ["high": 7], "isError": false],
    ]
    let approval: JSONValue = [
      "id": "a1", "call": "c1", "tool": "appendNote", "arguments": ["text": "hi"], "shown": [], "reason": "writes",
      "origin": .null, "reach": .null,
    ]
    return [
      .hello, .ping, .turn(chat: 1, prompt: "Weather in Oslo?", tool: nil, nonce: "n1"),
      .turn(chat: 1, prompt: "Weather?", tool: "getWeather", nonce: nil), .round(chat: 1, round: 1),
      .text(chat: 1, text: "It is "), .call(chat: 1, call: call), .result(chat: 1, call: finished),
      .done(chat: 1, response: "7 °C", error: nil, stopped: false),
      .done(chat: 1, response: nil, error: "stopped", stopped: true), .approval(chat: 1, approval: approval),
      .approvalDone(chat: 1, id: "a1"), .note(chat: nil, text: "a note"), .note(chat: 1, text: "a note"), .chats,
    ]
  }()

  @Test func everyKindOfEventFollowsTheSchema() {
    for event in Self.samples {
      #expect(Self.schema.validate(event.json).isEmpty, "\(event.json.serialized())")
      #expect(event.json["type"]?.stringValue == event.type)
    }
    #expect(Set(Self.samples.map(\.type)) == Set(WebEvent.types), "a sample for every type")
  }

  @Test func theSchemaRefusesWhatIsNotAnEvent() {
    for wrong: JSONValue in [
      ["type": "unknown"], ["type": "text", "chat": 1], ["type": "done", "chat": 1, "response": .null],
      ["type": "round", "chat": "1", "round": 1], ["type": "chats", "extra": true],
    ] {
      #expect(!Self.schema.validate(wrong).isEmpty, "\(wrong.serialized())")
    }
  }

  @Test func thePagesScriptReadsEveryTypeAndNoOther() throws {
    let pattern = try NSRegularExpression(pattern: #"ev\.type === '([a-z-]+)'"#)
    let script = WebPage.script
    let range = NSRange(script.startIndex..., in: script)
    let read = Set(
      pattern.matches(in: script, range: range).compactMap { match in
        Range(match.range(at: 1), in: script).map { String(script[$0]) }
      })
    #expect(read == Set(WebEvent.types).subtracting(WebEvent.ignoredByThePage))
  }
}
