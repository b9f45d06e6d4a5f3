import Foundation
public import ToolhostJSON
public import ToolhostSession

/// The OpenAI chat-completions wire format: request bodies from a ``ModelRequest``, turns from replies and stream
/// chunks. Pure functions, no I/O.
public enum ChatCompletions {
  /// The request body for `request`.
  ///
  /// Messages come from the transcript (see ``messages(from:)``). With tools: `tools` as functions, `tool_choice`
  /// (`auto`, `required` or `none`) and, when the options set it, `parallel_tool_calls`; without tools none of these
  /// (servers reject `tool_choice` without `tools`). Then `temperature`, `max_tokens`, `top_p`, `seed`, `stop` when
  /// set, `stream` when streaming, and the options' additional parameters last (they win).
  public static func requestBody(for request: ModelRequest, model: String, stream: Bool)
    -> JSONValue
  {
    var body: JSONObject = [
      "model": .string(model), "messages": .array(messages(from: request.transcript)),
    ]
    if !request.tools.isEmpty {
      body["tools"] = .array(
        request.tools.map { t in
          [
            "type": "function",
            "function": [
              "name": .string(t.name), "description": .string(t.description),
              "parameters": t.parameters,
            ],
          ]
        })
      body["tool_choice"] = .string(request.toolChoice.rawValue)
      if let parallel = request.options.parallelToolCalls {
        body["parallel_tool_calls"] = .bool(parallel)
      }
    }
    if let format = request.responseFormat { addResponseFormat(format, jsonSchema: true, to: &body) }
    addOptions(request.options, stream: stream, to: &body)
    return .object(body)
  }

  /// Constrains the reply to `format`: a `response_format` of type `json_schema` (OpenAI's; strict when the schema
  /// allows it, see ``ResponseFormat/isStrictCompatible``), or with
  /// `jsonSchema` false `json_object` with a `schema` member (llama.cpp's server, which turns it into a grammar). When
  /// the format asks, the schema is also written at the end of the last user message.
  public static func addResponseFormat(_ format: ResponseFormat, jsonSchema: Bool, to body: inout JSONObject) {
    if jsonSchema {
      body["response_format"] = [
        "type": "json_schema",
        "json_schema": [
          "name": .string(format.wireName), "schema": format.schema, "strict": .bool(format.isStrictCompatible),
        ],
      ]
    } else {
      body["response_format"] = ["type": "json_object", "schema": format.schema]
    }
    guard format.includeSchemaInPrompt, case .array(var messages)? = body["messages"],
      let last = messages.lastIndex(where: { $0.objectValue?["role"]?.stringValue == "user" }),
      case .object(var message) = messages[last]
    else { return }
    let text = message["content"]?.stringValue ?? ""
    message["content"] = .string(text.isEmpty ? format.promptText : text + "\n\n" + format.promptText)
    messages[last] = .object(message)
    body["messages"] = .array(messages)
  }

  /// Adds the sampling mode (greedy as `temperature` 0, top-k as `top_k`, nucleus as `top_p`, with its seed), then
  /// `temperature`, `max_tokens`, `top_p`, `seed` and `stop` when the options set them (they win over the mode),
  /// `stream` when streaming, and the options' additional parameters last (they win).
  static func addOptions(_ o: GenerationOptions, stream: Bool, to body: inout JSONObject) {
    switch o.samplingMode?.kind {
    case .greedy: body["temperature"] = 0
    case .randomTopK(let k, let seed):
      body["top_k"] = .integer(Int64(k))
      if let seed { body["seed"] = .integer(Int64(truncatingIfNeeded: seed)) }
    case .randomProbabilityThreshold(let threshold, let seed):
      body["top_p"] = .real(threshold)
      if let seed { body["seed"] = .integer(Int64(truncatingIfNeeded: seed)) }
    case nil: break
    }
    if let t = o.temperature { body["temperature"] = .real(t) }
    if let m = o.maximumResponseTokens { body["max_tokens"] = .integer(Int64(m)) }
    if let p = o.topP { body["top_p"] = .real(p) }
    if let s = o.seed { body["seed"] = .integer(Int64(s)) }
    if let stop = o.stop, !stop.isEmpty { body["stop"] = .array(stop.map { .string($0) }) }
    if stream { body["stream"] = true }
    for (key, value) in o.additionalParameters { body[key] = value }
  }

  /// The transcript as chat messages.
  ///
  /// Instructions become `system` messages, prompts `user` messages, responses `assistant` messages. Tool calls
  /// become an `assistant` message with `tool_calls` and `content` `""` (never `null`, which strict servers reject);
  /// each output a `tool` message with its `tool_call_id`. A call left without an output (a transcript cut short)
  /// gets a `tool` message saying so, because servers reject unanswered calls.
  public static func messages(from transcript: Transcript) -> [JSONValue] {
    var messages: [JSONValue] = []
    var unanswered: [String] = []
    func closeUnanswered() {
      for id in unanswered {
        messages.append(
          [
            "role": "tool", "tool_call_id": .string(id),
            "content": "(no output was recorded for this call)",
          ])
      }
      unanswered.removeAll()
    }
    for entry in transcript {
      if case .toolOutput = entry {} else { closeUnanswered() }
      switch entry {
      case .instructions(let i):
        messages.append(["role": "system", "content": .string(i.text)])
      case .prompt(let p):
        messages.append(["role": "user", "content": .string(p.text)])
      case .response(let r):
        messages.append(["role": "assistant", "content": .string(r.text)])
      case .toolCalls(let calls):
        let wire: [JSONValue] = calls.calls.map { c in
          [
            "id": .string(c.id), "type": "function",
            "function": ["name": .string(c.toolName), "arguments": .string(c.argumentsJSON)],
          ]
        }
        messages.append([
          "role": "assistant", "content": .string(calls.text ?? ""), "tool_calls": .array(wire),
        ])
        unanswered = calls.calls.map(\.id)
      case .toolOutput(let output):
        unanswered.removeAll { $0 == output.callID }
        messages.append([
          "role": "tool", "tool_call_id": .string(output.callID), "content": .string(output.text),
        ])
      case .reasoning:
        break  // the model's thoughts are not sent back
      }
    }
    closeUnanswered()
    return messages
  }

  /// A reply that is not a chat completion; `reason` says why.
  public struct MalformedReply: Error, Sendable, Equatable {
    /// What is missing or wrong.
    public var reason: String

    /// Makes an error.
    public init(reason: String) {
      self.reason = reason
    }
  }

  /// The turn in a non-streamed reply (`choices[0].message`).
  ///
  /// Reads `content` (a string, `null`, or an array of text parts), `tool_calls` (arguments as a string or an
  /// object), the legacy `function_call`, `finish_reason` and `usage`.
  /// - Throws: ``MalformedReply`` when there is no `choices[0].message` object.
  public static func turn(fromReply reply: JSONValue) throws(MalformedReply) -> ModelTurn {
    guard let choices = reply["choices"]?.arrayValue else {
      throw MalformedReply(reason: "no \"choices\" array")
    }
    guard let first = choices.first, let message = first["message"], message.objectValue != nil
    else {
      throw MalformedReply(
        reason: choices.isEmpty ? "\"choices\" is empty" : "no \"choices[0].message\" object")
    }
    var assembler = ToolCallAssembler()
    for call in message["tool_calls"]?.arrayValue ?? [] {
      let function = call["function"]
      assembler.addComplete(
        id: call["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
        name: function?["name"]?.stringValue ?? "",
        arguments: function?["arguments"])
    }
    if assembler.isEmpty, let legacy = message["function_call"],
      let name = legacy["name"]?.stringValue
    {
      assembler.addComplete(id: nil, name: name, arguments: legacy["arguments"])
    }
    let reasoning = text(of: message["reasoning_content"] ?? message["reasoning"])
    return ModelTurn(
      text: text(of: message["content"]), toolCalls: assembler.calls(),
      finishReason: first["finish_reason"]?.stringValue, usage: usage(of: reply),
      reasoning: reasoning.isEmpty ? nil : reasoning)
  }

  /// The text of a `content` value: a string, `null`, or an array of `{"type": "text", "text": ...}` parts.
  public static func text(of content: JSONValue?) -> String {
    switch content {
    case .string(let s)?: return s
    case .array(let parts)?:
      return parts.compactMap { $0["text"]?.stringValue ?? $0.stringValue }.joined()
    default: return ""
    }
  }

  /// `usage.prompt_tokens` and `usage.completion_tokens`, when both are there.
  public static func usage(of reply: JSONValue) -> TokenUsage? {
    guard let p = reply["usage"]?["prompt_tokens"]?.integerValue,
      let c = reply["usage"]?["completion_tokens"]?.integerValue
    else { return nil }
    return TokenUsage(promptTokens: Int(p), completionTokens: Int(c))
  }

  /// The message of an error body: `error.message`, `error` as a string, `message` or `detail`; else the start of
  /// the body as text; `nil` for an empty body.
  public static func errorMessage(fromBody bytes: [UInt8]) -> String? {
    if let json = try? JSONValue.parse(bytes) {
      if let m = json["error"]?["message"]?.stringValue, !m.isEmpty { return m }
      if let m = json["error"]?.stringValue, !m.isEmpty { return m }
      if let m = json["message"]?.stringValue, !m.isEmpty { return m }
      if let d = json["detail"] {
        return d.stringValue ?? d.serialized()
      }
    }
    let text = String(decoding: bytes.prefix(600), as: UTF8.self).trimmingCharacters(
      in: .whitespacesAndNewlines)
    if text.isEmpty { return nil }
    let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
    return flat.count > 300 ? String(flat.prefix(300)) + "…" : flat
  }
}

/// Accumulates a streamed turn from chat-completion chunks.
public struct ChatCompletionStreamState: Sendable {
  /// The text so far.
  public private(set) var text = ""
  /// The reasoning so far (`reasoning_content` deltas, from servers that send a reasoning model's thoughts).
  public private(set) var reasoning = ""
  /// The tool calls so far.
  public private(set) var toolCalls = ToolCallAssembler()
  /// `finish_reason`, once a chunk carried one.
  public private(set) var finishReason: String?
  /// Token counts, if a chunk carried them.
  public private(set) var usage: TokenUsage?
  /// Whether `[DONE]` arrived.
  public private(set) var isDone = false

  /// Makes an empty state.
  public init() {}

  /// What one chunk contained.
  public enum Update: Sendable, Equatable {
    /// Nothing for the caller (role, tool-call fragments, usage, keep-alives).
    case none
    /// Text of the answer.
    case text(String)
  }

  /// A stream chunk that reports an error or is not JSON.
  public struct ChunkError: Error, Sendable, Equatable {
    /// The server's message or what is wrong with the chunk.
    public var message: String
    /// Whether the server reported the error itself (`{"error": ...}`); otherwise the chunk is malformed.
    public var reportedByServer: Bool

    /// Makes an error.
    public init(message: String, reportedByServer: Bool) {
      self.message = message
      self.reportedByServer = reportedByServer
    }
  }

  /// Applies the `data` of one server-sent event.
  ///
  /// - Throws: ``ChunkError`` for a chunk with an `error` member or one that is not JSON.
  public mutating func apply(data: String) throws(ChunkError) -> Update {
    let trimmed = data.trimmingCharacters(in: .whitespaces)
    if trimmed == "[DONE]" {
      isDone = true
      return .none
    }
    if trimmed.isEmpty { return .none }
    let chunk: JSONValue
    do { chunk = try JSONValue.parse(trimmed) } catch {
      let excerpt = trimmed.count > 200 ? String(trimmed.prefix(200)) + "…" : trimmed
      throw ChunkError(
        message: "a stream chunk is not JSON (\(error.description)): «\(excerpt)»",
        reportedByServer: false)
    }
    if let error = chunk["error"], !error.isNull {
      let message = error["message"]?.stringValue ?? error.stringValue ?? error.serialized()
      throw ChunkError(message: message, reportedByServer: true)
    }
    if let u = ChatCompletions.usage(of: chunk) { usage = u }
    guard let choice = chunk["choices"]?[0] else { return .none }
    if let reason = choice["finish_reason"]?.stringValue { finishReason = reason }
    let delta = choice["delta"] ?? choice["message"]
    for call in delta?["tool_calls"]?.arrayValue ?? [] { toolCalls.add(call) }
    if let legacy = delta?["function_call"] {
      toolCalls.add(["index": 0, "function": legacy])
    }
    reasoning += ChatCompletions.text(of: delta?["reasoning_content"] ?? delta?["reasoning"])
    let piece = ChatCompletions.text(of: delta?["content"])
    if piece.isEmpty { return .none }
    text += piece
    return .text(piece)
  }

  /// The turn so far.
  public var turn: ModelTurn {
    ModelTurn(
      text: text, toolCalls: toolCalls.calls(), finishReason: finishReason, usage: usage,
      reasoning: reasoning.isEmpty ? nil : reasoning)
  }
}
