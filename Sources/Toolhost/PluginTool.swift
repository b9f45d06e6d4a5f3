import Foundation
import Synchronization
import ToolhostJSON
import ToolhostSchema

/// Per-call settings that reach tools through a task-local value, so ``Tool/call(arguments:)`` keeps its
/// FoundationModels shape.
public struct ToolCallContext: Sendable {
  /// Overrides the tool's time limit.
  public var timeout: Duration?
  /// Overrides the stdout cap of plugin calls.
  public var outputLimit: Int?
  /// Receives the plugin's stderr as it is written (for `--verbose`).
  public var onStderr: (@Sendable (_ tool: String, _ chunk: [UInt8]) -> Void)?
  /// A unique id of the call.
  public var callID: String?
  /// Resource limits over the tool's own (each value set here wins).
  public var limits: ResourceLimits

  /// Makes a context; everything defaults to the tool's own settings.
  public init(
    timeout: Duration? = nil, outputLimit: Int? = nil,
    onStderr: (@Sendable (_ tool: String, _ chunk: [UInt8]) -> Void)? = nil, callID: String? = nil,
    limits: ResourceLimits = ResourceLimits()
  ) {
    self.timeout = timeout
    self.outputLimit = outputLimit
    self.onStderr = onStderr
    self.callID = callID
    self.limits = limits
  }

  /// The context of the running task.
  @TaskLocal public static var current = ToolCallContext()
}

/// A tool provided by a subprocess plugin: each call spawns the plugin, writes the request to its stdin and reads
/// its reply from stdout (see `schemas/request.schema.json` and `schemas/reply.schema.json`).
///
/// A persistent plugin (`"persistent": true`) is kept running instead: each call writes one request line to a
/// process of its ``PersistentPool`` and reads one reply line. A tool of an MCP server manifest has a ``backend``
/// that calls the server.
public struct PluginTool: PrecompiledTool, ExternalTool {
  /// The argument object as it is.
  public typealias Arguments = JSONValue
  /// The reply's result and text.
  public typealias Output = ToolOutput

  /// The tool's definition from the manifest (for an MCP server's tool: from the server's listing, under the name
  /// the catalog offers it by).
  public internal(set) var definition: ToolDefinition
  /// The manifest that provides it.
  public let manifest: PluginManifest
  /// The resolved executable.
  public let executable: String
  /// The compiled input schema.
  public let compiledParameters: JSONSchema
  /// The compiled output schema, if any.
  public let compiledOutputSchema: JSONSchema?
  /// The runner that spawns it.
  public let runner: ProcessRunner
  /// The host environment it draws allowed variables from.
  public let hostEnvironment: [String: String]
  /// What runs the tool when it is not a spawned process: an MCP server connection, for example.
  public let backend: (any PluginToolBackend)?
  /// The processes of a persistent plugin (shared by the tools of its manifest); `nil` otherwise.
  let pool: PersistentPool?

  /// The default time limit when neither tool nor manifest sets one: 30 s.
  public static let defaultTimeout: Duration = .seconds(30)
  /// The default stdout cap: 8 MiB.
  public static let defaultOutputLimit = 8 << 20
  /// `TOOLHOST_ARG_*` variables longer than this are left out (stdin has every argument; Linux refuses to start a
  /// process with a variable over 128 KiB).
  public static let argumentVariableLimit = 16 << 10
  /// All `TOOLHOST_ARG_*` variables together stay under this many bytes; the ones that would pass it are left out
  /// (Linux allows about 2 MiB of arguments and environment in all).
  public static let argumentVariablesBudget = 256 << 10

  /// Makes the tool, compiling its schemas.
  ///
  /// For a persistent manifest the tool runs in `pool`; without one it gets a pool of its own (discovery shares
  /// one pool between the tools of a manifest).
  /// - Throws: ``SchemaError`` when the input or output schema is invalid or uses unsupported keywords.
  public init(
    definition: ToolDefinition, manifest: PluginManifest, executable: String, runner: ProcessRunner = .shared,
    hostEnvironment: [String: String] = ProcessInfo.processInfo.environment, pool: PersistentPool? = nil
  ) throws(SchemaError) {
    try self.init(
      definition: definition, manifest: manifest, executable: executable, runner: runner,
      hostEnvironment: hostEnvironment, pool: pool,
      compiled: Self.compile(definition, options: PluginSchemaFiles.options(manifestPath: manifest.path, user: nil)))
  }

  /// Compiles a definition's input and output schemas (discovery does this for many tools in parallel), with
  /// references resolving against the manifest and to the schema files beside it.
  static func compile(_ definition: ToolDefinition, options: SchemaOptions) throws(SchemaError)
    -> (JSONSchema, JSONSchema?)
  {
    (
      try JSONSchema(definition.inputSchema, options: options),
      try definition.outputSchema.map { s throws(SchemaError) in try JSONSchema(s, options: options) }
    )
  }

  /// Makes the tool from schemas compiled already.
  init(
    definition: ToolDefinition, manifest: PluginManifest, executable: String, runner: ProcessRunner,
    hostEnvironment: [String: String], pool: PersistentPool?, compiled: (JSONSchema, JSONSchema?)
  ) throws(SchemaError) {
    self.definition = definition
    self.manifest = manifest
    self.executable = executable
    self.runner = runner
    self.hostEnvironment = hostEnvironment
    self.backend = nil
    compiledParameters = compiled.0
    compiledOutputSchema = compiled.1
    if manifest.persistent {
      self.pool =
        pool
        ?? PersistentPool(
          spec: Self.persistentSpec(manifest: manifest, executable: executable, hostEnvironment: hostEnvironment),
          size: manifest.poolSize)
    } else {
      self.pool = nil
    }
  }

  /// Makes a tool that `backend` runs (an MCP server's tool), compiling its input schema.
  ///
  /// The output schema is compiled when it can be; one the validator does not support is kept as it is and not
  /// checked.
  /// - Throws: ``SchemaError`` when the input schema is invalid or uses unsupported keywords.
  public init(
    definition: ToolDefinition, manifest: PluginManifest, executable: String, backend: any PluginToolBackend,
    hostEnvironment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(SchemaError) {
    self.definition = definition
    self.manifest = manifest
    self.executable = executable
    self.runner = .shared
    self.hostEnvironment = hostEnvironment
    self.backend = backend
    self.pool = nil
    compiledParameters = try JSONSchema(definition.inputSchema)
    compiledOutputSchema = definition.outputSchema.flatMap { try? JSONSchema($0) }
  }

  /// The same tool offered under another name (the backend or plugin still sees its own name for it).
  public func renamed(_ name: String) -> PluginTool {
    var copy = self
    copy.definition.name = name
    return copy
  }

  /// Ends the processes this tool keeps running (its persistent pool or MCP server, shared with the other tools of
  /// its manifest). Later calls fail with ``ToolFailure/cancelled``. Does nothing for a one-shot plugin.
  public func shutdown() async {
    await pool?.shutdown()
    await backend?.shutdown()
  }

  /// The spec of a persistent plugin's processes: the manifest's command and args in its folder, the base
  /// environment plus the declared names and `TOOLHOST_PERSISTENT=1`.
  static func persistentSpec(manifest: PluginManifest, executable: String, hostEnvironment: [String: String])
    -> PersistentProcessSpec
  {
    var env = baseEnvironment(hostEnvironment, allowed: manifest.environment)
    env["TOOLHOST_PERSISTENT"] = "1"
    return PersistentProcessSpec(
      executable: executable, arguments: manifest.arguments, environment: env, workingDirectory: manifest.directory,
      maxLineLength: max(defaultOutputLimit, 16 << 20),
      limits: ResourceLimits.pluginDefaults.overridden(by: manifest.limits))
  }

  /// The tool's name.
  public var name: String { definition.name }
  /// The tool's description.
  public var description: String { definition.description }
  /// The input schema.
  public var parameters: JSONValue { definition.inputSchema }
  /// The output schema.
  public var outputSchema: JSONValue? { definition.outputSchema }
  /// The manifest's annotations.
  public var annotations: ToolAnnotations { definition.annotations }
  /// The plugin's name (``PluginManifest/name``).
  public var pluginName: String { manifest.name }
  /// Whether its annotations may set its default approval: a plugin's are, an MCP server's are not.
  public var annotationsAreTrusted: Bool { manifest.mcp == nil }

  /// The resource limits of a call: ``ResourceLimits/pluginDefaults``, under the manifest's `limits`, under the
  /// tool's own.
  public var limits: ResourceLimits {
    ResourceLimits.pluginDefaults.overridden(by: manifest.limits).overridden(by: definition.limits)
  }

  /// The time limit: the tool's, else the manifest's, else ``defaultTimeout``.
  public var timeout: Duration {
    if let t = definition.timeout ?? manifest.timeout { return .milliseconds(Int64((t * 1000).rounded())) }
    return Self.defaultTimeout
  }

  /// Runs the plugin once with `arguments` (which the caller has validated): a spawned process, one request line
  /// to a persistent plugin's process, or the backend (an MCP server's `tools/call`).
  ///
  /// - Throws: ``ToolFailure``: `.launchFailed`, `.timedOut`, `.cancelled`, `.outputTooLarge`, `.signaled`,
  ///   `.exited`, `.invalidReply` or `.toolReported`. A persistent process that times out, is cancelled or prints
  ///   a line that is not a reply is ended and replaced by the next call.
  public func call(arguments: JSONValue) async throws -> ToolOutput {
    let context = ToolCallContext.current
    if let backend { return try await backend.call(self, arguments: arguments, context: context) }
    if let pool { return try await callPersistent(pool, arguments: arguments, context: context) }
    let environment = try environment(arguments: arguments, callID: context.callID ?? Self.makeCallID())
    let callID = environment["TOOLHOST_CALL_ID"]!
    let limit = context.timeout ?? timeout
    let request: JSONValue = [
      "toolhost": 1, "tool": .string(name), "arguments": arguments, "callId": .string(callID),
    ]
    let toolName = name
    let onStderr = context.onStderr.map { sink in { @Sendable (chunk: [UInt8]) in sink(toolName, chunk) } }
    let spec = ProcessSpec(
      executable: executable, arguments: manifest.arguments + definition.arguments,
      environment: environment, workingDirectory: manifest.directory,
      input: Array(request.serialized().utf8), timeout: limit,
      outputLimit: context.outputLimit ?? Self.defaultOutputLimit, onStderr: onStderr,
      limits: limits.overridden(by: context.limits))
    let outcome: ProcessOutcome
    do { outcome = try await runner.run(spec) } catch {
      throw ToolFailure.launchFailed(executable: error.executable, reason: error.reason)
    }
    return try interpret(outcome, limit: limit, outputLimit: spec.outputLimit, limits: spec.limits)
  }

  /// One call of a persistent plugin: a process from the pool, one request line, one reply line. The time limit
  /// covers waiting for a free process too.
  func callPersistent(_ pool: PersistentPool, arguments: JSONValue, context: ToolCallContext) async throws(ToolFailure)
    -> ToolOutput
  {
    let callID = context.callID ?? Self.makeCallID()
    let limit = context.timeout ?? timeout
    let deadline = monotonicSeconds() + limit.seconds
    let worker: PersistentWorker
    do { worker = try await pool.acquire(deadline: deadline) } catch {
      switch error {
      case .launchFailed(let e): throw .launchFailed(executable: e.executable, reason: e.reason)
      case .timedOut: throw .timedOut(limit: limit)
      case .cancelled, .closed: throw .cancelled
      }
    }
    let toolName = name
    let onStderr = context.onStderr.map { sink in { @Sendable (chunk: [UInt8]) in sink(toolName, chunk) } }
    let remaining = Duration.milliseconds(Int64(max(1, ((deadline - monotonicSeconds()) * 1000).rounded())))
    let request = Self.requestLine(tool: definition.name, arguments: arguments, callID: callID)
    let outcome = await worker.call(request, timeout: remaining, onStderr: onStderr)
    defer { pool.release(worker) }
    switch outcome {
    case .timedOut: throw .timedOut(limit: limit)
    case .cancelled: throw .cancelled
    case .ended(let exit):
      if exit.stopReason == .outputTooLarge { throw .outputTooLarge(limit: pool.spec.maxLineLength) }
      let ended = ProcessOutcome(
        termination: exit.termination, stopReason: nil, stdout: [], stderrTail: Array(exit.stderrTail.utf8),
        stderrByteCount: exit.stderrTail.utf8.count, duration: .zero, pid: worker.process.pid)
      if let kind = pool.spec.limits.exceeded(by: ended) {
        throw .limitExceeded(kind, limit: pool.spec.limits.value(of: kind))
      }
      switch exit.termination {
      case .signaled(let s): throw .signaled(signal: s, stderr: exit.stderrTail)
      case .exited(let s): throw .exited(status: s, stderr: exit.stderrTail)
      }
    case .reply(let line):
      let outputLimit = context.outputLimit ?? Self.defaultOutputLimit
      if line.count > outputLimit { throw .outputTooLarge(limit: outputLimit) }
      let outcome = ProcessOutcome(
        termination: .exited(0), stopReason: nil, stdout: line, stderrTail: [], stderrByteCount: 0,
        duration: .zero, pid: worker.process.pid)
      do { return try interpret(outcome, limit: limit, outputLimit: outputLimit, limits: .none) } catch {
        // A line that is not a reply means the plugin and the host may no longer agree on which reply is which.
        if case .invalidReply = error { worker.retire() }
        throw error
      }
    }
  }

  /// Turns a finished process into the tool's output or failure.
  func interpret(_ outcome: ProcessOutcome, limit: Duration, outputLimit: Int, limits: ResourceLimits)
    throws(ToolFailure) -> ToolOutput
  {
    if outcome.stopReason == .cancelled { throw .cancelled }
    if outcome.stopReason == nil || outcome.limitExceeded != nil, let kind = limits.exceeded(by: outcome) {
      throw .limitExceeded(kind, limit: limits.value(of: kind))
    }
    switch outcome.stopReason {
    case .timedOut: throw .timedOut(limit: limit)
    case .cancelled: throw .cancelled
    case .outputTooLarge: throw .outputTooLarge(limit: outputLimit)
    case nil: break
    }
    if case .signaled(let s) = outcome.termination { throw .signaled(signal: s, stderr: outcome.stderrText) }
    let status: Int32 = if case .exited(let s) = outcome.termination { s } else { 0 }

    if manifest.output == .text {
      guard status == 0 else { throw .exited(status: status, stderr: outcome.stderrText) }
      var text = String(decoding: outcome.stdout, as: UTF8.self)
      if text.hasSuffix("\n") { text.removeLast() }
      return ToolOutput(text: text)
    }

    // Only failures need it; computing it costs more than parsing a small reply.
    var excerpt: String { Self.excerpt(outcome.stdout) }
    let reply: JSONValue
    do { reply = try JSONValue.parse(outcome.stdout) } catch {
      if status != 0 { throw .exited(status: status, stderr: outcome.stderrText) }
      let reason = outcome.stdout.isEmpty ? "no output" : "not valid JSON (\(error.description))"
      throw .invalidReply(reason: reason, excerpt: excerpt)
    }
    let issues = Self.isWellFormedReply(reply) ? [] : Self.replySchema.validate(reply)
    if !issues.isEmpty {
      if status != 0 { throw .exited(status: status, stderr: outcome.stderrText) }
      let why = reply.objectValue == nil ? "not a JSON object" : Self.replyProblem(reply)
      throw .invalidReply(reason: "does not match the reply schema: \(why)", excerpt: excerpt)
    }
    if let error = reply["error"] {
      throw .toolReported(
        message: error["message"]?.stringValue ?? "the tool failed", code: error["code"]?.stringValue,
        data: error["data"])
    }
    if status != 0 { throw .exited(status: status, stderr: outcome.stderrText) }
    let result = reply["result"] ?? .null
    if let compiledOutputSchema {
      let issues = compiledOutputSchema.validate(result)
      if !issues.isEmpty {
        throw .invalidReply(
          reason: "the result does not match the tool's outputSchema: "
            + issues.prefix(3).map(\.description).joined(separator: "; "), excerpt: excerpt)
      }
    }
    return ToolOutput(value: result, text: reply["text"]?.stringValue)
  }

  /// The child's environment: PATH, HOME, LANG, LC_*, TZ and TMPDIR from the host, the names the manifest declares,
  /// and the call's TOOLHOST_* variables. Nothing else of the host's environment.
  ///
  /// Only the properties the input schema declares (top-level `properties`) become `TOOLHOST_ARG_*` variables, so
  /// an argument the schema does not check cannot reach the plugin through its environment.
  /// - Throws: ``ToolFailure/invalidArguments(_:)`` when two arguments map to one variable (`path` and `Path` both
  ///   to `TOOLHOST_ARG_PATH`): the plugin would see only one of two values, not necessarily the one validated.
  func environment(arguments: JSONValue, callID: String) throws(ToolFailure) -> [String: String] {
    var env = Self.baseEnvironment(hostEnvironment, allowed: manifest.environment)
    env["TOOLHOST_TOOL"] = name
    env["TOOLHOST_CALL_ID"] = callID
    var budget = Self.argumentVariablesBudget
    let declared = definition.inputSchema["properties"]?.objectValue
    var owners: [String: String] = [:]
    for (key, value) in arguments.objectValue ?? [:] {
      let name = "TOOLHOST_ARG_" + Self.variableName(key)
      if let other = owners[name] {
        throw .invalidArguments([
          ValidationIssue(
            instanceLocation: "/" + key, keywordLocation: "", keyword: "environment",
            message:
              "the arguments \"\(other)\" and \"\(key)\" would both become \(name); give only one of them")
        ])
      }
      owners[name] = key
      guard declared?[key] != nil else { continue }
      let text: String = if case .string(let s) = value { s } else { value.serialized() }
      let size = name.utf8.count + text.utf8.count + 2
      if text.utf8.count <= Self.argumentVariableLimit, size <= budget, !text.utf8.contains(0) {
        env[name] = text
        budget -= size
      }
    }
    return env
  }

  static let baseVariables: Set<String> = ["PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"]

  /// PATH, HOME, LANG, LANGUAGE, LC_*, TZ and TMPDIR from `host`, and the `allowed` names; PATH defaults to
  /// `/usr/local/bin:/usr/bin:/bin`.
  public static func baseEnvironment(_ host: [String: String], allowed: [String]) -> [String: String] {
    var env: [String: String] = [:]
    for (k, v) in host where baseVariables.contains(k) || k.hasPrefix("LC_") || allowed.contains(k) {
      env[k] = v
    }
    if env["PATH"] == nil { env["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
    return env
  }

  /// `searchTerm` → `SEARCH_TERM`, `max-items` → `MAX_ITEMS`: a lower-to-upper case change starts a new word, and
  /// anything that is not a letter or digit becomes `_`.
  public static func variableName(_ key: String) -> String {
    var out = ""
    var previousLower = false
    for scalar in key.unicodeScalars {
      let isUpper = scalar.properties.isUppercase
      if isUpper && previousLower { out.append("_") }
      if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
        out.append(String(scalar).uppercased())
      } else {
        out.append("_")
      }
      previousLower = scalar.properties.isLowercase || ("0"..."9").contains(scalar)
    }
    return out
  }

  static let replySchema: JSONSchema = {
    do { return try JSONSchema(JSONValue.parse(EmbeddedSchemas.reply)) } catch {
      fatalError("toolhost: the embedded reply schema is invalid: \(error)")
    }
  }()

  /// Whether `reply` matches `schemas/reply.schema.json`, checked directly (the schema validator runs only for
  /// replies that fail this, to say why).
  static func isWellFormedReply(_ reply: JSONValue) -> Bool {
    guard let o = reply.objectValue else { return false }
    if o["result"] != nil {
      for (key, value) in o {
        switch key {
        case "result": continue
        case "text": if value.stringValue == nil { return false }
        default: return false
        }
      }
      return true
    }
    guard o.count == 1, let error = o["error"]?.objectValue,
      let message = error["message"]?.stringValue, !message.isEmpty
    else { return false }
    for (key, value) in error {
      switch key {
      case "message", "data": continue
      case "code": if value.stringValue == nil { return false }
      default: return false
      }
    }
    return true
  }

  /// The request line of a persistent call: the same object as a one-shot request, serialized directly.
  static func requestLine(tool: String, arguments: JSONValue, callID: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(96)
    bytes.append(contentsOf: #"{"toolhost":1,"tool":"#.utf8)
    appendJSONString(tool, to: &bytes)
    bytes.append(contentsOf: #","arguments":"#.utf8)
    bytes.append(contentsOf: arguments.serialized().utf8)
    bytes.append(contentsOf: #","callId":"#.utf8)
    appendJSONString(callID, to: &bytes)
    bytes.append(UInt8(ascii: "}"))
    return bytes
  }

  /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
  static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
    let hex: [UInt8] = Array("0123456789abcdef".utf8)
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(byte)
      case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        bytes.append(contentsOf: Array("\\u00".utf8))
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0xF)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// Says what is wrong with a reply object in plain words (the oneOf of the schema is hard to read).
  static func replyProblem(_ reply: JSONValue) -> String {
    let keys = reply.objectValue?.keys ?? []
    if keys.contains("result") && keys.contains("error") { return "it has both \"result\" and \"error\"" }
    if !keys.contains("result") && !keys.contains("error") {
      return "it has neither \"result\" nor \"error\" (keys: \(keys.map { "\"\($0)\"" }.joined(separator: ", ")))"
    }
    let allowed: Set<String> = keys.contains("result") ? ["result", "text"] : ["error"]
    if let extra = keys.first(where: { !allowed.contains($0) }) { return "unexpected key \"\(extra)\"" }
    if keys.contains("text"), reply["text"]?.stringValue == nil { return "\"text\" must be a string" }
    if let e = reply["error"] {
      if e["message"]?.stringValue?.isEmpty != false { return "\"error\" needs a non-empty string \"message\"" }
      return "\"error\" may only have \"message\", \"code\" (a string) and \"data\""
    }
    return "it does not match"
  }

  static func excerpt(_ bytes: [UInt8]) -> String {
    let text = String(decoding: bytes.prefix(200), as: UTF8.self)
      .replacingOccurrences(of: "\n", with: "\\n")
    return bytes.count > 200 ? text + "…" : text
  }

  static func makeCallID() -> String {
    // A random prefix once per process and a counter: unique, and no getrandom(2) call per tool call.
    "call-" + callIDPrefix + String(callCounter.add(1, ordering: .relaxed).newValue, radix: 36)
  }

  static let callIDPrefix = String(UInt64.random(in: 0...UInt64.max) >> 24, radix: 36) + "-"
  static let callCounter = Atomic<Int>(0)
}
