public import ToolhostGeneration
public import ToolhostJSON

/// Any tool behind one type, for collections and APIs that want a single concrete `Tool` type (toolhost's: the first
/// FoundationModels 27 beta had it, the release does not).
///
/// The wrapped tool runs as it would unwrapped: a ``ToolRegistry`` (and so a session) keeps the tool it wraps, so
/// approvals, trust and the tool's output are the wrapped tool's own.
///
/// ```swift
/// let tools: [AnyTool] = [AnyTool(GetWeather()), AnyTool(FindRecipes())]
/// let session = LanguageModelSession(tools: tools, instructions: "Use the tools.")
/// ```
public struct AnyTool: Tool {
  /// The wrapped tool (never itself an `AnyTool`).
  public let base: any Tool

  /// Wraps a tool; an `AnyTool` is not wrapped twice.
  public init(_ tool: some Tool) {
    base = (tool as? AnyTool)?.base ?? tool
  }

  /// The wrapped tool's name.
  public var name: String { base.name }
  /// The wrapped tool's description.
  public var description: String { base.description }
  /// The wrapped tool's parameters schema.
  public var parameters: JSONValue { base.parameters }
  /// The wrapped tool's output schema.
  public var outputSchema: JSONValue? { base.outputSchema }
  /// The wrapped tool's hints.
  public var annotations: ToolAnnotations { base.annotations }
  /// The wrapped tool's flag.
  public var includesSchemaInInstructions: Bool { base.includesSchemaInInstructions }
  /// The wrapped tool's examples.
  public var examples: [ToolExample] { base.examples }

  /// Runs the wrapped tool with arguments as generated content; its output as a prompt.
  public func call(arguments: GeneratedContent) async throws -> Prompt {
    try await base.invoke(arguments.jsonValue).promptRepresentation
  }

  /// Runs the wrapped tool as a registry does.
  public func invoke(_ arguments: JSONValue) async throws -> ToolOutput {
    try await base.invoke(arguments)
  }
}
