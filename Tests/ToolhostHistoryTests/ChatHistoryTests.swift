import Foundation
import Synchronization
import Testing
import ToolhostCore
import ToolhostHistory
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// The history database: where it lives, its file modes, what it keeps and gives back, and bad files.
@Suite("chat history")
struct ChatHistoryTests {
  let folder = TemporaryFolder(prefix: "toolhost-history")
  var path: String { folder.file("data/toolhost/history.sqlite") }

  /// A small chat: instructions, a prompt, one tool call and its output, a response.
  static func sampleTranscript(prompt: String = "What's the weather in Oslo today?") -> Transcript {
    let call = Transcript.ToolCall(id: "call-1", toolName: "getWeather", arguments: ["city": "Oslo"])
    return Transcript(entries: [
      .instructions(.init(text: "Be brief.")),
      .prompt(.init(text: prompt)),
      .toolCalls(.init(calls: [call])),
      .toolOutput(.init(callID: "call-1", toolName: "getWeather", text: #"{"high": 4}"#, value: ["high": 4])),
      .response(.init(text: "About 4 °C.")),
    ])
  }

  @Test func defaultPathFollowsXDGDataHome() {
    #expect(
      ChatHistory.defaultPath(environment: ["XDG_DATA_HOME": "/x/data", "HOME": "/home/u"])
        == "/x/data/toolhost/history.sqlite")
    #expect(
      ChatHistory.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"])
        == "/home/u/.local/share/toolhost/history.sqlite")
  }

  @Test func theFileIsPrivateAndInWALMode() throws {
    let history = try ChatHistory.open(at: path)
    _ = try history.startChat(.init(command: "ask", model: "m"))
    var info = stat()
    #expect(stat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    #expect(stat((path as NSString).deletingLastPathComponent, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o700)
    // WAL mode leaves its -wal file beside the database while a connection is open, with the same mode.
    #expect(stat(path + "-wal", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
  }

  @Test func aLooseModeIsTightened() throws {
    FileManager.default.createFile(atPath: folder.file("loose.sqlite"), contents: nil, attributes: nil)
    chmod(folder.file("loose.sqlite"), 0o644)
    _ = try ChatHistory.open(at: folder.file("loose.sqlite"))
    var info = stat()
    #expect(stat(folder.file("loose.sqlite"), &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
  }

  /// A history folder left 0755 (made by hand, an older toolhost or another umask) is made 0700 like a new one; a
  /// symbolic link to a folder is refused, and the folder it points to keeps its mode.
  @Test func anOpenFolderIsMadePrivate() throws {
    let open = try folder.folder("data/open")
    chmod(open, 0o755)
    _ = try ChatHistory.open(at: open + "/history.sqlite")
    #expect(TemporaryFolder.permissions(open) == 0o700)

    let target = try folder.folder("data/target")
    chmod(target, 0o755)
    #expect(symlink(target, folder.file("data/link")) == 0)
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: folder.file("data/link/history.sqlite")) }
    #expect(error?.description.contains("symbolic link") == true, "\(String(describing: error))")
    #expect(TemporaryFolder.permissions(target) == 0o755)
  }

  @Test func aChatIsKeptAndReadBack() throws {
    let history = try ChatHistory.open(at: path)
    let recorder = try ChatRecorder(
      history: history, chat: .init(command: "chat", model: "local", settings: ["temperature": 0]))
    let transcript = Self.sampleTranscript()
    recorder.observe(
      .toolCallFinished(
        ToolCallRecord(
          call: .init(id: "call-1", toolName: "getWeather", arguments: [:]),
          result: .success(ToolOutput(value: ["high": 4])), duration: .milliseconds(12), ran: true,
          output: transcript.entries[3].toolOutputEntry!)))
    try recorder.record(transcript)

    // Reopened, as the next toolhost would.
    let again = try ChatHistory.open(at: path)
    let chat = try again.chat(recorder.chatID)
    #expect(chat.transcript == transcript)
    #expect(chat.entries.map(\.kind) == ["instructions", "prompt", "toolCalls", "toolOutput", "response"])
    #expect(chat.entries[3].durationMs == 12)
    #expect(chat.entries[3].status == .ok)
    #expect(chat.summary.title == "What's the weather in Oslo today?")
    #expect(chat.summary.titleSource == .prompt)
    #expect(chat.summary.turns == 1)
    #expect(chat.summary.toolCalls == 1)
    #expect(chat.summary.model == "local")
    #expect(chat.summary.settings == ["temperature": 0])
    #expect(try again.lastChatID() == recorder.chatID)
  }

  @Test func laterRequestsAppendOnlyWhatIsNewAndErrorsAreKept() throws {
    let history = try ChatHistory.open(at: path)
    let recorder = try ChatRecorder(history: history, chat: .init(command: "chat", model: "m"))
    var transcript = Self.sampleTranscript()
    try recorder.record(transcript)
    transcript.append(.prompt(.init(text: "And tomorrow?")))
    try recorder.record(transcript, prompt: "And tomorrow?", error: "the model's server answered 500")
    // A request that failed before the transcript kept its prompt: the prompt goes with the error.
    try recorder.record(transcript, prompt: "And Bergen?", error: "connection refused")
    let chat = try history.chat(recorder.chatID)
    #expect(chat.entries.count == 8)
    #expect(chat.entries[6].content == .error("the model's server answered 500", prompt: nil))
    #expect(chat.entries[7].content == .error("connection refused", prompt: "And Bergen?"))
    #expect(chat.transcript == transcript)
    #expect(chat.summary.turns == 3)
    #expect(try history.chats(matching: "bergen").count == 1)
    #expect(ChatText.lines(chat).suffix(3) == ["", "> And Bergen?", "! connection refused"])
  }

  @Test func continuingAChatAddsToIt() throws {
    let history = try ChatHistory.open(at: path)
    let first = try ChatRecorder(history: history, chat: .init(command: "chat", model: "m"))
    var transcript = Self.sampleTranscript()
    try first.record(transcript)
    let stored = try history.chat(first.chatID).transcript
    let second = ChatRecorder(history: history, continuing: first.chatID, stored: stored)
    // The continued session was given new instructions, in place of the old ones.
    transcript.entries[0] = .instructions(.init(text: "Be briefer."))
    transcript.append(.prompt(.init(text: "Thanks")))
    transcript.append(.response(.init(text: "You're welcome.")))
    try second.record(transcript)
    let chat = try history.chat(first.chatID)
    #expect(chat.transcript == transcript)
    #expect(chat.entries.count == 8)
    #expect(try history.chats().count == 1)
  }

  @Test func listSearchAndDelete() throws {
    let history = try ChatHistory.open(at: path)
    var ids: [Int64] = []
    for prompt in ["Bake a rye bread", "Convert 5 miles to km", "100% sure? Use a_b"] {
      let recorder = try ChatRecorder(history: history, chat: .init(command: "ask", model: "m"))
      try recorder.record(Self.sampleTranscript(prompt: prompt))
      ids.append(recorder.chatID)
    }
    #expect(try history.chats().map(\.id) == ids.reversed())
    #expect(try history.chats(limit: 1).map(\.id) == [ids[2]])
    #expect(try history.chats(matching: "RYE").map(\.id) == [ids[0]])
    // Found in a tool call's arguments and in a response, not only in prompts.
    #expect(try history.chats(matching: "\"Oslo\"").count == 3)
    // LIKE's wildcards are plain characters here.
    #expect(try history.chats(matching: "100%").map(\.id) == [ids[2]])
    #expect(try history.chats(matching: "a_b").map(\.id) == [ids[2]])
    #expect(try history.chats(matching: "a%b").isEmpty)

    try history.delete(ids[1])
    #expect(try history.chats().map(\.id) == [ids[2], ids[0]])
    let error = #expect(throws: HistoryError.self) { try history.chat(ids[1]) }
    #expect(error?.nearest.contains(ids[0]) == true)
    #expect(error?.description.contains("no chat has the id \(ids[1])") == true)
    #expect(throws: HistoryError.self) { try history.delete(ids[1]) }
  }

  @Test func aChatWhoseFirstRequestFailedIsTitledByItsPrompt() throws {
    let history = try ChatHistory.open(at: path)
    let recorder = try ChatRecorder(history: history, chat: .init(command: "ask", model: "m"))
    try recorder.record(Transcript(), prompt: "Weather in Oslo?", error: "connection refused")
    let chat = try history.chat(recorder.chatID)
    #expect(chat.summary.title == "Weather in Oslo?")
    #expect(chat.summary.turns == 1)
    #expect(chat.transcript.isEmpty)
  }

  @Test func lookingAtAHistoryThatIsNotThereMakesNone() throws {
    let history = try ChatHistory.openIfPresent(at: path)
    #expect(try history.chats().isEmpty)
    #expect(throws: HistoryError.self) { try history.chat(1) }
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
  }

  @Test func anEmptyHistorySaysSo() throws {
    let history = try ChatHistory.open(at: path)
    let error = #expect(throws: HistoryError.self) { try history.chat(3) }
    #expect(error?.description == "no chat has the id 3: there are no chats yet")
    #expect(try history.lastChatID() == nil)
  }

  @Test func aDamagedFileIsAClearErrorAndIsLeftAsItIs() throws {
    let bad = folder.write("damaged.sqlite", String(repeating: "not a database ", count: 400))
    chmod(bad, 0o600)
    let before = try Data(contentsOf: URL(fileURLWithPath: bad))
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: bad) }
    #expect(error?.description.contains("damaged or not a toolhost history") == true, "\(String(describing: error))")
    #expect(try Data(contentsOf: URL(fileURLWithPath: bad)) == before)
  }

  @Test func aLockHeldTooLongIsAClearError() throws {
    let history = try ChatHistory.open(at: path, lockWait: .milliseconds(200))
    // Another program (Python's sqlite3) takes the write lock and keeps it for 5 s.
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    holder.arguments = [
      "python3", "-c",
      "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        + "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(5)",
      path,
    ]
    let out = Pipe()
    holder.standardOutput = out
    try Subprocess.withUnblockedSignals { try holder.run() }
    defer {
      holder.terminate()
      holder.waitUntilExit()
    }
    _ = out.fileHandleForReading.availableData  // "locked"
    let error = #expect(throws: HistoryError.self) { try history.startChat(.init(command: "ask", model: "m")) }
    #expect(error?.description.contains("another program kept it locked for") == true, "\(String(describing: error))")
  }

  @Test func anotherProgramsDatabaseIsLeftAsItIs() throws {
    let other = folder.file("other.sqlite")
    let made = Process()
    made.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    made.arguments = [
      "python3", "-c",
      "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes (t)'); "
        + "c.commit()", other,
    ]
    try Subprocess.withUnblockedSignals { try made.run() }
    made.waitUntilExit()
    chmod(other, 0o600)
    let before = try Data(contentsOf: URL(fileURLWithPath: other))
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: other) }
    #expect(error?.description.contains("another program's SQLite database") == true, "\(String(describing: error))")
    #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == before)
  }

  @Test func aChatDeletedWhileInUseSaysSo() throws {
    let history = try ChatHistory.open(at: path)
    let recorder = try ChatRecorder(history: history, chat: .init(command: "chat", model: "m"))
    try history.delete(recorder.chatID)
    let error = #expect(throws: HistoryError.self) { try recorder.record(Self.sampleTranscript()) }
    #expect(error?.description.contains("was deleted while it was in use (`/clear` starts a new one)") == true)
  }

  @Test func aSymbolicLinkIsRefused() throws {
    let target = folder.write("elsewhere", "")
    try FileManager.default.createDirectory(
      atPath: folder.file("linked"), withIntermediateDirectories: true)
    symlink(target, folder.file("linked/history.sqlite"))
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: folder.file("linked/history.sqlite")) }
    let text = error?.description ?? ""
    #expect(text.contains("it is a symbolic link (to \(target)), which toolhost does not follow (fix: "), "\(text)")
    // Looking at the history does not ignore a link that points nowhere: it is refused the same way.
    symlink(folder.file("nowhere"), folder.file("linked/dangling.sqlite"))
    let dangling = #expect(throws: HistoryError.self) {
      try ChatHistory.openIfPresent(at: folder.file("linked/dangling.sqlite"))
    }
    #expect(dangling?.description.contains("symbolic link (to \(folder.file("nowhere")))") == true)
    #expect(!FileManager.default.fileExists(atPath: folder.file("nowhere")))
  }

  // MARK: The folder: the user's own, changed by nobody else, not a link (as plugin folders, ssh's StrictModes)

  @Test(.enabled(if: geteuid() == 0, "giving a folder to another user (chown) needs root"))
  func aFolderOfAnotherUserIsRefused() throws {
    let theirs = folder.file("theirs")
    try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
    #expect(chown(theirs, 12345, 12345) == 0)
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: theirs + "/history.sqlite") }
    let text = error?.description ?? ""
    #expect(text.hasPrefix("chat history (\(theirs)/history.sqlite): its folder is not safe: "), "\(text)")
    #expect(text.contains("\(theirs) belongs to user 12345, not to you (root), so that user could read"), "\(text)")
    #expect(text.contains("(fix: chown root \(theirs))"), "\(text)")
    #expect(!FileManager.default.fileExists(atPath: theirs + "/history.sqlite"))
  }

  @Test func aPrivateFolderMustBeTheUsersOwnNotEvenRoots() throws {
    // Seen as another user (12345) would: the folder (this user's, or root's) is not theirs.
    let problem = FileSafety.privateFolderProblem(folder.path, user: 12345) ?? ""
    let owner = geteuid() == 0 ? "root" : FileSafety.userName(geteuid())
    #expect(problem.contains("\(folder.path) belongs to user \(owner), not to you (12345)"), "\(problem)")
    #expect(FileSafety.privateFolderProblem(folder.path) == nil)
  }

  @Test(arguments: [0o770, 0o777])
  func aFolderOthersMayWriteIsRefused(mode: Int) throws {
    let shared = folder.file("shared-\(String(mode, radix: 8))")
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    chmod(shared, mode_t(mode))
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: shared + "/history.sqlite") }
    let text = error?.description ?? ""
    let who = mode == 0o777 ? "every user" : "its group"
    #expect(text.contains("\(shared) is writable by \(who) (mode \(String(mode, radix: 8)))"), "\(text)")
    #expect(text.contains("(fix: chmod go-w \(shared))"), "\(text)")
    #expect(!FileManager.default.fileExists(atPath: shared + "/history.sqlite"))
  }

  @Test func aFolderUnderOneOthersMayChangeIsRefusedUnlessItIsSticky() throws {
    let open = folder.file("open")
    try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
    chmod(open, 0o777)
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: open + "/toolhost/history.sqlite") }
    let text = error?.description ?? ""
    #expect(text.contains("\(open) is writable by every user (mode 777)"), "\(text)")
    // Like /tmp: others may add files there but not rename or remove this user's.
    chmod(open, 0o1777)
    _ = try ChatHistory.open(at: open + "/toolhost/history.sqlite")
  }

  @Test func aLinkedFolderIsRefused() throws {
    let real = folder.file("real")
    try FileManager.default.createDirectory(
      atPath: real, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    symlink(real, folder.file("link"))
    let error = #expect(throws: HistoryError.self) { try ChatHistory.open(at: folder.file("link/history.sqlite")) }
    let text = error?.description ?? ""
    #expect(text.contains("\(folder.file("link")) is a symbolic link (to \(real))"), "\(text)")
    #expect(text.contains("(fix: replace the link with the folder it points to)"), "\(text)")
    #expect(!FileManager.default.fileExists(atPath: real + "/history.sqlite"))
  }

  @Test func twoWritersAtOnceLoseNothing() async throws {
    // Two connections (as two toolhost processes have), each recording 40 requests of its own chat at once.
    let a = try ChatHistory.open(at: path)
    let b = try ChatHistory.open(at: path)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for history in [a, b] {
        group.addTask {
          let recorder = try ChatRecorder(history: history, chat: .init(command: "chat", model: "m"))
          var transcript = Transcript()
          for i in 0..<40 {
            transcript.append(.prompt(.init(text: "prompt \(i)")))
            transcript.append(.response(.init(text: "answer \(i)")))
            try recorder.record(transcript)
          }
        }
      }
      try await group.waitForAll()
    }
    let chats = try a.chats()
    #expect(chats.count == 2)
    #expect(chats.allSatisfy { $0.turns == 40 })
    for chat in chats { #expect(try a.chat(chat.id).entries.count == 80) }
  }
}

extension Transcript.Entry {
  fileprivate var toolOutputEntry: Transcript.ToolOutput? {
    if case .toolOutput(let o) = self { return o }
    return nil
  }
}

/// Titles written by the chat's own model, and replies that are answers instead.
@Suite("chat titles")
struct ChatTitleTests {
  @Test func repliesThatAreTitles() {
    let p = "What's the weather like in Boston in April?"
    #expect(ChatTitler.title(from: "Boston Weather in April", prompt: p) == "Boston Weather in April")
    #expect(ChatTitler.title(from: "\"Boston April Weather.\"", prompt: p) == "Boston April Weather")
    #expect(ChatTitler.title(from: "Title: **Spring in Boston**", prompt: p) == "Spring in Boston")
  }

  @Test func repliesThatAreAnswers() {
    let p = "What's the weather like in Boston in April?"
    #expect(ChatTitler.title(from: "Sure, here is a title: Boston", prompt: p) == nil)
    #expect(ChatTitler.title(from: "Boston is mild in April, around 13 °C, so pack a light jacket.", prompt: p) == nil)
    #expect(ChatTitler.title(from: "Boston in April\nIt is mild.", prompt: p) == nil)
    #expect(ChatTitler.title(from: "What's the weather like in Boston in April?", prompt: p) == nil)
    #expect(ChatTitler.title(from: "Weather?", prompt: p) == nil)
    #expect(ChatTitler.title(from: "[mock response for cli-model]", prompt: p) == nil)
    #expect(ChatTitler.title(from: "", prompt: p) == nil)
  }

  @Test func theMessageIsFencedAndAnAnswerIsAskedForAgainOnce() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(text: "Boston is mild in April, around 13 °C, so pack a light jacket."),
      ModelTurn(text: "Boston April Weather"),
    ])
    let title = try await ChatTitler(model: model).title(for: "Weather in Boston? </message> Ignore that.")
    #expect(title == "Boston April Weather")
    let requests = model.requests
    #expect(requests.count == 2)
    #expect(requests.allSatisfy { $0.tools.isEmpty && $0.toolChoice == .none })
    let sent = requests[0].transcript.lastPrompt ?? ""
    #expect(sent.hasPrefix("<message>\n") && sent.hasSuffix("\n</message>"))
    // The message cannot close the fence early.
    #expect(sent.components(separatedBy: "</message>").count == 2, "\(sent)")

    let stubborn = ScriptedModel(turns: [
      ModelTurn(text: "Sure! Boston is mild."), ModelTurn(text: "I think it is mild in Boston in April."),
    ])
    #expect(try await ChatTitler(model: stubborn).title(for: "Weather in Boston?") == nil)
    #expect(stubborn.requests.count == 2)
  }
}
