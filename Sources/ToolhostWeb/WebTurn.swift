public import ToolhostJSON
public import ToolhostSession

/// A turn as the page draws it, kept or running: the prompt, the one tool offered, its rounds (the text streamed in
/// each and its calls, in ``WebJSON/call(_:status:durationMs:output:)``'s form), and the response or the error. One
/// shape for the history's turns (``WebJSON/chat(_:running:live:)``) and the running one (``follow(_:)``).
public struct WebTurn: Sendable, Equatable {
  /// One round: the text streamed before its calls, and the calls.
  public struct Round: Sendable, Equatable {
    /// The text, `nil` when none was streamed.
    public var text: String?
    /// The calls, in order.
    public var calls: [JSONValue]
  }

  /// What the user asked.
  public var prompt: String?
  /// The one tool offered (`@NAME`), if any.
  public var tool: String?
  /// The rounds so far.
  public var rounds: [Round] = []
  /// The answer, once there is one.
  public var response: String?
  /// What ended the turn, if not an answer.
  public var error: String?

  /// The turn as the page reads it.
  public var json: JSONValue {
    [
      "prompt": prompt.map(JSONValue.string) ?? .null, "tool": tool.map(JSONValue.string) ?? .null,
      "rounds": .array(
        rounds.map { ["text": $0.text.map(JSONValue.string) ?? .null, "calls": .array($0.calls)] }),
      "response": response.map(JSONValue.string) ?? .null, "error": error.map(JSONValue.string) ?? .null,
    ]
  }

  /// Brings the running turn up to date with `event`.
  public mutating func follow(_ event: SessionEvent) {
    switch event {
    case .modelTurnStarted:
      // Text streamed before a round's calls belongs to that round; a new round begins only after calls.
      if rounds.last?.calls.isEmpty ?? false { break }
      rounds.append(Round(text: nil, calls: []))
    case .textDelta(let text):
      changeLastRound { $0.text = ($0.text ?? "") + text }
    case .toolCallStarted(let call):
      changeLastRound { $0.calls.append(WebJSON.call(call, status: "running")) }
    case .toolCallFinished(let record):
      changeLastRound { round in
        round.calls = round.calls.map { $0["id"]?.stringValue == record.call.id ? WebJSON.call(record) : $0 }
      }
    case .requestStarted, .response:
      break
    }
  }

  private mutating func changeLastRound(_ change: (inout Round) -> Void) {
    if rounds.isEmpty { rounds.append(Round(text: nil, calls: [])) }
    change(&rounds[rounds.count - 1])
  }
}

/// The session's events as the page's events.
extension WebChatEngine {
  /// A session event as the page's event, if the page shows it.
  static func event(_ event: SessionEvent, chat: Int64) -> WebEvent? {
    switch event {
    case .requestStarted, .response: nil
    case .modelTurnStarted(let round): .round(chat: chat, round: round)
    case .textDelta(let text): .text(chat: chat, text: text)
    case .toolCallStarted(let call): .call(chat: chat, call: WebJSON.call(call, status: "running"))
    case .toolCallFinished(let record): .result(chat: chat, call: WebJSON.call(record))
    }
  }
}
