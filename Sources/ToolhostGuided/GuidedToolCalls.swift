import Foundation
public import ToolhostJSON
import ToolhostSchema
public import ToolhostSession

/// Guided tool calling, the way FoundationModels uses guided generation: the wire format for a model that is asked
/// for a JSON reply constrained to "one of these tool calls, with arguments for that tool, or a final answer".
/// Pure functions, no I/O.
///
/// A reply is one JSON object that starts with `"need"`, what the user asks for in a few words (a moment of
/// thought that measurably improves a small model's choice), then `"tool": NAME, "arguments": {…}` to call a tool,
/// or `"tool": "none", "answer": TEXT` to answer. The system message lists the tools as compact signatures with a
/// few examples of both (with made-up tools). Earlier calls are shown to the model in that same form (as its own messages), and tool results as user messages
/// that name the tool, so any chat template renders them; servers and templates that drop `tool` messages or reject
/// `tool_calls` cannot lose them. The arguments the server produced are validated again by the session with
/// toolhost's own validator (constrained decoders skip keywords such as numeric ranges), and an invalid call is
/// reported back to the model for a repair, like any other call.
public enum GuidedToolCalls {
  /// A reply whose calls leave parts of the prompt undone (``uncoveredParts(of:by:tools:)``), and those parts: the
  /// next request shows the reply and asks for the calls for them, so that every call is made in one round.
  public struct Continuation: Sendable, Equatable {
    /// The calls the reply made.
    public var calls: [Transcript.ToolCall]
    /// The parts of the prompt they leave undone.
    public var parts: [String]
    /// Whether the calls asked for replace the reply's instead of joining them: the reply's calls take nothing
    /// from the prompt (``takesNothing(from:_:)``: `todoList {}` for "Mark items 1 and 3 as done"), so they were a
    /// wrong choice of tool, not a part of the answer.
    public var replaces: Bool

    /// Makes a continuation.
    public init(calls: [Transcript.ToolCall], parts: [String], replaces: Bool = false) {
      self.calls = calls
      self.parts = parts
      self.replaces = replaces
    }

    /// `turn` with the first reply's calls: what stands when the reply asked for adds no call.
    func standing(_ turn: ModelTurn) -> ModelTurn {
      var standing = turn
      standing.toolCalls = calls
      return standing
    }

    /// The reply as the model's message, and the request for the calls still needed.
    public var messages: [JSONValue] {
      let list: [JSONValue] = calls.map { ["tool": .string($0.toolName), "arguments": $0.arguments] }
      let asked = parts.map { "\"\($0)\"" }.joined(separator: " and ")
      let request =
        replaces
        ? "Those calls do not do what I asked: \(asked). Reply with the calls that do."
        : "Those calls do not cover all of my request. It also asks: \(asked). Reply with the calls for that."
      return [
        ["role": "assistant", "content": .string((["calls": .array(list)] as JSONValue).serialized())],
        ["role": "user", "content": .string(request)],
      ]
    }
  }

  /// The most tools a request lists; with more offered, the best ``shortlistSize`` for the prompt are shown. Up to
  /// it every tool is listed in the order given, one line each, so the prompt's start is the same for every question
  /// and the server's prompt cache serves it; a shortlist changes with each question and is read afresh each time
  /// (with 18 tools a shortlist made `ask` about 2.5 times slower than 11 listed whole, issue 49).
  public static let shortlistThreshold = 24
  /// How many tools a shortlist holds.
  public static let shortlistSize = 8

  /// The tools a request lists (``ToolOffer/tools``).
  public static func offeredTools(for request: ModelRequest) -> [Transcript.ToolDefinition] {
    ToolOffer.listed(for: request)
  }

  /// What one guided turn shows the model of its tools: the one place where the guided strategy narrows the tools
  /// a request carries. Worked out once for the turn and used by each request of it (a turn's re-asks list the same
  /// tools the same way).
  ///
  /// The tools are narrowed three times on their way to the model, each by its own owner:
  /// 1. the chat's choice of tools (`ToolSelection`: what the session has, within the user's approval rules);
  /// 2. one message's pick (``GenerationOptions/offeredTools``: what the request carries);
  /// 3. here, what the model is shown and may call: up to ``shortlistThreshold`` tools all of them, in the order
  ///    given (a fixed order keeps the prompt's start the same from question to question, which the server's prompt
  ///    cache needs), above it the best ``shortlistSize`` for the transcript's last prompt, best first
  ///    (``ToolRanking``), as "tool search" does; and of those, the ones a second try may call
  ///    (``callable(excluding:)``, after the review left out the tools of rejected calls).
  public struct ToolOffer: Sendable, Equatable {
    /// The tools the request lists; none when its reply is not constrained (``isConstrained(_:)``).
    public var tools: [Transcript.ToolDefinition]
    /// The text added to the system message; `nil` when no tools are listed.
    public var instructions: String?

    /// The offer of `request`, with `today` (``today()``) in its instructions.
    public init(for request: ModelRequest, today: String?) {
      tools = GuidedToolCalls.isConstrained(request) ? Self.listed(for: request) : []
      instructions =
        tools.isEmpty
        ? nil
        : GuidedToolCalls.toolInstructions(
          tools: tools, choice: request.toolChoice, today: today, prompt: request.transcript.lastPrompt)
    }

    /// The tools the reply may call once `excluded` are left out of its schema (they stay in the system message, so
    /// the prompt's start does not change); all of ``tools`` when that would leave none.
    public func callable(excluding excluded: Set<String>) -> [Transcript.ToolDefinition] {
      let callable = tools.filter { !excluded.contains($0.name) }
      return callable.isEmpty ? tools : callable
    }

    /// All of the request's tools up to ``shortlistThreshold``, else the best ``shortlistSize`` for its last prompt.
    static func listed(for request: ModelRequest) -> [Transcript.ToolDefinition] {
      guard request.tools.count > shortlistThreshold else { return request.tools }
      let prompt = request.transcript.lastPrompt ?? ""
      return Array(ToolRanking.rank(request.tools, for: prompt).prefix(shortlistSize).map(\.tool))
    }
  }

  /// Whether `transcript` ends with the results of a round of calls made for its last prompt, all of them
  /// successful: where ``GuidedFollowUp/answer`` asks for the answer.
  /// A first round that found nothing (``foundNothing(_:)``), or that left something the prompt names uncovered
  /// (``uncoveredParts(of:by:tools:)``) or an action it names undone (``actionLeftUndone(_:tools:)``), may be
  /// followed by one more round of calls instead.
  public static func answersResults(_ transcript: Transcript, tools: [Transcript.ToolDefinition] = []) -> Bool {
    var round: [Transcript.ToolOutput] = []
    for entry in transcript.entries.reversed() {
      guard case .toolOutput(let output) = entry else { break }
      if output.isError { return false }
      round.append(output)
    }
    guard !round.isEmpty else { return false }
    guard roundsSinceLastPrompt(transcript) == 1 else { return true }
    return !round.contains(where: foundNothing) && actionLeftUndone(transcript, tools: tools) == nil
      && uncoveredParts(of: transcript.lastPrompt ?? "", by: callsSinceLastPrompt(transcript), tools: tools).isEmpty
  }

  /// Whether the transcript ends with the first round of calls for its last prompt, and a call of it failed with
  /// an error that says what would work ("Did you mean Dubai?", "Expected HH:MM", the known units): the next reply
  /// is then a call, the one retry before the answer. A small model otherwise answers with the failure and leaves
  /// the fix unused.
  public static func failureSuggestsAFix(_ transcript: Transcript) -> Bool {
    guard roundsSinceLastPrompt(transcript) == 1, case .toolOutput = transcript.entries.last else { return false }
    return outputsSinceLastPrompt(transcript).contains { output in
      guard output.isError else { return false }
      let text = output.text.lowercased()
      return ["did you mean", "expected", "\"known\"", "known units", "try "].contains(where: text.contains)
    }
  }

  /// Whether the reply of `request` is constrained: it has tools and may call them.
  public static func isConstrained(_ request: ModelRequest) -> Bool {
    !request.tools.isEmpty && request.toolChoice != .none
  }

  /// The most calls one reply may make.
  public static let maximumCallsPerReply = 8

  /// The JSON Schema of a reply: `{"need": STRING, "calls": [CALL, …]}` with one to ``maximumCallsPerReply``
  /// calls, each `anyOf` one object per tool, `{"tool": NAME, "arguments": PARAMETERS}`, and, unless a call is
  /// required, the answer object `{"need": STRING, "answer": STRING}`.
  ///
  /// Each tool's parameters go through ``decodingSchema(_:)``.
  public static func replySchema(tools: [Transcript.ToolDefinition], choice: ToolChoice) -> JSONValue {
    var calls: [JSONValue] = []
    for tool in tools {
      calls.append([
        "type": "object",
        "properties": ["tool": ["const": .string(tool.name)], "arguments": decodingSchema(tool.parameters)],
        "required": ["tool", "arguments"], "additionalProperties": false,
      ])
    }
    var branches: [JSONValue] = [
      [
        "type": "object",
        "properties": [
          "need": ["type": "string"],
          "calls": [
            "type": "array", "items": calls.count == 1 ? calls[0] : ["anyOf": .array(calls)], "minItems": 1,
            "maxItems": .integer(Int64(maximumCallsPerReply)),
          ],
        ],
        "required": ["need", "calls"], "additionalProperties": false,
      ]
    ]
    if choice != .required {
      branches.append([
        "type": "object",
        "properties": ["need": ["type": "string"], "answer": ["type": "string"]],
        "required": ["need", "answer"], "additionalProperties": false,
      ])
    }
    return branches.count == 1 ? branches[0] : ["anyOf": .array(branches)]
  }

  /// The JSON Schema of a reply that can only be an answer: `{"answer": STRING}`, the form earlier answers take in
  /// the messages. Without `need`: once the decision is made, it only costs tokens (about 14 fewer per answer, half
  /// a second with the default local model, BENCHMARKS.md).
  public static let answerSchema: JSONValue = [
    "type": "object",
    "properties": ["answer": ["type": "string"]],
    "required": ["answer"], "additionalProperties": false,
  ]

  /// A tool's argument schema reduced to what grammar-constrained decoders understand.
  ///
  /// llama.cpp turns a schema into a grammar and, when any part of it is beyond its converter, silently falls back
  /// to "any JSON", so one unusual tool would unconstrain every call. This keeps the structural keywords (`type`,
  /// `properties`, `required`, `items`, `enum`, `const`, `anyOf`/`oneOf`, `additionalProperties`, item counts up to
  /// 8) and what a string may be (``stringConstraints(_:)``: a `pattern` in the converters' subset, the formats
  /// `date`, `time`, `date-time`, `uuid`, `email` and `uri`, short lengths), and drops the rest (`$ref`, `allOf`,
  /// `not`, numeric ranges, longer counts, conditionals...);
  /// toolhost's own validator checks every call against the full schema afterwards. An object without
  /// `additionalProperties` gets `false`, so the model cannot invent arguments. Local `$ref`s are replaced by what
  /// they designate first (a recursive one, past its first level, allows anything), and an `allOf` whose members
  /// name different keywords is merged into its schema, as Pydantic writes a described reference.
  public static func decodingSchema(_ schema: JSONValue) -> JSONValue {
    reduced(JSONSchema.inliningReferences(in: schema, maximumDepth: 4))
  }

  private static func reduced(_ schema: JSONValue) -> JSONValue {
    guard var object = schema.objectValue else {
      return schema.boolValue == false ? ["not": [:]] : [:]
    }
    if let members = object["allOf"]?.arrayValue, members.allSatisfy({ $0.objectValue != nil }) {
      let keys = members.flatMap { $0.objectValue!.keys } + object.keys.filter { $0 != "allOf" }
      if Set(keys).count == keys.count {
        object["allOf"] = nil
        for member in members { for (key, value) in member.objectValue! { object[key] = value } }
      }
    }
    var out = JSONObject()
    if let type = object["type"], type.stringValue != nil || type.arrayValue != nil { out["type"] = type }
    if let values = object["enum"]?.arrayValue { out["enum"] = .array(values) }
    if let value = object["const"] { out["const"] = value }
    for key in ["anyOf", "oneOf"] {
      if let list = object[key]?.arrayValue {
        out["anyOf"] = .array(list.map(reduced))
        break
      }
    }
    if let properties = object["properties"]?.objectValue {
      out["properties"] = .object(JSONObject(properties.map { ($0.key, reduced($0.value)) }))
      if let required = object["required"]?.arrayValue {
        out["required"] = .array(required.filter { $0.stringValue.map { properties[$0] != nil } ?? false })
      }
    }
    let isObject = object["type"]?.stringValue == "object" || object["properties"] != nil
    if let extra = object["additionalProperties"] {
      out["additionalProperties"] = extra.boolValue != nil ? extra : reduced(extra)
    } else if isObject {
      out["additionalProperties"] = false
    }
    if let items = object["items"], items.objectValue != nil { out["items"] = reduced(items) }
    let type = object["type"]?.stringValue
    if type == "string" || (type == nil && out["enum"] == nil && out["const"] == nil && out["anyOf"] == nil) {
      for (key, value) in stringConstraints(object) { out[key] = value }
    }
    // Bounds become nested optional rules, one level per unit: llama.cpp's grammar parser fails on long ones (and
    // llama-cpp-python's server then crashes), so only small item counts stay; string lengths never do.
    for key in ["minItems", "maxItems"] {
      if let n = object[key]?.integerValue, (0...8).contains(n) { out[key] = .integer(n) }
    }
    return .object(out)
  }

  /// The formats llama.cpp's converters write a grammar for themselves.
  static let grammarFormats: Set<String> = ["date", "time", "date-time", "uuid"]

  /// Patterns for the formats they do not know (in the converters' subset, ``GrammarPattern``): what a value must
  /// look like to be an address at all; toolhost's validator checks the rest.
  static let formatPatterns: [String: String] = [
    "email": "^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+([.][A-Za-z0-9-]+)+$",
    "uri": "^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+$",
  ]

  /// What the grammar can hold of a string schema: its `pattern` rewritten into the converters' subset
  /// (``GrammarPattern/rewrite(_:)``; one it cannot say is left to the validator), else its `format` (as the
  /// converters know it, or as a pattern), else its lengths when they are short (``GrammarPattern/maximumCount``:
  /// each unit of a bounded length is a nested rule).
  static func stringConstraints(_ schema: JSONObject) -> JSONObject {
    if let pattern = schema["pattern"]?.stringValue, let rewritten = GrammarPattern.rewrite(pattern) {
      return ["pattern": .string(rewritten)]
    }
    if let format = schema["format"]?.stringValue {
      if grammarFormats.contains(format) { return ["format": .string(format)] }
      if let pattern = formatPatterns[format] { return ["pattern": .string(pattern)] }
    }
    var out = JSONObject()
    let low = schema["minLength"]?.integerValue
    let high = schema["maxLength"]?.integerValue
    if let high, (1...Int64(GrammarPattern.maximumCount)).contains(high), (low ?? 0) <= high {
      out["maxLength"] = .integer(high)
      if let low, low > 0 { out["minLength"] = .integer(low) }
    } else if let low, (1...Int64(GrammarPattern.maximumCount)).contains(low) {
      out["minLength"] = .integer(low)
    }
    return out
  }
}
