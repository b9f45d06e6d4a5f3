// What one `toolhost ask --json` did, read from its event stream.
public import ToolhostJSON

/// A call the model made.
public struct ObservedCall: Sendable, Equatable {
  /// The call's id in the stream.
  public var id: String
  /// The tool's name.
  public var tool: String
  /// The arguments, as the model gave them.
  public var arguments: JSONValue
  /// The model turn the call came from (1 for the first); calls of one turn are one round.
  public var round: Int

  /// Makes a call.
  public init(id: String, tool: String, arguments: JSONValue, round: Int) {
    self.id = id
    self.tool = tool
    self.arguments = arguments
    self.round = round
  }
}

/// What became of a call: its result (the tool's `result` value and `text`) or its error.
public struct ObservedResult: Sendable, Equatable {
  /// The call's id.
  public var id: String
  /// The tool's name.
  public var tool: String
  /// Whether the call succeeded (false for failures and refusals).
  public var ok: Bool
  /// The tool's structured result, when it succeeded.
  public var result: JSONValue?
  /// The tool's text, when it gave one.
  public var text: String?
  /// The error object, when it failed.
  public var error: JSONValue?

  /// Makes a result.
  public init(
    id: String, tool: String, ok: Bool, result: JSONValue? = nil, text: String? = nil, error: JSONValue? = nil
  ) {
    self.id = id
    self.tool = tool
    self.ok = ok
    self.result = result
    self.text = text
    self.error = error
  }
}

/// The calls, results and answer of one `ask --json`.
public struct AskTranscript: Sendable, Equatable {
  /// The calls in the order they started.
  public var calls: [ObservedCall]
  /// The results in the order they finished.
  public var results: [ObservedResult]
  /// The final response's text; nil when the stream has none.
  public var answer: String?

  /// Makes a transcript.
  public init(calls: [ObservedCall] = [], results: [ObservedResult] = [], answer: String? = nil) {
    self.calls = calls
    self.results = results
    self.answer = answer
  }

  /// The transcript of NDJSON output (`model_turn_started`, `tool_call_started`, `tool_call_finished`, `response`
  /// events); lines that are not JSON objects are skipped.
  public init(ndjson: String) {
    self.init(events: ndjson.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) })
  }

  /// The transcript of parsed events. A call belongs to the round of the last `model_turn_started` before it.
  public init(events: [JSONValue]) {
    self.init()
    var round = 0
    for event in events {
      switch event["type"]?.stringValue {
      case "model_turn_started":
        round = event["round"]?.integerValue.map(Int.init) ?? round + 1
      case "tool_call_started":
        calls.append(
          ObservedCall(
            id: event["id"]?.stringValue ?? "", tool: event["tool"]?.stringValue ?? "?",
            arguments: event["arguments"] ?? .null, round: max(round, 1)))
      case "tool_call_finished":
        results.append(
          ObservedResult(
            id: event["id"]?.stringValue ?? "", tool: event["tool"]?.stringValue ?? "?",
            ok: event["ok"]?.boolValue ?? false, result: event["result"].flatMap { $0.isNull ? nil : $0 },
            text: event["text"]?.stringValue, error: event["error"]))
      case "response":
        answer = event["text"]?.stringValue
      default:
        break
      }
    }
  }

  /// The result of a call, by its id.
  public func result(of call: ObservedCall) -> ObservedResult? { results.first { $0.id == call.id } }

  /// How many rounds the calls took.
  public var rounds: Int { Set(calls.map(\.round)).count }
}
