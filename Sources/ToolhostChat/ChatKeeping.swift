public import ToolhostSession

/// What keeps a chat between runs, as ``ChatRuntime`` uses it: records each turn, titles a new chat after its first
/// answer, starts another chat for a cleared conversation. ToolhostHistory's `ChatKeeper` is the one toolhost has
/// (a SQLite history); this module does not depend on it, so that an app linking `Toolhost` links no database.
public protocol ChatKeeping: AnyObject, Sendable {
  /// The id of the chat being kept, or `nil` when none is (not started, or the history failed).
  var chatID: Int64? { get }
  /// Sees each of the session's events (a call's duration and status are kept with it).
  func observe(_ event: SessionEvent)
  /// Keeps what the last turn added to `transcript`, with the error it ended with; returns the history's failure,
  /// described for the user, after which nothing more is kept; `nil` when it was kept or nothing is being kept.
  func keepTurn(_ transcript: Transcript, prompt: String, error: String?) -> String?
  /// After a new chat's first answer, has the chat titled in the background; `onTitled` when the title is stored,
  /// `onFailure` with the failure described when it could not be. Does nothing for a chat titled already.
  func titleAfterAnswer(
    to prompt: String, onTitled: @escaping @Sendable () -> Void, onFailure: @escaping @Sendable (String) -> Void)
  /// Starts keeping a new chat in place of the current one (a cleared conversation); returns the id of the chat
  /// kept before, `nil` when none was.
  func startAnotherChat() throws -> Int64?
  /// Lets a title still being made finish for a moment, then drops it.
  func finishKeeping() async
}
