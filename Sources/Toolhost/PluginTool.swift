import Foundation
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

  /// Makes a context; everything defaults to the tool's own settings.
  public init(
    timeout: Duration? = nil, outputLimit: Int? = nil,
    onStderr: (@Sendable (_ tool: String, _ chunk: [UInt8]) -> Void)? = nil, callID: String? = nil
  ) {
    self.timeout = timeout
    self.outputLimit = outputLimit
    self.onStderr = onStderr
    self.callID = callID
  }

  /// The context of the running task.
  @TaskLocal public static var current = ToolCallContext()
}

/// A tool provided by a subprocess plugin: each call spawns the plugin, writes the request to its stdin and reads
/// its reply from stdout (see `schemas/request.schema.json` and `schemas/reply.schema.json`).
public struct PluginTool: PrecompiledTool {
  /// The argument object as it is.
  public typealias Arguments = JSONValue
  /// The reply's result and text.
  public typealias Output = ToolOutput

  /// The tool's definition from the manifest.
  public let definition: ToolDefinition
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

  /// The default time limit when neither tool nor manifest sets one: 30 s.
  public static let defaultTimeout: Duration = .seconds(30)
  /// The default stdout cap: 8 MiB.
  public static let defaultOutputLimit = 8 << 20
  /// `TOOLHOST_ARG_*` variables longer than this are left out (stdin has every argument; Linux refuses to start a
  /// process with a variable over 128 KiB).
  public static let argumentVariableLimit = 16 << 10

  /// Makes the tool, compiling its schemas.
  ///
  /// - Throws: ``SchemaError`` when the input or output schema is invalid or uses unsupported keywords.
  public init(
    definition: ToolDefinition, manifest: PluginManifest, executable: String, runner: ProcessRunner = .shared,
    hostEnvironment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(SchemaError) {
    self.definition = definition
    self.manifest = manifest
    self.executable = executable
    self.runner = runner
    self.hostEnvironment = hostEnvironment
    compiledParameters = try JSONSchema(definition.inputSchema)
    compiledOutputSchema = try definition.outputSchema.map { s throws(SchemaError) in try JSONSchema(s) }
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

  /// The time limit: the tool's, else the manifest's, else ``defaultTimeout``.
  public var timeout: Duration {
    if let t = definition.timeout ?? manifest.timeout { return .milliseconds(Int64((t * 1000).rounded())) }
    return Self.defaultTimeout
  }

  /// Runs the plugin once with `arguments` (which the caller has validated).
  ///
  /// - Throws: ``ToolFailure``: `.launchFailed`, `.timedOut`, `.cancelled`, `.outputTooLarge`, `.signaled`,
  ///   `.exited`, `.invalidReply` or `.toolReported`.
  public func call(arguments: JSONValue) async throws -> ToolOutput {
    let context = ToolCallContext.current
    let callID = context.callID ?? Self.makeCallID()
    let limit = context.timeout ?? timeout
    let request: JSONValue = [
      "toolhost": 1, "tool": .string(name), "arguments": arguments, "callId": .string(callID),
    ]
    let toolName = name
    let onStderr = context.onStderr.map { sink in { @Sendable (chunk: [UInt8]) in sink(toolName, chunk) } }
    let spec = ProcessSpec(
      executable: executable, arguments: manifest.arguments + definition.arguments,
      environment: environment(arguments: arguments, callID: callID), workingDirectory: manifest.directory,
      input: Array(request.serialized().utf8), timeout: limit,
      outputLimit: context.outputLimit ?? Self.defaultOutputLimit, onStderr: onStderr)
    let outcome: ProcessOutcome
    do { outcome = try await runner.run(spec) } catch {
      throw ToolFailure.launchFailed(executable: error.executable, reason: error.reason)
    }
    return try interpret(outcome, limit: limit, outputLimit: spec.outputLimit)
  }

  /// Turns a finished process into the tool's output or failure.
  func interpret(_ outcome: ProcessOutcome, limit: Duration, outputLimit: Int) throws(ToolFailure) -> ToolOutput {
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

    let excerpt = Self.excerpt(outcome.stdout)
    let reply: JSONValue
    do { reply = try JSONValue.parse(outcome.stdout) } catch {
      if status != 0 { throw .exited(status: status, stderr: outcome.stderrText) }
      let reason = outcome.stdout.isEmpty ? "no output" : "not valid JSON (\(error.description))"
      throw .invalidReply(reason: reason, excerpt: excerpt)
    }
    let issues = Self.replySchema.validate(reply)
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
  func environment(arguments: JSONValue, callID: String) -> [String: String] {
    var env: [String: String] = [:]
    for (k, v) in hostEnvironment
    where Self.baseVariables.contains(k) || k.hasPrefix("LC_") || manifest.environment.contains(k) {
      env[k] = v
    }
    if env["PATH"] == nil { env["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
    env["TOOLHOST_TOOL"] = name
    env["TOOLHOST_CALL_ID"] = callID
    for (key, value) in arguments.objectValue ?? [:] {
      let text: String = if case .string(let s) = value { s } else { value.serialized() }
      if text.utf8.count <= Self.argumentVariableLimit, !text.utf8.contains(0) {
        env["TOOLHOST_ARG_" + Self.variableName(key)] = text
      }
    }
    return env
  }

  static let baseVariables: Set<String> = ["PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"]

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
    "call-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
  }
}
