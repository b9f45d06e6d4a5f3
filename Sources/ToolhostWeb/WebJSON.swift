import Foundation
public import ToolhostHistory
public import ToolhostJSON
public import ToolhostPlugins
public import ToolhostSession
import ToolhostSystem
public import ToolhostTools

/// The chat page's JSON forms of chats, turns, calls and tools (the shapes the page's script reads).
public enum WebJSON {
  /// A chat in the list: `id`, `title`, `updated` (ISO 8601), `turns`, `running`.
  public static func summary(_ chat: ChatSummary, running: Bool) -> JSONValue {
    [
      "id": .integer(chat.id), "title": .string(chat.displayTitle), "updated": .string(date(chat.updated)),
      "turns": .integer(Int64(chat.turns)), "running": .bool(running),
    ]
  }

  /// A whole chat: its id, title, whether it is answering, and its turns as the call graph has them, then the
  /// running turn `live` (not in the history yet) when there is one.
  public static func chat(_ stored: StoredChat, running: Bool, live: WebTurn? = nil) -> JSONValue {
    let turns = CallGraph(stored).turns.map { turn($0).json } + (live.map { [$0.json] } ?? [])
    return [
      "id": .integer(stored.summary.id), "title": .string(stored.summary.displayTitle), "running": .bool(running),
      "turns": .array(turns),
    ]
  }

  /// One kept turn: the prompt, its rounds of calls, the response or the error.
  static func turn(_ turn: CallGraph.Turn) -> WebTurn {
    WebTurn(
      prompt: turn.prompt, tool: nil,
      rounds: turn.rounds.map { round in
        WebTurn.Round(
          text: round.text,
          calls: round.calls.map { c in
            call(
              c.call, status: c.status?.rawValue ?? (c.output == nil ? "error" : "ok"), durationMs: c.durationMs,
              output: c.output)
          })
      },
      response: turn.response, error: turn.error)
  }

  /// One tool call: id, tool, arguments, status (`running`, `ok`, `error`, `refused`), duration and output.
  public static func call(
    _ call: Transcript.ToolCall, status: String, durationMs: Double? = nil, output: Transcript.ToolOutput? = nil
  ) -> JSONValue {
    [
      "id": .string(call.id), "tool": .string(call.toolName), "arguments": call.arguments, "status": .string(status),
      "durationMs": durationMs.map(JSONValue.real) ?? .null,
      "output": output.map { o in
        ["text": .string(o.text), "value": o.value ?? .null, "isError": .bool(o.isError)] as JSONValue
      } ?? .null,
    ]
  }

  /// A finished call from the session's record of it.
  public static func call(_ record: ToolCallRecord) -> JSONValue {
    call(
      record.call, status: record.historyStatus.rawValue, durationMs: record.historyDurationMs, output: record.output)
  }

  /// A call's arguments as an approval shows them (``ApprovalArguments``): `[{"name", "shown", "more", "whole"}]`
  /// in the model's order, or one entry named `arguments` when they are not an object.
  public static func shownArguments(_ argumentsJSON: String) -> JSONValue {
    let shown = ApprovalArguments(json: argumentsJSON)
    return .array(
      (shown.other.map { [$0] } ?? shown.arguments).map { argument in
        [
          "name": .string(argument.name), "shown": .string(argument.shown), "more": .integer(Int64(argument.more)),
          "whole": .string(argument.whole),
        ]
      })
  }

  /// A tool the page offers: name, title, description, approval (`auto` or `ask`), output schema and display hints.
  public static func tool(_ tool: any Tool, approval: ApprovalMode) -> JSONValue {
    let definition = (tool as? PluginTool)?.definition
    return [
      "name": .string(tool.name), "title": definition?.title.map(JSONValue.string) ?? .null,
      "description": .string(tool.description), "approval": .string(approval == .auto ? "auto" : "ask"),
      "outputSchema": tool.outputSchema ?? .null, "display": definition?.display ?? .null,
    ]
  }

  /// `date` in ISO 8601, UTC, to the second.
  static func date(_ date: Date) -> String {
    date.formatted(.iso8601)
  }
}
