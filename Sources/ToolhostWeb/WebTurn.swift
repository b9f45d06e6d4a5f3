import ToolhostJSON
import ToolhostSession

/// A turn as the page draws it: the running turn kept up to date, and the session's events as the page's events.
extension WebChatEngine {
  /// Brings the running turn `live` (in the page's turn shape) up to date with `event`.
  static func follow(_ event: SessionEvent, in live: inout JSONObject) {
    var rounds = live["rounds"]?.arrayValue ?? []
    func lastRound(_ change: (inout JSONObject) -> Void) {
      if rounds.isEmpty { rounds.append(["text": .null, "calls": []]) }
      var round = rounds[rounds.count - 1].objectValue ?? [:]
      change(&round)
      rounds[rounds.count - 1] = .object(round)
    }
    switch event {
    case .modelTurnStarted:
      // Text streamed before a round's calls belongs to that round; a new round begins only after calls.
      if rounds.isEmpty || !(rounds.last?["calls"]?.arrayValue?.isEmpty ?? true) {
        rounds.append(["text": .null, "calls": []])
      }
    case .textDelta(let text):
      lastRound { $0["text"] = .string(($0["text"]?.stringValue ?? "") + text) }
    case .toolCallStarted(let call):
      lastRound { $0["calls"] = .array(($0["calls"]?.arrayValue ?? []) + [WebJSON.call(call, status: "running")]) }
    case .toolCallFinished(let record):
      lastRound { round in
        round["calls"] = .array(
          (round["calls"]?.arrayValue ?? []).map { $0["id"]?.stringValue == record.call.id ? WebJSON.call(record) : $0 }
        )
      }
    case .requestStarted, .response:
      break
    }
    live["rounds"] = .array(rounds)
  }

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
