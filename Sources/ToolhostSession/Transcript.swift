import Foundation
public import ToolhostJSON
public import ToolhostTools

/// The record of a session: instructions, prompts, the model's tool calls, the tools' outputs and the model's
/// responses, in order. Shaped like FoundationModels' `Transcript`.
///
/// A transcript is `Codable` (each entry carries a `"type"`) and is saved as JSONL, one entry per line, with
/// ``jsonl()`` and read back with ``init(jsonl:)``; a session made from it continues the conversation.
public struct Transcript: Sendable, Equatable, Codable, RandomAccessCollection {
  /// The entries, oldest first.
  public var entries: [Entry]

  /// Makes a transcript from entries.
  public init(entries: [Entry] = []) {
    self.entries = entries
  }

  /// The first index.
  public var startIndex: Int { entries.startIndex }
  /// One past the last index.
  public var endIndex: Int { entries.endIndex }
  /// The entry at `position`.
  public subscript(position: Int) -> Entry { entries[position] }

  /// The entries but the leading instructions entry, if the transcript starts with one (FoundationModels'
  /// `history`): the prompts, responses, tool calls and outputs. Setting it replaces those and keeps the leading
  /// instructions.
  public var history: ArraySlice<Entry> {
    get {
      if case .instructions? = entries.first { return entries.dropFirst() }
      return entries[...]
    }
    set {
      if case .instructions(let instructions)? = entries.first {
        entries = [.instructions(instructions)] + newValue
      } else {
        entries = Array(newValue)
      }
    }
  }

  /// Appends an entry.
  public mutating func append(_ entry: Entry) {
    entries.append(entry)
  }

  /// The text of the last response, if any.
  public var lastResponse: String? {
    for entry in entries.reversed() {
      if case .response(let r) = entry { return r.text }
    }
    return nil
  }

  /// The text of the last prompt, if any.
  public var lastPrompt: String? {
    for entry in entries.reversed() {
      if case .prompt(let p) = entry { return p.text }
    }
    return nil
  }

  /// Encodes as its entries array.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(entries)
  }

  /// Decodes from an entries array.
  ///
  /// - Throws: `DecodingError` when an entry is malformed or of an unknown type.
  public init(from decoder: any Decoder) throws {
    entries = try decoder.singleValueContainer().decode([Entry].self)
  }
}

extension Transcript {
  /// One entry of a transcript.
  public enum Entry: Sendable, Equatable, Identifiable, Codable {
    /// The session's instructions (a system message) and the tools it offered.
    case instructions(Instructions)
    /// What the user asked.
    case prompt(Prompt)
    /// Tool calls the model asked for in one turn.
    case toolCalls(ToolCalls)
    /// One tool call's output, as sent back to the model.
    case toolOutput(ToolOutput)
    /// The model's answer.
    case response(Response)
    /// What a reasoning model thought before its turn (`reasoning_content`); kept for people, not sent back.
    case reasoning(Reasoning)

    /// The entry's unique id.
    public var id: String {
      switch self {
      case .instructions(let e): e.id
      case .prompt(let e): e.id
      case .toolCalls(let e): e.id
      case .toolOutput(let e): e.id
      case .response(let e): e.id
      case .reasoning(let e): e.id
      }
    }

    /// The `"type"` written in JSON: `instructions`, `prompt`, `toolCalls`, `toolOutput`, `response` or `reasoning`.
    public var type: String {
      switch self {
      case .instructions: "instructions"
      case .prompt: "prompt"
      case .toolCalls: "toolCalls"
      case .toolOutput: "toolOutput"
      case .response: "response"
      case .reasoning: "reasoning"
      }
    }

    private enum TypeKey: String, CodingKey { case type }

    /// Encodes the entry's fields with a `"type"` member naming the case.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: TypeKey.self)
      try container.encode(type, forKey: .type)
      switch self {
      case .instructions(let e): try e.encode(to: encoder)
      case .prompt(let e): try e.encode(to: encoder)
      case .toolCalls(let e): try e.encode(to: encoder)
      case .toolOutput(let e): try e.encode(to: encoder)
      case .response(let e): try e.encode(to: encoder)
      case .reasoning(let e): try e.encode(to: encoder)
      }
    }

    /// Decodes an entry by its `"type"`.
    ///
    /// - Throws: `DecodingError` for a missing or unknown type, or malformed fields.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: TypeKey.self)
      let type = try container.decode(String.self, forKey: .type)
      switch type {
      case "instructions": self = .instructions(try Instructions(from: decoder))
      case "prompt": self = .prompt(try Prompt(from: decoder))
      case "toolCalls": self = .toolCalls(try ToolCalls(from: decoder))
      case "toolOutput": self = .toolOutput(try ToolOutput(from: decoder))
      case "response": self = .response(try Response(from: decoder))
      case "reasoning": self = .reasoning(try Reasoning(from: decoder))
      default:
        throw DecodingError.dataCorruptedError(
          forKey: .type, in: container,
          debugDescription:
            "unknown transcript entry type \(type); expected instructions, prompt, toolCalls, toolOutput, response or "
            + "reasoning"
        )
      }
    }
  }

  /// A tool as offered to the model: name, description and the JSON Schema of its arguments; and, toolhost's own,
  /// the examples of requests it serves (``ToolExample``), which a small model is shown, and its hints
  /// (``ToolAnnotations``), by which a call that would change something the user did not ask to change is held back.
  public struct ToolDefinition: Sendable, Equatable, Codable {
    /// The tool's name.
    public var name: String
    /// What it does, for the model.
    public var description: String
    /// The JSON Schema of the argument object.
    public var parameters: JSONValue
    /// Requests the tool serves with their arguments (toolhost's; empty for most tools).
    public var examples: [ToolExample]
    /// The tool's hints: read-only, destructive, idempotent, open world (toolhost's; none for most Swift tools).
    public var annotations: ToolAnnotations

    /// Makes a definition.
    public init(
      name: String, description: String, parameters: JSONValue, examples: [ToolExample] = [],
      annotations: ToolAnnotations = ToolAnnotations()
    ) {
      self.name = name
      self.description = description
      self.parameters = parameters
      self.examples = examples
      self.annotations = annotations
    }

    /// Whether a call changes something, as the tool says: `readOnlyHint: false` or `destructiveHint: true`. A tool
    /// without hints is not taken as one (MCP's default would be "may write", which would hold back every plain
    /// plugin's calls), as ``ToolAnnotations/isDestructive`` counts only an explicit hint.
    public var changesThings: Bool {
      annotations.readOnlyHint == false || annotations.destructiveHint == true
    }

    private enum CodingKeys: String, CodingKey {
      case name, description, parameters, examples, annotations
    }

    /// Decodes a definition; one saved without examples or hints has none.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String.self, forKey: .name)
      description = try container.decode(String.self, forKey: .description)
      parameters = try container.decode(JSONValue.self, forKey: .parameters)
      examples = try container.decodeIfPresent([ToolExample].self, forKey: .examples) ?? []
      annotations = try container.decodeIfPresent(ToolAnnotations.self, forKey: .annotations) ?? ToolAnnotations()
    }

    /// Encodes a definition; `examples` and `annotations` only when there are some, so that saved transcripts keep
    /// their form.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(name, forKey: .name)
      try container.encode(description, forKey: .description)
      try container.encode(parameters, forKey: .parameters)
      if !examples.isEmpty { try container.encode(examples, forKey: .examples) }
      if annotations != ToolAnnotations() { try container.encode(annotations, forKey: .annotations) }
    }
  }

  /// The session's instructions.
  public struct Instructions: Sendable, Equatable, Codable, Identifiable {
    /// The entry's id.
    public var id: String
    /// The instructions' text (sent as the system message).
    public var text: String
    /// The tools the session offered when it was made.
    public var toolDefinitions: [ToolDefinition]

    /// Makes an instructions entry.
    public init(
      id: String = Transcript.newID(), text: String, toolDefinitions: [ToolDefinition] = []
    ) {
      self.id = id
      self.text = text
      self.toolDefinitions = toolDefinitions
    }
  }

  /// A prompt from the user.
  public struct Prompt: Sendable, Equatable, Codable, Identifiable {
    /// The entry's id.
    public var id: String
    /// What the user wrote.
    public var text: String

    /// Makes a prompt entry.
    public init(id: String = Transcript.newID(), text: String) {
      self.id = id
      self.text = text
    }
  }

  /// One call the model asked for.
  public struct ToolCall: Sendable, Equatable, Codable, Identifiable {
    /// The call's id as the model gave it (or one made up when the server sent none); tool outputs refer to it.
    public var id: String
    /// The tool's name as the model wrote it (it may name no tool).
    public var toolName: String
    /// The parsed argument object; `{}` when ``argumentsText`` is not valid JSON.
    public var arguments: JSONValue
    /// The arguments exactly as the model wrote them, kept only when they are not valid JSON.
    public var argumentsText: String?

    /// Makes a call.
    public init(id: String, toolName: String, arguments: JSONValue, argumentsText: String? = nil) {
      self.id = id
      self.toolName = toolName
      self.arguments = arguments
      self.argumentsText = argumentsText
    }

    /// Makes a call from the arguments text a model produced: parsed when it is JSON (empty text counts as `{}`),
    /// else kept as text so the problem can be reported back to the model.
    public init(id: String, toolName: String, rawArguments: String) {
      self.id = id
      self.toolName = toolName
      let trimmed = rawArguments.trimmingCharacters(in: .whitespacesAndNewlines)
      if trimmed.isEmpty {
        arguments = [:]
        argumentsText = nil
      } else if let value = try? JSONValue.parse(trimmed) {
        arguments = value
        argumentsText = nil
      } else {
        arguments = [:]
        argumentsText = rawArguments
      }
    }

    /// The arguments as a model wrote them: ``argumentsText`` when set, else compact JSON.
    public var argumentsJSON: String { argumentsText ?? arguments.serialized() }
  }

  /// The tool calls of one model turn.
  public struct ToolCalls: Sendable, Equatable, Codable, Identifiable {
    /// The entry's id.
    public var id: String
    /// The calls, in the model's order.
    public var calls: [ToolCall]
    /// Text the model wrote alongside the calls, if any.
    public var text: String?
    /// The tokens of the turn that asked for the calls, when the backend reported them (not written when absent).
    public var usage: TokenUsage?

    /// Makes a tool-calls entry.
    public init(id: String = Transcript.newID(), calls: [ToolCall], text: String? = nil, usage: TokenUsage? = nil) {
      self.id = id
      self.calls = calls
      self.text = text
      self.usage = usage
    }
  }

  /// A tool call's output as the model was shown it.
  public struct ToolOutput: Sendable, Equatable, Codable, Identifiable {
    /// The entry's id.
    public var id: String
    /// The id of the ``ToolCall`` this answers.
    public var callID: String
    /// The tool's name as the call gave it.
    public var toolName: String
    /// The text sent to the model (capped; see ``SessionPolicy/toolOutputLimit``).
    public var text: String
    /// The structured output, when the call succeeded, returned one and it was sent whole.
    public var value: JSONValue?
    /// Whether the call failed (the text then describes the failure).
    public var isError: Bool
    /// How many characters were cut from the middle of the output before it was sent, if any.
    public var charactersCut: Int?
    /// The tool's own rendering of a structured value for people, when it gave one beside the value (a plugin's
    /// `text`): what a guided backend shows a small model first, and states when the model's answer cannot be
    /// trusted.
    public var summary: String?

    /// Makes a tool-output entry.
    public init(
      id: String = Transcript.newID(), callID: String, toolName: String, text: String,
      value: JSONValue? = nil,
      isError: Bool = false, charactersCut: Int? = nil, summary: String? = nil
    ) {
      self.summary = summary
      self.id = id
      self.callID = callID
      self.toolName = toolName
      self.text = text
      self.value = value
      self.isError = isError
      self.charactersCut = charactersCut
    }
  }

  /// The model's answer to a prompt.
  public struct Response: Sendable, Equatable, Codable, Identifiable {
    /// The entry's id.
    public var id: String
    /// The answer's text.
    public var text: String
    /// The tokens of the turn that gave the answer, when the backend reported them (not written when absent).
    public var usage: TokenUsage?

    /// Makes a response entry.
    public init(id: String = Transcript.newID(), text: String, usage: TokenUsage? = nil) {
      self.id = id
      self.text = text
      self.usage = usage
    }
  }

  /// What a reasoning model thought before a turn.
  public struct Reasoning: Sendable, Equatable, Codable, Identifiable {
    /// The entry's id.
    public var id: String
    /// The reasoning's text.
    public var text: String

    /// Makes a reasoning entry.
    public init(id: String = Transcript.newID(), text: String) {
      self.id = id
      self.text = text
    }
  }

  /// A fresh entry id.
  public static func newID() -> String {
    UUID().uuidString.lowercased()
  }
}
