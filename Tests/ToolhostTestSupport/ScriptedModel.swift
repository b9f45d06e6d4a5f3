import Foundation
import Synchronization
public import ToolhostSession

/// The one model of the tests that runs no server: it plays back scripted turns and records what it was asked.
///
/// A script is a list of steps, each a function of the request; they are played in order and the last one repeats
/// once they run out. One step alone is a model that answers by rule (the prompt, the tools offered, the outputs
/// so far), which is how a test stands in for an OpenAI-compatible peer without one:
///
/// ```swift
/// let model = ScriptedModel { request in
///   request.transcript.lastPrompt == "hi" ? ModelTurn(text: "Hello.") : ModelTurn(text: "?")
/// }
/// ```
public final class ScriptedModel: LanguageModel {
  /// One step of a script: the turn for a request.
  public typealias Step = @Sendable (ModelRequest) async throws -> ModelTurn

  private struct State {
    var script: [Step]
    var requests: [ModelRequest] = []
    var prewarms: [ModelRequest] = []
  }

  private let state: Mutex<State>
  /// Streamed text comes in pieces of this many characters; `nil` streams it as one piece.
  private let streamPiece: Int?
  public let displayName = "scripted"

  /// Plays `script` in order, then repeats its last step; streams text in pieces of `streamPiece` characters.
  public init(_ script: [Step], streamPiece: Int? = nil) {
    precondition(!script.isEmpty, "a script needs at least one step")
    state = Mutex(State(script: script))
    self.streamPiece = streamPiece
  }

  /// Answers every request with `rule`.
  public convenience init(streamPiece: Int? = nil, rule: @escaping Step) {
    self.init([rule], streamPiece: streamPiece)
  }

  /// Plays `turns` in order, then repeats the last.
  public convenience init(turns: [ModelTurn], streamPiece: Int? = nil) {
    self.init(turns.map { turn in { _ in turn } }, streamPiece: streamPiece)
  }

  /// Every request asked, in order (``prewarm(for:)``'s not among them).
  public var requests: [ModelRequest] { state.withLock { $0.requests } }
  /// The requests ``prewarm(for:)`` was given.
  public var prewarms: [ModelRequest] { state.withLock { $0.prewarms } }

  /// Records `request`.
  public func prewarm(for request: ModelRequest) async {
    state.withLock { $0.prewarms.append(request) }
  }

  /// Records `request` and plays the next step for it.
  public func turn(for request: ModelRequest) async throws -> ModelTurn {
    let step = state.withLock { s -> Step in
      s.requests.append(request)
      return s.script.count > 1 ? s.script.removeFirst() : s.script[0]
    }
    return try await step(request)
  }

  /// The turn's text in pieces of `streamPiece` characters (one piece without it), then the turn.
  public func streamTurn(for request: ModelRequest) -> ModelStream {
    let piece = streamPiece
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          let turn = try await self.turn(for: request)
          var rest = Substring(turn.text)
          while !rest.isEmpty {
            continuation.yield(.textDelta(String(rest.prefix(piece ?? rest.count))))
            rest = rest.dropFirst(piece ?? rest.count)
          }
          continuation.yield(.finished(turn))
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
