public import Foundation
import GRDB
public import ToolhostJSON
import ToolhostSession
import ToolhostSystem

/// Every `chat` and `ask`, kept in a SQLite database (`$XDG_DATA_HOME/toolhost/history.sqlite`, default
/// `~/.local/share/toolhost/history.sqlite`): the chats with their model, settings and title, and each chat's entries
/// in order (instructions, prompts, tool calls, tool outputs with duration and status, responses and errors).
///
/// The file is the user's own, mode 0600 in a 0700 folder, in WAL mode; several toolhost processes may write at
/// once (each waits up to 5 s for another's write to end).
///
/// ```swift
/// let history = try ChatHistory.open()
/// let id = try history.startChat(ChatHistory.NewChat(command: "ask", model: "gpt-4o-mini"))
/// try history.append([.init(session.transcript[0])], to: id)
/// for chat in try history.chats() { print(chat.id, chat.title ?? "") }
/// ```
public final class ChatHistory: Sendable {
  /// The database file.
  public let path: String
  private let database: DatabaseQueue

  /// The database's usual place: `$XDG_DATA_HOME/toolhost/history.sqlite`, else
  /// `~/.local/share/toolhost/history.sqlite`. A relative `XDG_DATA_HOME` is ignored, as the XDG specification says.
  public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    let base =
      environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(".local/share")
    return ((base as NSString).appendingPathComponent("toolhost") as NSString).appendingPathComponent(
      "history.sqlite")
  }

  /// Opens the database at `path` (by default ``defaultPath(environment:)``), making it and its folder when they
  /// do not exist yet. The folder is the history's own: one of the user's that others may read is made 0700, and
  /// the file 0600.
  ///
  /// - Parameter lockWait: how long a read or write waits for another process's write to end before it fails.
  /// - Throws: ``HistoryError`` when the folder or file cannot be made, the file is not the user's own regular
  ///   file, is not a toolhost history (a corrupted file, another program's database), or stays locked for
  ///   `lockWait`. Nothing is changed in a file that is not a history.
  public static func open(at path: String = defaultPath(), lockWait: Duration = .seconds(5)) throws(HistoryError)
    -> ChatHistory
  {
    try prepareFile(path)
    var configuration = Configuration()
    configuration.busyMode = .timeout(lockWait.seconds)
    configuration.label = "toolhost.history"
    do {
      let database = try DatabaseQueue(path: path, configuration: configuration)
      try database.writeWithoutTransaction { db in
        // Another program's database is left as it is, and a newer toolhost's is not read with an older schema.
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        if !tables.isEmpty && !tables.contains("grdb_migrations") {
          throw HistoryError(
            path: path, message: "it is another program's SQLite database (move it away to start a history)")
        }
        if try Self.migrator.hasBeenSuperseded(db) {
          throw HistoryError(
            path: path, message: "a newer toolhost made it; use that version, or move the file away to start anew")
        }
        // Kept in the file: every later connection is in WAL mode too.
        _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
      }
      try Self.migrator.migrate(database)
      return ChatHistory(path: path, database: database, lockWait: lockWait)
    } catch let error as HistoryError {
      throw error
    } catch {
      throw HistoryError(path: path, error, lockWait: lockWait)
    }
  }

  /// The database at `path` when there is a file there, else an empty history in memory that keeps nothing, so
  /// that looking at the history (`toolhost chats`) does not make one.
  ///
  /// - Throws: what ``open(at:lockWait:)`` throws for a file that is there.
  public static func openIfPresent(at path: String = defaultPath(), lockWait: Duration = .seconds(5))
    throws(HistoryError) -> ChatHistory
  {
    // Anything there, a symbolic link too (even a dangling one): open refuses what it must not use.
    var info = stat()
    if lstat(path, &info) == 0 { return try open(at: path, lockWait: lockWait) }
    do {
      let database = try DatabaseQueue()
      try Self.migrator.migrate(database)
      return ChatHistory(path: path, database: database, lockWait: lockWait)
    } catch {
      throw HistoryError(path: path, error, lockWait: lockWait)
    }
  }

  /// How long an operation waits for another process's write.
  private let lockWait: Duration

  private init(path: String, database: DatabaseQueue, lockWait: Duration) {
    self.lockWait = lockWait
    self.path = path
    self.database = database
  }

  /// Makes the folder (0700) and an empty file (0600) when they are missing, and an existing folder or file of the
  /// user's that others may read 0700 or 0600; refuses a folder others could read or change the file through
  /// (``FileSafety/privateFolderProblem(_:user:)``: not the user's own, writable by others, a symbolic link, or under
  /// a folder others may change) and a file that is not the user's own regular file (a symbolic link, which is never
  /// followed, another user's file, a FIFO).
  private static func prepareFile(_ path: String) throws(HistoryError) {
    let named = (path as NSString).deletingLastPathComponent
    let folder = named.isEmpty ? "." : named
    do {
      try FileManager.default.createDirectory(
        atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw HistoryError(path: path, message: "cannot make the folder \(folder): \(error.localizedDescription)")
    }
    if let problem = FileSafety.privateFolderProblem(folder) {
      throw HistoryError(path: path, message: "its folder is not safe: \(problem)")
    }
    // A folder made by an older toolhost, by hand or under another umask keeps no looser mode either: the user's own
    // (checked above; opened without following a link), it becomes 0700 like a new one.
    do { try FileSafety.narrowToPrivate(folder) } catch {
      throw HistoryError(
        path: path,
        message: "its folder \(folder) is open to other users and cannot be made 0700: "
          + "\(String(cString: strerror(error.code.rawValue))) (fix: chmod 700 \(folder))")
    }
    let fd = Foundation.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      if errno == ELOOP {
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
        throw HistoryError(
          path: path,
          message: "it is a symbolic link (to \(target)), which toolhost does not follow (fix: move the file it "
            + "points to here in its place, or remove the link to start a new history)")
      }
      throw HistoryError(path: path, message: "cannot open it: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      throw HistoryError(path: path, message: "cannot open it: \(String(cString: strerror(errno)))")
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw HistoryError(path: path, message: "it is not a regular file (move it away to start a history)")
    }
    guard info.st_uid == getuid() else {
      throw HistoryError(
        path: path,
        message: "it belongs to user \(FileSafety.userName(info.st_uid)), not to you, so that user could read or "
          + "change your chats (fix: move it away to start a history)")
    }
    // A file made by an older toolhost or by hand keeps no looser mode: it holds what tools returned.
    if info.st_mode & 0o077 != 0 { _ = fchmod(fd, 0o600) }
  }

  /// The schema, one migration per change; a database made by a newer toolhost is refused by GRDB.
  private static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      try db.execute(
        sql: """
          CREATE TABLE chat (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            title TEXT,
            titleSource TEXT,
            command TEXT NOT NULL,
            model TEXT NOT NULL,
            settings TEXT NOT NULL,
            createdAt REAL NOT NULL,
            updatedAt REAL NOT NULL
          );
          CREATE TABLE entry (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            chatID INTEGER NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            text TEXT,
            durationMs REAL,
            status TEXT,
            createdAt REAL NOT NULL
          );
          CREATE INDEX entryByChat ON entry(chatID, id);
          """)
    }
    return migrator
  }

  // MARK: Writing

  /// What a new chat is: the command that made it, the model and the settings worth showing later.
  public struct NewChat: Sendable {
    /// `chat` or `ask`.
    public var command: String
    /// The model's name as the user gave it (`local`, `gpt-4o-mini`).
    public var model: String
    /// Settings (tool-calling mode, temperature, tools offered, …) as one JSON object.
    public var settings: JSONValue
    /// When it began.
    public var date: Date

    /// Makes a description of a new chat.
    public init(command: String, model: String, settings: JSONValue = [:], date: Date = Date()) {
      self.command = command
      self.model = model
      self.settings = settings
      self.date = date
    }
  }

  /// Adds a chat with no entries yet and returns its id.
  ///
  /// - Throws: ``HistoryError`` when the database cannot be written.
  public func startChat(_ chat: NewChat) throws(HistoryError) -> Int64 {
    try write { db in
      try db.execute(
        sql: "INSERT INTO chat (command, model, settings, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)",
        arguments: [
          chat.command, chat.model, chat.settings.serialized(), chat.date.timeIntervalSince1970,
          chat.date.timeIntervalSince1970,
        ])
      return db.lastInsertedRowID
    }
  }

  /// Appends entries to a chat, in one transaction (all or none), and marks the chat as used now.
  ///
  /// - Throws: ``HistoryError`` when the database cannot be written or the chat no longer exists.
  public func append(_ entries: [HistoryEntry], to chat: Int64) throws(HistoryError) {
    guard !entries.isEmpty else { return }
    try write { db in
      guard try Bool.fetchOne(db, sql: "SELECT 1 FROM chat WHERE id = ?", arguments: [chat]) != nil else {
        throw HistoryError(
          path: path, message: "chat \(chat) was deleted while it was in use (`/clear` starts a new one)")
      }
      for entry in entries {
        try db.execute(
          sql: """
            INSERT INTO entry (chatID, kind, body, text, durationMs, status, createdAt)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
          arguments: [
            chat, entry.kind, entry.body.serialized(), entry.searchText, entry.durationMs, entry.status?.rawValue,
            entry.date.timeIntervalSince1970,
          ])
      }
      try db.execute(
        sql: "UPDATE chat SET updatedAt = ? WHERE id = ?",
        arguments: [entries.last!.date.timeIntervalSince1970, chat])
    }
  }

  /// Sets a chat's title and where it came from.
  ///
  /// - Throws: ``HistoryError`` when the database cannot be written.
  ///
  /// A title the user gave (``TitleSource/user``) stays: a prompt's or a model's title made later does not replace it.
  public func setTitle(_ title: String, source: TitleSource, for chat: Int64) throws(HistoryError) {
    try write { db in
      try db.execute(
        sql: """
          UPDATE chat SET title = ?, titleSource = ?
          WHERE id = ? AND (? = 'user' OR titleSource IS NULL OR titleSource <> 'user')
          """,
        arguments: [title, source.rawValue, chat, source.rawValue])
    }
  }

  /// Deletes a chat and its entries.
  ///
  /// - Throws: ``HistoryError/unknownChat(_:nearest:)``-style error (``HistoryError/nearest`` set) when there is no
  ///   such chat, or when the database cannot be written.
  public func delete(_ chat: Int64) throws(HistoryError) {
    let deleted = try write { db in
      try db.execute(sql: "DELETE FROM chat WHERE id = ?", arguments: [chat])
      return db.changesCount
    }
    if deleted == 0 { throw try unknown(chat) }
  }

  // MARK: Reading

  /// The chats, the most recently used first; with `matching`, only those whose title or any prompt, response,
  /// tool call, tool output or error contains that text (case-insensitively for ASCII letters).
  ///
  /// - Throws: ``HistoryError`` when the database cannot be read.
  public func chats(matching text: String? = nil, limit: Int? = nil) throws(HistoryError) -> [ChatSummary] {
    var sql = Self.summarySQL
    var arguments: StatementArguments = []
    if let text {
      let pattern = "%" + Self.escapeLike(text) + "%"
      sql += """

        WHERE chat.title LIKE ? ESCAPE '\\'
          OR EXISTS (SELECT 1 FROM entry WHERE entry.chatID = chat.id AND entry.text LIKE ? ESCAPE '\\')
        """
      arguments = [pattern, pattern]
    }
    sql += "\nORDER BY chat.updatedAt DESC, chat.id DESC"
    if let limit { sql += " LIMIT \(max(0, limit))" }
    return try read { db in try Row.fetchAll(db, sql: sql, arguments: arguments).map(ChatSummary.init(row:)) }
  }

  /// The most recently used chat's id, if there is any chat.
  ///
  /// - Throws: ``HistoryError`` when the database cannot be read.
  public func lastChatID() throws(HistoryError) -> Int64? {
    try read { db in try Int64.fetchOne(db, sql: "SELECT id FROM chat ORDER BY updatedAt DESC, id DESC LIMIT 1") }
  }

  /// One chat with all its entries, oldest first.
  ///
  /// - Throws: ``HistoryError`` with ``HistoryError/nearest`` (the ids closest to it) when there is no such chat;
  ///   when the database cannot be read or an entry is not one this toolhost can read.
  public func chat(_ id: Int64) throws(HistoryError) -> StoredChat {
    let found: StoredChat? = try read { db in
      guard let row = try Row.fetchOne(db, sql: Self.summarySQL + " WHERE chat.id = ?", arguments: [id]) else {
        return nil
      }
      let entries = try Row.fetchAll(
        db, sql: "SELECT * FROM entry WHERE chatID = ? ORDER BY id", arguments: [id]
      ).map(HistoryEntry.init(row:))
      return StoredChat(summary: ChatSummary(row: row), entries: entries)
    }
    guard let found else { throw try unknown(id) }
    return found
  }

  /// A chat's row with its turns (prompts, answered or not), tool calls and first prompt.
  private static let summarySQL = """
    SELECT chat.*,
      (SELECT COUNT(*) FROM entry WHERE entry.chatID = chat.id
        AND (kind = 'prompt' OR (kind = 'error' AND json_extract(body, '$.prompt') IS NOT NULL))) AS turns,
      (SELECT COUNT(*) FROM entry WHERE entry.chatID = chat.id AND kind = 'toolOutput') AS toolCalls,
      (SELECT COALESCE(json_extract(body, '$.prompt'), text) FROM entry WHERE entry.chatID = chat.id
        AND (kind = 'prompt' OR (kind = 'error' AND json_extract(body, '$.prompt') IS NOT NULL))
        ORDER BY id LIMIT 1) AS firstPrompt
    FROM chat
    """

  /// The error for an id with no chat: it names the (at most three) ids nearest to it.
  private func unknown(_ id: Int64) throws(HistoryError) -> HistoryError {
    let nearest = try read { db in
      try Int64.fetchAll(db, sql: "SELECT id FROM chat ORDER BY ABS(id - ?), id DESC LIMIT 3", arguments: [id])
    }
    return HistoryError(path: path, unknownChat: id, nearest: nearest)
  }

  /// `text` with LIKE's wildcards and the escape character itself escaped.
  static func escapeLike(_ text: String) -> String {
    var out = ""
    for c in text {
      if c == "%" || c == "_" || c == "\\" { out.append("\\") }
      out.append(c)
    }
    return out
  }

  private func write<T>(_ body: (Database) throws -> T) throws(HistoryError) -> T {
    do { return try database.write(body) } catch let error as HistoryError { throw error } catch {
      throw HistoryError(path: path, error, lockWait: lockWait)
    }
  }

  private func read<T>(_ body: (Database) throws -> T) throws(HistoryError) -> T {
    do { return try database.read(body) } catch let error as HistoryError { throw error } catch {
      throw HistoryError(path: path, error, lockWait: lockWait)
    }
  }
}

/// Where a chat's title came from.
public enum TitleSource: String, Sendable, Codable {
  /// A short session with the chat's own model.
  case model
  /// The first prompt's opening words (no model needed).
  case prompt
  /// The user's own (renamed on the chat page).
  case user
}
