import Foundation
import Synchronization
import ToolhostJSON
import ToolhostPlugins
public import ToolhostSystem
public import ToolhostTools

/// Serves the tools of a ``ToolRegistry`` as an MCP stdio server (`toolhost serve --mcp`).
///
/// It speaks both eras of MCP, request by request. A 2026-07-28 client sends the version in each request's
/// `params._meta` and may ask `server/discover`; its results carry `resultType`, and `tools/list` also `ttlMs` and
/// `cacheScope` (the list is fixed while the server runs). An earlier client sends `initialize` (answered with its
/// protocol version when toolhost speaks it, else the newest it speaks) and `ping`. Both get `tools/list` (every
/// tool with its `inputSchema`, `outputSchema` and `annotations`, in one page, in a fixed order) and
/// `tools/call`. Calls run concurrently through the registry, so arguments are validated and each
/// call has its time limit; a failed call, including invalid arguments, is a result with `isError: true` whose
/// text says what went wrong, so a model can correct itself. An unknown tool, missing params or an unknown method
/// get JSON-RPC errors; `notifications/cancelled` cancels a running call (which then gets no response); other
/// notifications are ignored.
///
/// ```swift
/// let registry = try ToolRegistry(await PluginCatalog.discover(folders: ["plugins"]).tools)
/// await MCPServer(registry: registry).serve()  // JSON-RPC on stdin and stdout until stdin ends
/// ```
public final class MCPServer: Sendable {
  /// How the server presents itself and runs calls.
  public struct Options: Sendable {
    /// `serverInfo.name`.
    public var name: String
    /// `serverInfo.version`.
    public var version: String
    /// Instructions for the client's model, if any.
    public var instructions: String?
    /// A time limit for every call, overriding the tools' own.
    public var timeout: Duration?
    /// A stdout cap for every plugin call, overriding the default.
    public var outputLimit: Int?
    /// Tools of the registry that are not served, with the reason a `tools/call` of one is told (for example a tool
    /// that needs the user's approval, which a server on stdio cannot ask for). They are left out of `tools/list`.
    public var withheld: [String: String]

    /// Makes options.
    public init(
      name: String = "toolhost", version: String = ToolhostVersion.version,
      instructions: String? = nil,
      timeout: Duration? = nil, outputLimit: Int? = nil, withheld: [String: String] = [:]
    ) {
      self.name = name
      self.version = version
      self.instructions = instructions
      self.timeout = timeout
      self.outputLimit = outputLimit
      self.withheld = withheld
    }
  }

  /// The tools served now, and their `tools/list` results in both eras.
  private struct Served: Sendable {
    var registry: ToolRegistry
    var withheld: [String: String]
    var list: JSONValue
    var modernList: JSONValue

    init(_ registry: ToolRegistry, withheld: [String: String], final: Bool) {
      self.registry = registry
      self.withheld = withheld
      let tools = registry.tools.filter { withheld[$0.name] == nil }
      list = ["tools": .array(tools.map { MCPServer.listing($0, modern: false) })]
      // While more tools are coming, a 2026-07-28 client must not keep this list.
      modernList = [
        "tools": .array(tools.map { MCPServer.listing($0, modern: true) }),
        "ttlMs": .integer(final ? Int64(MCPServer.toolListTTL) : 0), "cacheScope": "public",
      ]
    }
  }

  private struct State {
    var calls: [JSONRPCID: Task<Void, Never>] = [:]
    var cancelled: Set<JSONRPCID> = []
    var protocolVersion: String?
    var served: Served
    /// Set while more tools are expected (``expectTools()``); completed when they come.
    var moreTools: OneShot<Void>?
    /// Sends a message to the client unasked (`notifications/tools/list_changed`), once ``serve(channel:)`` runs.
    var notify: (@Sendable (JSONRPCMessage) -> Void)?
  }

  /// The tools served now.
  public var registry: ToolRegistry { state.withLock { $0.served.registry } }
  /// The names of the tools served now (the registry's, less those withheld), in `tools/list` order.
  public var servedToolNames: [String] {
    state.withLock { s in s.served.registry.tools.map(\.name).filter { s.served.withheld[$0] == nil } }
  }
  /// Whether more tools are expected (``expectTools()`` was called and ``serveTools(_:withheld:)`` not yet).
  public var expectsMoreTools: Bool { state.withLock { $0.moreTools != nil } }
  /// The options.
  public let options: Options
  private let state: Mutex<State>

  /// How long a 2026-07-28 client may cache `tools/list`: the list does not change while the server runs, but a
  /// new server (after plugins change) may answer differently.
  static let toolListTTL = 300_000

  /// Makes a server for `registry`.
  public init(registry: ToolRegistry, options: Options = Options()) {
    self.options = options
    state = Mutex(State(served: Served(registry, withheld: options.withheld, final: true)))
  }

  /// Says that more tools are coming (MCP servers still starting, say): until ``serveTools(_:withheld:)``, a call of
  /// a tool that is not served waits for them instead of failing, and `tools/list` answers at once with the tools
  /// there are (a 2026-07-28 client is told not to cache it).
  public func expectTools() {
    state.withLock { s in
      if s.moreTools == nil { s.moreTools = OneShot<Void>() }
      s.served = Served(s.served.registry, withheld: s.served.withheld, final: false)
    }
  }

  /// Serves `registry` from now on, `withheld` left out of it; calls waiting for tools go on, and a client of the
  /// `initialize` era is sent `notifications/tools/list_changed` when the list changed. Does not throw.
  public func serveTools(_ registry: ToolRegistry, withheld: [String: String]) {
    let (waiting, notify, changed) = state.withLock {
      s -> (OneShot<Void>?, (@Sendable (JSONRPCMessage) -> Void)?, Bool) in
      let before = s.served.list
      s.served = Served(registry, withheld: withheld, final: true)
      defer { s.moreTools = nil }
      return (s.moreTools, s.notify, s.served.list != before)
    }
    if changed, protocolVersion.map({ !MCPProtocol.modernVersions.contains($0) }) ?? false {
      notify?(.notification(method: "notifications/tools/list_changed", params: nil))
    }
    waiting?.complete(())
  }

  /// The protocol version agreed with the client, once it has sent `initialize`, or the version of the last
  /// 2026-07-28 request.
  public var protocolVersion: String? { state.withLock { $0.protocolVersion } }

  /// Serves `channel` (stdin and stdout by default; or, say, the server end of an ``MCPInMemoryTransport`` pair)
  /// until its input ends or the calling task is cancelled; then waits for the calls still running (each ends by its
  /// time limit at the latest) and sends their results, or, when the task was cancelled, cancels them first; then
  /// flushes the output. Does not throw.
  public func serve(channel: some MCPServerChannel = LineChannel()) async {
    let ended = OneShot<Void>()
    state.withLock { $0.notify = { channel.send($0.line) } }
    channel.start(
      onLine: { [self] line in handle(line: line) { channel.send($0.line) } },
      onEnd: { ended.complete(()) })
    await withTaskCancellationHandler {
      await ended.wait()
    } onCancel: {
      ended.complete(())
    }
    // No more requests can come: what runs now is all there is. A client that closes its input after its last
    // request still gets the answers.
    let running = state.withLock { Array($0.calls.values) }
    if Task.isCancelled {
      for task in running { task.cancel() }
    }
    for task in running { await task.value }
    await channel.finish(timeout: .seconds(5))
  }

  /// Handles one line: a JSON-RPC message, or a parse error answered with an error response.
  public func handle(line: [UInt8], reply: @escaping @Sendable (JSONRPCMessage) -> Void) {
    let message: JSONRPCMessage
    do { message = try JSONRPCMessage.parse(line) } catch {
      let id = error.data?["id"].flatMap { JSONRPCID(json: $0) }
      var plain = error
      plain.data = nil
      reply(.errorResponse(id: id, error: plain))
      return
    }
    handle(message, reply: reply)
  }

  /// Handles one message. Requests are answered through `reply`, quick ones at once and tool calls from a task
  /// of their own when they finish; a call that asked for progress may send `notifications/progress` through
  /// `reply` before its response.
  public func handle(_ message: JSONRPCMessage, reply: @escaping @Sendable (JSONRPCMessage) -> Void) {
    switch message {
    case .notification(let method, let params):
      if method == "notifications/cancelled", let raw = params?["requestId"],
        let id = JSONRPCID(json: raw)
      {
        let task = state.withLock { s -> Task<Void, Never>? in
          guard let t = s.calls[id] else { return nil }
          s.cancelled.insert(id)
          return t
        }
        task?.cancel()
      }
    case .response, .errorResponse:
      break  // toolhost sends no requests of its own
    case .request(let id, let method, let params):
      handleRequest(id: id, method: method, params: params, reply: reply)
    }
  }

  /// Answers one request, in the protocol era its envelope (or its absence) names.
  private func handleRequest(
    id: JSONRPCID, method: String, params: JSONValue?, reply: @escaping @Sendable (JSONRPCMessage) -> Void
  ) {
    func fail(_ code: Int, _ text: String) {
      reply(.errorResponse(id: id, error: JSONRPCError(code: code, message: text)))
    }
    let modern: Bool
    switch MCPEnvelope.era(of: params) {
    case .failure(let error):
      reply(.errorResponse(id: id, error: error))
      return
    case .success(.handshake):
      modern = false
    case .success(.modern(let version)):
      modern = true
      state.withLock { $0.protocolVersion = version }
    }
    let served = state.withLock { $0.served }
    func answer(_ result: JSONValue) {
      reply(.response(id: id, result: inEra(result, modern: modern)))
    }
    switch method {
    case "server/discover":
      guard modern else {
        fail(
          JSONRPCError.invalidParams,
          "server/discover needs params._meta with \(MCPEnvelope.protocolVersionKey) and "
            + "\(MCPEnvelope.clientCapabilitiesKey)")
        return
      }
      var result: JSONObject = [
        "supportedVersions": .array(MCPProtocol.modernVersions.map { .string($0) }),
        "capabilities": ["tools": [:]], "ttlMs": served.modernList["ttlMs"] ?? 0, "cacheScope": "public",
      ]
      if let instructions = options.instructions { result["instructions"] = .string(instructions) }
      answer(.object(result))
    case "initialize" where modern:
      fail(
        JSONRPCError.methodNotFound,
        "initialize is not part of the 2026-07-28 protocol: send requests with the envelope in params._meta")
    case "initialize":
      reply(.response(id: id, result: .object(initialize(requested: params?["protocolVersion"]?.stringValue))))
    case "ping":
      answer([:])
    case "tools/list":
      if let cursor = params?["cursor"], !cursor.isNull {
        fail(
          JSONRPCError.invalidParams,
          "unknown cursor \(cursor.serialized()): every tool is on the first page")
        return
      }
      answer(modern ? served.modernList : served.list)
    case "tools/call":
      callTool(id: id, params: params, modern: modern, reply: reply)
    default:
      fail(
        JSONRPCError.methodNotFound, "method not found: \(method) (toolhost serves tools only)")
    }
  }

  /// The handshake era's `initialize`: the version the client asked for when it is supported (else the latest),
  /// the capabilities, the server's name and version, and its instructions.
  private func initialize(requested: String?) -> JSONObject {
    let version =
      requested.flatMap { MCPProtocol.supportedVersions.contains($0) ? $0 : nil }
      ?? MCPProtocol.latestVersion
    state.withLock { $0.protocolVersion = version }
    var result: JSONObject = [
      "protocolVersion": .string(version),
      "capabilities": ["tools": ["listChanged": true]],
      "serverInfo": ["name": .string(options.name), "version": .string(options.version)],
    ]
    if let instructions = options.instructions {
      result["instructions"] = .string(instructions)
    }
    return result
  }

  /// `tools/call`: a withheld tool's refusal, an unknown tool's error (with the nearest names), or the call started
  /// (after the tools still coming, when the name may be one of theirs).
  private func callTool(
    id: JSONRPCID, params: JSONValue?, modern: Bool, reply: @escaping @Sendable (JSONRPCMessage) -> Void
  ) {
    let (served, moreTools) = state.withLock { ($0.served, $0.moreTools) }
    guard let name = params?["name"]?.stringValue else {
      reply(
        .errorResponse(
          id: id,
          error: JSONRPCError(
            code: JSONRPCError.invalidParams, message: "tools/call needs params.name, the tool's name (a string)")))
      return
    }
    let arguments = params?["arguments"].flatMap { $0.isNull ? nil : $0 } ?? [:]
    if let reason = served.withheld[name] {
      reply(.response(id: id, result: inEra(Self.withheldResult(reason), modern: modern)))
      return
    }
    guard served.registry.tool(named: name) != nil else {
      if let moreTools {
        // The tool may be one of those still coming: the call waits for them, then runs or fails.
        startCall(
          id: id, name: name, arguments: arguments, modern: modern, meta: params?["_meta"], after: moreTools,
          reply: reply)
        return
      }
      let near = served.registry.suggestions(for: name).filter { served.withheld[$0] == nil }
      reply(
        .errorResponse(
          id: id,
          error: JSONRPCError(
            code: JSONRPCError.invalidParams,
            message: "unknown tool: \(name)\(didYouMean(near)); tools/list shows the tools")))
      return
    }
    startCall(id: id, name: name, arguments: arguments, modern: modern, meta: params?["_meta"], reply: reply)
  }

  /// Runs a `tools/call` from a task of its own. `meta` is the request's `_meta`: its `traceparent` reaches the
  /// plugin, and with a `progressToken` the tool's progress reports go to the client as `notifications/progress`
  /// (through `reply`, before the response).
  private func startCall(
    id: JSONRPCID, name: String, arguments: JSONValue, modern: Bool, meta: JSONValue?,
    after moreTools: OneShot<Void>? = nil, reply: @escaping @Sendable (JSONRPCMessage) -> Void
  ) {
    var context = ToolCallContext()
    context.timeout = options.timeout
    context.outputLimit = options.outputLimit
    // The client's trace context reaches the plugin (TRACEPARENT), when it is a well-formed one.
    context.traceParent = meta?["traceparent"]?.stringValue
    if let token = meta?["progressToken"], token.stringValue != nil || token.integerValue != nil {
      context.onProgress = { _, progress in
        var params: JSONObject = ["progressToken": token, "progress": .real(progress.progress)]
        if let total = progress.total { params["total"] = .real(total) }
        if let message = progress.message { params["message"] = .string(message) }
        reply(.notification(method: "notifications/progress", params: .object(params)))
      }
    }
    let callContext = context
    let duplicate = state.withLock { s -> Bool in
      if s.calls[id] != nil { return true }
      s.calls[id] = Task { [self] in
        if let moreTools { _ = await moreTools.waitUnlessCancelled() }
        let served = state.withLock { $0.served }
        var result: JSONValue
        if let reason = served.withheld[name] {
          result = Self.withheldResult(reason)
        } else {
          do throws(ToolCallError) {
            result = Self.success(
              try await served.registry.call(name, arguments: arguments, context: callContext), modern: modern)
          } catch {
            result = Self.failure(error)
          }
        }
        result = inEra(result, modern: modern)
        let cancelled = state.withLock { s -> Bool in
          s.calls[id] = nil
          return s.cancelled.remove(id) != nil
        }
        // A cancelled request gets no response (MCP's cancellation rule).
        if !cancelled { reply(.response(id: id, result: result)) }
      }
      return false
    }
    if duplicate {
      reply(
        .errorResponse(
          id: id,
          error: JSONRPCError(
            code: JSONRPCError.invalidRequest, message: "request id \(id) is already in use")))
    }
  }

  /// A `tools/call` result for an output: the value as text, and as `structuredContent` when it is an object (any
  /// value for a 2026-07-28 client).
  static func success(_ output: ToolOutput, modern: Bool) -> JSONValue {
    var content: [JSONValue] = [["type": "text", "text": .string(output.modelText)]]
    if output.value != nil, let text = output.text, text != output.modelText {
      content.append(["type": "text", "text": .string(text)])
    }
    var result: JSONObject = ["content": .array(content)]
    if let value = output.value, modern || value.objectValue != nil { result["structuredContent"] = value }
    result["isError"] = false
    return .object(result)
  }

  /// A result as the client's era wants it: a 2026-07-28 result says `resultType` and the server's name.
  private func inEra(_ result: JSONValue, modern: Bool) -> JSONValue {
    modern ? MCPEnvelope.completed(result, serverName: options.name, serverVersion: options.version) : result
  }

  /// The `tools/call` result for a tool that is not served: `isError` and why.
  static func withheldResult(_ reason: String) -> JSONValue {
    ["content": [["type": "text", "text": .string(reason)]], "isError": true]
  }

  /// A `tools/call` result for a failed call: `isError` and the error's description.
  static func failure(_ error: ToolCallError) -> JSONValue {
    var text = error.description
    if let f = error.failure, case .invalidArguments = f {
      text += ". Fix the arguments to match the tool's inputSchema and call it again."
    }
    return ["content": [["type": "text", "text": .string(text)]], "isError": true]
  }

  /// One `tools/list` entry; a 2026-07-28 client gets every output schema, an earlier one only object schemas.
  static func listing(_ tool: any Tool, modern: Bool) -> JSONValue {
    var o: JSONObject = ["name": .string(tool.name)]
    let title = tool.annotations.title ?? (tool as? PluginTool)?.definition.title
    if let title { o["title"] = .string(title) }
    o["description"] = .string(tool.description)
    var input = tool.parameters
    if case .object(var schema) = input, schema["type"] == nil {
      schema["type"] = "object"
      input = .object(schema)
    }
    // A tool's examples go as the input schema's JSON Schema `examples` (argument objects): MCP has no field of its
    // own for them, and a client that reads them there (toolhost does) gets them.
    let examples = tool.examples.map(\.arguments)
    if case .object(var schema) = input, schema["examples"] == nil, !examples.isEmpty {
      schema["examples"] = .array(examples)
      input = .object(schema)
    }
    o["inputSchema"] = input
    // Before 2026-07-28, MCP output schemas describe structuredContent, which is an object.
    if let output = tool.outputSchema, modern || output["type"]?.stringValue == "object" {
      o["outputSchema"] = output
    }
    var annotations = tool.annotations
    if annotations.title == nil { annotations.title = title }
    if let a = annotations.json.objectValue, !a.isEmpty { o["annotations"] = .object(a) }
    return .object(o)
  }
}
