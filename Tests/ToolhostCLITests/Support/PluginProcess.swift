import Foundation
import ToolhostTestSupport

/// Runs the example plugins in `plugins/` at the wire level, the way the host
/// does: the manifest's command in the plugin's folder, a minimal environment
/// plus `TOOLHOST_*` variables, one JSON request on stdin (then closed), and
/// stdout and stderr collected until the process exits or its time runs out.
///
/// Test-only: it parses JSON with Foundation's JSONSerialization so it does
/// not depend on the host's own code, which is being written alongside.
enum PluginProcess {
  // MARK: Manifests

  struct Manifest {
    var folder: URL
    var json: [String: Any]

    init(plugin: String) throws {
      folder = ExamplePlugins.folder(of: plugin)
      let url = folder.appendingPathComponent("toolhost.json")
      let data = try Data(contentsOf: url)
      guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw TestFailure("\(url.path) is not a JSON object")
      }
      json = object
    }

    var command: String { json["command"] as? String ?? "" }
    var args: [String] { json["args"] as? [String] ?? [] }
    var declaredEnvironment: [String] { json["env"] as? [String] ?? [] }
    var output: String { json["output"] as? String ?? "json" }
    var tools: [[String: Any]] { json["tools"] as? [[String: Any]] ?? [] }

    func tool(_ name: String) throws -> [String: Any] {
      guard let tool = tools.first(where: { $0["name"] as? String == name }) else {
        throw TestFailure("the manifest in \(folder.lastPathComponent) has no tool \(name)")
      }
      return tool
    }

    /// The command as the host resolves it: a path with a slash relative to
    /// the manifest's folder; a bare name in the folder, then on PATH.
    func executableURL() throws -> URL {
      if command.contains("/") {
        return URL(fileURLWithPath: command, relativeTo: folder).standardizedFileURL
      }
      let local = folder.appendingPathComponent(command)
      if FileManager.default.isExecutableFile(atPath: local.path) { return local }
      if let found = TestPackage.which(command) { return URL(fileURLWithPath: found) }
      throw TestFailure("command \(command) of \(folder.lastPathComponent) not found")
    }

    /// The tool's time limit: its own, else the manifest's, else 30 s.
    func timeout(of tool: [String: Any]) -> Double {
      (tool["timeout"] as? NSNumber)?.doubleValue ?? (json["timeout"] as? NSNumber)?.doubleValue
        ?? 30
    }
  }

  // MARK: Calling a tool

  /// `searchTerm` -> `TOOLHOST_ARG_SEARCH_TERM`.
  static func environmentName(forArgument name: String) -> String {
    var out = ""
    var previous: Character?
    for c in name {
      if c.isUppercase, let p = previous, p.isLowercase || p.isNumber { out += "_" }
      out += c.isLetter || c.isNumber ? c.uppercased() : "_"
      previous = c
    }
    return "TOOLHOST_ARG_" + out
  }

  /// Strings raw, everything else as JSON text.
  static func environmentValue(_ value: Any) throws -> String {
    if let string = value as? String { return string }
    let data = try JSONSerialization.data(
      withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
  }

  /// Calls one tool of one plugin.
  /// - Parameters:
  ///   - environment: host variables offered to the plugin; like the host, only
  ///     those the manifest declares in `env` are passed (others are an error here,
  ///     to catch a manifest that forgot to declare one).
  ///   - home: HOME for the plugin (default: the test process's HOME).
  ///   - workingDirectory: overrides the plugin folder (to test a broken data file).
  ///   - request: raw bytes for stdin instead of the request object.
  static func call(
    plugin: String, tool: String, arguments: [String: Any] = [:],
    environment: [String: String] = [:], home: URL? = nil, workingDirectory: URL? = nil,
    request: Data? = nil
  ) throws -> Subprocess.Output {
    try ExamplePlugins.build()
    let manifest = try Manifest(plugin: plugin)
    let toolEntry = try manifest.tool(tool)
    let callId = UUID().uuidString

    let host = ProcessInfo.processInfo.environment
    var env: [String: String] = [:]
    env["PATH"] = host["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    env["HOME"] = home?.path ?? host["HOME"] ?? NSTemporaryDirectory()
    env["LANG"] = host["LANG"] ?? "C.UTF-8"
    for (name, value) in host
    where name.hasPrefix("LC_") || name == "TZ" || name == "TMPDIR" {
      env[name] = value
    }
    for (name, value) in environment {
      guard manifest.declaredEnvironment.contains(name) else {
        throw TestFailure("\(plugin)'s manifest does not declare \(name) in env")
      }
      env[name] = value
    }
    env["TOOLHOST_TOOL"] = tool
    env["TOOLHOST_CALL_ID"] = callId
    for (name, value) in arguments {
      env[environmentName(forArgument: name)] = try environmentValue(value)
    }

    let requestObject: [String: Any] = [
      "toolhost": 1, "tool": tool, "arguments": arguments, "callId": callId,
    ]
    let input =
      try request ?? JSONSerialization.data(withJSONObject: requestObject, options: [.sortedKeys])
    return try Subprocess.run(
      executable: manifest.executableURL(),
      arguments: manifest.args + (toolEntry["args"] as? [String] ?? []),
      environment: env, workingDirectory: workingDirectory ?? manifest.folder, input: input,
      timeout: manifest.timeout(of: toolEntry))
  }
}

// MARK: - Replies

/// A reply of an output "json" plugin, checked against schemas/reply.schema.json:
/// exactly one object, either {result, text?} or {error: {message, code?, data?}}.
enum PluginReply {
  case result(Any, text: String?)
  case error(message: String, code: String?, data: Any?)

  init(_ output: Subprocess.Output) throws {
    let parsed: Any
    do {
      parsed = try JSONSerialization.jsonObject(with: output.stdout)
    } catch {
      throw TestFailure("stdout is not one JSON value: \(output.stdoutText)")
    }
    guard let reply = parsed as? [String: Any] else {
      throw TestFailure("the reply is not an object: \(output.stdoutText)")
    }
    let keys = Set(reply.keys)
    if let result = reply["result"] {
      guard keys.isSubset(of: ["result", "text"]) else {
        throw TestFailure("a result reply has extra members: \(keys.sorted())")
      }
      if reply["text"] != nil, !(reply["text"] is String) {
        throw TestFailure("text is not a string")
      }
      self = .result(result, text: reply["text"] as? String)
    } else if let error = reply["error"] {
      guard keys == ["error"] else {
        throw TestFailure("an error reply has extra members: \(keys.sorted())")
      }
      guard let error = error as? [String: Any],
        Set(error.keys).isSubset(of: ["message", "code", "data"]),
        let message = error["message"] as? String, !message.isEmpty
      else {
        throw TestFailure("error is not {message, code?, data?}: \(output.stdoutText)")
      }
      if error["code"] != nil, !(error["code"] is String) {
        throw TestFailure("error.code is not a string")
      }
      self = .error(message: message, code: error["code"] as? String, data: error["data"])
    } else {
      throw TestFailure("the reply has neither result nor error: \(output.stdoutText)")
    }
  }

  var result: [String: Any]? {
    if case .result(let value, _) = self { return value as? [String: Any] }
    return nil
  }

  var text: String? {
    if case .result(_, let text) = self { return text }
    return nil
  }

  var errorCode: String? {
    if case .error(_, let code, _) = self { return code }
    return nil
  }

  var errorMessage: String? {
    if case .error(let message, _, _) = self { return message }
    return nil
  }

  var errorData: [String: Any]? {
    if case .error(_, _, let data) = self { return data as? [String: Any] }
    return nil
  }
}

// MARK: - A small JSON Schema subset

/// Checks a JSONSerialization value against the subset of JSON Schema the
/// example manifests use (type, enum, const, required, properties,
/// additionalProperties: false, items, min/maxItems, minLength, minimum,
/// maximum). Returns the problems found, empty when the value conforms.
enum SchemaSubset {
  static func problems(_ value: Any, _ schema: [String: Any], at path: String = "$") -> [String] {
    var found: [String] = []
    if let types = schema["type"] {
      let names = (types as? [String]) ?? [types as? String ?? ""]
      if !names.contains(where: { matches(value, type: $0) }) {
        return ["\(path): expected \(names.joined(separator: " or ")), got \(describe(value))"]
      }
    }
    if let options = schema["enum"] as? [Any], !options.contains(where: { equal($0, value) }) {
      found.append("\(path): \(describe(value)) is not one of the enum values")
    }
    if let constant = schema["const"], !equal(constant, value) {
      found.append("\(path): expected the constant \(describe(constant))")
    }
    if let number = number(value) {
      if let minimum = (schema["minimum"] as? NSNumber)?.doubleValue, number < minimum {
        found.append("\(path): \(number) is below the minimum \(minimum)")
      }
      if let maximum = (schema["maximum"] as? NSNumber)?.doubleValue, number > maximum {
        found.append("\(path): \(number) is above the maximum \(maximum)")
      }
    }
    if let string = value as? String, let minLength = schema["minLength"] as? Int,
      string.count < minLength
    {
      found.append("\(path): shorter than \(minLength) characters")
    }
    if let object = value as? [String: Any] {
      for name in schema["required"] as? [String] ?? [] where object[name] == nil {
        found.append("\(path): missing required \(name)")
      }
      let properties = schema["properties"] as? [String: Any] ?? [:]
      for (name, member) in object {
        if let sub = properties[name] as? [String: Any] {
          found += problems(member, sub, at: "\(path).\(name)")
        } else if let extra = schema["additionalProperties"] as? NSNumber, isBoolean(extra),
          !extra.boolValue
        {
          found.append("\(path): unexpected property \(name)")
        }
      }
    }
    if let array = value as? [Any] {
      if let minItems = schema["minItems"] as? Int, array.count < minItems {
        found.append("\(path): fewer than \(minItems) items")
      }
      if let maxItems = schema["maxItems"] as? Int, array.count > maxItems {
        found.append("\(path): more than \(maxItems) items")
      }
      if let items = schema["items"] as? [String: Any] {
        for (i, item) in array.enumerated() { found += problems(item, items, at: "\(path)[\(i)]") }
      }
    }
    return found
  }

  static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

  /// A JSON number (not a boolean) as a Double.
  static func number(_ value: Any) -> Double? {
    guard let n = value as? NSNumber, !isBoolean(n) else { return nil }
    return n.doubleValue
  }

  static func matches(_ value: Any, type: String) -> Bool {
    switch type {
    case "object": return value is [String: Any]
    case "array": return value is [Any]
    case "string": return value is String
    case "null": return value is NSNull
    case "boolean": return (value as? NSNumber).map(isBoolean) ?? false
    case "number": return number(value) != nil
    case "integer": return number(value).map { $0 == $0.rounded() } ?? false
    default: return false
    }
  }

  static func equal(_ a: Any, _ b: Any) -> Bool {
    if let x = a as? String, let y = b as? String { return x == y }
    if let x = number(a), let y = number(b) { return x == y }
    if let x = a as? NSNumber, let y = b as? NSNumber { return x == y }
    return false
  }

  static func describe(_ value: Any) -> String {
    if let string = value as? String { return "\"\(string)\"" }
    if JSONSerialization.isValidJSONObject(value),
      let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
    {
      return String(decoding: data, as: UTF8.self)
    }
    return "\(value)"
  }
}
