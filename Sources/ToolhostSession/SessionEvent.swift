public import ToolhostJSON
import ToolhostSystem
public import ToolhostTools

/// Something a session did while answering a request, for observers (``LanguageModelSession/addObserver(_:)``)
/// and streams (``LanguageModelSession/ResponseStream``).
///
/// Events of one request arrive in order: ``requestStarted(_:)``, then for each model turn ``modelTurnStarted(round:)``,
/// its ``textDelta(_:)``s (streaming only), and for each tool call ``toolCallStarted(_:)`` and later
/// ``toolCallFinished(_:)`` (finished events in completion order), and last ``response(_:)``.
public enum SessionEvent: Sendable {
  /// A request began with this prompt.
  case requestStarted(Transcript.Prompt)
  /// The model was asked for a turn; `round` counts from 1 within the request.
  case modelTurnStarted(round: Int)
  /// More text from the model (streaming requests only).
  case textDelta(String)
  /// A tool call the model asked for is about to be checked and run.
  case toolCallStarted(Transcript.ToolCall)
  /// A tool call ended (ran, failed, was refused, or was sent back for repair).
  case toolCallFinished(ToolCallRecord)
  /// The request ended with this response.
  case response(LanguageModelSession.Response<String>)
}

/// What became of one tool call.
public struct ToolCallRecord: Sendable {
  /// What the model asked for.
  public var call: Transcript.ToolCall
  /// The tool's output, or why the call failed (including invalid arguments, unknown tools and refusals).
  public var result: Result<ToolOutput, ToolCallError>
  /// How long the call took (zero when it did not run).
  public var duration: Duration
  /// Whether the tool actually ran (false for repairs and refusals).
  public var ran: Bool
  /// What the model is sent for it.
  public var output: Transcript.ToolOutput

  /// Makes a record.
  public init(
    call: Transcript.ToolCall, result: Result<ToolOutput, ToolCallError>, duration: Duration,
    ran: Bool,
    output: Transcript.ToolOutput
  ) {
    self.call = call
    self.result = result
    self.duration = duration
    self.ran = ran
    self.output = output
  }

  /// Whether the call succeeded.
  public var succeeded: Bool {
    if case .success = result { return true }
    return false
  }

  /// One line for people: the first line of the result (or the error), at most `width` characters.
  public func summary(width: Int = 100) -> String {
    let text: String
    switch result {
    case .success(let output):
      text = output.displayText
    case .failure(let error):
      text = error.failure?.description ?? String(describing: error.underlyingError)
    }
    return text.oneLine.cut(to: width)
  }
}

extension SessionEvent {
  /// The event as one JSON object with a `"type"` (`request_started`, `model_turn_started`, `text_delta`,
  /// `tool_call_started`, `tool_call_finished`, `response`), for NDJSON output.
  public var json: JSONValue {
    switch self {
    case .requestStarted(let prompt):
      return ["type": "request_started", "prompt": .string(prompt.text)]
    case .modelTurnStarted(let round):
      return ["type": "model_turn_started", "round": .integer(Int64(round))]
    case .textDelta(let text):
      return ["type": "text_delta", "text": .string(text)]
    case .toolCallStarted(let call):
      var o: JSONObject = [
        "type": "tool_call_started", "id": .string(call.id), "tool": .string(call.toolName),
      ]
      o["arguments"] = call.arguments
      if let raw = call.argumentsText { o["argumentsText"] = .string(raw) }
      return .object(o)
    case .toolCallFinished(let record):
      var o: JSONObject = [
        "type": "tool_call_finished", "id": .string(record.call.id),
        "tool": .string(record.call.toolName),
        "ok": .bool(record.succeeded), "ran": .bool(record.ran),
        "durationMs": .real((record.duration.seconds * 1000 * 10).rounded() / 10),
      ]
      switch record.result {
      case .success(let output):
        o["result"] = output.value ?? .null
        if let text = output.text { o["text"] = .string(text) }
      case .failure(let error):
        o["error"] = error.json["error"]
      }
      if let cut = record.output.charactersCut { o["charactersCut"] = .integer(Int64(cut)) }
      return .object(o)
    case .response(let response):
      return ["type": "response", "text": .string(response.content)]
    }
  }
}
