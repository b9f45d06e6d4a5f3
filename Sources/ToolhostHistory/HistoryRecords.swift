public import Foundation
import GRDB
public import ToolhostJSON
public import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// One entry of a kept chat: a transcript entry (instructions, prompt, tool calls, tool output, response), or an
/// error a request ended with.
public struct HistoryEntry: Sendable, Equatable {
  /// How a tool call ended.
  public enum Status: String, Sendable, Codable {
    /// It ran and succeeded.
    case ok
    /// It ran and failed, or was sent back (invalid arguments, an unknown tool).
    case error
    /// It was refused and never ran.
    case refused
  }

  /// What the entry is.
  public enum Content: Sendable, Equatable {
    /// A transcript entry.
    case transcript(Transcript.Entry)
    /// The error a request ended with, as the user was told it, and the prompt when the transcript did not keep it
    /// (a request that failed before the model answered).
    case error(String, prompt: String?)
  }

  /// The entry.
  public var content: Content
  /// When it was recorded.
  public var date: Date
  /// For a tool output: how long the call took, in milliseconds.
  public var durationMs: Double?
  /// For a tool output: how the call ended.
  public var status: Status?

  /// Makes an entry.
  public init(_ content: Content, date: Date = Date(), durationMs: Double? = nil, status: Status? = nil) {
    self.content = content
    self.date = date
    self.durationMs = durationMs
    self.status = status
  }

  /// Makes an entry from a transcript entry.
  public init(_ entry: Transcript.Entry, date: Date = Date(), durationMs: Double? = nil, status: Status? = nil) {
    self.init(.transcript(entry), date: date, durationMs: durationMs, status: status)
  }

  /// `instructions`, `prompt`, `toolCalls`, `toolOutput`, `response` or `error`.
  public var kind: String {
    switch content {
    case .transcript(let entry): entry.type
    case .error: "error"
    }
  }

  /// The transcript entry, unless this is an error.
  public var transcriptEntry: Transcript.Entry? {
    if case .transcript(let entry) = content { return entry }
    return nil
  }

  /// The stored JSON: the transcript entry's own encoding, or `{"message": …}`.
  var body: JSONValue {
    switch content {
    case .transcript(let entry): (try? JSONValueEncoder().encode(entry)) ?? .null
    case .error(let message, let prompt):
      if let prompt { ["message": .string(message), "prompt": .string(prompt)] } else { ["message": .string(message)] }
    }
  }

  /// The text `chats search` looks in.
  var searchText: String? {
    switch content {
    case .transcript(.instructions(let e)): e.text
    case .transcript(.prompt(let e)): e.text
    case .transcript(.toolCalls(let e)):
      ([e.text ?? ""] + e.calls.map { "\($0.toolName) \($0.argumentsJSON)" }).joined(separator: "\n")
    case .transcript(.toolOutput(let e)): "\(e.toolName) \(e.text)"
    case .transcript(.response(let e)): e.text
    case .transcript(.reasoning(let e)): e.text
    case .error(let message, let prompt): [prompt, message].compactMap { $0 }.joined(separator: "\n")
    }
  }

  init(row: Row) throws {
    let kind: String = row["kind"]
    let bodyText: String = row["body"]
    let body = try JSONValue.parse(bodyText)
    if kind == "error" {
      content = .error(body["message"]?.stringValue ?? bodyText, prompt: body["prompt"]?.stringValue)
    } else {
      content = .transcript(try JSONValueDecoder().decode(Transcript.Entry.self, from: body))
    }
    date = Date(timeIntervalSince1970: row["createdAt"])
    durationMs = row["durationMs"]
    status = (row["status"] as String?).flatMap(Status.init(rawValue:))
  }
}

/// A chat as listed: id, title, when, model, turns and tool calls.
public struct ChatSummary: Sendable, Equatable {
  /// The chat's id (`toolhost chats show ID`).
  public var id: Int64
  /// Its title, once one was made.
  public var title: String?
  /// Where the title came from.
  public var titleSource: TitleSource?
  /// `chat` or `ask`.
  public var command: String
  /// The model's name.
  public var model: String
  /// The settings it ran with.
  public var settings: JSONValue
  /// When it began.
  public var created: Date
  /// When an entry was last added.
  public var updated: Date
  /// How many prompts it has.
  public var turns: Int
  /// How many tool calls it made.
  public var toolCalls: Int
  /// The first prompt, if any (for a chat not titled yet).
  public var firstPrompt: String?

  init(row: Row) {
    id = row["id"]
    title = row["title"]
    titleSource = (row["titleSource"] as String?).flatMap(TitleSource.init(rawValue:))
    command = row["command"]
    model = row["model"]
    settings = (try? JSONValue.parse(row["settings"] as String)) ?? [:]
    created = Date(timeIntervalSince1970: row["createdAt"])
    updated = Date(timeIntervalSince1970: row["updatedAt"])
    turns = row["turns"]
    toolCalls = row["toolCalls"]
    firstPrompt = row["firstPrompt"]
  }

  /// The title, or the first prompt's opening words when there is none yet.
  public var displayTitle: String {
    title ?? firstPrompt.map(ChatTitle.fromPrompt) ?? "(no prompt)"
  }

  /// As JSON, for `toolhost chats --json`.
  public var json: JSONValue {
    var o: JSONObject = [
      "id": .integer(id), "command": .string(command), "model": .string(model), "settings": settings,
      "created": .string(ChatSummary.timestamp(created)), "updated": .string(ChatSummary.timestamp(updated)),
      "turns": .integer(Int64(turns)), "toolCalls": .integer(Int64(toolCalls)),
    ]
    o["title"] = title.map(JSONValue.string) ?? .null
    o["titleSource"] = titleSource.map { .string($0.rawValue) } ?? .null
    return .object(o)
  }

  /// An ISO 8601 time in UTC with milliseconds.
  static func timestamp(_ date: Date) -> String {
    date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
  }
}

/// A chat with all its entries.
public struct StoredChat: Sendable, Equatable {
  /// Its summary.
  public var summary: ChatSummary
  /// Its entries, oldest first.
  public var entries: [HistoryEntry]

  /// As JSON, for `toolhost chats show --json`: the summary's members and `entries`, each with `kind`, `date`,
  /// `entry` (the transcript entry, or `{"message": …, "prompt": …}` for an error) and, for tool outputs, `durationMs` and
  /// `status`.
  public var json: JSONValue {
    var o = summary.json.objectValue ?? [:]
    o["entries"] = .array(
      entries.map { entry in
        var e: JSONObject = [
          "kind": .string(entry.kind), "date": .string(ChatSummary.timestamp(entry.date)), "entry": entry.body,
        ]
        if let ms = entry.durationMs { e["durationMs"] = .real(ms) }
        if let status = entry.status { e["status"] = .string(status.rawValue) }
        return .object(e)
      })
    return .object(o)
  }

  /// The transcript the entries make, to continue the chat or export it as JSONL: errors are left out, and
  /// instructions that changed when the chat was continued stand where the first ones did, as the session had them.
  public var transcript: Transcript {
    var out: [Transcript.Entry] = []
    var instructionsAt: Int?
    for entry in entries.compactMap(\.transcriptEntry) {
      if case .instructions = entry {
        if let i = instructionsAt {
          out[i] = entry
          continue
        }
        instructionsAt = out.count
      }
      out.append(entry)
    }
    return Transcript(entries: out)
  }
}

/// Why the history could not be used.
public struct HistoryError: Error, Sendable, CustomStringConvertible {
  /// The database file.
  public var path: String
  /// What went wrong, in one line.
  public var message: String
  /// For an id with no chat: that id.
  public var unknownChat: Int64?
  /// For an id with no chat: the ids of the chats nearest to it (at most three).
  public var nearest: [Int64] = []

  /// Makes an error.
  public init(path: String, message: String) {
    self.path = path
    self.message = message
  }

  init(path: String, unknownChat id: Int64, nearest: [Int64]) {
    self.path = path
    self.unknownChat = id
    self.nearest = nearest
    let hint =
      nearest.isEmpty
      ? "there are no chats yet"
      : "the nearest are \(nearest.map(String.init).joined(separator: ", ")); `toolhost chats` lists them all"
    message = "no chat has the id \(id): \(hint)"
  }

  init(path: String, _ error: any Error, lockWait: Duration) {
    self.path = path
    if let db = error as? DatabaseError {
      switch db.resultCode {
      case .SQLITE_NOTADB, .SQLITE_CORRUPT:
        message = "the file is damaged or not a toolhost history (move it away to start a new one)"
      case .SQLITE_BUSY, .SQLITE_LOCKED:
        message =
          "another program kept it locked for \(lockWait.messageText); "
          + "try again when it is done"
      case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
        message = "it cannot be written: \(db.message ?? "\(db.resultCode)")"
      case .SQLITE_FULL:
        message = "the disk is full"
      default:
        message = db.message ?? "\(db.resultCode)"
      }
    } else {
      message = String(describing: error)
    }
  }

  /// `chat history (PATH): MESSAGE`, or only the message for an unknown id.
  public var description: String {
    unknownChat != nil ? message : "chat history (\(path)): \(message)"
  }
}

/// Titles made without a model.
public enum ChatTitle {
  /// A title from a prompt: its first line's opening words, at most 6 words and 48 characters, with an ellipsis when
  /// cut.
  public static func fromPrompt(_ prompt: String) -> String {
    let firstLine =
      prompt.split(whereSeparator: \.isNewline).first { !$0.allSatisfy(\.isWhitespace) }.map(String.init) ?? ""
    let words = firstLine.split(whereSeparator: \.isWhitespace)
    var title = words.prefix(6).joined(separator: " ")
    var cut = words.count > 6
    if title.count > 48 {
      title = String(title.prefix(47))
      cut = true
    }
    if cut {
      title = title.trimmingCharacters(in: .punctuationCharacters.union(.whitespaces)) + "…"
    }
    return title.isEmpty ? "(empty prompt)" : title
  }
}
