import Foundation
import ToolhostJSON
import ToolhostSchema
import ToolhostSession

/// How a backend gets tool calls out of a chat-completions server.
public enum ToolCallingStrategy: String, Sendable, Equatable, Codable, CaseIterable {
  /// The server's own tool calling: `tools` and `tool_choice` in the request, `tool_calls` in the reply. Right for
  /// models trained for it (OpenAI's, large open models).
  case native
  /// Schema-constrained generation: the tools are described in the system message and the server is asked to
  /// constrain the reply to a JSON Schema of "one of these tool calls, or an answer"; toolhost parses the reply
  /// itself. Right for small local models, whose native tool calls are unreliable. See ``GuidedToolCalls``.
  case guided
}

/// How a guided request asks the server to constrain its reply to a schema.
public enum GuidedResponseFormat: String, Sendable, Equatable, Codable, CaseIterable {
  /// `{"type": "json_object", "schema": S}`: llama-cpp-python's server and llama.cpp's `llama-server`.
  case jsonObjectWithSchema
  /// `{"type": "json_schema", "json_schema": {"name", "schema": S}}`: OpenAI, vLLM and `llama-server`.
  case jsonSchema
}

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
  /// The request body: the transcript rendered for guided calling, and a `response_format` constraining the reply
  /// to ``replySchema(tools:choice:)``. With no tools, or `tool_choice` `none`, the reply is plain text and no
  /// format is sent. Sampling options and additional parameters as in ``ChatCompletions/requestBody(for:model:stream:)``.
  ///
  /// With `answerOnly`, the reply is constrained to the answer object: for a second try after the model repeated a
  /// call whose result it already has (see ``repeatsEarlierCall(_:in:)``). With more than ``shortlistThreshold``
  /// tools, only the best ``shortlistSize`` for the last prompt are offered (see ``offeredTools(for:)``).
  public static func requestBody(
    for request: ModelRequest, model: String, stream: Bool,
    format: GuidedResponseFormat = .jsonObjectWithSchema, answerOnly: Bool = false
  ) -> JSONValue {
    let constrained = isConstrained(request)
    let tools = constrained ? offeredTools(for: request) : []
    var body: JSONObject = [
      "model": .string(model),
      "messages": .array(messages(from: request.transcript, tools: tools, choice: request.toolChoice)),
    ]
    if constrained {
      let schema = replySchema(tools: answerOnly ? [] : tools, choice: answerOnly ? .auto : request.toolChoice)
      switch format {
      case .jsonObjectWithSchema:
        body["response_format"] = ["type": "json_object", "schema": schema]
      case .jsonSchema:
        body["response_format"] = [
          "type": "json_schema", "json_schema": ["name": "tool_call_or_answer", "schema": schema],
        ]
      }
    }
    ChatCompletions.addOptions(request.options, stream: stream, to: &body)
    return .object(body)
  }

  /// The most tools a request lists; with more offered, the best ``shortlistSize`` for the prompt are shown.
  public static let shortlistThreshold = 12
  /// How many tools a shortlist holds.
  public static let shortlistSize = 8

  /// The tools a request lists: all of them, in the order given, up to ``shortlistThreshold`` (a fixed order keeps
  /// the prompt's start the same from question to question, which the server's prompt cache needs); above it the
  /// best ``shortlistSize`` for the transcript's last prompt, best first (``ToolRanking``), as "tool search" does.
  public static func offeredTools(for request: ModelRequest) -> [Transcript.ToolDefinition] {
    guard request.tools.count > shortlistThreshold else { return request.tools }
    let prompt = request.transcript.lastPrompt ?? ""
    return Array(ToolRanking.rank(request.tools, for: prompt).prefix(shortlistSize).map(\.tool))
  }

  /// Whether the reply of `request` is constrained: it has tools and may call them.
  public static func isConstrained(_ request: ModelRequest) -> Bool {
    !request.tools.isEmpty && request.toolChoice != .none
  }

  /// The JSON Schema of a reply: `anyOf` one object per tool, `{"need": STRING, "tool": NAME, "arguments":
  /// PARAMETERS}`, and, unless a call is required, the answer object `{"need": STRING, "tool": "none", "answer":
  /// STRING}`.
  ///
  /// Each tool's parameters go through ``decodingSchema(_:)``. (A tool named `none` cannot be told from an answer;
  /// the session's tool names come from plugins, where `none` is as unlikely as it is unhelpful.)
  public static func replySchema(tools: [Transcript.ToolDefinition], choice: ToolChoice) -> JSONValue {
    var branches: [JSONValue] = []
    for tool in tools {
      branches.append([
        "type": "object",
        "properties": [
          "need": ["type": "string"], "tool": ["const": .string(tool.name)],
          "arguments": decodingSchema(tool.parameters),
        ],
        "required": ["need", "tool", "arguments"], "additionalProperties": false,
      ])
    }
    if choice != .required {
      branches.append([
        "type": "object",
        "properties": ["need": ["type": "string"], "tool": ["const": "none"], "answer": ["type": "string"]],
        "required": ["need", "tool", "answer"], "additionalProperties": false,
      ])
    }
    return branches.count == 1 ? branches[0] : ["anyOf": .array(branches)]
  }

  /// A tool's argument schema reduced to what grammar-constrained decoders understand.
  ///
  /// llama.cpp turns a schema into a grammar and, when any part of it is beyond its converter, silently falls back
  /// to "any JSON", so one unusual tool would unconstrain every call. This keeps the structural keywords (`type`,
  /// `properties`, `required`, `items`, `enum`, `const`, `anyOf`/`oneOf`, `additionalProperties`, item counts up to
  /// 8) and drops the rest (`$ref`, `allOf`, `not`, `pattern`, `format`, numeric ranges, string lengths, larger item
  /// counts, conditionals...);
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
    // Bounds become nested optional rules, one level per unit: llama.cpp's grammar parser fails on long ones (and
    // llama-cpp-python's server then crashes), so only small item counts stay; string lengths never do.
    for key in ["minItems", "maxItems"] {
      if let n = object[key]?.integerValue, (0...8).contains(n) { out[key] = .integer(n) }
    }
    return .object(out)
  }

  /// The text added to the system message when tools may be called: one line per tool with a compact signature
  /// (see ``signature(of:)``) and the first sentence of its description, then the reply format.
  ///
  /// Compact on purpose: a small model on two cores reads about 80 prompt tokens a second, and full schemas for the
  /// example plugins come to over 2,000 tokens; the reply schema enforces the structure anyway.
  public static func toolInstructions(tools: [Transcript.ToolDefinition], choice: ToolChoice) -> String {
    var lines = ["You can use these tools:"]
    for tool in tools {
      let summary = summary(of: tool.description)
      lines.append("- \(tool.name)(\(signature(of: tool.parameters)))\(summary.isEmpty ? "" : ": " + summary)")
    }
    lines.append("")
    lines.append(
      "Reply with one JSON object. First write \"need\": what the user asks for, in a few words. Then, if one of "
        + "the tools does that, \"tool\": its name and \"arguments\" (use the tool rather than compute, recall or "
        + "guess what it provides)"
        + (choice == .required
          ? ". A tool call is required now."
          : "; otherwise \"tool\": \"none\" and \"answer\": your reply. After a tool's result, answer with it."))
    lines.append("")
    // Examples measurably help a 0.5B model (BENCHMARKS.md); their "need" phrases are specific on purpose: generic
    // ones ("a fact about art") get copied ("a fact about weather") along with the decision that follows them.
    lines.append("Examples (the tools in them are made up):")
    if choice != .required {
      lines.append("User: Write a one-line greeting for Anna.")
      lines.append(#"{"need": "a greeting for Anna", "tool": "none", "answer": "Hello Anna, lovely to see you!"}"#)
      lines.append("User: Who painted the Mona Lisa?")
      lines.append(#"{"need": "the painter of the Mona Lisa", "tool": "none", "answer": "Leonardo da Vinci."}"#)
    }
    lines.append("User: Send Bob an email saying I am late. (with a tool sendEmail)")
    lines.append(
      #"{"need": "an email to Bob", "tool": "sendEmail", "arguments": {"to": "Bob", "body": "I am late."}}"#)
    lines.append("User: What is ACME's stock price? (with a tool getStockPrice)")
    lines.append(#"{"need": "the stock price of ACME", "tool": "getStockPrice", "arguments": {"symbol": "ACME"}}"#)
    return lines.joined(separator: "\n")
  }

  /// A schema's properties as a compact signature: `city: string, month?: integer 1..12, units?: "c"|"f"`
  /// (`?` marks optional properties; arrays are `T[]`, nested objects `{…}`).
  public static func signature(of schema: JSONValue) -> String {
    signature(of: JSONSchema.inliningReferences(in: schema, maximumDepth: 4), depth: 0)
  }

  private static func signature(of schema: JSONValue, depth: Int) -> String {
    guard let properties = schema["properties"]?.objectValue else { return "" }
    let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
    return properties.map { name, property in
      "\(name)\(required.contains(name) ? "" : "?"): \(typeText(property, depth: depth))"
    }.joined(separator: ", ")
  }

  private static func typeText(_ schema: JSONValue, depth: Int) -> String {
    if let values = schema["enum"]?.arrayValue {
      return values.prefix(12).map { $0.serialized() }.joined(separator: "|") + (values.count > 12 ? "|…" : "")
    }
    if let value = schema["const"] { return value.serialized() }
    if let members = schema["allOf"]?.arrayValue, members.count == 1, schema["type"] == nil {
      return typeText(members[0], depth: depth)  // a described reference, as Pydantic writes one
    }
    if let options = (schema["anyOf"] ?? schema["oneOf"])?.arrayValue {
      return options.map { typeText($0, depth: depth) }.joined(separator: "|")
    }
    var type =
      schema["type"]?.stringValue ?? schema["type"]?.arrayValue?.compactMap(\.stringValue).joined(
        separator: "|") ?? (schema["properties"] != nil ? "object" : "any")
    switch type {
    case "array":
      let item = schema["items"].map { typeText($0, depth: depth + 1) } ?? "any"
      type = (item.contains("|") || item.contains(" ") ? "(\(item))" : item) + "[]"
    case "object" where depth < 2 && schema["properties"] != nil:
      type = "{\(signature(of: schema, depth: depth + 1))}"
    case "integer", "number":
      let low = schema["minimum"].map { $0.serialized() }
      let high = schema["maximum"].map { $0.serialized() }
      if low != nil || high != nil { type += " \(low ?? "")..\(high ?? "")" }
    default:
      break
    }
    return type
  }

  /// The first sentence of a description, at most about 200 characters.
  static func summary(of description: String) -> String {
    let flat = description.split(whereSeparator: \.isNewline).joined(separator: " ")
    var end = flat.endIndex
    var search = flat.startIndex
    // A sentence ends at a full stop followed by the end or by a space and a capital ("e.g. km" goes on).
    while let dot = flat[search...].firstIndex(of: ".") {
      let next = flat.index(after: dot)
      if next == flat.endIndex { break }
      if flat[next] == " " {
        let after = flat.index(after: next)
        if after == flat.endIndex || flat[after].isUppercase {
          end = next
          break
        }
      }
      search = next
    }
    var sentence = String(flat[..<end])
    if sentence.count > 200 {
      sentence = String(sentence.prefix(200))
      if let space = sentence.lastIndex(of: " ") { sentence = String(sentence[..<space]) }
      sentence += "…"
    }
    return sentence
  }

  /// The transcript as chat messages for guided calling.
  ///
  /// The instructions (plus ``toolInstructions(tools:choice:)`` when `tools` is not empty) are the `system`
  /// message; prompts are `user` messages; answers are `assistant` messages holding `{"tool": "none", "answer": …}`
  /// and calls
  /// `assistant` messages holding `{"tool": …, "arguments": …}` (when `tools` is empty, answers stay plain text);
  /// each tool output is a `user` message naming the tool, with the output and what to do next.
  public static func messages(
    from transcript: Transcript, tools: [Transcript.ToolDefinition], choice: ToolChoice
  ) -> [JSONValue] {
    let guided = !tools.isEmpty
    let extra = guided ? toolInstructions(tools: tools, choice: choice) : nil
    var messages: [JSONValue] = []
    var sawInstructions = false
    var lastPrompt = ""
    for entry in transcript {
      switch entry {
      case .instructions(let i):
        let text = [i.text, extra ?? ""].filter { !$0.isEmpty }.joined(separator: "\n\n")
        if !text.isEmpty { messages.append(["role": "system", "content": .string(text)]) }
        sawInstructions = true
      case .prompt(let p):
        lastPrompt = p.text
        messages.append(["role": "user", "content": .string(p.text)])
      case .response(let r):
        let content: String =
          guided ? (["tool": "none", "answer": .string(r.text)] as JSONValue).serialized() : r.text
        messages.append(["role": "assistant", "content": .string(content)])
      case .toolCalls(let calls):
        for call in calls.calls {
          let arguments: JSONValue =
            call.argumentsText.map { .string($0) } ?? call.arguments
          let content: JSONValue = ["tool": .string(call.toolName), "arguments": arguments]
          messages.append(["role": "assistant", "content": .string(content.serialized())])
        }
      case .toolOutput(let output):
        let what = output.isError ? "The call to \(output.toolName) failed" : "Result of \(output.toolName)"
        let question = lastPrompt.count > 300 ? String(lastPrompt.prefix(300)) + "…" : lastPrompt
        let next =
          output.isError
          ? "Fix the call, or answer the user's request (\"\(question)\") without it."
          : "Now answer the user's request (\"\(question)\") with this result, or call another tool if it needs more."
        messages.append(["role": "user", "content": .string("\(what):\n\(output.text)\n\n\(next)")])
      }
    }
    if !sawInstructions, let extra {
      messages.insert(["role": "system", "content": .string(extra)], at: 0)
    }
    return messages
  }

  /// The turn a guided reply stands for.
  ///
  /// `{"tool": NAME, "arguments": …}` becomes one tool call with id `callID` (arguments that are not an object are
  /// kept as they are, for the session to report back); `{"tool": "none", "answer": TEXT}` (or just `{"answer":
  /// TEXT}`) becomes text; `need` is not kept. A reply in a ```json fence is
  /// read the same way. Anything else (a server that ignored the format, a reply cut off by the token limit) is kept
  /// as text, so nothing the model said is lost. Usage and finish reason come from `base`.
  public static func turn(fromReply text: String, base: ModelTurn = ModelTurn(), callID: String) -> ModelTurn {
    var turn = base
    turn.text = text
    turn.toolCalls = []
    guard let value = parseReply(text), let object = value.objectValue else {
      // An answer cut off (by the token limit, say) still has readable text.
      var stream = GuidedAnswerStream()
      let partial = stream.feed(text)
      if !partial.isEmpty { turn.text = partial }
      return turn
    }
    if let name = object["tool"]?.stringValue, name != "none" {
      turn.text = ""
      turn.toolCalls = [Transcript.ToolCall(id: callID, toolName: name, arguments: object["arguments"] ?? [:])]
      if turn.finishReason == "stop" { turn.finishReason = "tool_calls" }
    } else if let answer = object["answer"]?.stringValue {
      turn.text = answer
    }
    return turn
  }

  /// Whether `turn` calls a tool with the same arguments as a call made since the transcript's last prompt.
  ///
  /// Small models often repeat a call instead of answering from its result; the result would be the same, so a
  /// guided backend asks again for an answer instead.
  public static func repeatsEarlierCall(_ turn: ModelTurn, in transcript: Transcript) -> Bool {
    guard !turn.toolCalls.isEmpty else { return false }
    let start = transcript.entries.lastIndex { if case .prompt = $0 { true } else { false } } ?? 0
    var earlier: [Transcript.ToolCall] = []
    for entry in transcript.entries[start...] {
      if case .toolCalls(let calls) = entry { earlier += calls.calls }
    }
    return turn.toolCalls.allSatisfy { call in
      earlier.contains { $0.toolName == call.toolName && $0.arguments.jsonEquals(call.arguments) }
    }
  }

  /// The JSON value of a reply, also inside a Markdown code fence; `nil` when it is not JSON.
  static func parseReply(_ text: String) -> JSONValue? {
    var body = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if body.hasPrefix("```") {
      body.removeFirst(3)
      if let newline = body.firstIndex(of: "\n") { body = String(body[body.index(after: newline)...]) }
      if body.hasSuffix("```") { body.removeLast(3) }
      body = body.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    guard body.hasPrefix("{") else { return nil }
    if let value = try? JSONValue.parse(body) { return value }
    // Grammars commonly let raw line breaks and tabs into strings, which JSON does not allow: escape them.
    return try? JSONValue.parse(escapingControlCharactersInStrings(body))
  }

  /// `text` with raw control characters inside JSON strings replaced by escapes.
  static func escapingControlCharactersInStrings(_ text: String) -> String {
    var out: [UInt8] = []
    var inString = false
    var escaped = false
    for byte in text.utf8 {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        } else if byte < 0x20 {
          switch byte {
          case 10: out += Array("\\n".utf8)
          case 13: out += Array("\\r".utf8)
          case 9: out += Array("\\t".utf8)
          default: out += Array(String(format: "\\u%04x", byte).utf8)
          }
          continue
        }
      } else if byte == UInt8(ascii: "\"") {
        inString = true
      }
      out.append(byte)
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// Picks the answer's text out of a guided reply while it streams, so an answer can be shown as it is generated.
///
/// Feed it the reply's text as it arrives; once the reply's top-level `answer` member starts (after `need` and
/// `tool`, or first), it returns the newly decoded characters of that string, and nothing for a tool call or
/// anything that is not a JSON object. Escape sequences and UTF-8 sequences are passed on only when complete.
public struct GuidedAnswerStream: Sendable {
  private enum State: Sendable {
    /// Reading the object's structure, looking for the `answer` member.
    case scanning
    /// Inside the answer string.
    case inAnswer
    /// The answer ended, or this is not an answer.
    case finished
  }
  private var state = State.scanning
  private var buffer: [UInt8] = []
  private var position = 0
  // The scanner: nesting depth, whether inside a string (and where it started), the last key at depth 1 and
  // whether its colon has been seen.
  private var depth = 0
  private var stringStart: Int?
  private var key: [UInt8]?
  private var afterColon = false

  /// Makes an empty stream.
  public init() {}

  /// Adds `piece` and returns the answer text it completes (often empty).
  public mutating func feed(_ piece: String) -> String {
    buffer.append(contentsOf: piece.utf8)
    if case .scanning = state { scan() }
    guard case .inAnswer = state else { return "" }
    var out: [UInt8] = []
    while position < buffer.count {
      let byte = buffer[position]
      if byte == UInt8(ascii: "\"") {
        state = .finished
        break
      }
      if byte != UInt8(ascii: "\\") {
        out.append(byte)
        position += 1
        continue
      }
      guard let (decoded, length) = escape(at: position) else { break }  // incomplete: wait for more
      out.append(contentsOf: decoded)
      position += length
    }
    // Hold back a partial UTF-8 sequence at the end until the rest arrives.
    var keep = 0
    if case .inAnswer = state {
      keep = Self.incompleteUTF8Tail(out)
    }
    position -= keep
    return String(decoding: out.dropLast(keep), as: UTF8.self)
  }

  /// Advances the scanner over the buffer until the answer string starts, the reply proves to be something else, or
  /// the buffer runs out.
  private mutating func scan() {
    let quote = UInt8(ascii: "\"")
    let backslash = UInt8(ascii: "\\")
    while position < buffer.count {
      let byte = buffer[position]
      if let start = stringStart {
        if byte == backslash {
          guard position + 1 < buffer.count else { return }  // wait for the escaped character
          position += 2
          continue
        }
        if byte == quote {
          if depth == 1 && !afterColon { key = Array(buffer[(start + 1)..<position]) }
          if depth == 1 && afterColon { afterColon = false }
          stringStart = nil
        }
        position += 1
        continue
      }
      switch byte {
      case quote:
        if depth == 1 && afterColon && key == Array("answer".utf8) {
          position += 1
          state = .inAnswer
          return
        }
        stringStart = position
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth <= 0 {
          state = .finished
          return
        }
      case UInt8(ascii: ":"):
        if depth == 1 { afterColon = true }
      case UInt8(ascii: ","):
        if depth == 1 {
          afterColon = false
          key = nil
        }
      case 9, 10, 13, 32:
        break
      default:
        // Anything before the opening brace means this is not a JSON object.
        if depth == 0 {
          state = .finished
          return
        }
      }
      position += 1
    }
  }

  /// The bytes an escape sequence at `start` stands for and its length, or `nil` when it is not complete yet.
  private func escape(at start: Int) -> ([UInt8], Int)? {
    guard start + 1 < buffer.count else { return nil }
    switch buffer[start + 1] {
    case UInt8(ascii: "n"): return ([10], 2)
    case UInt8(ascii: "t"): return ([9], 2)
    case UInt8(ascii: "r"): return ([13], 2)
    case UInt8(ascii: "b"): return ([8], 2)
    case UInt8(ascii: "f"): return ([12], 2)
    case UInt8(ascii: "u"):
      guard let high = hex4(at: start + 2) else { return nil }
      if (0xD800..<0xDC00).contains(high) {
        guard start + 12 <= buffer.count else { return nil }
        if buffer[start + 6] == UInt8(ascii: "\\"), buffer[start + 7] == UInt8(ascii: "u"),
          let low = hex4(at: start + 8), (0xDC00..<0xE000).contains(low)
        {
          let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
          return (utf8(scalar), 12)
        }
        return (utf8(0xFFFD), 6)
      }
      return (utf8((0xDC00..<0xE000).contains(high) ? 0xFFFD : high), 6)
    default: return ([buffer[start + 1]], 2)  // \" \\ \/ (and anything else, kept as written)
    }
  }

  private func hex4(at start: Int) -> UInt32? {
    guard start + 4 <= buffer.count else { return nil }
    return UInt32(String(decoding: buffer[start..<start + 4], as: UTF8.self), radix: 16)
  }

  private func utf8(_ value: UInt32) -> [UInt8] {
    Array(String(Character(Unicode.Scalar(value) ?? "\u{FFFD}")).utf8)
  }

  /// How many bytes at the end of `bytes` start a UTF-8 sequence that is not complete.
  private static func incompleteUTF8Tail(_ bytes: [UInt8]) -> Int {
    var i = bytes.count - 1
    var continuation = 0
    while i >= 0, bytes[i] & 0xC0 == 0x80, continuation < 3 {
      continuation += 1
      i -= 1
    }
    guard i >= 0 else { return 0 }
    let lead = bytes[i]
    let needed = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
    let have = continuation + 1
    return have < needed ? have : 0
  }
}
