import Synchronization
public import ToolhostSession

/// One conversation of a ``ChatRuntime``: its session, the keeper that keeps it as a chat, and the turn running in
/// it. Made by ``ChatRuntime/startConversation(keeper:continuing:)``; turns go through the runtime.
public final class ChatConversation: Sendable {
  /// The kept chat's id when the conversation started; `nil` when none is kept.
  public let chat: Int64?
  /// The conversation's session (its transcript, its tools).
  public let session: LanguageModelSession
  /// What keeps the conversation; `nil` when nothing is kept.
  public let keeper: (any ChatKeeping)?
  /// The turn running now, until its ``ChatEvent/turnFinished(_:)``.
  let running = Mutex<Task<ChatTurn, Never>?>(nil)
  /// The last turn, which goes on after it finishes to keep itself; the next turn waits for it.
  let last = Mutex<Task<ChatTurn, Never>?>(nil)

  init(chat: Int64?, session: LanguageModelSession, keeper: (any ChatKeeping)?) {
    self.chat = chat
    self.session = session
    self.keeper = keeper
  }

  /// Whether a turn is running (it has not finished yet).
  public var isRunning: Bool { running.withLock { $0 != nil } }

  /// Waits until the last turn is finished and kept.
  public func waitUntilKept() async {
    _ = await last.withLock({ $0 })?.value
  }
}
