import Foundation
import Synchronization
import Testing
import ToolhostHistory
import ToolhostSession
import ToolhostTestSupport

/// What a chat front end does with the history through ChatKeeper: continuing a stored chat, keeping a chat, a new
/// chat on clearing, and the model's title after the first answer.
@Suite("chat keeper")
struct ChatKeeperTests {
  let folder = TemporaryFolder(prefix: "toolhost-keeper")
  var path: String { folder.file("history.sqlite") }

  @Test func continuingNamesTheLastChatOrAnIdAndSaysWhenThereIsNone() throws {
    let history = try ChatHistory.open(at: path)
    #expect(try ChatKeeper.stored(.none, in: history) == nil)
    #expect(throws: ChatKeeper.ContinuationError.self) { try ChatKeeper.stored(.last, in: history) }
    let first = try history.startChat(.init(command: "chat", model: "m"))
    let second = try history.startChat(.init(command: "chat", model: "m"))
    #expect(try ChatKeeper.stored(.last, in: history)?.summary.id == second)
    #expect(try ChatKeeper.stored(.chat(first), in: history)?.summary.id == first)
    do {
      _ = try ChatKeeper.stored(.chat(999), in: history)
      Issue.record("an unknown id was continued")
    } catch {
      guard case .history(let failure) = error else { throw error }
      #expect(failure.unknownChat == 999)
    }
  }

  @Test func aKeptChatIsRecordedTitledByTheModelAndClearedIntoANewOne() async throws {
    let history = try ChatHistory.open(at: path)
    let model = ScriptedModel(turns: [ModelTurn(text: "Boston April Weather")])
    let keeper = ChatKeeper(
      history: history, newChat: .init(command: "chat", model: "m"), model: model, titlesByModel: true)
    #expect(keeper.chatID == nil)
    #expect(try keeper.startAnotherChat() == nil, "nothing kept yet, so nothing to clear")
    try keeper.startNewChat()
    let id = try #require(keeper.chatID)
    let transcript = ChatHistoryTests.sampleTranscript(prompt: "Weather in Boston in April?")
    #expect(keeper.record(transcript, prompt: "Weather in Boston in April?") == nil)
    let failures = Mutex<[String]>([])
    keeper.titleInBackground(prompt: "Weather in Boston in April?") { e in failures.withLock { $0.append("\(e)") } }
    await keeper.finish()
    let stored = try history.chat(id)
    #expect(stored.summary.title == "Boston April Weather")
    #expect(stored.summary.turns == 1)
    #expect(failures.withLock { $0 }.isEmpty)

    // A second title request for the same chat asks nothing.
    keeper.titleInBackground(prompt: "again") { _ in }
    await keeper.finish()
    #expect(model.requests.count == 1)

    #expect(try keeper.startAnotherChat() == id)
    #expect(keeper.chatID != id)
    #expect(try history.chats().count == 2)
  }

  /// A title the user gave (the chat page's rename) is not replaced by a prompt's or a model's made later.
  @Test func theUsersTitleStays() throws {
    let history = try ChatHistory.open(at: path)
    let id = try history.startChat(.init(command: "chat", model: "m"))
    try history.setTitle("From the prompt", source: .prompt, for: id)
    try history.setTitle("Mine", source: .user, for: id)
    try history.setTitle("From the model", source: .model, for: id)
    try history.setTitle("From the prompt again", source: .prompt, for: id)
    #expect(try history.chat(id).summary.title == "Mine")
    #expect(try history.chat(id).summary.titleSource == .user)
    try history.setTitle("Mine again", source: .user, for: id)
    #expect(try history.chat(id).summary.title == "Mine again")
  }

  @Test func aContinuedChatKeepsItsTitleAndASlowTitleIsDroppedAtTheEnd() async throws {
    let history = try ChatHistory.open(at: path)
    let id = try history.startChat(.init(command: "chat", model: "m"))
    try history.setTitle("Kept title", source: .model, for: id)
    let keeper = ChatKeeper(
      history: history, newChat: .init(command: "chat", model: "m"), model: Self.silent(), titlesByModel: true)
    keeper.continueChat(try history.chat(id))
    #expect(keeper.chatID == id)
    keeper.titleInBackground(prompt: "more") { _ in }
    await keeper.finish(grace: .milliseconds(50))
    #expect(try history.chat(id).summary.title == "Kept title")

    let fresh = ChatKeeper(
      history: history, newChat: .init(command: "chat", model: "m"), model: Self.silent(), titlesByModel: true)
    try fresh.startNewChat()
    let started = ContinuousClock.now
    fresh.titleInBackground(prompt: "a prompt") { _ in }
    await fresh.finish(grace: .milliseconds(100))
    #expect(ContinuousClock.now - started < .seconds(5), "the title request was not dropped after its grace")
    #expect(try history.chat(try #require(fresh.chatID)).summary.titleSource != .model)
  }

  /// A model that never answers until it is cancelled.
  static func silent() -> ScriptedModel {
    ScriptedModel { _ in
      try await Task.sleep(for: .seconds(60))
      return ModelTurn(text: "late")
    }
  }
}
