public import Foundation
import Synchronization
public import ToolhostJSON
public import ToolhostSchema
public import ToolhostSystem
public import ToolhostTools

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
  /// The name its manifest or MCP server gives it (as toolhost lists it), which stays when discovery offers it under
  /// another (`server.tool`); the name a manifest's `mcp.approvals` knows it by.
  public let listedName: String
  /// The manifest that provides it.
  public let manifest: PluginManifest
  /// The program a plugin's tool spawns (or keeps running); empty for a server's tool.
  let program: String
  /// Where the server whose ``backend`` runs the tool is; `nil` for a plugin's tool, which toolhost runs itself.
  public let endpoint: PluginServer.Endpoint?
  /// The compiled input schema.
  public let compiledParameters: JSONSchema
  /// The compiled output schema, if any.
  public let compiledOutputSchema: JSONSchema?
  /// The manifest's examples, then those of the input schema's `examples` keyword (an MCP server's); only those
  /// whose arguments the input schema takes. Worked out once, with the compiled schema: every request's tool list
  /// reads them.
  public let examples: [ToolExample]
  /// The runner that spawns it.
  public let runner: ProcessRunner
  /// The host environment it draws allowed variables from.
  public let hostEnvironment: [String: String]
  /// What runs the tool when it is not a spawned process: an MCP server connection, for example.
  public let backend: (any PluginToolBackend)?
  /// The processes of a persistent plugin (shared by the tools of its manifest); `nil` otherwise.
  let pool: PersistentPool?
  /// Its ``confinement``, once worked out.
  let confinementCache = ConfinementCache()

  /// The default time limit when neither tool nor manifest sets one: 30 s.
  public static let defaultTimeout: Duration = .seconds(30)
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

  /// What is wrong with the first of the manifest's examples of `definition` that `input` (its compiled input
  /// schema) refuses, for a person; `nil` when they all match. Such an example would teach the model a call that
  /// fails, so discovery does not load the tool.
  static func exampleProblem(_ definition: ToolDefinition, input: JSONSchema) -> String? {
    for (index, example) in definition.examples.enumerated() {
      if let issue = input.validate(example.arguments).first {
        return "example \(index + 1) (\"examples\"[\(index)]) does not match the inputSchema: \(issue); fix its "
          + "\"arguments\" or remove it"
      }
    }
    return nil
  }

  /// The examples of `definition` its compiled input schema `input` takes (``examples``).
  static func usableExamples(_ definition: ToolDefinition, input: JSONSchema) -> [ToolExample] {
    (definition.examples + ToolExample.examples(inSchema: definition.inputSchema)).filter {
      input.validate($0.arguments).isEmpty
    }
  }

  /// Makes the tool from schemas compiled already.
  init(
    definition: ToolDefinition, manifest: PluginManifest, executable: String, runner: ProcessRunner,
    hostEnvironment: [String: String], pool: PersistentPool?, compiled: (JSONSchema, JSONSchema?)
  ) throws(SchemaError) {
    self.definition = definition
    self.listedName = definition.name
    self.manifest = manifest
    self.program = executable
    self.endpoint = nil
    self.runner = runner
    self.hostEnvironment = hostEnvironment
    self.backend = nil
    compiledParameters = compiled.0
    examples = Self.usableExamples(definition, input: compiled.0)
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

  /// Makes a tool that `backend` runs (the tool of a server at `endpoint`, such as an MCP server's), compiling its
  /// input schema.
  ///
  /// The output schema is compiled when it can be; one the validator does not support is kept as it is and not
  /// checked.
  /// - Throws: ``SchemaError`` when the input schema is invalid or uses unsupported keywords.
  public init(
    definition: ToolDefinition, manifest: PluginManifest, endpoint: PluginServer.Endpoint,
    backend: any PluginToolBackend, hostEnvironment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(SchemaError) {
    self.definition = definition
    self.listedName = definition.name
    self.manifest = manifest
    self.program = ""
    self.endpoint = endpoint
    self.runner = .shared
    self.hostEnvironment = hostEnvironment
    self.backend = backend
    self.pool = nil
    compiledParameters = try JSONSchema(definition.inputSchema)
    examples = Self.usableExamples(definition, input: compiledParameters)
    compiledOutputSchema = definition.outputSchema.flatMap { try? JSONSchema($0) }
  }

  /// The resolved executable the tool runs: its plugin's program, or the program of the server its ``backend``
  /// calls; `nil` for the tool of a remote server, which runs nothing here.
  public var executable: String? {
    guard let endpoint else { return program }
    if case .command(let executable) = endpoint { return executable }
    return nil
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
    let confinement = PluginConfinement.of(manifest, executable: executable, hostEnvironment: hostEnvironment)
    var env = confinement.environment(baseEnvironment(hostEnvironment, allowed: manifest.environment))
    env["TOOLHOST_PERSISTENT"] = "1"
    var spec = PersistentProcessSpec(
      executable: executable, arguments: manifest.arguments, environment: env, workingDirectory: manifest.directory,
      outputLimit: manifest.limits.outputBytes ?? ResourceLimits.defaultOutputBytes,
      limits: ResourceLimits.pluginDefaults.overridden(by: manifest.limits))
    // A refused plugin's calls fail before a process is asked for (callPersistent), so its spec is never started.
    if case .confined(let c, _, _) = confinement { spec.confinement = c }
    return spec
  }

  /// What it may reach, in one line for a person: its ``confinement``, as its calls run with it
  /// (``PluginConfinement/reach(of:hostEnvironment:)``).
  public var reach: String { confinement.reach(of: manifest, hostEnvironment: hostEnvironment) }

  /// How its processes run: confined as its manifest's `"sandbox"` says (``PluginConfinement``), worked out at the
  /// first call (it reads the command's `#!` line) and kept.
  public var confinement: PluginConfinement {
    confinementCache.get {
      PluginConfinement.of(manifest, executable: executable ?? program, hostEnvironment: hostEnvironment)
    }
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
  /// The name plugin rules know it by: its folder's name (``PluginManifest/folderName``), never a name the
  /// manifest picks.
  public var pluginName: String { manifest.folderName }
  /// Its plugin's folder (or `NAME.toolhost.json`), with the manifest's digest when it is a project's.
  public var source: ToolSource { manifest.toolSource }
  /// Whether its annotations may set its default approval: a plugin's are, an MCP server's are not.
  public var annotationsAreTrusted: Bool { manifest.mcp == nil }
  /// What its manifest declares for it under its ``listedName``: an MCP server manifest's `mcp.approvals`, when the
  /// user trusts the manifest (``PluginManifest/declaredApproval(forServerTool:)``).
  public var declaredApproval: DeclaredApproval? { manifest.declaredApproval(forServerTool: listedName) }

  /// The resource limits of a call: ``ResourceLimits/pluginDefaults``, under the manifest's `limits`, under the
  /// tool's own.
  public var limits: ResourceLimits {
    ResourceLimits.pluginDefaults.overridden(by: manifest.limits).overridden(by: definition.limits)
  }

  /// The output limit of a call in `context`, in bytes: the caller's (``ToolCallContext/outputLimit``, from
  /// `--max-output`, else the context's `limits`), else the tool's or the manifest's `limits.outputMiB`, else
  /// ``ResourceLimits/defaultOutputBytes``. Every reader holds a call to it: a spawned plugin's stdout, a persistent
  /// plugin's reply line, an MCP server's reply over stdio or HTTP.
  public func outputLimit(in context: ToolCallContext) -> Int {
    context.outputLimit ?? limits.overridden(by: context.limits).outputBytes ?? ResourceLimits.defaultOutputBytes
  }

  /// The time limit: the tool's, else the manifest's, else ``defaultTimeout``.
  public var timeout: Duration {
    if let t = definition.timeout ?? manifest.timeout { return Duration(seconds: t) }
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
    let confinement = self.confinement
    let confined = try confinement.prepare(executable: program)
    var environment = confinement.environment(
      try environment(arguments: arguments, callID: context.callID ?? Self.makeCallID()))
    if let trace = context.traceParent { environment["TRACEPARENT"] = trace }
    let callID = environment["TOOLHOST_CALL_ID"]!
    let limit = context.timeout ?? timeout
    let request: JSONValue = [
      "toolhost": 1, "tool": .string(name), "arguments": arguments, "callId": .string(callID),
    ]
    let toolName = name
    let onStderr = context.onStderr.map { sink in { @Sendable (chunk: [UInt8]) in sink(toolName, chunk) } }
    let spec = ProcessSpec(
      executable: program, arguments: manifest.arguments + definition.arguments,
      environment: environment, workingDirectory: manifest.directory,
      input: Array(request.serialized().utf8), timeout: limit,
      outputLimit: outputLimit(in: context), onStderr: onStderr,
      limits: limits.overridden(by: context.limits), confinement: confined)
    let outcome: ProcessOutcome
    do { outcome = try await runner.run(spec) } catch {
      throw ToolFailure.launchFailed(executable: error.executable, reason: error.reason)
    }
    do { return try interpret(outcome, limit: limit, outputLimit: spec.outputLimit, limits: spec.limits) } catch {
      throw confined == nil ? error : Self.explained(error)
    }
  }

  /// A confined plugin's failure whose log says the system refused it something, with what to do about it.
  static func explained(_ failure: ToolFailure) -> ToolFailure {
    func hint(_ log: String) -> String? {
      guard ["Permission denied", "Operation not permitted", "EACCES", "EPERM"].contains(where: log.contains) else {
        return nil
      }
      return log + "\n(toolhost: the plugin is confined and reaches only what its manifest's \"sandbox\" declares; "
        + "declare there what it needs)"
    }
    switch failure {
    case .exited(let status, let stderr): return hint(stderr).map { .exited(status: status, stderr: $0) } ?? failure
    case .signaled(let signal, let stderr): return hint(stderr).map { .signaled(signal: signal, stderr: $0) } ?? failure
    default: return failure
    }
  }

  /// One call of a persistent plugin: a process from the pool, one request line, one reply line. The time limit
  /// covers waiting for a free process too.
  func callPersistent(_ pool: PersistentPool, arguments: JSONValue, context: ToolCallContext) async throws(ToolFailure)
    -> ToolOutput
  {
    let isConfined = try confinement.prepare(executable: program) != nil
    let callID = context.callID ?? Self.makeCallID()
    let limit = context.timeout ?? timeout
    let deadline = ContinuousClock.now + limit
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
    let remaining = max(.milliseconds(1), ContinuousClock.now.duration(to: deadline))
    let request = Self.requestLine(
      tool: definition.name, arguments: arguments, callID: callID, traceParent: context.traceParent)
    let outputLimit = outputLimit(in: context)
    let outcome = await worker.call(request, timeout: remaining, outputLimit: outputLimit, onStderr: onStderr)
    defer { pool.release(worker) }
    switch outcome {
    case .timedOut: throw .timedOut(limit: limit)
    case .cancelled: throw .cancelled
    case .ended(let exit):
      if exit.stopReason == .outputTooLarge { throw .outputTooLarge(limit: outputLimit) }
      let ended = ProcessOutcome(
        termination: exit.termination, stopReason: nil, stdout: [], stderrTail: Array(exit.stderrTail.utf8),
        stderrByteCount: exit.stderrTail.utf8.count, duration: .zero, pid: worker.process.pid)
      if let kind = pool.spec.limits.exceeded(by: ended) {
        throw .limitExceeded(kind, limit: pool.spec.limits.value(of: kind))
      }
      let failure: ToolFailure =
        switch exit.termination {
        case .signaled(let s): .signaled(signal: s, stderr: exit.stderrTail)
        case .exited(let s): .exited(status: s, stderr: exit.stderrTail)
        }
      throw isConfined ? Self.explained(failure) : failure
    case .reply(let line):
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
}

/// A plugin tool's ``PluginConfinement``, worked out once and shared by the tool's copies.
final class ConfinementCache: Sendable {
  private let value = Mutex<PluginConfinement?>(nil)

  /// The kept value, or `make()`'s, kept.
  func get(_ make: () -> PluginConfinement) -> PluginConfinement {
    if let known = value.withLock({ $0 }) { return known }
    let made = make()
    value.withLock { $0 = made }
    return made
  }
}
