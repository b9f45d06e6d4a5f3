import Foundation
import ToolhostJSON
public import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// A chat's call graph, as FoundationModels lets a developer inspect it: per turn, the prompt, each round of tool
/// calls the model made (calls of one round ran in parallel) with their arguments, output, duration and status, and
/// the response or the error the turn ended with.
///
/// ```swift
/// let graph = CallGraph(try history.chat(12))
/// for line in graph.lines() { print(line) }
/// ```
public struct CallGraph: Sendable, Equatable {
  /// One tool call and what became of it.
  public struct Call: Sendable, Equatable {
    /// What the model asked for.
    public var call: Transcript.ToolCall
    /// The output the model was sent, once there was one.
    public var output: Transcript.ToolOutput?
    /// How long it took, in milliseconds, when known.
    public var durationMs: Double?
    /// How it ended, when known.
    public var status: HistoryEntry.Status?
  }

  /// One model turn that asked for tools.
  public struct Round: Sendable, Equatable {
    /// Text the model wrote with the calls, if any.
    public var text: String?
    /// The calls, in the model's order.
    public var calls: [Call]
  }

  /// A prompt and all that answered it.
  public struct Turn: Sendable, Equatable {
    /// The prompt (`nil` for entries before the first prompt).
    public var prompt: String?
    /// The rounds of tool calls, in order.
    public var rounds: [Round] = []
    /// The response, if the turn got one.
    public var response: String?
    /// The error the turn ended with, if any.
    public var error: String?
  }

  /// The instructions the chat began with, if any.
  public var instructions: Transcript.Instructions?
  /// The turns, in order.
  public var turns: [Turn]

  /// The graph of a kept chat.
  public init(_ chat: StoredChat) {
    self.init(entries: chat.entries)
  }

  /// The graph of a chat's entries.
  public init(entries: [HistoryEntry]) {
    instructions = nil
    turns = []
    for entry in entries {
      switch entry.content {
      case .transcript(.instructions(let e)):
        if instructions == nil { instructions = e }
      case .transcript(.prompt(let e)):
        turns.append(Turn(prompt: e.text))
      case .transcript(.toolCalls(let e)):
        let calls = e.calls.map { Call(call: $0) }
        mutateLastTurn { $0.rounds.append(Round(text: e.text, calls: calls)) }
      case .transcript(.toolOutput(let e)):
        mutateLastTurn { turn in
          for r in turn.rounds.indices.reversed() {
            if let c = turn.rounds[r].calls.firstIndex(where: { $0.call.id == e.callID && $0.output == nil }) {
              turn.rounds[r].calls[c].output = e
              turn.rounds[r].calls[c].durationMs = entry.durationMs
              turn.rounds[r].calls[c].status = entry.status ?? (e.isError ? .error : .ok)
              return
            }
          }
          // An output whose call is not in the record: shown as a call of its own.
          turn.rounds.append(
            Round(calls: [
              Call(
                call: .init(id: e.callID, toolName: e.toolName, arguments: [:]), output: e,
                durationMs: entry.durationMs, status: entry.status)
            ]))
        }
      case .transcript(.response(let e)):
        mutateLastTurn { $0.response = e.text }
      case .transcript(.reasoning):
        break  // thoughts are not part of the call graph
      case .error(let message, let prompt):
        if let prompt { turns.append(Turn(prompt: prompt)) }
        mutateLastTurn { $0.error = message }
      }
    }
  }

  private mutating func mutateLastTurn(_ body: (inout Turn) -> Void) {
    if turns.isEmpty { turns.append(Turn()) }
    body(&turns[turns.count - 1])
  }

  /// The graph drawn as a tree, one turn after another: prompt → rounds → parallel calls (arguments, status,
  /// duration, and the output's first `outputWidth` characters) → response or error.
  public func lines(outputWidth: Int = 120) -> [String] {
    var out: [String] = []
    if let instructions {
      let n = instructions.toolDefinitions.count
      out.append(
        "instructions, \(n) tool\(n == 1 ? "" : "s") offered: \(instructions.text.oneLine.cut(to: outputWidth))"
      )
    }
    for (i, turn) in turns.enumerated() {
      if !out.isEmpty { out.append("") }
      out.append("turn \(i + 1): > \((turn.prompt ?? "(no prompt)").oneLine)")
      var children: [(String, [String])] = []
      for (r, round) in turn.rounds.enumerated() {
        var calls: [String] = []
        if let text = round.text, !text.isEmpty {
          calls.append("model: " + text.oneLine.cut(to: outputWidth))
        }
        for call in round.calls {
          let status = call.status?.rawValue ?? "no output"
          let duration = call.durationMs.map { ", " + ChatText.durationText($0) } ?? ""
          calls.append("\(call.call.toolName) \(call.call.argumentsJSON)  [\(status)\(duration)]")
          if let output = call.output {
            calls.append("   └─ " + output.text.oneLine.cut(to: outputWidth))
          }
        }
        let parallel = round.calls.count > 1 ? ", \(round.calls.count) calls in parallel" : ""
        children.append(("round \(r + 1)\(parallel)", calls))
      }
      if let response = turn.response {
        children.append(("response: " + response.oneLine.cut(to: outputWidth), []))
      }
      if let error = turn.error { children.append(("error: " + error.oneLine, [])) }
      for (c, child) in children.enumerated() {
        let last = c == children.count - 1
        out.append((last ? "└─ " : "├─ ") + child.0)
        let stem = last ? "   " : "│  "
        // Calls are the round's children; a call's output line hangs under its call.
        let callLines = child.1
        let callCount = callLines.filter { !$0.hasPrefix("   └─ ") }.count
        var seen = 0
        for line in callLines {
          if line.hasPrefix("   └─ ") {
            out.append(stem + (seen == callCount ? "   " : "│  ") + line.dropFirst(3))
          } else {
            seen += 1
            out.append(stem + (seen == callCount ? "└─ " : "├─ ") + line)
          }
        }
      }
    }
    return out
  }
}
