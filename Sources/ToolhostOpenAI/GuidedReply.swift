import Foundation
import ToolhostJSON
import ToolhostSession

/// Reading a guided reply: the turn it stands for, and whether it repeats an earlier call.
extension GuidedToolCalls {
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

  /// One guided request and its second tries: what the next request constrains the reply to.
  ///
  /// A reply that repeats a call already answered for this prompt (``repeatsEarlierCall(_:in:)``) is asked for
  /// again as an answer only; a single call copied from its tool's description (``copiesDescription(_:of:in:)``)
  /// is asked for again with that tool left out of the reply's schema, for at most ``maximumExclusions`` tools.
  /// Each second try sends the same messages, so the server's prompt cache holds. Pure: no I/O.
  public struct Attempt: Sendable, Equatable {
    /// The most tools left out, one per second try.
    public static let maximumExclusions = 2
    /// Whether the reply is constrained to an answer.
    public private(set) var answerOnly = false
    /// The tools left out of the reply's schema.
    public private(set) var excluded: Set<String> = []

    /// The first try: nothing constrained beyond the request.
    public init() {}

    /// Whether `turn`, the reply to `request` under this attempt, is to be asked for again; if so, the attempt is
    /// changed for the next try. An answer, or a reply already constrained to one, always stands.
    public mutating func retries(after turn: ModelTurn, for request: ModelRequest) -> Bool {
      guard !answerOnly, !turn.toolCalls.isEmpty else { return false }
      if GuidedToolCalls.repeatsEarlierCall(turn, in: request.transcript) {
        answerOnly = true
        return true
      }
      guard excluded.count < Self.maximumExclusions, turn.toolCalls.count == 1, let call = turn.toolCalls.first,
        !excluded.contains(call.toolName),
        let tool = request.tools.first(where: { $0.name == call.toolName }),
        GuidedToolCalls.copiesDescription(call, of: tool, in: request.transcript)
      else { return false }
      excluded.insert(call.toolName)
      return true
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
