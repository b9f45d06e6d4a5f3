import Synchronization
public import ToolhostChat
public import ToolhostSession
import ToolhostSystem

/// What a chat front end does with the history, in one place: which stored chat a run goes on with, keeping the
/// chat as it goes (a ``ChatRecorder``), a new chat when the conversation is cleared, and a title by the chat's model
/// after the first answer (``ChatTitler``), made in the background and given a moment when the chat ends.
///
/// A failure of the history never stops the chat: each method that writes says what failed, and keeping stops for
/// the rest of the run.
///
/// ```swift
/// let history = try ChatHistory.open()
/// let keeper = ChatKeeper(history: history, newChat: .init(command: "chat", model: model.displayName),
///                         model: model, titlesByModel: true)
/// try keeper.startNewChat()
/// _ = session.addObserver { keeper.observe($0) }
/// let answer = try await session.respond(to: prompt)
/// if let failure = keeper.record(session.transcript, prompt: prompt) { print("not kept: \(failure)") }
/// keeper.titleInBackground(prompt: prompt) { print("untitled: \($0)") }
/// await keeper.finish()
/// ```
public final class ChatKeeper: Sendable {
  /// Which stored chat a run goes on with.
  public enum Continuation: Sendable, Equatable {
    /// A new chat.
    case none
    /// The chat used last (`--continue`).
    case last
    /// The chat with this id (`--resume ID`).
    case chat(Int64)
  }

  /// Why a run cannot go on with a stored chat.
  public enum ContinuationError: Error, Sendable {
    /// `--continue` with no chat in the history yet.
    case noChatYet
    /// The history could not be read, or has no chat with the id (``HistoryError/unknownChat``).
    case history(HistoryError)
  }

  /// The stored chat `continuation` names in `history`, or `nil` for ``Continuation/none``.
  ///
  /// - Throws: ``ContinuationError``.
  public static func stored(_ continuation: Continuation, in history: ChatHistory) throws(ContinuationError)
    -> StoredChat?
  {
    let id: Int64
    switch continuation {
    case .none: return nil
    case .chat(let chat): id = chat
    case .last:
      let last: Int64?
      do throws(HistoryError) { last = try history.lastChatID() } catch { throw .history(error) }
      guard let last else { throw .noChatYet }
      id = last
    }
    do throws(HistoryError) { return try history.chat(id) } catch { throw .history(error) }
  }

  /// The history the chat is kept in.
  public let history: ChatHistory
  /// What a new chat in it is (the command, the model, the settings): for the first chat and for each cleared one.
  public let newChat: ChatHistory.NewChat
  private let model: any LanguageModel
  private let titlesByModel: Bool
  /// The recorder in use; `nil` before a chat starts and once the history failed.
  private let recorder = Mutex<ChatRecorder?>(nil)
  /// The chats the model still has to title, and the running title request.
  private let titling = Mutex<(untitled: Set<Int64>, task: Task<Void, Never>?)>(([], nil))

  /// Makes a keeper for chats in `history`; nothing is kept until ``startNewChat()`` or ``continueChat(_:)``.
  ///
  /// With `titlesByModel`, `model` is asked for a title after a new chat's first answer (`chat` does; `ask` keeps
  /// its prompt's words, so that nothing runs after its answer).
  public init(history: ChatHistory, newChat: ChatHistory.NewChat, model: any LanguageModel, titlesByModel: Bool) {
    self.history = history
    self.newChat = newChat
    self.model = model
    self.titlesByModel = titlesByModel
  }

  /// The id of the chat being kept, or `nil` when none is (not started, or the history failed).
  public var chatID: Int64? { recorder.withLock { $0?.chatID } }

  /// Starts keeping a new chat: it is recorded from now on, and titled by the model after its first answer.
  ///
  /// - Throws: ``HistoryError`` when the history cannot make the chat; nothing is kept then.
  public func startNewChat() throws(HistoryError) {
    let started: ChatRecorder
    do { started = try ChatRecorder(history: history, chat: newChat) } catch {
      recorder.withLock { $0 = nil }
      throw error
    }
    recorder.withLock { $0 = started }
    titling.withLock { _ = $0.untitled.insert(started.chatID) }
  }

  /// Keeps going with a stored chat: what the session adds is recorded after its entries (its title stays).
  public func continueChat(_ stored: StoredChat) {
    let continued = ChatRecorder(history: history, continuing: stored.summary.id, stored: stored.transcript)
    recorder.withLock { $0 = continued }
  }

  /// Starts a new chat in place of the current one, for a cleared conversation, and returns the id of the one that
  /// was kept before. Nothing happens (and `nil` comes back) when nothing is being kept.
  ///
  /// - Throws: ``HistoryError`` when the history cannot make the chat; nothing is kept from then on.
  public func startAnotherChat() throws(HistoryError) -> Int64? {
    guard let previous = chatID else { return nil }
    try startNewChat()
    return previous
  }

  /// Hands a session event to the recorder (each call's duration and status), when a chat is kept.
  public func observe(_ event: SessionEvent) {
    recorder.withLock { $0 }?.observe(event)
  }

  /// Adds what the last request added to `transcript` to the chat, with the error it ended with, if any.
  ///
  /// - Returns: the history's failure, after which nothing more is kept in this run; `nil` when it was kept or
  ///   nothing is being kept.
  public func record(_ transcript: Transcript, prompt: String, error: String? = nil) -> HistoryError? {
    guard let current = recorder.withLock({ $0 }) else { return nil }
    do { try current.record(transcript, prompt: prompt, error: error) } catch {
      recorder.withLock { $0 = nil }
      return error
    }
    return nil
  }

  /// After a new chat's first answer, asks the model for a title in a task of its own; the prompt's title stays
  /// when the model answers instead, fails, or is not done when the chat ends (``finish()``). `onFailure` gets the
  /// history's failure to store the title, `onTitled` the title once it is stored. Does nothing for a chat that is
  /// titled already or not new.
  public func titleInBackground(
    prompt: String, onTitled: @escaping @Sendable (String) -> Void = { _ in },
    onFailure: @escaping @Sendable (HistoryError) -> Void
  ) {
    guard titlesByModel, let recorder = recorder.withLock({ $0 }) else { return }
    let id = recorder.chatID
    let model = self.model
    titling.withLock { state in
      guard state.untitled.remove(id) != nil else { return }
      let previous = state.task
      state.task = Task {
        await previous?.value
        guard let title = try? await ChatTitler(model: model).title(for: prompt) else { return }
        do throws(HistoryError) {
          try recorder.history.setTitle(title, source: .model, for: id)
          onTitled(title)
        } catch {
          onFailure(error)
        }
      }
    }
  }

  /// Gives a title still being made up to `grace` to finish, then cancels it (the chat keeps its prompt's title).
  public func finish(grace: Duration = .seconds(3)) async {
    guard let task = titling.withLock({ $0.task }) else { return }
    let done = OneShot<Void>()
    Task {
      await task.value
      done.complete(())
    }
    Task {
      try? await Task.sleep(for: grace)
      task.cancel()
      done.complete(())
    }
    await done.wait()
  }
}

/// The keeper is what ``ChatRuntime`` keeps its chats with.
extension ChatKeeper: ChatKeeping {
  /// ``record(_:prompt:error:)``, its failure described.
  public func keepTurn(_ transcript: Transcript, prompt: String, error: String?) -> String? {
    record(transcript, prompt: prompt, error: error)?.description
  }

  /// ``titleInBackground(prompt:onTitled:onFailure:)``, its failure described.
  public func titleAfterAnswer(
    to prompt: String, onTitled: @escaping @Sendable () -> Void, onFailure: @escaping @Sendable (String) -> Void
  ) {
    titleInBackground(prompt: prompt, onTitled: { _ in onTitled() }, onFailure: { onFailure($0.description) })
  }

  /// ``finish(grace:)`` with its default grace.
  public func finishKeeping() async { await finish() }
}
