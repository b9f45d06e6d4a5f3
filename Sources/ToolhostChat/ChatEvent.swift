public import ToolhostSession

/// What happens in a ``ChatRuntime``, for a front end to show: the terminal chat draws it as text, the chat page
/// sends it to the browser. `chat` is the kept chat's id (`nil` when the history keeps none).
public enum ChatEvent: Sendable {
  /// A turn began: the prompt, the one tool offered (`@NAME`), and the nonce the sender gave.
  case turnStarted(chat: Int64?, prompt: String, tool: String?, nonce: String?)
  /// The session's own event: a request, a model round, streamed text, a tool call and its result, the response.
  case session(chat: Int64?, SessionEvent)
  /// A turn ended: answered, failed or stopped (see ``ChatTurn``). It is kept in the history right after.
  case turnFinished(ChatTurn)
  /// Something the user should know that did not end the turn (a chat the history stops keeping, a title not
  /// stored, a tool that needed approval with no one to ask).
  case warning(chat: Int64?, String)
  /// The list of chats changed: a turn was kept, a chat was titled.
  case chatsChanged
}

/// One turn of a chat, once it has ended.
public struct ChatTurn: Sendable {
  /// The kept chat's id, `nil` when none is kept.
  public var chat: Int64?
  /// What the user asked.
  public var prompt: String
  /// The answer; `nil` when the turn failed or was stopped.
  public var response: String?
  /// What ended the turn, if it did not end with an answer.
  public var error: (any Error)?
  /// ``error`` as the user is told it (and as the history keeps it): "stopped" for a stopped turn.
  public var errorMessage: String?
  /// Whether the turn was stopped (``ChatRuntime/stop(_:)``, Ctrl-C, the page's stop button).
  public var stopped: Bool
  /// Whether the turn was answered with tools offered and none called: the answer is the model's own, not checked
  /// against a tool, and front ends say so (issue 49: a question of fact no tool covers must not read as looked up).
  public var answeredWithoutTools: Bool = false

  /// What front ends say of an answer given ``answeredWithoutTools``.
  public static let uncheckedNote = "no tool was called: this answer is the model's own, not checked"
}
