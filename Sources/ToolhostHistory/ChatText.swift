public import Foundation
import ToolhostJSON
import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// Kept chats as text for people: the list `toolhost chats` prints and one chat as `toolhost chats show` prints
/// it. The text is as stored (model and tool text included); a printer makes control characters visible on a
/// terminal.
public enum ChatText {
  /// A table of chats: id, when it was last used, model, turns, tool calls and title, one line each, cut to
  /// `width` columns.
  public static func table(_ chats: [ChatSummary], now: Date = Date(), width: Int = 100) -> String {
    guard !chats.isEmpty else { return "No chats yet: `toolhost chat` and `toolhost ask` keep theirs here." }
    var rows = [["ID", "WHEN", "MODEL", "TURNS", "CALLS", "TITLE"]]
    let when = When(now: now)
    for chat in chats {
      rows.append([
        String(chat.id), when(chat.updated), chat.model, String(chat.turns), String(chat.toolCalls),
        chat.displayTitle.oneLine,
      ])
    }
    var widths = [Int](repeating: 0, count: 5)
    for row in rows { for i in 0..<5 { widths[i] = max(widths[i], row[i].count) } }
    return rows.map { row in
      var line = (0..<5).map { i in row[i].padding(toLength: widths[i], withPad: " ", startingAt: 0) }
        .joined(separator: "  ")
      line += "  " + row[5]
      return line.cut(to: width)
    }.joined(separator: "\n")
  }

  /// One chat: a header line, then each entry in order (prompts after `>`, tool calls after `→` with their
  /// arguments, tool outputs after `←` with status and duration, responses as they are, errors after `!`).
  /// Tool outputs show their first `outputWidth` characters on one line.
  public static func lines(_ chat: StoredChat, outputWidth: Int = 160) -> [String] {
    let s = chat.summary
    var out = [
      "chat \(s.id): \(s.displayTitle.oneLine)",
      "  \(s.command) with \(s.model), started \(ChatSummary.timestamp(s.created)), \(s.turns) "
        + "turn\(s.turns == 1 ? "" : "s"), \(s.toolCalls) tool call\(s.toolCalls == 1 ? "" : "s")",
    ]
    for entry in chat.entries {
      switch entry.content {
      case .transcript(.instructions(let e)):
        out.append("")
        out.append(
          "instructions (\(e.toolDefinitions.count) tool\(e.toolDefinitions.count == 1 ? "" : "s")): "
            + e.text.oneLine.cut(to: outputWidth))
      case .transcript(.prompt(let e)):
        out.append("")
        out.append("> " + e.text)
      case .transcript(.toolCalls(let e)):
        if let text = e.text, !text.isEmpty { out.append(text) }
        for call in e.calls { out.append("  → \(call.toolName) \(call.argumentsJSON)") }
      case .transcript(.toolOutput(let e)):
        let status = entry.status?.rawValue ?? (e.isError ? "error" : "ok")
        let duration = entry.durationMs.map { " \(durationText($0))" } ?? ""
        out.append("  ← \(e.toolName) \(status)\(duration): \(e.text.oneLine.cut(to: outputWidth))")
      case .transcript(.response(let e)):
        out.append(e.text)
      case .transcript(.reasoning(let e)):
        out.append("  (thinking) " + e.text.oneLine.cut(to: outputWidth))
      case .error(let message, let prompt):
        if let prompt {
          out.append("")
          out.append("> " + prompt)
        }
        out.append("! " + message)
      }
    }
    return out
  }

  /// A call's duration as the chat showed it live (``Duration/callText``).
  static func durationText(_ ms: Double) -> String { Duration.milliseconds(ms).callText }

  /// When, for the list: `14:02` today, `Nov 21 14:02` this year, `2025-11-21` before (in the local time zone).
  /// The formatters are made once per list (making one per row took most of the time of a 1,000-chat list).
  struct When {
    let now: Date
    let calendar = Calendar.current
    let today: DateFormatter
    let thisYear: DateFormatter
    let earlier: DateFormatter

    init(now: Date) {
      self.now = now
      func formatter(_ format: String) -> DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = format
        return f
      }
      today = formatter("HH:mm")
      thisYear = formatter("MMM d HH:mm")
      earlier = formatter("yyyy-MM-dd")
    }

    func callAsFunction(_ date: Date) -> String {
      if calendar.isDate(date, inSameDayAs: now) { return today.string(from: date) }
      if calendar.component(.year, from: date) == calendar.component(.year, from: now) {
        return thisYear.string(from: date)
      }
      return earlier.string(from: date)
    }
  }

}
