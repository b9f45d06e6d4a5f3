import Foundation
import ToolhostSystem
public import ToolhostTools

/// What one line typed into a chat asks for: a prompt, a prompt for one picked tool (`@NAME message`), or one of the
/// chat's commands (`/tools [FILTER]`, `/clear`, `/help`, `/quit`). A line that starts with `/` or `@` and matches
/// no command or tool is a hint for the user and is never sent to the model; `//` and `@@` send a line that starts
/// with `/` or `@`.
///
/// ```swift
/// switch ChatLine(line, tools: session.tools) {
/// case .prompt(let text): try await session.respond(to: text)
/// case .pick(let tool, let message): try await session.respond(to: message, options: .init(offeredTools: [tool]))
/// default: …
/// }
/// ```
public enum ChatLine: Sendable, Equatable {
  /// Send this to the model.
  case prompt(String)
  /// Send `message` with only `tool` offered, and an instruction to use it.
  case pick(tool: String, message: String)
  /// List the tools whose name or description contains the filter (all for an empty one).
  case listTools(filter: String)
  /// Start a new conversation.
  case clear
  /// Show the commands.
  case help
  /// End the chat.
  case quit
  /// Nothing to send: tell the user this.
  case hint(String)

  /// The commands, as `/help` shows them.
  public static let commands: [(name: String, help: String)] = [
    ("/tools [FILTER]", "list the tools (name and summary), those matching FILTER only"),
    ("@TOOL message", "send the message with only that tool offered, and tell the model to use it"),
    ("/clear", "start a new conversation (the last one stays in the history)"),
    ("/help", "show this"),
    ("/quit", "end the chat (as Ctrl-D does)"),
    ("//text, @@text", "send a message that starts with / or @"),
  ]

  /// Reads one line (already trimmed of surrounding spaces) against the tools the chat offers.
  public init(_ line: String, tools: ToolRegistry) {
    if line.hasPrefix("//") || line.hasPrefix("@@") {
      self = .prompt(String(line.dropFirst()))
      return
    }
    if line.hasPrefix("/") {
      let parts = line.dropFirst().split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
      let command = parts.first.map(String.init) ?? ""
      let rest = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
      switch command {
      case "tools": self = .listTools(filter: rest)
      case "clear" where rest.isEmpty: self = .clear
      case "help" where rest.isEmpty, "?" where rest.isEmpty: self = .help
      case "quit" where rest.isEmpty, "exit" where rest.isEmpty: self = .quit
      default:
        self = .hint(
          "/\(command) is not a command: /tools [FILTER], @TOOL message, /clear, /help, /quit "
            + "(start the line with // to send it as it is)")
      }
      return
    }
    if line.hasPrefix("@") {
      let parts = line.dropFirst().split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
      let name = parts.first.map(String.init) ?? ""
      let message = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
      guard tools.tool(named: name) != nil else {
        let near = name.isEmpty ? [] : tools.suggestions(for: name)
        let suggestion = near.isEmpty ? "" : "did you mean \(near.map { "@" + $0 }.joined(separator: ", "))? "
        self = .hint(
          tools.tools.isEmpty
            ? "this chat offers no tools, so @ picks none (start the line with @@ to send it as it is)"
            : "no tool is called \(name.isEmpty ? "that" : name): \(suggestion)/tools lists them "
              + "(start the line with @@ to send it as it is)")
        return
      }
      guard !message.isEmpty else {
        self = .hint("write the message after the tool's name: @\(name) what to ask")
        return
      }
      self = .pick(tool: name, message: message)
      return
    }
    self = .prompt(line)
  }

  /// Names that complete what was typed: after `@`, the tool names that start with the rest; after `/`, the
  /// commands. Empty for other text.
  public static func completions(of word: String, toolNames: [String]) -> [String] {
    if word.hasPrefix("@") {
      let stem = word.dropFirst()
      return toolNames.filter { $0.hasPrefix(stem) }.sorted().map { "@" + $0 }
    }
    if word.hasPrefix("/") {
      return ["/tools", "/clear", "/help", "/quit"].filter { $0.hasPrefix(word) }
    }
    return []
  }
}

/// The tool list `/tools` shows.
public enum ToolPicker {
  /// The tools whose name or description contains `filter` (case-insensitively; all for an empty filter), in name
  /// order, each as `name  first line of the description`, cut to `width` columns.
  public static func lines(_ tools: [any Tool], filter: String, width: Int = 100) -> [String] {
    let needle = filter.lowercased()
    let matching = tools.filter {
      needle.isEmpty || $0.name.lowercased().contains(needle) || $0.description.lowercased().contains(needle)
    }.sorted { $0.name < $1.name }
    let nameWidth = matching.map(\.name.count).max() ?? 0
    return matching.map { tool in
      let summary = tool.description.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
      let line = tool.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  " + summary
      return line.cut(to: width)
    }
  }
}
