public import ToolhostJSON

/// A JSON-RPC 2.0 request id: a number or a string.
public enum JSONRPCID: Sendable, Hashable, CustomStringConvertible {
  /// A numeric id.
  case number(Int64)
  /// A string id.
  case string(String)

  /// Reads an id; `nil` for anything but an integer or a string.
  public init?(json: JSONValue) {
    switch json {
    case .integer(let n): self = .number(n)
    case .string(let s): self = .string(s)
    case .real(let d) where d == d.rounded() && abs(d) < 9e15: self = .number(Int64(d))
    default: return nil
    }
  }

  /// The id as JSON.
  public var json: JSONValue {
    switch self {
    case .number(let n): .integer(n)
    case .string(let s): .string(s)
    }
  }

  /// The id as written in JSON.
  public var description: String { json.serialized() }
}

/// A JSON-RPC 2.0 error object; also thrown when a line is not a valid message.
public struct JSONRPCError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The error code.
  public var code: Int
  /// What went wrong.
  public var message: String
  /// Details.
  public var data: JSONValue?

  /// Makes an error.
  public init(code: Int, message: String, data: JSONValue? = nil) {
    self.code = code
    self.message = message
    self.data = data
  }

  /// -32700: the line is not JSON.
  public static let parseError = -32700
  /// -32600: the JSON is not a request object.
  public static let invalidRequest = -32600
  /// -32601: no such method.
  public static let methodNotFound = -32601
  /// -32602: the params are wrong.
  public static let invalidParams = -32602
  /// -32603: the server failed.
  public static let internalError = -32603

  /// The error as a JSON-RPC error object.
  public var json: JSONValue {
    var o: JSONObject = ["code": .integer(Int64(code)), "message": .string(message)]
    if let data { o["data"] = data }
    return .object(o)
  }

  /// A short name of a standard code (`invalid_params`), else `jsonrpc_<code>`.
  public var codeName: String {
    switch code {
    case Self.parseError: "parse_error"
    case Self.invalidRequest: "invalid_request"
    case Self.methodNotFound: "method_not_found"
    case Self.invalidParams: "invalid_params"
    case Self.internalError: "internal_error"
    default: "jsonrpc_\(code)"
    }
  }

  /// `message (code)`.
  public var description: String { "\(message) (JSON-RPC error \(code))" }
}

/// One JSON-RPC 2.0 message, as MCP's stdio transport frames it: one JSON object per line.
public enum JSONRPCMessage: Sendable, Equatable {
  /// A call that expects a response.
  case request(id: JSONRPCID, method: String, params: JSONValue?)
  /// A call that expects none.
  case notification(method: String, params: JSONValue?)
  /// A successful response.
  case response(id: JSONRPCID, result: JSONValue)
  /// An error response; `id` is `nil` when the request's id could not be read.
  case errorResponse(id: JSONRPCID?, error: JSONRPCError)

  /// Reads one line.
  ///
  /// - Throws: ``JSONRPCError`` with code -32700 when the line is not JSON, or -32600 (with the id in `data`
  ///   when one could be read) when it is JSON but not a JSON-RPC 2.0 message. Batches (arrays) are refused with
  ///   -32600: MCP 2025-06-18 and later do not use them.
  public static func parse(_ line: [UInt8]) throws(JSONRPCError) -> JSONRPCMessage {
    let value: JSONValue
    do { value = try JSONValue.parse(line) } catch {
      throw JSONRPCError(
        code: JSONRPCError.parseError, message: "not valid JSON: \(error.description)")
    }
    return try make(value)
  }

  /// Reads a parsed JSON value.
  ///
  /// - Throws: ``JSONRPCError`` with code -32600 when it is not a JSON-RPC 2.0 message.
  public static func make(_ value: JSONValue) throws(JSONRPCError) -> JSONRPCMessage {
    func invalid(_ why: String, id: JSONValue? = nil) -> JSONRPCError {
      JSONRPCError(
        code: JSONRPCError.invalidRequest, message: "invalid JSON-RPC message: \(why)",
        data: id.map { ["id": $0] })
    }
    guard let o = value.objectValue else {
      if value.arrayValue != nil { throw invalid("batches (arrays) are not supported") }
      throw invalid("not an object")
    }
    guard o["jsonrpc"]?.stringValue == "2.0" else {
      throw invalid("\"jsonrpc\" must be \"2.0\"", id: o["id"])
    }
    let params = o["params"]
    if let params, params.objectValue == nil, params.arrayValue == nil {
      throw invalid("\"params\" must be an object or an array", id: o["id"])
    }
    if let methodValue = o["method"] {
      guard let method = methodValue.stringValue else {
        throw invalid("\"method\" must be a string", id: o["id"])
      }
      guard let rawID = o["id"] else { return .notification(method: method, params: params) }
      guard let id = JSONRPCID(json: rawID) else {
        throw invalid("\"id\" must be a string or an integer")
      }
      return .request(id: id, method: method, params: params)
    }
    let id = o["id"].flatMap { JSONRPCID(json: $0) }
    if let error = o["error"] {
      guard let code = error["code"]?.integerValue, let message = error["message"]?.stringValue
      else {
        throw invalid("\"error\" needs an integer \"code\" and a string \"message\"", id: o["id"])
      }
      return .errorResponse(
        id: id, error: JSONRPCError(code: Int(code), message: message, data: error["data"]))
    }
    if let result = o["result"] {
      guard let id else { throw invalid("a response needs an \"id\"") }
      return .response(id: id, result: result)
    }
    throw invalid(
      "neither a request (\"method\") nor a response (\"result\" or \"error\")", id: o["id"])
  }

  /// The message as a JSON object.
  public var json: JSONValue {
    var o: JSONObject = ["jsonrpc": "2.0"]
    switch self {
    case .request(let id, let method, let params):
      o["id"] = id.json
      o["method"] = .string(method)
      if let params { o["params"] = params }
    case .notification(let method, let params):
      o["method"] = .string(method)
      if let params { o["params"] = params }
    case .response(let id, let result):
      o["id"] = id.json
      o["result"] = result
    case .errorResponse(let id, let error):
      o["id"] = id?.json ?? .null
      o["error"] = error.json
    }
    return .object(o)
  }

  /// The message as one line of compact JSON ending in a line feed (JSON strings escape their own line feeds).
  public var line: [UInt8] {
    var bytes = Array(json.serialized().utf8)
    bytes.append(0x0A)
    return bytes
  }
}
