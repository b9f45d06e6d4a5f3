import Foundation
public import ToolhostJSON
public import ToolhostPlugins
import ToolhostSchema
public import ToolhostTools

/// Words for a schema's type and constraints, for help and `toolhost describe`.
public enum SchemaSummary {
  /// `string`, `integer`, `array of string`, `"a" | "b"`, `string or null`, ...
  public static func type(of schema: JSONValue) -> String {
    if let e = schema["enum"]?.arrayValue { return e.map { $0.serialized() }.joined(separator: " | ") }
    if let c = schema["const"] { return "constant \(c.serialized())" }
    if let t = schema["type"]?.stringValue {
      if t == "array", let items = schema["items"] { return "array of \(type(of: items))" }
      return t
    }
    if let ts = schema["type"]?.arrayValue?.compactMap(\.stringValue) { return ts.joined(separator: " or ") }
    for k in ["anyOf", "oneOf"] {
      if let alts = schema[k]?.arrayValue { return alts.map { type(of: $0) }.joined(separator: " or ") }
    }
    if let ref = schema["$ref"]?.stringValue { return "see \(ref)" }
    return "any"
  }

  /// `1 ≤ value ≤ 6`, `default: 3`, `length ≤ 40`, `pattern ^[a-z]+$`, ...
  public static func constraints(of schema: JSONValue) -> [String] {
    var out: [String] = []
    let min = schema["minimum"].map { "\($0.serialized()) ≤ value" }
    let max = schema["maximum"].map { "value ≤ \($0.serialized())" }
    if let lo = schema["minimum"], let hi = schema["maximum"] {
      out.append("\(lo.serialized()) ≤ value ≤ \(hi.serialized())")
    } else {
      out += [min, max].compactMap { $0 }
    }
    if let v = schema["exclusiveMinimum"] { out.append("value > \(v.serialized())") }
    if let v = schema["exclusiveMaximum"] { out.append("value < \(v.serialized())") }
    if let v = schema["multipleOf"] { out.append("multiple of \(v.serialized())") }
    if let v = schema["minLength"] { out.append("length ≥ \(v.serialized())") }
    if let v = schema["maxLength"] { out.append("length ≤ \(v.serialized())") }
    if let v = schema["pattern"]?.stringValue { out.append("pattern \(v)") }
    if let v = schema["format"]?.stringValue { out.append("format \(v)") }
    if let v = schema["minItems"] { out.append("at least \(v.serialized()) items") }
    if let v = schema["maxItems"] { out.append("at most \(v.serialized()) items") }
    if schema["uniqueItems"]?.boolValue == true { out.append("unique items") }
    if let v = schema["default"] { out.append("default: \(v.serialized())") }
    return out
  }

  /// A multi-line description of a tool: description, annotations, its approval and the environment variables it
  /// asks for under `configuration` (secret-looking ones the user has not approved flagged), then each argument with
  /// type, constraints, default and description, nested properties indented.
  public static func describe(_ tool: any Tool, origin: String? = nil, configuration: UserConfiguration? = nil)
    -> String
  {
    var out = "\(tool.name)\n  \(tool.description)\n"
    if let origin { out += "  from: \(origin)\n" }
    let a = tool.annotations
    var hints: [String] = []
    if a.readOnlyHint == true { hints.append("read-only") }
    if a.destructiveHint == true { hints.append("destructive") }
    if a.idempotentHint == true { hints.append("idempotent") }
    if a.openWorldHint == true { hints.append("reaches outside the machine") }
    if !hints.isEmpty {
      let claimed = (tool as? any ExternalTool)?.annotationsAreTrusted == false ? " (as the server claims)" : ""
      out += "  behaviour: " + hints.joined(separator: ", ") + claimed + "\n"
    }
    if let configuration {
      let approval = configuration.approval(for: tool)
      let words: [ApprovalMode: String] = [
        .auto: "runs when a model calls it", .ask: "asks before it runs", .deny: "never runs",
      ]
      out += "  approval: \(approval.mode.rawValue), \(words[approval.mode]!) (\(approval.reason))\n"
    }
    if let plugin = tool as? PluginTool { out += "  reaches: \(plugin.reach)\n" }
    if let plugin = tool as? PluginTool, !plugin.manifest.requestedVariables.isEmpty {
      let rules = configuration ?? UserConfiguration(path: "")
      let secret = rules.unapprovedSecrets(of: plugin.manifest)
      out += "  environment: " + plugin.manifest.requestedVariables.joined(separator: ", ") + "\n"
      if let token = plugin.manifest.mcp?.bearerTokenEnv, let url = plugin.manifest.mcp?.url {
        out += "  sends the value of \(token) to \(url) as its bearer token\n"
      }
      if !secret.isEmpty {
        out +=
          "  warning: \(secret.joined(separator: ", ")) \(secret.count == 1 ? "is or looks" : "are or look") like "
          + "\(secret.count == 1 ? "a secret" : "secrets") and leave\(secret.count == 1 ? "s" : "") toolhost on every call\n"
      }
    }
    out += "\nARGUMENTS:\n"
    // Local `$ref`s are followed, so that a schema written with `$defs` shows its fields.
    let parameters = JSONSchema.inliningReferences(in: tool.parameters)
    let props = parameters["properties"]?.objectValue ?? [:]
    if props.isEmpty { out += "  (none)\n" }
    out += properties(of: parameters, indent: "  ")
    if let extra = parameters["additionalProperties"], extra == .bool(false) {
      out += "  (no other arguments are accepted)\n"
    }
    if let output = tool.outputSchema.map({ JSONSchema.inliningReferences(in: $0) }) {
      out += "\nRESULT: \(type(of: output))\n" + properties(of: output, indent: "  ")
    }
    return out
  }

  static func properties(of schema: JSONValue, indent: String, depth: Int = 0) -> String {
    var out = ""
    let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    for (name, p) in schema["properties"]?.objectValue ?? [:] {
      var line = "\(indent)\(name): \(type(of: p))"
      if required.contains(name) { line += " (required)" }
      let c = constraints(of: p)
      if !c.isEmpty { line += " [" + c.joined(separator: ", ") + "]" }
      out += line + "\n"
      if let d = p["description"]?.stringValue { out += "\(indent)    \(d)\n" }
      guard depth < 4 else { continue }
      if p["properties"] != nil { out += properties(of: p, indent: indent + "    ", depth: depth + 1) }
      if let items = p["items"], items["properties"] != nil {
        out += properties(of: items, indent: indent + "    ", depth: depth + 1)
      }
    }
    return out
  }
}
