import Foundation
import ToolhostJSON
import ToolhostSession
import ToolhostSystem

/// A kept chat as one self-contained HTML page (`toolhost chats export ID --html`): the conversation, and per turn
/// its call graph, each tool call with its status and duration, its arguments and output folded under it
/// (`<details>`, so no script is needed). The page loads nothing: styles are inline, and its Content Security
/// Policy forbids every fetch. All text from the chat (prompts, answers, tool arguments and outputs) is escaped.
///
/// ```swift
/// try ChatHTML.page(history.chat(12)).write(toFile: "chat-12.html", atomically: true, encoding: .utf8)
/// ```
public enum ChatHTML {
  /// The page.
  public static func page(_ chat: StoredChat) -> String {
    let s = chat.summary
    let graph = CallGraph(chat)
    var html = """
      <!doctype html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>\(escape("chat \(s.id): \(s.displayTitle)"))</title>
      <style>\(style)</style>
      </head>
      <body>
      <header>
      <h1 id="title">\(escape(s.displayTitle))</h1>
      <p class="meta">chat \(s.id) · \(escape(s.command)) with \(escape(s.model)) · started \(
        escape(ChatSummary.timestamp(s.created))) · \(s.turns) turn\(s.turns == 1 ? "" : "s") · \(s.toolCalls) tool \
      call\(s.toolCalls == 1 ? "" : "s")</p>
      </header>

      """
    if let instructions = graph.instructions {
      let n = instructions.toolDefinitions.count
      let tools = instructions.toolDefinitions.map {
        "<li><code>\(escape($0.name))</code> \(escape($0.description))</li>"
      }
      html += "<details class=\"instructions\"><summary>Instructions · \(n) tool\(n == 1 ? "" : "s") offered</summary>"
      html += "<pre>\(escape(instructions.text))</pre>"
      if !tools.isEmpty { html += "<ul class=\"tools\">" + tools.joined() + "</ul>" }
      html += "</details>\n"
    }
    for (i, turn) in graph.turns.enumerated() {
      html += "<article class=\"turn\" id=\"turn-\(i + 1)\">\n"
      html +=
        "<div class=\"prompt\"><span class=\"who\">you</span><p>\(escape(turn.prompt ?? "(no prompt)"))</p></div>\n"
      if !turn.rounds.isEmpty {
        html += "<ol class=\"rounds\">\n"
        for (r, round) in turn.rounds.enumerated() {
          let parallel = round.calls.count > 1 ? " · \(round.calls.count) calls in parallel" : ""
          html += "<li class=\"round\"><div class=\"round-title\">round \(r + 1)\(parallel)</div>\n"
          if let text = round.text, !text.isEmpty { html += "<p class=\"model-note\">\(escape(text))</p>\n" }
          html += "<ul class=\"calls\">\n"
          for call in round.calls { html += callHTML(call) }
          html += "</ul></li>\n"
        }
        html += "</ol>\n"
      }
      if let response = turn.response {
        html += "<div class=\"response\"><span class=\"who\">model</span><p>\(escape(response))</p></div>\n"
      }
      if let error = turn.error {
        html += "<div class=\"error\"><span class=\"who\">error</span><p>\(escape(error))</p></div>\n"
      }
      html += "</article>\n"
    }
    return html + "</body>\n</html>\n"
  }

  private static func callHTML(_ call: CallGraph.Call) -> String {
    let status = call.status?.rawValue ?? "pending"
    let duration = call.durationMs.map { " <span class=\"duration\">\(ChatText.durationText($0))</span>" } ?? ""
    let arguments =
      call.call.argumentsText ?? ((try? call.call.arguments.serialized(.pretty)) ?? call.call.arguments.serialized())
    var out = """
      <li class="call \(status)" data-tool="\(escape(call.call.toolName))"><details><summary><code>\(
        escape(call.call.toolName))</code> <span class="status">\(status)</span>\(duration)</summary>
      <h4>arguments</h4><pre class="arguments">\(escape(arguments))</pre>
      """
    if let output = call.output {
      out += "<h4>output</h4><pre class=\"output\">\(escape(output.text))</pre>"
    }
    return out + "</details></li>\n"
  }

  /// `text` with `&`, `<`, `>`, `"` and `'` escaped, scalar by scalar (a character that joins one of them to
  /// another scalar, such as U+0600, cannot hide it), and control characters other than tab and line breaks, and
  /// the bidirectional overrides and isolates, made visible as on a terminal (``TerminalText``: `^[`, `<U+202E>`),
  /// so that no text reads differently from what it is.
  static func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
      default:
        if TerminalText.needsEscape(scalar) {
          // The visible form has no character that needs escaping but `<` and `>` (`<U+202E>`).
          var shown = String.UnicodeScalarView()
          shown.append(scalar)
          out += TerminalText.visible(String(shown)).replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }

  private static let style = """
    body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;\
    background:#fff}
    h1{font-size:1.5rem;margin:0}.meta{color:#6e6e73;margin:.25rem 0 1.5rem}
    .turn{border-top:1px solid #d2d2d7;padding:1rem 0}
    .who{display:inline-block;min-width:4.5rem;margin-right:.5rem;font-weight:600;color:#6e6e73;font-size:.85rem;text-transform:uppercase}
    .prompt p,.response p,.error p{display:inline;white-space:pre-wrap}
    .prompt p{font-weight:600}.error{color:#b00020}
    .rounds{margin:.5rem 0 .5rem 1rem;padding-left:1rem;border-left:2px solid #d2d2d7;list-style:none}
    .round-title{font-size:.85rem;color:#6e6e73}.calls{list-style:none;padding-left:1rem;margin:.25rem 0}
    .call summary{cursor:pointer}.call .status{font-size:.8rem;padding:0 .4rem;border-radius:.6rem}
    .call.ok .status{background:#e3f4e6;color:#1b5e20}.call.error .status,.call.refused .status{background:#fde7e9;\
    color:#b00020}
    .duration{color:#6e6e73;font-size:.85rem}h4{margin:.5rem 0 .2rem;font-size:.8rem;color:#6e6e73}
    pre{background:#f5f5f7;padding:.5rem;border-radius:.3rem;overflow:auto;white-space:pre-wrap;margin:0}
    .instructions{margin-bottom:1rem}.tools{font-size:.9rem}
    """
}
