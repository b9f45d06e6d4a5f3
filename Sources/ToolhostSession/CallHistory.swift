import ToolhostJSON

/// The tool calls that succeeded since a transcript's last prompt: what tells a model going round in circles from
/// one making progress. ``LanguageModelSession`` asks for the answer instead of running a turn whose every call
/// ``loops(_:)``.
///
/// ```swift
/// let history = CallHistory(transcript)
/// if history.loops(turn.toolCalls) { /* ask for the answer */ }
/// ```
public struct CallHistory: Sendable {
  /// The calls since the last prompt whose output is not an error, oldest first.
  public let succeeded: [Transcript.ToolCall]

  /// Reads the calls since the last prompt of `transcript` (all of it when it has no prompt). A failed call does not
  /// count: repairing it is the repair rounds' business.
  public init(_ transcript: Transcript) {
    let entries = transcript.entries
    let start = entries.lastIndex { if case .prompt = $0 { true } else { false } } ?? entries.startIndex
    var made: [Transcript.ToolCall] = []
    var ok = Set<String>()
    for entry in entries[start...] {
      switch entry {
      case .toolCalls(let turn): made += turn.calls
      case .toolOutput(let output) where !output.isError: ok.insert(output.callID)
      default: break
      }
    }
    succeeded = made.filter { ok.contains($0.id) }
  }

  /// Whether a call of `name` now would be its third successful one for this prompt.
  public func isThirdCall(of name: String) -> Bool {
    succeeded.lazy.filter { $0.toolName == name }.count >= 2
  }

  /// Whether `call` has the tool and arguments of a call that already succeeded for this prompt.
  public func repeats(_ call: Transcript.ToolCall) -> Bool {
    succeeded.contains { $0.isSameCall(as: call) }
  }

  /// Whether every one of `calls` repeats a successful call or would be its tool's third: a turn going nowhere.
  /// `false` for no calls.
  public func loops(_ calls: [Transcript.ToolCall]) -> Bool {
    !calls.isEmpty && calls.allSatisfy { isThirdCall(of: $0.toolName) || repeats($0) }
  }
}

extension Transcript.ToolCall {
  /// Whether `other` calls the same tool with the same arguments (compared as JSON values; ids aside).
  public func isSameCall(as other: Transcript.ToolCall) -> Bool {
    toolName == other.toolName && arguments.jsonEquals(other.arguments)
  }
}
