import Foundation
public import ToolhostGeneration
public import ToolhostJSON
import ToolhostSchema

/// The shape a model turn's text must take: a JSON value following a schema (guided generation). Backends constrain
/// the reply to it where they can (a local model's grammar, an HTTP model's `json_schema` response format) and, when
/// ``includeSchemaInPrompt`` is set, also write it into the prompt.
public struct ResponseFormat: Sendable, Equatable {
  /// The name of the type the value is for.
  public var name: String
  /// The JSON Schema the reply follows.
  public var schema: JSONValue
  /// Whether the schema is also written into the prompt, for models that are not constrained by it.
  public var includeSchemaInPrompt: Bool

  /// Makes a format.
  public init(name: String, schema: JSONValue, includeSchemaInPrompt: Bool = true) {
    self.name = name
    self.schema = schema
    self.includeSchemaInPrompt = includeSchemaInPrompt
  }

  /// The format of a generation schema.
  public init(_ schema: GenerationSchema, includeSchemaInPrompt: Bool = true) {
    self.init(name: schema.typeName, schema: schema.jsonSchema, includeSchemaInPrompt: includeSchemaInPrompt)
  }

  /// The sentence added to the prompt when ``includeSchemaInPrompt`` is set.
  public var promptText: String {
    "Reply with only a JSON value (no other text) that follows this JSON Schema: \(schema.serialized())"
  }

  /// Whether OpenAI's strict structured outputs accept the schema: an object at the top, and every object lists all
  /// its properties as required and allows no others (any other schema is sent without `strict`).
  public var isStrictCompatible: Bool { schema["type"] == "object" && Self.strictCompatible(schema) }

  private static func strictCompatible(_ schema: JSONValue) -> Bool {
    switch schema {
    case .object(let o):
      if let properties = o["properties"]?.objectValue {
        let required = Set((o["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        guard required == Set(properties.keys), o["additionalProperties"] == .bool(false) else { return false }
      }
      return o.allSatisfy { _, value in strictCompatible(value) }
    case .array(let items): return items.allSatisfy(strictCompatible)
    default: return true
    }
  }

  /// A `json_schema` response format's name: letters, digits, `_` and `-` only (OpenAI's rule).
  public var wireName: String {
    let kept = name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" }
    return kept.isEmpty ? "response" : String(kept.prefix(64))
  }
}

/// A request's format and how its answers are checked: against the schema with toolhost's validator, then by
/// converting into the type asked for.
struct ResponseFormatRequest: Sendable {
  let schema: GenerationSchema
  let request: ResponseFormat
  let check: @Sendable (GeneratedContent) throws -> Void

  init(
    _ schema: GenerationSchema, includeSchemaInPrompt: Bool,
    check: @escaping @Sendable (GeneratedContent) throws -> Void
  ) {
    self.schema = schema
    self.request = ResponseFormat(schema, includeSchemaInPrompt: includeSchemaInPrompt)
    self.check = check
  }

  /// The answer as content that fits, or what is wrong with it (where, and what was expected).
  func decode(_ text: String) -> Result<GeneratedContent, Problem> {
    let value: JSONValue
    do { value = try JSONValue.parse(Self.unfenced(text)) } catch {
      return .failure(Problem("the reply is not JSON (\(error.description)): \(text.prefix(80))"))
    }
    let content = GeneratedContent(json: value)
    let issues = schema.validate(content)
    if !issues.isEmpty {
      let listed = issues.prefix(4).map {
        "at \($0.instanceLocation.isEmpty ? "/" : $0.instanceLocation): \($0.message)"
      }
      return .failure(Problem(listed.joined(separator: "; ")))
    }
    do { try check(content) } catch {
      return .failure(Problem("\(error)"))
    }
    return .success(content)
  }

  /// What is wrong with an answer.
  struct Problem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// The text without a Markdown code fence around it, which models add even when asked for JSON only.
  static func unfenced(_ text: String) -> String {
    var t = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard t.hasPrefix("```") else { return t }
    t.removeFirst(3)
    if let newline = t.firstIndex(of: "\n") { t = String(t[t.index(after: newline)...]) }
    if t.hasSuffix("```") { t.removeLast(3) }
    return t.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
