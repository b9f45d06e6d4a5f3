import Foundation
import Synchronization
public import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// Keeps one session's chat in a ``ChatHistory`` as it goes: after each request, the transcript entries added since
/// the last one (tool outputs with their call's duration and status) and the error the request ended with, if any.
/// The first prompt gives the chat a title (``ChatTitle/fromPrompt(_:)``) until a better one is set.
///
/// ```swift
/// let recorder = try ChatRecorder(history: history, chat: .init(command: "chat", model: "local"))
/// _ = session.addObserver { recorder.observe($0) }
/// let response = try await session.respond(to: "Weather in Oslo?")
/// try recorder.record(session.transcript)
/// ```
public final class ChatRecorder: Sendable {
  /// The history written to.
  public let history: ChatHistory
  /// The chat's id.
  public let chatID: Int64

  private struct State {
    /// The ids of the transcript entries in the history already.
    var recorded: Set<String>
    /// Tool output entry id → the call's duration (ms) and status, from the session's events.
    var calls: [String: (Double, HistoryEntry.Status)] = [:]
    var titled: Bool
  }
  private let state: Mutex<State>

  /// Starts a new chat in `history`.
  ///
  /// - Throws: ``HistoryError`` when the database cannot be written.
  public init(history: ChatHistory, chat: ChatHistory.NewChat) throws(HistoryError) {
    self.history = history
    chatID = try history.startChat(chat)
    state = Mutex(State(recorded: [], titled: false))
  }

  /// Goes on with a chat already in `history`, whose entries `stored` are (a session continued from its transcript
  /// starts with those; an entry it changes, such as new instructions, is stored again when recorded).
  public init(history: ChatHistory, continuing chat: Int64, stored: Transcript) {
    self.history = history
    chatID = chat
    state = Mutex(State(recorded: Set(stored.entries.map(\.id)), titled: true))
  }

  /// Notes each finished tool call's duration and status; hand it every event of the session
  /// (``LanguageModelSession/addObserver(_:)``). Never throws, never blocks on the database.
  public func observe(_ event: SessionEvent) {
    guard case .toolCallFinished(let record) = event else { return }
    state.withLock { $0.calls[record.output.id] = (record.historyDurationMs, record.historyStatus) }
  }

  /// Stores the entries of `transcript` not stored yet, then `error` (the message the user was shown) if the
  /// request for `prompt` failed; the prompt goes with the error when the transcript did not keep it (a request
  /// that failed before the model answered).
  ///
  /// - Throws: ``HistoryError`` when the database cannot be written; what was not stored is tried again next time.
  public func record(_ transcript: Transcript, prompt: String? = nil, error: String? = nil) throws(HistoryError) {
    let (new, calls, needsTitle) = state.withLock { s in
      (transcript.entries.filter { !s.recorded.contains($0.id) }, s.calls, !s.titled)
    }
    let now = Date()
    var entries = new.map { entry -> HistoryEntry in
      guard case .toolOutput(let output) = entry else { return HistoryEntry(entry, date: now) }
      let call = calls[output.id]
      return HistoryEntry(
        entry, date: now, durationMs: call?.0, status: call?.1 ?? (output.isError ? .error : .ok))
    }
    let keptPrompt = new.contains { Self.promptText($0) != nil }
    if let error { entries.append(HistoryEntry(.error(error, prompt: keptPrompt ? nil : prompt), date: now)) }
    try history.append(entries, to: chatID)
    state.withLock { s in
      for entry in new {
        s.recorded.insert(entry.id)
        s.calls[entry.id] = nil
      }
    }
    if needsTitle, let first = transcript.entries.lazy.compactMap(Self.promptText).first ?? prompt {
      try history.setTitle(ChatTitle.fromPrompt(first), source: .prompt, for: chatID)
      state.withLock { $0.titled = true }
    }
  }

  private static func promptText(_ entry: Transcript.Entry) -> String? {
    if case .prompt(let p) = entry { return p.text }
    return nil
  }
}

extension ToolCallRecord {
  /// How the call ended, as the history keeps it (and the chat page shows it).
  public var historyStatus: HistoryEntry.Status {
    switch result {
    case .success: return .ok
    case .failure(let error):
      if case .refused = error.failure { return .refused }
      return .error
    }
  }

  /// How long it took in milliseconds, to a tenth, as the history keeps it.
  public var historyDurationMs: Double { (duration.seconds * 1000 * 10).rounded() / 10 }
}
