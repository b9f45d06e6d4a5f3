/// The chat page's HTTP server in process (``WebChatServer``) on 127.0.0.1: the link traded for the secret, the
/// headers of every answer, refusals before anything runs, room for the page among idle strangers, the size limit,
/// and a turn through the API and the event stream.
import Foundation
import Synchronization
import Testing
import ToolhostChat
import ToolhostCore
import ToolhostHistory
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport
import ToolhostWeb

@Suite("chat page: the server")
struct WebChatServerTests {
  /// A running server and what it needs.
  struct Running {
    let task: Task<Void, any Error>
    let port: Int
    let url: String
    let server: WebChatServer

    static func start(
      _ model: ScriptedModel, folder: TemporaryFolder,
      options: WebChatServer.Options = .init(maxBodyBytes: 4096)
    ) async throws -> Running {
      var rules = UserConfiguration(path: folder.file("config.json"))
      rules.toolRules = [.init(pattern: "*", value: .auto)]
      let engine = WebChatEngine(
        configuration: .init(
          model: model, tools: try ToolRegistry([WebChatEngineTests.Climate()]), rules: rules, setup: ChatSetup(),
          history: try ChatHistory.open(at: folder.file("history.sqlite")),
          newChat: .init(command: "chat", model: "fake")))
      let server = WebChatServer(engine: engine, options: options)
      let listening = OneShotBox()
      let task = Task { try await server.run { listening.set($0) } }
      for _ in 0..<500 {
        if let l = listening.value { return Running(task: task, port: l.port, url: l.url, server: server) }
        try await Task.sleep(for: .milliseconds(10))
      }
      task.cancel()
      throw TestFailure("the server did not start")
    }

    func stop() async {
      task.cancel()
      _ = await task.result
    }

    /// One request on a new connection; the whole answer (head and body) once the server closes it.
    func request(
      _ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:],
      within seconds: Double = 30
    ) async throws -> (status: Int, head: String, body: String) {
      let connection = try RawConnection(port: port)
      var lines = ["\(method) \(path) HTTP/1.1", "Connection: close"]
      if headers["Host"] == nil { lines.append("Host: 127.0.0.1:\(port)") }
      for (name, value) in headers { lines.append("\(name): \(value)") }
      if let body { lines.append("Content-Length: \(body.utf8.count)") }
      try connection.send(lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? ""))
      let bytes = await connection.readToEnd(within: seconds) ?? []
      let text = String(decoding: bytes, as: UTF8.self)
      let parts = text.components(separatedBy: "\r\n\r\n")
      let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
      return (status, parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
  }

  /// Holds the listening address once the server reports it.
  final class OneShotBox: Sendable {
    private let box = Mutex<WebChatServer.Listening?>(nil)
    func set(_ value: WebChatServer.Listening) { box.withLock { $0 = value } }
    var value: WebChatServer.Listening? { box.withLock { $0 } }
  }

  @Test func theLinkIsTradedOnceForTheSecretAndEveryAnswerCarriesTheCSP() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-server")
    let model = WebChatEngineTests.model()
    let running = try await Running.start(model, folder: folder)
    // The token is in the fragment, which browsers never send to a server.
    #expect(running.url.hasPrefix("http://127.0.0.1:\(running.port)/#token="))
    let link = String(running.url.dropFirst("http://127.0.0.1:\(running.port)/#token=".count))
    let origin = ["Origin": "http://127.0.0.1:\(running.port)"]
    // The page holds no secret and sets no cookie: it is served to anyone who names this server.
    let page = try await running.request("GET", "/")
    #expect(page.status == 200 && page.body.contains("<title>toolhost chat</title>"), "\(page.head)")
    #expect(!page.head.lowercased().contains("set-cookie"), "\(page.head)")
    #expect(page.head.contains("Content-Security-Policy: default-src 'none'; script-src 'self'"), "\(page.head)")
    #expect(page.head.contains("x-content-type-options: nosniff"))
    for asset in ["/app.js", "/app.css"] {
      #expect(try await running.request("GET", asset).status == 200)
    }
    let wrong = try await running.request("POST", "/api/session", body: #"{"link":"00"}"#, headers: origin)
    #expect(wrong.status == 401, "\(wrong)")
    #expect(
      try await running.request("POST", "/api/session", body: "{\"link\":\"\(link)\"}").status == 403,
      "a trade without the page's Origin")
    let traded = try await running.request("POST", "/api/session", body: "{\"link\":\"\(link)\"}", headers: origin)
    #expect(traded.status == 200 && !traded.head.lowercased().contains("set-cookie"), "\(traded)")
    let secret = try #require(try JSONValue.parse(traded.body)["secret"]?.stringValue)
    #expect(secret == running.server.access.sessionSecret)
    let again = try await running.request("POST", "/api/session", body: "{\"link\":\"\(link)\"}", headers: origin)
    #expect(again.status == 401 && again.body.contains("works once"), "the link worked twice: \(again)")
    // Nothing behind the page without the bearer, the event stream included; no cookie lets anything in; a foreign
    // Host or Origin is refused.
    let bearer = ["Authorization": "Bearer \(secret)"]
    #expect(try await running.request("GET", "/api/state", headers: bearer).status == 200)
    #expect(try await running.request("GET", "/api/events").status == 401)
    #expect(try await running.request("GET", "/api/state").status == 401)
    let cookie = try await running.request(
      "GET", "/api/state", headers: ["Cookie": "toolhost-web-\(running.port)=\(secret)"])
    #expect(cookie.status == 401, "\(cookie.head)")
    let rebound = try await running.request(
      "GET", "/api/state", headers: bearer.merging(["Host": "evil.example"]) { $1 })
    #expect(rebound.status == 421, "\(rebound.head)")
    let foreign = try await running.request(
      "POST", "/api/chats/new/messages", body: #"{"text":"hi"}"#,
      headers: bearer.merging(["Origin": "http://evil.example"]) { $1 })
    #expect(foreign.status == 403 && foreign.body.contains("other pages"), "\(foreign.body)")
    #expect(try running.server.engine.chats().chats.isEmpty, "a refused request made a chat")
    await running.stop()
  }

  /// 64 idle connections from anyone (the old cap) no longer lock the page out: connections that never show the
  /// secret are closed after the proof timeout, at most a few wait at once, and a refused one is closed at once.
  @Test func idleStrangersCannotLockThePageOut() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-server")
    let model = WebChatEngineTests.model()
    let running = try await Running.start(
      model, folder: folder, options: .init(maxConnections: 64, maxWaitingConnections: 8, proofTimeout: .seconds(2)))
    let bearer = ["Authorization": "Bearer \(running.server.access.sessionSecret)"]
    // The page's event stream, proven by its bearer, keeps its place throughout.
    let events = try RawConnection(port: running.port)
    try events.send(
      "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\nAuthorization: Bearer "
        + "\(running.server.access.sessionSecret)\r\n\r\n")
    #expect(await events.read(until: #""type":"hello""#, within: 30).contains("hello"))
    let strangers = try (0..<64).map { _ in try RawConnection(port: running.port) }
    // The server takes them in on two event loops; once all are in (each past the eight that may wait closed the
    // oldest), the page asks. Asked earlier, under load its connection can be taken in before some strangers' and
    // be the oldest waiting one when they come.
    var pushedOut = Set<Int>()
    let deadline = ContinuousClock.now + .seconds(10)
    while pushedOut.count < 64 - 8, ContinuousClock.now < deadline {
      for (index, stranger) in strangers.enumerated() where !pushedOut.contains(index) {
        if await stranger.read(within: 0) == [] { pushedOut.insert(index) }
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(pushedOut.count >= 64 - 8, "only \(pushedOut.count) of 64 idle connections were closed")
    let answered = try await running.request("GET", "/api/state", headers: bearer, within: 10)
    #expect(answered.status == 200, "the page was locked out by 64 idle connections: \(answered.head)")
    // Every stranger's connection is closed within the proof timeout (or pushed out by newer ones).
    var open = 0
    for stranger in strangers where await stranger.readToEnd(within: 6) == nil { open += 1 }
    #expect(open == 0, "\(open) idle connections are still open")
    // Requests held open without their bodies (as many as may wait) do not keep their places either: the page's
    // request is answered, and the held connection opened first is the one closed.
    let held = try (0..<8).map { _ in
      let connection = try RawConnection(port: running.port)
      try connection.send(
        "POST /api/session HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\nOrigin: http://127.0.0.1:\(running.port)"
          + "\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n")
      return connection
    }
    try await Task.sleep(for: .milliseconds(300))
    let past = try await running.request("GET", "/api/state", headers: bearer, within: 10)
    #expect(past.status == 200, "held requests turned the page away: \(past.head)")
    #expect(await held[0].readToEnd(within: 3) != nil, "the held connection opened first is still open")
    // A refused request's connection is closed after the refusal, not kept for the next try.
    let refused = try RawConnection(port: running.port)
    try refused.send("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\n\r\n")
    let refusal = String(decoding: await refused.readToEnd(within: 1.5) ?? [], as: UTF8.self)
    #expect(refusal.hasPrefix("HTTP/1.1 401"), "the refused connection stayed open: \(refusal)")
    // The event stream is still open (nothing more to read, or a ping; not its end).
    #expect(await events.read(within: 0.2) != [], "the proven event stream was closed")
    events.hangUp()
    await running.stop()
  }

  @Test func aTurnThroughTheAPIAndTheEventStream() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-web-server")
    let model = WebChatEngineTests.model()
    let running = try await Running.start(model, folder: folder)
    let bearer = ["Authorization": "Bearer \(running.server.access.sessionSecret)"]
    let events = try RawConnection(port: running.port)
    try events.send(
      "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\nAuthorization: Bearer "
        + "\(running.server.access.sessionSecret)\r\n\r\n")
    let opened = await events.read(until: #""type":"hello""#, within: 30)
    #expect(opened.contains("text/event-stream"), "\(opened)")
    let sent = try await running.request(
      "POST", "/api/chats/new/messages", body: #"{"text":"WEATHER in Oslo","nonce":"x1"}"#, headers: bearer)
    #expect(sent.status == 202 && sent.body == #"{"chat":1}"#, "\(sent)")
    let stream = await events.read(until: #""type":"done""#, within: 60)
    #expect(stream.contains(#""type":"turn","chat":1,"prompt":"WEATHER in Oslo""#), "\(stream)")
    #expect(stream.contains(#""nonce":"x1""#) && stream.contains(#""status":"ok""#), "\(stream)")
    #expect(stream.contains(#""type":"done""#) && stream.contains("Oslo is 16 °C."), "\(stream)")
    let state = try await running.request("GET", "/api/state", headers: bearer)
    let json = try JSONValue.parse(state.body)
    #expect(json["chats"]?[0]?["id"] == 1 && json["tools"]?[0]?["name"] == "climate", "\(state.body)")
    // Too big a request, a body that is not JSON, an unknown chat and a bad answer are refused with what to do.
    let big = try await running.request(
      "POST", "/api/chats/1/messages", body: #"{"text":""# + String(repeating: "a", count: 5000) + #""}"#,
      headers: bearer)
    #expect(big.status == 413 && big.body.contains("over 4096 bytes"), "\(big)")
    #expect(try await running.request("POST", "/api/chats/1/messages", body: "nope", headers: bearer).status == 400)
    let unknown = try await running.request("GET", "/api/chats/42", headers: bearer)
    #expect(unknown.status == 404 && unknown.body.contains("no chat has the id 42"), "\(unknown)")
    let approval = try await running.request(
      "POST", "/api/approvals/a9", body: #"{"answer":"once"}"#, headers: bearer)
    #expect(approval.status == 404, "\(approval)")
    events.hangUp()
    await running.stop()
  }
}
