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
