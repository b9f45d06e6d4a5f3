package import ToolhostJSON
import ToolhostSystem

/// The 2026-07-28 protocol's request envelope and result fields, for both sides.
///
/// From 2026-07-28 on, MCP has no `initialize` handshake: every request carries `params._meta` with the protocol
/// version and the client's capabilities, a client asks `server/discover` what a server speaks, and every result
/// says `resultType` (list results also `ttlMs` and `cacheScope`). Older clients and servers still use
/// `initialize`; toolhost speaks both eras.
package enum MCPEnvelope {
  /// `_meta` key of the request's protocol version (required).
  package static let protocolVersionKey = "io.modelcontextprotocol/protocolVersion"
  /// `_meta` key of the client's capabilities (required; `{}` for none).
  package static let clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
  /// `_meta` key of the client's name and version (recommended).
  package static let clientInfoKey = "io.modelcontextprotocol/clientInfo"
  /// `_meta` key of the lowest level of log messages (`notifications/message`) a request wants; without it a
  /// 2026-07-28 server sends none.
  package static let logLevelKey = "io.modelcontextprotocol/logLevel"
  /// `_meta` key of the server's name and version on results (recommended).
  package static let serverInfoKey = "io.modelcontextprotocol/serverInfo"
  /// JSON-RPC error code UnsupportedProtocolVersion, with `data: {supported, requested}`.
  package static let unsupportedProtocolVersion = -32022

  /// What a request's envelope says.
  package enum Era: Equatable {
    /// No envelope: a client of an earlier version, which uses `initialize`.
    case handshake
    /// An envelope with a version toolhost serves.
    case modern(version: String)
  }

  /// The era of a request, or the error to answer it with: a missing required key, or a version toolhost does not
  /// serve (UnsupportedProtocolVersion, listing every version it speaks).
  package static func era(of params: JSONValue?) -> Result<Era, JSONRPCError> {
    guard let meta = params?["_meta"], let version = meta[protocolVersionKey] else { return .success(.handshake) }
    guard let text = version.stringValue else {
      return .failure(
        JSONRPCError(code: JSONRPCError.invalidParams, message: "the \(protocolVersionKey) value must be a string"))
    }
    guard meta[clientCapabilitiesKey] != nil else {
      return .failure(
        JSONRPCError(
          code: JSONRPCError.invalidParams,
          message: "params._meta is missing the required envelope key \(clientCapabilitiesKey)"))
    }
    guard MCPProtocol.modernVersions.contains(text) else {
      let supported = (MCPProtocol.modernVersions + MCPProtocol.supportedVersions).map { JSONValue.string($0) }
      return .failure(
        JSONRPCError(
          code: unsupportedProtocolVersion, message: "Unsupported protocol version",
          data: ["supported": .array(supported), "requested": .string(text)]))
    }
    return .success(.modern(version: text))
  }

  /// `params` with the envelope toolhost sends as a client: the version, no capabilities, and who it is.
  package static func stamped(_ params: JSONValue?, version: String) -> JSONValue {
    addingMeta(
      [
        protocolVersionKey: .string(version), clientCapabilitiesKey: [:],
        clientInfoKey: ["name": "toolhost", "version": .string(ToolhostVersion.version)],
      ], to: params)
  }

  /// `params` with `entries` set in its `_meta` (which is made when absent; other keys stay).
  package static func addingMeta(_ entries: JSONObject, to params: JSONValue?) -> JSONValue {
    var object = params?.objectValue ?? [:]
    var meta = object["_meta"]?.objectValue ?? [:]
    for (key, value) in entries { meta[key] = value }
    object["_meta"] = .object(meta)
    return .object(object)
  }

  /// `result` as a 2026-07-28 server sends it: `resultType: "complete"` and the server's name in `_meta`.
  package static func completed(_ result: JSONValue, serverName: String, serverVersion: String) -> JSONValue {
    var object = result.objectValue ?? [:]
    object["resultType"] = "complete"
    var meta = object["_meta"]?.objectValue ?? [:]
    meta[serverInfoKey] = ["name": .string(serverName), "version": .string(serverVersion)]
    object["_meta"] = .object(meta)
    return .object(object)
  }

  /// Why a 2026-07-28 result cannot be used, or `nil`: a `resultType` other than `complete` (an absent one is
  /// `complete`, as older servers send). `input_required` asks for input toolhost has no way to give.
  package static func problem(with result: JSONValue) -> String? {
    guard let type = result["resultType"], !type.isNull else { return nil }
    switch type.stringValue {
    case "complete": return nil
    case "input_required":
      return "the server asked for more input (resultType input_required), which toolhost cannot give"
    default:
      return "the result's resultType is \(type.serialized()), which toolhost does not know"
    }
  }
}
