import Foundation
import Testing
import ToolhostJSON
import ToolhostMCP
import ToolhostMCPHTTP

/// The rules of the Streamable HTTP endpoint, without a socket.
@Suite("MCP over HTTP: the exchange's rules")
struct HTTPExchangeTests {
  static let envelope: JSONValue = [
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [:],
  ]

  func body(_ message: JSONValue) -> [UInt8] { Array(message.serialized().utf8) }

  func modernCall(name: String = "getWeather") -> JSONValue {
    [
      "jsonrpc": "2.0", "id": 3, "method": "tools/call",
      "params": ["name": .string(name), "arguments": [:], "_meta": Self.envelope],
    ]
  }

  @Test func aBearerTokenIsRequiredWhenSet() {
    let exchange = MCPHTTPExchange(bearerToken: "s3cret")
    let missing = exchange.refusal(method: "POST", headers: [:])
    #expect(missing?.status == 401)
    #expect(missing?.headers["www-authenticate"] == "Bearer")
    #expect(exchange.refusal(method: "POST", headers: ["authorization": "Bearer wrong"])?.status == 401)
    #expect(exchange.refusal(method: "POST", headers: ["authorization": "Basic s3cret"])?.status == 401)
    #expect(exchange.refusal(method: "POST", headers: ["authorization": "Bearer s3cret"]) == nil)
    #expect(exchange.refusal(method: "POST", headers: ["authorization": "bearer s3cret"]) == nil)
    #expect(MCPHTTPExchange().refusal(method: "POST", headers: [:]) == nil)
  }

  @Test func theHealthCheckSaysOnlyOkWithoutTheToken() {
    let exchange = MCPHTTPExchange(bearerToken: "s3cret")
    #expect(exchange.healthAccess(headers: [:]) == .bare)
    #expect(exchange.healthAccess(headers: ["authorization": "Bearer nope"]) == .bare)
    #expect(exchange.healthAccess(headers: ["authorization": "Bearer s3cret"]) == .full)
    #expect(MCPHTTPExchange().healthAccess(headers: [:]) == .full)
    let evil = exchange.healthAccess(headers: ["authorization": "Bearer s3cret", "origin": "http://evil.example"])
    guard case .refused(let answer) = evil else {
      Issue.record("a page of another origin was answered: \(evil)")
      return
    }
    #expect(answer.status == 403)
  }

  @Test func aBusyAnswerIs503WithAJSONRPCError() throws {
    let answer = MCPHTTPExchange.busy(id: .number(9), limit: 4)
    #expect(answer.status == 503 && answer.headers["retry-after"] == "1")
    let body = try JSONValue.parse(String(decoding: answer.body, as: UTF8.self))
    #expect(body["id"] == 9 && body[path: "error", "code"]?.integerValue == Int64(MCPHTTPExchange.serverBusy))
    #expect(body[path: "error", "message"]?.stringValue?.contains("at most 4") == true)
  }

  @Test func browsersFromOtherOriginsAreRefused() {
    let exchange = MCPHTTPExchange(allowedOrigins: ["https://tools.example"])
    #expect(exchange.refusal(method: "POST", headers: ["origin": "http://evil.example:8080"])?.status == 403)
    #expect(exchange.refusal(method: "POST", headers: ["origin": "null"])?.status == 403)
    for allowed in ["http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:9", "https://tools.example"] {
      #expect(exchange.refusal(method: "POST", headers: ["origin": allowed]) == nil, "\(allowed)")
    }
    #expect(MCPHTTPExchange(allowedOrigins: ["*"]).originAllowed("https://anything.example"))
  }

  @Test func theBodyMustBeJSON() {
    let exchange = MCPHTTPExchange()
    #expect(exchange.refusal(method: "POST", headers: ["content-type": "text/plain"])?.status == 415)
    #expect(exchange.refusal(method: "POST", headers: ["content-type": "application/json; charset=utf-8"]) == nil)
    guard case .answer(let answer) = exchange.route(body: Array("{not json".utf8), headers: [:]) else {
      Issue.record("a broken body was routed")
      return
    }
    #expect(answer.status == 400)
    let error = try? JSONValue.parse(String(decoding: answer.body, as: UTF8.self))
    #expect(error?["error"]?["code"] == .integer(Int64(JSONRPCError.parseError)))
  }

  @Test func notificationsAndResponsesAreAcceptedWithoutAnAnswer() {
    let exchange = MCPHTTPExchange()
    let note = exchange.route(
      body: body(["jsonrpc": "2.0", "method": "notifications/initialized"]), headers: [:])
    #expect(note == .notification(.notification(method: "notifications/initialized", params: nil)))
    let response = exchange.route(body: body(["jsonrpc": "2.0", "id": 1, "result": [:]]), headers: [:])
    #expect(response == .answer(MCPHTTPExchange.Answer(status: 202)))
  }

  /// A 2026-07-28 request repeats its version, method and tool name in headers; a missing or different one is
  /// HeaderMismatch, status 400.
  @Test func modernRequestsMustAgreeWithTheirHeaders() throws {
    let exchange = MCPHTTPExchange()
    let good = [
      "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "getWeather",
    ]
    guard case .request = exchange.route(body: body(modernCall()), headers: good) else {
      Issue.record("a request with the right headers was refused")
      return
    }
    for (header, value) in [
      ("mcp-protocol-version", nil), ("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list"),
      ("mcp-name", "getTime"), ("mcp-name", nil),
    ] as [(String, String?)] {
      var headers = good
      headers[header] = value
      guard case .answer(let answer) = exchange.route(body: body(modernCall()), headers: headers) else {
        Issue.record("\(header): \(value ?? "absent") was accepted")
        continue
      }
      #expect(answer.status == 400)
      let reply = try JSONValue.parse(String(decoding: answer.body, as: UTF8.self))
      #expect(reply["error"]?["code"] == .integer(Int64(MCPHTTPExchange.headerMismatch)))
      #expect(reply["id"] == 3)
    }
    // A name that is not plain ASCII comes base64-encoded.
    var headers = good
    headers["mcp-name"] = MCPHTTPExchange.encodedHeaderValue("météo")
    #expect(headers["mcp-name"]!.hasPrefix("=?base64?"))
    guard case .request = exchange.route(body: body(modernCall(name: "météo")), headers: headers) else {
      Issue.record("a base64 Mcp-Name was not decoded")
      return
    }
  }

  /// A client of the `initialize` era needs no `Mcp-*` headers, but one naming a version toolhost does not speak is
  /// refused.
  @Test func earlierClientsNeedNoHeaders() {
    let exchange = MCPHTTPExchange()
    let list: JSONValue = ["jsonrpc": "2.0", "id": 1, "method": "tools/list"]
    guard case .request = exchange.route(body: body(list), headers: [:]) else {
      Issue.record("a request of the initialize era was refused")
      return
    }
    guard case .request = exchange.route(body: body(list), headers: ["mcp-protocol-version": "2025-06-18"]) else {
      Issue.record("a supported version in the header was refused")
      return
    }
    guard case .answer(let answer) = exchange.route(body: body(list), headers: ["mcp-protocol-version": "1999-01-01"])
    else {
      Issue.record("an unknown version in the header was accepted")
      return
    }
    #expect(answer.status == 400)
  }

  @Test func errorsGetTheirHTTPStatus() {
    func status(_ code: Int) -> Int {
      MCPHTTPExchange.status(of: .errorResponse(id: .number(1), error: JSONRPCError(code: code, message: "x")))
    }
    #expect(status(JSONRPCError.methodNotFound) == 404)
    #expect(status(JSONRPCError.invalidParams) == 400)
    #expect(status(-32022) == 400)
    #expect(status(JSONRPCError.internalError) == 200)
    #expect(MCPHTTPExchange.status(of: .response(id: .number(1), result: [:])) == 200)
  }
}
