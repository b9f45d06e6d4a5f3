public import ToolhostJSON
public import ToolhostSchema

/// A tool a language model can call, in the spirit of FoundationModels' `Tool`.
///
/// Subprocess plugins (``PluginTool``) and Swift types implemented in-process conform alike, so one
/// ``ToolRegistry`` and one ``LanguageModelSession`` serve both. Arguments arrive validated against
/// ``parameters``; a Swift tool names a `Decodable` `Arguments` type and receives it decoded.
///
/// ```swift
/// struct Dice: Tool {
///   struct Arguments: Decodable, Sendable { var sides: Int }
///   let name = "rollDice"
///   let description = "Rolls a die with the given number of sides."
///   let parameters: JSONValue = ["type": "object", "required": ["sides"],
///                                "properties": ["sides": ["type": "integer", "minimum": 2]]]
///   func call(arguments: Arguments) async throws -> String { "\(Int.random(in: 1...arguments.sides))" }
/// }
/// ```
public protocol Tool: Sendable {
  /// The decoded arguments; `JSONValue` to receive the argument object as it is.
  associatedtype Arguments: Decodable & Sendable = JSONValue
  /// What the tool returns: a `String`, a `JSONValue`, a ``ToolOutput`` or another ``ToolOutputConvertible``.
  associatedtype Output: ToolOutputConvertible = ToolOutput

  /// The tool's name: 1–64 characters of `[A-Za-z0-9_.-]`.
  var name: String { get }
  /// What the tool does and when to use it, written for a language model.
  var description: String { get }
  /// The JSON Schema of the argument object (an object schema, as in OpenAI function parameters and MCP).
  var parameters: JSONValue { get }
  /// The JSON Schema the structured result matches, if the tool declares one.
  var outputSchema: JSONValue? { get }
  /// Hints about the tool's behaviour (read-only, destructive, idempotent, open world).
  var annotations: ToolAnnotations { get }
  /// Whether the schema is also written into the model's instructions (FoundationModels' flag); default `true`.
  var includesSchemaInInstructions: Bool { get }

  /// Runs the tool.
  ///
  /// - Throws: whatever the tool fails with; hosts wrap it in a ``ToolCallError``. Plugins throw ``ToolFailure``.
  func call(arguments: Arguments) async throws -> Output
}

extension Tool {
  /// No output schema.
  public var outputSchema: JSONValue? { nil }
  /// No hints.
  public var annotations: ToolAnnotations { ToolAnnotations() }
  /// `true`.
  public var includesSchemaInInstructions: Bool { true }

  /// Decodes `arguments` into ``Arguments``, calls the tool and converts its output.
  ///
  /// Arguments are not validated here; ``ToolRegistry`` validates before calling.
  /// - Throws: ``ToolFailure/invalidArguments(_:)`` when the arguments do not decode, or what ``call(arguments:)``
  ///   throws.
  public func invoke(_ arguments: JSONValue) async throws -> ToolOutput {
    let decoded: Arguments
    if let direct = arguments as? Arguments {
      decoded = direct
    } else {
      do { decoded = try JSONValueDecoder().decode(Arguments.self, from: arguments) } catch {
        throw ToolFailure.invalidArguments([
          ValidationIssue(instanceLocation: "", keywordLocation: "", keyword: "decode", message: "\(error)")
        ])
      }
    }
    return try await call(arguments: decoded).toolOutput
  }
}

/// A tool whose schemas are compiled already, so registries need not compile them again.
public protocol PrecompiledTool: Tool {
  /// The compiled ``Tool/parameters``.
  var compiledParameters: JSONSchema { get }
}

/// Hints about a tool's behaviour, as MCP names them. Hints, not guarantees.
public struct ToolAnnotations: Sendable, Hashable, Codable {
  /// A title for people.
  public var title: String?
  /// The tool does not change its environment.
  public var readOnlyHint: Bool?
  /// The tool may destroy or overwrite data; hosts ask before running it.
  public var destructiveHint: Bool?
  /// Calling it again with the same arguments has no further effect.
  public var idempotentHint: Bool?
  /// The tool reaches outside the machine.
  public var openWorldHint: Bool?

  /// Makes annotations; all hints default to unknown.
  public init(
    title: String? = nil, readOnlyHint: Bool? = nil, destructiveHint: Bool? = nil, idempotentHint: Bool? = nil,
    openWorldHint: Bool? = nil
  ) {
    self.title = title
    self.readOnlyHint = readOnlyHint
    self.destructiveHint = destructiveHint
    self.idempotentHint = idempotentHint
    self.openWorldHint = openWorldHint
  }

  /// Whether a host should ask before running the tool: only an explicit `destructiveHint: true` counts (MCP's
  /// default for an unmarked tool is "may be destructive", which would make every plain plugin ask).
  public var isDestructive: Bool { destructiveHint == true }
}

/// What a tool call produced: a structured value, a text rendering, or both.
public struct ToolOutput: Sendable, Hashable, Codable {
  /// The structured result.
  public var value: JSONValue?
  /// A rendering for people (and models).
  public var text: String?

  /// Makes an output.
  public init(value: JSONValue? = nil, text: String? = nil) {
    self.value = value
    self.text = text
  }

  /// What a model is shown: the structured value as compact JSON when there is one, else the text.
  public var modelText: String {
    if let value { return value.serialized() }
    return text ?? ""
  }

  /// What a person is shown: the text when there is one, else the value as indented JSON.
  public var displayText: String {
    if let text { return text }
    guard let value else { return "" }
    if case .string(let s) = value { return s }
    return (try? value.serialized(.pretty)) ?? value.serialized()
  }
}

/// A type a tool can return.
public protocol ToolOutputConvertible: Sendable {
  /// The value as a ``ToolOutput``.
  var toolOutput: ToolOutput { get }
}

extension ToolOutput: ToolOutputConvertible {
  /// Itself.
  public var toolOutput: ToolOutput { self }
}

extension String: ToolOutputConvertible {
  /// A text output.
  public var toolOutput: ToolOutput { ToolOutput(text: self) }
}

extension JSONValue: ToolOutputConvertible {
  /// A structured output.
  public var toolOutput: ToolOutput { ToolOutput(value: self) }
}
