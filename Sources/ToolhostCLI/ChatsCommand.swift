import ArgumentParser
import Foundation
import ToolhostCommandLine
import ToolhostHistory
import ToolhostJSON
import ToolhostSession
import ToolhostSystem

/// `toolhost chats`: the kept chats, one of them, and what to do with them.
struct ChatsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "chats",
    abstract: "List, show, search, export and delete the chats that chat and ask keep.",
    discussion: """
      Every chat and ask is kept in $XDG_DATA_HOME/toolhost/history.sqlite (default \
      ~/.local/share/toolhost/history.sqlite), unless --no-history or "history": false in config.json. \
      Continue one with toolhost chat --continue (the last) or --resume ID.
      """,
    subcommands: [ChatsList.self, ChatsShow.self, ChatsSearch.self, ChatsExport.self, ChatsRemove.self],
    defaultSubcommand: ChatsList.self)
}

/// Runs `body` on the history (an empty one when there is no file yet: looking makes none); an unknown chat id is a
/// usage error naming the nearest ids, a history that cannot be opened or read an error (exit 1).
private func withHistory<T>(_ printer: Printer, _ body: (ChatHistory) throws(HistoryError) -> T) throws -> T {
  do { return try body(try ChatHistory.openIfPresent()) } catch {
    if error.unknownChat != nil { throw printer.usageError(error.description) }
    printer.warn("Error: \(error.description)")
    throw ExitCode(ExitStatus.toolFailed)
  }
}

/// Prints chats as a table, or as a JSON array.
private func printChats(_ chats: [ChatSummary], json: Bool, printer: Printer) throws {
  if json {
    printer.sayExactly(try JSONValue.array(chats.map(\.json)).serialized(.pretty))
  } else {
    printer.say(ChatText.table(chats))
  }
}

struct ChatsList: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List the chats, the most recent first: id, when, model, turns, tool calls, title.")
  @OptionGroup var output: OutputOptions
  @Flag(help: "Print machine-readable JSON.") var json = false
  @Option(help: "Show at most this many.") var limit: Int?

  func run() throws {
    let printer = output.printer
    try printChats(
      try withHistory(printer) { history throws(HistoryError) in try history.chats(limit: limit) }, json: json,
      printer: printer)
  }
}

struct ChatsSearch: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "search",
    abstract: "List the chats whose title, prompts, answers, tool calls or tool outputs contain TEXT.")
  @OptionGroup var output: OutputOptions
  @Flag(help: "Print machine-readable JSON.") var json = false
  @Argument(help: "The text to look for (ASCII letters in any case).") var text: String

  func run() throws {
    let printer = output.printer
    try printChats(
      try withHistory(printer) { history throws(HistoryError) in try history.chats(matching: text) }, json: json,
      printer: printer)
  }
}

struct ChatsShow: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "show", abstract: "Show one chat: its prompts, tool calls with arguments, tool outputs and answers.")
  @OptionGroup var output: OutputOptions
  @Flag(help: "Print the chat and its entries as JSON.") var json = false
  @Flag(
    help: ArgumentHelp(
      "Draw each turn as a tree: prompt, rounds, the parallel tool calls with arguments, duration and status, "
        + "response."))
  var graph = false
  @Flag(
    help: ArgumentHelp(
      "Print the chat as one self-contained HTML page, its call graph's arguments and outputs folding out (as "
        + "chats export --html)."))
  var html = false
  @Argument(help: "The chat's id (`toolhost chats` lists them).") var id: Int64

  func validate() throws {
    if [json, graph, html].filter({ $0 }).count > 1 {
      throw ValidationError("--json, --graph and --html cannot be combined: choose one")
    }
  }

  func run() throws {
    let printer = output.printer
    let chat = try withHistory(printer) { history throws(HistoryError) in try history.chat(id) }
    if json {
      printer.sayExactly(try chat.json.serialized(.pretty))
    } else if html {
      // Escaped HTML, but chat text may hold control sequences: a terminal gets them made visible.
      var page = ChatHTML.page(chat)
      if page.hasSuffix("\n") { page.removeLast() }
      printer.say(page)
    } else if graph {
      printer.say("chat \(chat.summary.id): \(chat.summary.displayTitle)")
      for line in CallGraph(chat).lines() { printer.say(line) }
    } else {
      for line in ChatText.lines(chat) { printer.say(line) }
    }
  }
}

struct ChatsExport: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Write one chat as JSONL (its transcript, which chat --resume FILE continues) or as one HTML page.")
  @Argument(help: "The chat's id.") var id: Int64
  @Flag(help: "As JSONL, one transcript entry per line (the default).") var jsonl = false
  @Flag(
    help: ArgumentHelp(
      "As one self-contained HTML page: the chat and, per turn, its call graph with arguments and outputs that "
        + "expand."))
  var html = false
  @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (0600) instead of stdout.", valueName: "file"))
  var output: String?

  func validate() throws {
    if jsonl && html { throw ValidationError("--jsonl and --html cannot be combined: choose one format") }
  }

  func run() throws {
    let printer = Printer(raw: true)
    let chat = try withHistory(printer) { history throws(HistoryError) in try history.chat(id) }
    let text = html ? ChatHTML.page(chat) : chat.transcript.jsonl()
    if let output {
      do { try FileSafety.writeSecretFile(output, Array(text.utf8)) } catch {
        printer.warn("Error: cannot write \(output): \(error.localizedDescription)")
        throw ExitCode(ExitStatus.toolFailed)
      }
    } else {
      // A pipe gets the exact text; a terminal gets control sequences from the chat made visible.
      let shown = isatty(1) != 0 ? TerminalText.visible(text) : text
      try? FileHandle.standardOutput.write(contentsOf: Data(shown.utf8))
    }
  }
}

struct ChatsRemove: ParsableCommand {
  static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete chats and all their entries.")
  @OptionGroup var output: OutputOptions
  @Argument(help: "The chats' ids.") var ids: [Int64]

  func run() throws {
    let printer = output.printer
    try withHistory(printer) { history throws(HistoryError) in
      for id in ids {
        try history.delete(id)
        printer.warn("toolhost: deleted chat \(id)")
      }
    }
  }
}
