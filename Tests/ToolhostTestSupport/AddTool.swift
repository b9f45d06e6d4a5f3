public import ToolhostCore
public import ToolhostJSON

/// A Swift tool for the tests of tool calls and sessions: `add` adds two integers `a` and `b` (`b` at most 1000, so
/// that a test can break the schema with a well-typed argument) and answers `{"sum": a + b}`.
public struct AddTool: Tool {
  /// The decoded arguments.
  public struct Arguments: Decodable, Sendable {
    /// The first addend.
    public var a: Int
    /// The second addend, at most 1000.
    public var b: Int
  }

  /// `add`.
  public let name = "add"
  /// What a model is told the tool does.
  public let description = "Adds two integers."
  /// The input schema: integers `a` and `b` (`b` at most 1000), both required, nothing else.
  public let parameters: JSONValue = [
    "type": "object", "required": ["a", "b"], "additionalProperties": false,
    "properties": ["a": ["type": "integer"], "b": ["type": "integer", "maximum": 1000]],
  ]

  /// A tool with no state.
  public init() {}

  /// `{"sum": a + b}`.
  public func call(arguments: Arguments) async throws -> JSONValue {
    ["sum": .integer(Int64(arguments.a + arguments.b))]
  }
}
