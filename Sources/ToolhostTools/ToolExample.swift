public import ToolhostJSON

/// A request a tool serves and the arguments it takes for it: what a plugin's manifest lists under a tool's
/// `examples` (`{"prompt": "Convert 5 miles to km", "arguments": {"value": 5, "from": "mi", "to": "km"}}`), as
/// Anthropic's tool `input_examples` do. toolhost's own, not FoundationModels'.
///
/// A small local model is shown the examples nearest the question (`GuidedToolCalls.toolInstructions`), which
/// teaches it a tool's argument forms better than the schema alone.
///
/// ```swift
/// let example = ToolExample(prompt: "Weather in Lisbon in April?", arguments: ["city": "Lisbon", "month": 4])
/// ```
public struct ToolExample: Sendable, Equatable, Hashable, Codable {
  /// What a user might ask; `nil` for an example of arguments alone (a JSON Schema `examples` member).
  public var prompt: String?
  /// The call's argument object for that request.
  public var arguments: JSONValue

  /// The most examples of one tool that are read (the manifest schema's `maxItems`); more are left out.
  public static let mostPerTool = 20

  /// Makes an example.
  public init(prompt: String?, arguments: JSONValue) {
    self.prompt = prompt
    self.arguments = arguments
  }

  /// The examples a manifest's `examples` array lists (objects with `arguments` and an optional `prompt`); members
  /// of another form are skipped (the manifest schema refuses them before this runs).
  public static func examples(inManifest value: JSONValue?) -> [ToolExample] {
    (value?.arrayValue ?? []).compactMap { item in
      guard let arguments = item["arguments"], arguments.objectValue != nil else { return nil }
      return ToolExample(prompt: item["prompt"]?.stringValue, arguments: arguments)
    }
  }

  /// The argument objects of a parameters schema's JSON Schema `examples` keyword, as examples without a prompt.
  public static func examples(inSchema schema: JSONValue) -> [ToolExample] {
    (schema["examples"]?.arrayValue ?? []).prefix(mostPerTool).compactMap { item in
      item.objectValue == nil ? nil : ToolExample(prompt: nil, arguments: item)
    }
  }
}
