/// The chat page's chats without HTTP (``WebChatEngine``): a turn's events in order, what the history keeps, a
/// picked tool, approvals answered on the page, a stop that ends a running tool, rename and delete. Against the
/// tests' scripted model, with in-process tools.
import Foundation
import Synchronization
import Testing
import ToolhostChat
import ToolhostCore
import ToolhostHistory
import ToolhostJSON
import ToolhostSchema
import ToolhostSession
import ToolhostTestSupport
import ToolhostWeb

@Suite("chat page: the chats")
struct WebChatEngineTests {
  /// The model of these tests and the server's. By the last prompt's word, when that tool is offered: WEATHER calls
  /// climate (Oslo), GUARDED calls guarded, SLOW calls slow. Once a tool's output is in, it says what came back: "It
  /// ran.", "Oslo is 16 °C." or, for a refused call, "It did not run.". Anything else (a title request too) is answered
  /// "Plain answer.". Text streams in pieces of four characters.
  static func model() -> ScriptedModel {
    ScriptedModel(streamPiece: 4) { request in
      let entries = request.transcript.entries
      let lastPrompt = entries.lastIndex { if case .prompt = $0 { true } else { false } }
      let sincePrompt = entries.suffix(from: (lastPrompt ?? -1) + 1)
      let outputs = sincePrompt.compactMap { if case .toolOutput(let o) = $0 { o } else { nil } }
      if let output = outputs.last {
        if output.isError { return ModelTurn(text: "It did not run.", finishReason: "stop") }
        if output.text.contains("averageHigh") { return ModelTurn(text: "Oslo is 16 °C.", finishReason: "stop") }
        return ModelTurn(text: output.text == "ran" ? "It ran." : "It did not run.", finishReason: "stop")
      }
      let prompt = request.transcript.lastPrompt ?? ""
      let offered = Set(request.tools.map(\.name))
      for (word, tool, arguments) in [
        ("WEATHER", "climate", ["city": "Oslo"] as JSONValue), ("GUARDED", "guarded", [:]), ("SLOW", "slow", [:]),
      ] where prompt.contains(word) && offered.contains(tool) {
        let call = Transcript.ToolCall(id: "call-\(tool)", toolName: tool, arguments: arguments)
        return ModelTurn(toolCalls: [call], finishReason: "tool_calls")
      }
      return ModelTurn(text: "Plain answer.", finishReason: "stop")
    }
  }

  /// Answers `{"city", "averageHigh": 16.0, "temperatureUnit": "°C"}`.
  struct Climate: Tool {
    let name = "climate"
    let description = "Typical weather of a city."
    let parameters: JSONValue = ["type": "object", "properties": ["city": ["type": "string"]]]
    func call(arguments: JSONValue) async throws -> JSONValue {
      ["city": arguments["city"] ?? "?", "averageHigh": 16.0, "temperatureUnit": "°C"]
    }
  }

  /// Counts its runs; the rules make it ask.
  struct Guarded: Tool {
    let name = "guarded"
    let description = "Needs the user's approval."
    let parameters: JSONValue = ["type": "object"]
    let runs: Counter
    func call(arguments: JSONValue) async throws -> String {
      runs.increment()
      return "ran"
    }
  }

  /// Raises `started`, then waits a minute unless cancelled (then raises `cancelled`).
  struct Slow: Tool {
    let name = "slow"
    let description = "Takes long."
    let parameters: JSONValue = ["type": "object"]
    let started: Counter
    let cancelled: Counter
    func call(arguments: JSONValue) async throws -> String {
      started.increment()
      do { try await Task.sleep(for: .seconds(60)) } catch {
        cancelled.increment()
        throw error
      }
      return "done"
    }
  }

  /// Never offered: the rules deny it.
  struct Forbidden: Tool {
    let name = "forbidden"
    let description = "Denied by the rules."
    let parameters: JSONValue = ["type": "object"]
    func call(arguments: JSONValue) async throws -> String { "no" }
  }

  final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
  }

  /// An engine over the four tools against `model`, with a fresh history.
  func engine(
    _ model: ScriptedModel, folder: TemporaryFolder, runs: Counter = Counter(),
    slow: (Counter, Counter) = (Counter(), Counter())
  )
    throws -> WebChatEngine
  {
    var rules = UserConfiguration(path: folder.file("config.json"))
    rules.toolRules = [
      .init(pattern: "guarded", value: .ask), .init(pattern: "forbidden", value: .deny),
      .init(pattern: "*", value: .auto),
    ]
    let tools = try ToolRegistry([
      Climate(), Guarded(runs: runs), Slow(started: slow.0, cancelled: slow.1), Forbidden(),
    ])
    return WebChatEngine(
      configuration: .init(
        model: model, tools: tools, rules: rules, setup: ChatSetup(),
        history: try ChatHistory.open(at: folder.file("history.sqlite")),
        newChat: .init(command: "chat", model: "fake")))
  }

  /// Stops the engine's answers.
  func close(_ engine: WebChatEngine) async {
    await engine.finish()
  }

  /// The events of `stream` until `chat`'s `done` (or `seconds` pass).
  func collect(
    _ stream: AsyncStream<JSONValue>, until chat: Int64? = nil, within seconds: Double = 30,
    onEvent: @escaping @Sendable (JSONValue) -> Void = { _ in }
  ) async -> [JSONValue] {
    let collected = Mutex<[JSONValue]>([])
    let schema = WebEventTests.schema
    let reader = Task {
      for await event in stream {
        // Every event the engine sends is one of the page's events (WebEvent.schema).
        #expect(schema.validate(event).isEmpty, "not a page event: \(event.serialized())")
        collected.withLock { $0.append(event) }
        onEvent(event)
        if event["type"] == "done", chat == nil || event["chat"] == .integer(chat!) { return }
      }
    }
    let timer = Task {
      try? await Task.sleep(for: .seconds(seconds))
      reader.cancel()
    }
    await reader.value
    timer.cancel()
    return collected.withLock { $0 }
  }

  @Test func aTurnStreamsItsEventsInOrderAndIsKept() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let engine = try engine(model, folder: folder)
    let stream = engine.events.subscribe()
    let chat = try engine.send("WEATHER in Oslo?", nonce: "n-1")
    let events = await collect(stream, until: chat)
    let types = events.compactMap { $0["type"]?.stringValue }
    #expect(types.first == "turn" && events.first?["nonce"] == "n-1", "\(events)")
    let calls = types.firstIndex(of: "call")
    let results = types.firstIndex(of: "result")
    let done = types.lastIndex(of: "done")
    #expect(calls != nil && results != nil && done != nil && calls! < results! && results! < done!, "\(types)")
    #expect(types.contains("text"), "nothing streamed: \(types)")
    let result = try #require(events.first { $0["type"] == "result" })
    #expect(result["call"]?["status"] == "ok" && result["call"]?["tool"] == "climate")
    #expect(result["call"]?["output"]?["value"]?["averageHigh"] == .real(16), "\(result)")
    #expect(events.last?["response"] == "Oslo is 16 °C." && events.last?["error"] == .null, "\(events.last!)")
    // Kept in the history, whole, and listed first.
    let stored = try await engine.chat(chat)
    #expect(stored["turns"]?[0]?["prompt"] == "WEATHER in Oslo?")
    #expect(stored["turns"]?[0]?["rounds"]?[0]?["calls"]?[0]?["status"] == "ok", "\(stored)")
    #expect(stored["turns"]?[0]?["response"] == "Oslo is 16 °C.")
    #expect(try engine.chats().chats.first?["id"] == .integer(chat))
    // The same chat goes on; a second send while it answers is refused.
    let again = try engine.send("Thanks", to: chat)
    #expect(again == chat)
    #expect(throws: WebChatEngine.Failure.self) { try engine.send("More", to: chat) }
    let thanks = await collect(stream, until: chat)
    #expect(!thanks.contains { $0["type"] == "note" }, "the turn with a call got a note: \(thanks)")
    // The answer to "Thanks" called no tool: the page is told that it is the model's own.
    let after = await collect(stream, within: 2)
    #expect(
      after.contains { $0["type"] == "note" && $0["text"] == .string(ChatTurn.uncheckedNote) }, "\(after)")
    #expect(try await engine.chat(chat)["turns"]?.arrayValue?.count == 2)
    await close(engine)
  }

  @Test func deniedToolsAreNotOfferedAndAPickedToolMustBeOffered() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let engine = try engine(model, folder: folder)
    let names = engine.toolsJSON.compactMap { $0["name"]?.stringValue }
    #expect(names == ["climate", "guarded", "slow"])
    #expect(engine.toolsJSON.first { $0["name"] == "guarded" }?["approval"] == "ask")
    #expect(throws: WebChatEngine.Failure.self) { try engine.send("hi", tool: "forbidden") }
    #expect(throws: WebChatEngine.Failure.self) { try engine.send("   ") }
    let stream = engine.events.subscribe()
    let chat = try engine.send("WEATHER please", tool: "climate")
    let events = await collect(stream, until: chat)
    #expect(events.first?["tool"] == "climate")
    // Only the picked tool went to the model.
    let offered = model.requests.map { $0.tools.map(\.name) }.filter { !$0.isEmpty }
    #expect(offered.first == ["climate"] && offered.allSatisfy { $0 == ["climate"] }, "\(offered)")
    await close(engine)
  }

  @Test(arguments: [WebChatEngine.ApprovalAnswer.once, .deny])
  func anApprovalIsAskedOnThePage(answer: WebChatEngine.ApprovalAnswer) async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let runs = Counter()
    let engine = try engine(model, folder: folder, runs: runs)
    let stream = engine.events.subscribe()
    let chat = try engine.send("GUARDED run it")
    let events = await collect(stream, until: chat) { event in
      if event["type"] == "approval", let id = event["approval"]?["id"]?.stringValue {
        #expect(event["approval"]?["tool"] == "guarded")
        // A plugin's approval says what it may reach; a tool of the program itself runs in it, and has none.
        #expect(event["approval"]?["reach"] == .null)
        #expect(engine.answer(approval: id, with: answer))
        #expect(!engine.answer(approval: id, with: answer), "answered twice")
      }
    }
    #expect(events.contains { $0["type"] == "approval-done" })
    #expect(runs.count == (answer == .once ? 1 : 0))
    #expect(events.last?["response"] == (answer == .once ? "It ran." : "It did not run."), "\(events)")
    let status = events.first { $0["type"] == "result" }?["call"]?["status"]
    #expect(status == (answer == .once ? "ok" : "refused"))
    await close(engine)
  }

  /// "Always" holds in every chat (one approver for all) and is written to the configuration file.
  @Test func alwaysHoldsInEveryChat() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let runs = Counter()
    let engine = try engine(model, folder: folder, runs: runs)
    let stream = engine.events.subscribe()
    let first = try engine.send("GUARDED once")
    _ = await collect(stream, until: first) { event in
      if let id = event["approval"]?["id"]?.stringValue { _ = engine.answer(approval: id, with: .always) }
    }
    let second = try engine.send("GUARDED again")
    let events = await collect(stream, until: second)
    #expect(!events.contains { $0["type"] == "approval" }, "asked again after always: \(events)")
    #expect(runs.count == 2)
    let config = try String(contentsOfFile: folder.file("config.json"), encoding: .utf8)
    #expect(config.contains("guarded"), "\(config)")
    #expect(engine.toolsJSON.first { $0["name"] == "guarded" }?["approval"] == "auto")
    await close(engine)
  }

  @Test func stopEndsTheRunningToolAndAWaitingApproval() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let (started, cancelled) = (Counter(), Counter())
    let engine = try engine(model, folder: folder, slow: (started, cancelled))
    let stream = engine.events.subscribe()
    let chat = try engine.send("SLOW one")
    let events = await collect(stream, until: chat) { event in
      guard event["type"] == "call" else { return }
      Task {
        // Once the tool runs.
        while started.count == 0 { try? await Task.sleep(for: .milliseconds(5)) }
        await engine.stop(chat)
      }
    }
    #expect(events.last?["stopped"] == true && events.last?["error"] == "stopped", "\(events.last!)")
    #expect(started.count == 1 && cancelled.count == 1, "the tool went on after the stop")
    #expect(engine.runningChats.isEmpty)
    // A stopped approval is refused and goes away.
    let second = try engine.send("GUARDED now", to: chat)
    let more = await collect(stream, until: second) { event in
      if event["type"] == "approval" { Task { await engine.stop(second) } }
    }
    #expect(more.contains { $0["type"] == "approval-done" }, "\(more)")
    #expect(more.last?["stopped"] == true)
    await close(engine)
  }

  /// A page that opens while a chat answers sees the turn so far and the approval it waits for.
  @Test func aRunningChatShowsItsTurnAndItsApprovalToANewPage() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let engine = try engine(model, folder: folder)
    let stream = engine.events.subscribe()
    let chat = try engine.send("GUARDED while a page opens")
    let asked = OneShotID()
    let collecting = Task {
      await collect(stream, until: chat) { event in
        if let id = event["approval"]?["id"]?.stringValue { asked.set(id) }
      }
    }
    let id = await asked.wait()
    let whole = try await engine.chat(chat)
    let last = whole["turns"]?.arrayValue?.last
    #expect(whole["running"] == true && last?["prompt"] == "GUARDED while a page opens", "\(whole)")
    #expect(last?["rounds"]?[0]?["calls"]?[0]?["status"] == "running", "\(whole)")
    var greeting = engine.subscribe().makeAsyncIterator()
    #expect(await greeting.next()?["type"] == "hello")
    #expect(await greeting.next()?["approval"]?["id"] == .string(id))
    #expect(engine.answer(approval: id, with: .deny))
    let events = await collecting.value
    #expect(events.last?["response"] == "It did not run.")
    // Done: the chat is the history's again, with the turn kept.
    let after = try await engine.chat(chat)
    #expect(after["running"] == false && after["turns"]?.arrayValue?.count == 1, "\(after)")
    await close(engine)
  }

  /// The first approval id an event brings, for a test to wait on.
  final class OneShotID: Sendable {
    private let state = Mutex<(id: String?, waiting: CheckedContinuation<String, Never>?)>((nil, nil))
    func set(_ id: String) {
      let waiting = state.withLock { s -> CheckedContinuation<String, Never>? in
        guard s.id == nil else { return nil }
        s.id = id
        defer { s.waiting = nil }
        return s.waiting
      }
      waiting?.resume(returning: id)
    }
    func wait() async -> String {
      await withCheckedContinuation { continuation in
        let ready = state.withLock { s -> String? in
          if let id = s.id { return id }
          s.waiting = continuation
          return nil
        }
        if let ready { continuation.resume(returning: ready) }
      }
    }
  }

  @Test func renameAndDelete() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-engine")
    let model = Self.model()
    let engine = try engine(model, folder: folder)
    let stream = engine.events.subscribe()
    let chat = try engine.send("hello")
    _ = await collect(stream, until: chat)
    let renamed = try engine.rename(chat, to: "  My chat ")
    #expect(renamed["title"] == "My chat")
    #expect(try engine.chats(matching: "My ch").chats.count == 1)
    #expect(throws: WebChatEngine.Failure.self) { try engine.rename(chat, to: " ") }
    try await engine.delete(chat)
    #expect(try engine.chats().chats.isEmpty)
    do throws(WebChatEngine.Failure) {
      _ = try await engine.chat(chat)
      Issue.record("a deleted chat is still there")
    } catch { #expect(error.status == 404) }
    await close(engine)
  }
}
