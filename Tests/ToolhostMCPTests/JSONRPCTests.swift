import Synchronization
import Testing
import ToolhostCore
import ToolhostJSON

@testable import ToolhostMCP

@Suite("JSON-RPC framing")
struct JSONRPCTests {
  func parse(_ text: String) throws(JSONRPCError) -> JSONRPCMessage {
    try JSONRPCMessage.parse(Array(text.utf8))
  }

  @Test func readsEveryKindOfMessage() throws {
    #expect(
      try parse(#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}}"#)
        == .request(id: .number(7), method: "tools/list", params: ["cursor": "x"]))
    #expect(
      try parse(#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#)
        == .request(id: .string("a"), method: "ping", params: nil))
    #expect(
      try parse(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        == .notification(method: "notifications/initialized", params: nil))
    #expect(
      try parse(#"{"jsonrpc":"2.0","id":1,"result":{}}"#) == .response(id: .number(1), result: [:]))
    #expect(
      try parse(#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope"}}"#)
        == .errorResponse(id: .number(2), error: JSONRPCError(code: -32601, message: "nope")))
  }

  @Test func refusesWhatIsNotAMessage() {
    func code(_ text: String) -> Int? {
      do {
        _ = try parse(text)
        return nil
      } catch { return error.code }
    }
    #expect(code("not json") == JSONRPCError.parseError)
    #expect(code(#"{"id":1,"method":"x"}"#) == JSONRPCError.invalidRequest)  // no "jsonrpc"
    #expect(code(#"[{"jsonrpc":"2.0","method":"x"}]"#) == JSONRPCError.invalidRequest)  // batch
    #expect(
      code(#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#) == JSONRPCError.invalidRequest)
    #expect(code(#"{"jsonrpc":"2.0","id":null,"method":"x"}"#) == JSONRPCError.invalidRequest)
    // A response without an id.
    #expect(code(#"{"jsonrpc":"2.0","result":1}"#) == JSONRPCError.invalidRequest)
  }

  @Test func writesOneLinePerMessage() throws {
    let message = JSONRPCMessage.request(
      id: .number(3), method: "tools/call", params: ["text": "two\nlines"])
    let line = message.line
    #expect(line.last == 0x0A)
    #expect(line.dropLast().contains(0x0A) == false)
    #expect(try JSONRPCMessage.parse(Array(line.dropLast())) == message)
    let error = JSONRPCMessage.errorResponse(
      id: nil, error: JSONRPCError(code: -32700, message: "bad"))
    #expect(error.json["id"] == .null)
  }
}

/// A tool for server tests.
struct Adder: Tool {
  let name = "add"
  let description = "Adds two integers."
  let parameters: JSONValue = [
    "type": "object", "required": ["a", "b"], "additionalProperties": false,
    "properties": ["a": ["type": "integer"], "b": ["type": "integer"]],
  ]
  var outputSchema: JSONValue? { ["type": "object", "properties": ["sum": ["type": "integer"]]] }
  var annotations: ToolAnnotations { ToolAnnotations(title: "Add", readOnlyHint: true) }
  func call(arguments: JSONValue) async throws -> ToolOutput {
    let sum = (arguments["a"]?.integerValue ?? 0) + (arguments["b"]?.integerValue ?? 0)
    return ToolOutput(value: ["sum": .integer(sum)], text: "\(sum)")
  }
}

/// A tool that sleeps until cancelled or 10 s pass.
struct Sleeper: Tool {
  let name = "sleep"
  let description = "Sleeps."
  let parameters: JSONValue = ["type": "object"]
  func call(arguments: JSONValue) async throws -> String {
    try await Task.sleep(for: .seconds(10))
    return "woke"
  }
}

/// Collects a server's replies.
final class Replies: Sendable {
  private let box = Mutex<[JSONRPCMessage]>([])
  var all: [JSONRPCMessage] { box.withLock { $0 } }
  var sink: @Sendable (JSONRPCMessage) -> Void { { [self] m in box.withLock { $0.append(m) } } }

  func wait(count: Int, timeout: Double = 5) async -> [JSONRPCMessage] {
    let end = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    while all.count < count, ContinuousClock.now < end {
      try? await Task.sleep(for: .milliseconds(10))
    }
    return all
  }
}

@Suite("MCP server (toolhost serve --mcp)")
struct MCPServerTests {
  let server = MCPServer(registry: try! ToolRegistry([Adder(), Sleeper()]))

  func request(_ id: Int64, _ method: String, _ params: JSONValue? = nil) -> JSONRPCMessage {
    .request(id: .number(id), method: method, params: params)
  }

  @Test func negotiatesTheProtocolVersion() async {
    let replies = Replies()
    server.handle(
      request(1, "initialize", ["protocolVersion": "2025-06-18", "capabilities": [:]]),
      reply: replies.sink)
    server.handle(request(2, "initialize", ["protocolVersion": "2031-01-01"]), reply: replies.sink)
    let got = await replies.wait(count: 2)
    guard case .response(_, let first) = got[0], case .response(_, let second) = got[1] else {
      Issue.record("expected two responses, got \(got)")
      return
    }
    #expect(first["protocolVersion"] == "2025-06-18")
    #expect(second["protocolVersion"] == "2025-11-25")
    #expect(first[path: "capabilities", "tools"] != nil)
    #expect(first[path: "serverInfo", "name"] == "toolhost")
  }

  /// The 2026-07-28 envelope: `params._meta` with the version and the client's capabilities.
  func envelope(_ version: String = "2026-07-28", capabilities: Bool = true) -> JSONValue {
    var meta: JSONObject = ["io.modelcontextprotocol/protocolVersion": .string(version)]
    if capabilities { meta["io.modelcontextprotocol/clientCapabilities"] = [:] }
    return ["_meta": .object(meta)]
  }

  @Test func speaks2026WithAnEnvelopeAndRefusesWhatItCannotServe() async {
    let replies = Replies()
    server.handle(request(1, "server/discover", envelope()), reply: replies.sink)
    server.handle(request(2, "tools/list", envelope()), reply: replies.sink)
    server.handle(request(3, "tools/list", envelope("2030-01-01")), reply: replies.sink)
    server.handle(request(4, "tools/list", envelope(capabilities: false)), reply: replies.sink)
    server.handle(request(5, "server/discover"), reply: replies.sink)
    server.handle(request(6, "tools/list"), reply: replies.sink)
    let got = await replies.wait(count: 6)
    guard case .response(_, let discover) = got[0], case .response(_, let list) = got[1],
      case .errorResponse(_, let unsupported) = got[2], case .errorResponse(_, let missing) = got[3],
      case .errorResponse(_, let bare) = got[4], case .response(_, let older) = got[5]
    else {
      Issue.record("unexpected replies: \(got)")
      return
    }
    #expect(discover["supportedVersions"] == ["2026-07-28"])
    #expect(discover["resultType"] == "complete" && discover["cacheScope"] == "public")
    #expect(discover[path: "_meta", "io.modelcontextprotocol/serverInfo", "name"] == "toolhost")
    #expect(discover[path: "capabilities", "tools"] != nil)
    #expect(list["resultType"] == "complete" && list["ttlMs"] == 300_000 && list["cacheScope"] == "public")
    #expect(list["tools"]?.arrayValue?.count == 2)
    #expect(unsupported.code == -32022)
    #expect(unsupported.data?["requested"] == "2030-01-01")
    #expect(unsupported.data?["supported"]?.arrayValue?.contains("2026-07-28") == true)
    #expect(unsupported.data?["supported"]?.arrayValue?.contains("2025-11-25") == true)
    #expect(missing.code == JSONRPCError.invalidParams)
    #expect(missing.message.contains("clientCapabilities"))
    #expect(bare.code == JSONRPCError.invalidParams)
    // An earlier client's list is as before: no 2026-07-28 fields.
    #expect(older["resultType"] == nil && older["ttlMs"] == nil && older["tools"]?.arrayValue?.count == 2)
    #expect(server.protocolVersion == "2026-07-28")
  }

  @Test func a2026CallSaysItsResultTypeAndAnEarlierOneDoesNot() async {
    let replies = Replies()
    var modern = envelope().objectValue!
    modern["name"] = "add"
    modern["arguments"] = ["a": 1, "b": 2]
    server.handle(request(1, "tools/call", .object(modern)), reply: replies.sink)
    server.handle(request(2, "tools/call", ["name": "add", "arguments": ["a": 1, "b": 2]]), reply: replies.sink)
    let got = await replies.wait(count: 2)
    let results = got.compactMap { message -> (Int64, JSONValue)? in
      guard case .response(.number(let id), let result) = message else { return nil }
      return (id, result)
    }
    let byID = Dictionary(uniqueKeysWithValues: results)
    #expect(byID[1]?["resultType"] == "complete" && byID[1]?["isError"] == false)
    #expect(byID[2] != nil && byID[2]?["resultType"] == nil)
  }

  @Test func listsToolsWithSchemasAndAnnotations() async {
    let replies = Replies()
    server.handle(request(1, "tools/list"), reply: replies.sink)
    let got = await replies.wait(count: 1)
    guard case .response(_, let result) = got.first, let tools = result["tools"]?.arrayValue else {
      Issue.record("no tools/list result: \(got)")
      return
    }
    #expect(tools.map { $0["name"] } == ["add", "sleep"])
    #expect(tools[0][path: "inputSchema", "required"] == ["a", "b"])
    #expect(tools[0][path: "outputSchema", "type"] == "object")
    #expect(tools[0][path: "annotations", "readOnlyHint"] == true)
    #expect(tools[0]["title"] == "Add")
    #expect(tools[1]["outputSchema"] == nil)
  }

  @Test func callsReturnStructuredContentAndFailuresAreIsError() async {
    let replies = Replies()
    server.handle(
      request(1, "tools/call", ["name": "add", "arguments": ["a": 2, "b": 3]]), reply: replies.sink)
    server.handle(
      request(2, "tools/call", ["name": "add", "arguments": ["a": "two"]]), reply: replies.sink)
    let got = await replies.wait(count: 2)
    let byID = Dictionary(
      got.compactMap { m -> (JSONRPCID, JSONValue)? in
        if case .response(let id, let r) = m { return (id, r) }
        return nil
      }, uniquingKeysWith: { a, _ in a })
    #expect(byID[.number(1)]?["structuredContent"] == ["sum": 5])
    #expect(byID[.number(1)]?["isError"] == false)
    #expect(byID[.number(2)]?["isError"] == true)
    let text = byID[.number(2)]?["content"]?[0]?["text"]?.stringValue ?? ""
    #expect(text.contains("invalid arguments"), "\(text)")
  }

  @Test func protocolErrorsAreJSONRPCErrors() async {
    let replies = Replies()
    server.handle(
      request(1, "tools/call", ["name": "nope", "arguments": [:]]), reply: replies.sink)
    server.handle(request(2, "tools/call", ["arguments": [:]]), reply: replies.sink)
    server.handle(request(3, "resources/list"), reply: replies.sink)
    server.handle(line: Array("{not json".utf8), reply: replies.sink)
    server.handle(request(4, "ping"), reply: replies.sink)
    server.handle(
      .notification(method: "notifications/initialized", params: nil), reply: replies.sink)
    let got = await replies.wait(count: 5)
    #expect(got.count == 5)
    var codes: [String: Int] = [:]
    for m in got {
      if case .errorResponse(let id, let e) = m { codes[id?.description ?? "null"] = e.code }
    }
    #expect(codes["1"] == JSONRPCError.invalidParams)
    #expect(codes["2"] == JSONRPCError.invalidParams)
    #expect(codes["3"] == JSONRPCError.methodNotFound)
    #expect(codes["null"] == JSONRPCError.parseError)
    #expect(got.contains(.response(id: .number(4), result: [:])))
  }

  @Test func aCancelledCallGetsNoResponse() async {
    let replies = Replies()
    server.handle(
      request(9, "tools/call", ["name": "sleep", "arguments": [:]]), reply: replies.sink)
    try? await Task.sleep(for: .milliseconds(100))
    let started = ContinuousClock.now
    server.handle(
      .notification(method: "notifications/cancelled", params: ["requestId": 9]),
      reply: replies.sink)
    server.handle(request(10, "ping"), reply: replies.sink)
    _ = await replies.wait(count: 1)
    try? await Task.sleep(for: .milliseconds(300))
    #expect(replies.all == [.response(id: .number(10), result: [:])])
    #expect(ContinuousClock.now - started < .seconds(5))
  }
}
