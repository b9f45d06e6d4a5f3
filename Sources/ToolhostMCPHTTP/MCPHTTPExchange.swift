import Foundation
import ToolhostJSON
public import ToolhostMCP
import ToolhostSystem

/// The rules of one HTTP exchange with toolhost's MCP endpoint, apart from any I/O: who may ask, what a POST must
/// look like, and which HTTP status a JSON-RPC answer gets.
///
/// The transport is Streamable HTTP without sessions (the 2026-07-28 shape, which 2025-11-25 clients also accept
/// when the server sends no `Mcp-Session-Id`): every client message is its own POST to the endpoint; a notification
/// or a client's response is accepted with 202 and no body; a request gets its JSON-RPC answer as
/// `application/json`. GET and DELETE are 405, since there is no session and no stream to open. A request that
/// carries the 2026-07-28 envelope must repeat its version, method and tool name in the `MCP-Protocol-Version`,
/// `Mcp-Method` and `Mcp-Name` headers (so proxies can route on them); a mismatch is HeaderMismatch (-32020).
public struct MCPHTTPExchange: Sendable {
  /// An answer to send as it is.
  public struct Answer: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// Extra headers (lowercased names).
    public var headers: [String: String]
    /// The body: JSON, or empty.
    public var body: [UInt8]

    /// Makes an answer.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
      self.status = status
      self.headers = headers
      self.body = body
    }

    /// An answer with a JSON-RPC message as its body and the status MCP gives it.
    public static func message(_ message: JSONRPCMessage, headers: [String: String] = [:]) -> Answer {
      var h = headers
      h["content-type"] = "application/json"
      return Answer(
        status: MCPHTTPExchange.status(of: message), headers: h, body: Array(message.json.serialized().utf8))
    }
  }

  /// What to do with a POST's body.
  public enum Route: Sendable, Equatable {
    /// Answer this (an error, or 202 for a notification).
    case answer(Answer)
    /// Hand this request to the MCP server and send its answer.
    case request(JSONRPCMessage)
    /// Hand this notification to the MCP server, and answer 202.
    case notification(JSONRPCMessage)
  }

  /// The bearer token every request must carry (`Authorization: Bearer …`), or `nil` for none.
  public var bearerToken: String?
  /// Origins allowed besides the loopback ones (`http://localhost:…`, `http://127.0.0.1:…`, `http://[::1]:…`);
  /// `*` allows any. A request without `Origin` (not from a browser) is allowed.
  public var allowedOrigins: [String]
  /// The largest request body read, in bytes.
  public var maxBodyBytes: Int

  /// Header carrying the request's protocol version.
  public static let protocolVersionHeader = "mcp-protocol-version"
  /// Header carrying the request's method (2026-07-28).
  public static let methodHeader = "mcp-method"
  /// Header carrying the tool's name of a `tools/call` (2026-07-28).
  public static let nameHeader = "mcp-name"
  /// JSON-RPC error code HeaderMismatch: an `Mcp-*` header disagrees with the body, or a required one is missing.
  public static let headerMismatch = -32020
  /// JSON-RPC error code of a `tools/call` refused because the server runs as many calls as it may (HTTP 503).
  public static let serverBusy = -32010

  /// Makes the rules.
  public init(bearerToken: String? = nil, allowedOrigins: [String] = [], maxBodyBytes: Int = 16 << 20) {
    self.bearerToken = bearerToken
    self.allowedOrigins = allowedOrigins
    self.maxBodyBytes = maxBodyBytes
  }

  /// The answer that refuses a request before its body is read, or `nil` when it may go on: a wrong or missing
  /// bearer token (401), an origin that is not allowed (403), a body that is not JSON (415).
  ///
  /// - Parameter headers: the request's headers, names lowercased.
  public func refusal(method: String, headers: [String: String]) -> Answer? {
    if let token = bearerToken {
      let given = bearer(in: headers)
      guard let given, Self.constantTimeEqual(given, token) else {
        return Self.plainError(
          401, JSONRPCError.invalidRequest,
          given == nil
            ? "this MCP endpoint needs a bearer token: send Authorization: Bearer <token>"
            : "the bearer token is not the one this MCP endpoint expects",
          headers: ["www-authenticate": "Bearer"])
      }
    }
    if let origin = headers["origin"], !originAllowed(origin) { return Self.originRefusal(origin) }
    if method == "POST", let type = headers["content-type"],
      !type.lowercased().hasPrefix("application/json")
    {
      return Self.plainError(415, JSONRPCError.invalidRequest, "the body must be application/json, not \(type)")
    }
    return nil
  }

  /// What `GET /health` may tell a request.
  public enum HealthAccess: Sendable, Equatable {
    /// Refused: a browser page of an origin that is not allowed (403).
    case refused(Answer)
    /// Only that the server is up (`{"status": "ok"}`): a token is required and the request has none, or another.
    /// Probes and load balancers need no token.
    case bare
    /// Everything: the number of tools, whether the MCP servers have started, the server's name and version.
    case full
  }

  /// What `GET /health` may tell a request with these headers: an origin that is not allowed is refused as on the
  /// endpoint; without the bearer token (when one is set) the answer says only that the server is up.
  ///
  /// - Parameter headers: the request's headers, names lowercased.
  public func healthAccess(headers: [String: String]) -> HealthAccess {
    if let origin = headers["origin"], !originAllowed(origin) { return .refused(Self.originRefusal(origin)) }
    guard let token = bearerToken else { return .full }
    return bearer(in: headers).map { Self.constantTimeEqual($0, token) } == true ? .full : .bare
  }

  /// The answer to a `tools/call` (request `id`) refused because `limit` calls already run: HTTP 503 with
  /// `Retry-After: 1` and a JSON-RPC error (``serverBusy``) that says so.
  public static func busy(id: JSONRPCID, limit: Int) -> Answer {
    var answer = Answer.message(
      .errorResponse(
        id: id,
        error: JSONRPCError(
          code: serverBusy,
          message: "the server is busy: it runs at most \(limit) tool calls at once (serve --max-calls); try again "
            + "in a moment")),
      headers: ["retry-after": "1"])
    answer.status = 503
    return answer
  }

  /// The 403 answer to a browser page of an origin that is not allowed.
  static func originRefusal(_ origin: String) -> Answer {
    plainError(
      403, JSONRPCError.invalidRequest,
      "requests from the origin \(origin) are not allowed (serve --allow-origin \(origin) allows them)")
  }

  /// The token of an `Authorization: Bearer …` header, if there is one.
  func bearer(in headers: [String: String]) -> String? {
    headers["authorization"].flatMap { value -> String? in
      let parts = value.split(separator: " ", maxSplits: 1)
      guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
      return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }
  }

  /// Whether a browser page from `origin` may call the endpoint.
  public func originAllowed(_ origin: String) -> Bool {
    if allowedOrigins.contains("*") || allowedOrigins.contains(origin) { return true }
    guard let url = URL(string: origin), let host = url.host, url.scheme == "http" || url.scheme == "https" else {
      return false
    }
    return Loopback.isHost(host)
  }

  /// What to do with a POST's body: the JSON-RPC message it holds, checked against the `Mcp-*` headers.
  ///
  /// - Parameter headers: the request's headers, names lowercased.
  public func route(body: [UInt8], headers: [String: String]) -> Route {
    let message: JSONRPCMessage
    do { message = try JSONRPCMessage.parse(body) } catch {
      let id = error.data?["id"].flatMap { JSONRPCID(json: $0) }
      var plain = error
      plain.data = nil
      return .answer(.message(.errorResponse(id: id, error: plain)))
    }
    switch message {
    case .notification:
      return .notification(message)
    case .response, .errorResponse:
      return .answer(Answer(status: 202))  // toolhost's server sends no requests; answers to none are ignored
    case .request(let id, let method, let params):
      if let problem = headerProblem(method: method, params: params, headers: headers) {
        return .answer(.message(.errorResponse(id: id, error: problem)))
      }
      return .request(message)
    }
  }

  /// Why a request's headers disagree with its body, or `nil`.
  func headerProblem(method: String, params: JSONValue?, headers: [String: String]) -> JSONRPCError? {
    let headerVersion = headers[Self.protocolVersionHeader]
    switch MCPEnvelope.era(of: params) {
    case .failure:
      return nil  // the server answers the envelope's own problem
    case .success(.handshake):
      // An earlier client says its version in the header after `initialize`; one toolhost does not speak is refused
      // (the transport's rule), an absent one is taken to be the initialize's.
      if let v = headerVersion, !MCPProtocol.supportedVersions.contains(v), !MCPProtocol.modernVersions.contains(v) {
        return JSONRPCError(
          code: JSONRPCError.invalidRequest,
          message: "unsupported MCP-Protocol-Version header \(v); toolhost speaks "
            + (MCPProtocol.modernVersions + MCPProtocol.supportedVersions).joined(separator: ", "))
      }
      return nil
    case .success(.modern(let version)):
      func mismatch(_ header: String, _ expected: String, _ got: String?) -> JSONRPCError {
        JSONRPCError(
          code: Self.headerMismatch,
          message: got == nil
            ? "the \(header) header is missing; it must be \(expected)"
            : "the \(header) header is \(got!) but the request says \(expected)",
          data: ["header": .string(header), "expected": .string(expected)])
      }
      if headerVersion != version { return mismatch("MCP-Protocol-Version", version, headerVersion) }
      if headers[Self.methodHeader] != method { return mismatch("Mcp-Method", method, headers[Self.methodHeader]) }
      if method == "tools/call", let name = params?["name"]?.stringValue {
        let given = headers[Self.nameHeader].map(Self.decodedHeaderValue)
        if given != name { return mismatch("Mcp-Name", name, given) }
      }
      return nil
    }
  }

  /// A header value as sent: plain ASCII, or `=?base64?…?=` for anything else.
  public static func decodedHeaderValue(_ raw: String) -> String {
    guard raw.hasPrefix("=?base64?"), raw.hasSuffix("?="), raw.count >= 11 else { return raw }
    let inner = String(raw.dropFirst(9).dropLast(2))
    guard let data = Data(base64Encoded: inner), let text = String(data: data, encoding: .utf8) else { return raw }
    return text
  }

  /// A value for an `Mcp-*` header: itself when it is plain printable ASCII without surrounding spaces, else the
  /// base64 form.
  public static func encodedHeaderValue(_ value: String) -> String {
    let plain =
      value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } && value.first != " " && value.last != " "
      && !value.hasPrefix("=?")
    return plain ? value : "=?base64?\(Data(value.utf8).base64EncodedString())?="
  }

  /// The HTTP status of a JSON-RPC answer: 400 for malformed requests, bad params, header mismatches and unknown
  /// versions, 404 for an unknown method, else 200.
  public static func status(of message: JSONRPCMessage) -> Int {
    guard case .errorResponse(_, let error) = message else { return 200 }
    switch error.code {
    case JSONRPCError.parseError, JSONRPCError.invalidRequest, JSONRPCError.invalidParams, headerMismatch,
      -32021, MCPEnvelope.unsupportedProtocolVersion:
      return 400
    case JSONRPCError.methodNotFound:
      return 404
    default:
      return 200
    }
  }

  /// An error answer with no request id.
  package static func plainError(_ status: Int, _ code: Int, _ text: String, headers: [String: String] = [:]) -> Answer
  {
    var answer = Answer.message(
      .errorResponse(id: nil, error: JSONRPCError(code: code, message: text)), headers: headers)
    answer.status = status
    return answer
  }

  /// Compares secrets in time that depends only on their lengths.
  static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var diff = UInt8(x.count == y.count ? 0 : 1)
    for i in 0..<max(x.count, y.count) {
      diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
    }
    return diff == 0
  }
}
