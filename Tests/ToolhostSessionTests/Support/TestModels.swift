import Foundation
import Synchronization
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// Builds a tool call.
func call(_ name: String, _ arguments: JSONValue, id: String) -> Transcript.ToolCall {
  Transcript.ToolCall(id: id, toolName: name, arguments: arguments)
}

/// Sleeps, then returns its label: proves calls run at once.
struct SleepTool: Tool {
  var overlap: Overlap? = nil
  let name = "sleepy"
  let description = "Waits a while, then returns the label."
  let parameters: JSONValue = [
    "type": "object", "required": ["label", "ms"],
    "properties": ["label": ["type": "string"], "ms": ["type": "integer", "minimum": 0]],
  ]
  func call(arguments: JSONValue) async throws -> String {
    overlap?.started()
    try await Task.sleep(for: .milliseconds(arguments["ms"]?.integerValue ?? 0))
    overlap?.finished()
    return "done " + (arguments["label"]?.stringValue ?? "")
  }
}

/// Counts calls running at once: how many had started when the first one finished.
final class Overlap: Sendable {
  private struct State {
    var running = 0
    var atFirstFinish: Int?
  }
  private let state = Mutex(State())
  func started() { state.withLock { $0.running += 1 } }
  func finished() {
    state.withLock { s in
      if s.atFirstFinish == nil { s.atFirstFinish = s.running }
      s.running -= 1
    }
  }
  var runningWhenFirstFinished: Int? { state.withLock { $0.atFirstFinish } }
}

/// Always fails with a tool-reported error.
struct FailingTool: Tool {
  let name = "explode"
  let description = "Always fails."
  let parameters: JSONValue = ["type": "object"]
  func call(arguments: JSONValue) async throws -> String {
    throw ToolFailure.toolReported(message: "the fuse is wet", code: "wet_fuse", data: nil)
  }
}

/// Returns a long text.
struct LongTool: Tool {
  let name = "long"
  let description = "Returns many characters."
  let parameters: JSONValue = ["type": "object", "properties": ["n": ["type": "integer"]]]
  func call(arguments: JSONValue) async throws -> String {
    String(repeating: "abcdefghij", count: Int(arguments["n"]?.integerValue ?? 1000) / 10)
  }
}

/// Collects events from an observer.
final class EventLog: Sendable {
  private let events = Mutex<[SessionEvent]>([])
  func append(_ e: SessionEvent) { events.withLock { $0.append(e) } }
  var all: [SessionEvent] { events.withLock { $0 } }
  var types: [String] { all.map { $0.json["type"]?.stringValue ?? "?" } }
}

/// Waits until `condition` holds, polling every 10 ms.
///
/// - Throws: ``TestFailure`` after `timeout`.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
  let deadline = ContinuousClock.now + timeout
  while !condition() {
    if ContinuousClock.now > deadline {
      throw TestFailure("the condition did not hold within \(timeout)")
    }
    try await Task.sleep(for: .milliseconds(10))
  }
}
