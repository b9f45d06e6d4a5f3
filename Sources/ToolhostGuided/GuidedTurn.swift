import Foundation
public import ToolhostSession

/// One guided turn from any backend: the requests a guided reply takes, with every re-ask in this one place.
///
/// A backend supplies how to send one attempt (``GuidedToolCalls/Attempt``: the constraints of that try) and read
/// its reply; the driver reads the reply as a guided turn, reviews it (``GuidedToolCalls/Attempt/review(_:reply:for:)``)
/// and asks again until it stands. With ``GuidedFollowUp/results`` an answer the results give by themselves comes
/// back without a request.
///
/// This driver is the second of the six levels at which a failure is tried again (HTTP, guided re-ask, local restart,
/// session repair, MCP servers, persistent plugins: docs/architecture.md, "Retries and restarts"): a reply whose
/// review says "retry", or a first answer given up on while it streams, is asked for again under the attempt's
/// changed constraints, and the attempt bounds the tries.
///
/// ```swift
/// let turn = try await GuidedTurn.run(for: request, followUp: .results, callID: { "call_1" }) { attempt in
///   try await backend.send(request, constrainedBy: attempt)   // the model's raw reply as a ModelTurn
/// }
/// ```
public enum GuidedTurn {
  /// How a streamed attempt ended: its reply read whole, or given up on while it was generated.
  public enum StreamedReply: Sendable {
    /// The whole reply, as the backend read it (its text the raw guided reply).
    case finished(ModelTurn)
    /// The backend stopped reading because `shouldStop` said so; the attempt has changed for the next try.
    case abandoned
  }

  /// Runs one turn: sends attempts with `send` (which returns the model's raw reply as a turn) until a reply
  /// stands, and returns it as the turn. `callID` names each call the replies make.
  ///
  /// - Throws: what `send` throws (``LanguageModelError``, `CancellationError`).
  public static func run(
    for request: ModelRequest, followUp: GuidedFollowUp, callID: () -> String,
    send: (GuidedToolCalls.Attempt) async throws -> ModelTurn
  ) async throws -> ModelTurn {
    try await run(
      for: request, offer: GuidedToolCalls.ToolOffer(for: request, today: nil), followUp: followUp, callID: callID,
      send: send)
  }

  /// As ``run(for:followUp:callID:send:)``, with the turn's ``GuidedToolCalls/ToolOffer`` worked out already (the
  /// backend's requests use it too).
  public static func run(
    for request: ModelRequest, offer: GuidedToolCalls.ToolOffer, followUp: GuidedFollowUp, callID: () -> String,
    send: (GuidedToolCalls.Attempt) async throws -> ModelTurn
  ) async throws -> ModelTurn {
    if let answer = answerFromResults(request, offer: offer, followUp: followUp) { return answer }
    var attempt = GuidedToolCalls.Attempt()
    while true {
      let raw = try await send(attempt)
      let turn = GuidedToolCalls.turn(fromReply: raw.text, base: raw, callID: callID())
      if case .accept(let accepted) = attempt.review(turn, reply: raw.text, for: request) { return accepted }
    }
  }

  /// Runs one turn whose replies stream: as ``run(for:followUp:callID:send:)``, and `send` hands each piece of the
  /// reply's text to `shouldStop` as it arrives; once that returns `true`, `send` stops reading (the server stops
  /// generating when the connection closes) and returns ``StreamedReply/abandoned``. A first decision to answer that
  /// would be asked for again as a call is given up on that way as soon as its words show it.
  ///
  /// An answer is reviewed before it is shown (it may be asked for again as a call, or under stricter words, or
  /// replaced by the results), so its text comes to `yield` whole once it stands, then the finished turn.
  ///
  /// - Throws: what `send` or `yield` throws.
  public static func stream(
    for request: ModelRequest, followUp: GuidedFollowUp, callID: () -> String,
    send: (GuidedToolCalls.Attempt, _ shouldStop: (String) -> Bool) async throws -> StreamedReply,
    yield: (ModelStreamEvent) throws -> Void
  ) async throws {
    try await stream(
      for: request, offer: GuidedToolCalls.ToolOffer(for: request, today: nil), followUp: followUp, callID: callID,
      send: send, yield: yield)
  }

  /// As ``stream(for:followUp:callID:send:yield:)``, with the turn's ``GuidedToolCalls/ToolOffer`` worked out
  /// already (the backend's requests use it too).
  public static func stream(
    for request: ModelRequest, offer: GuidedToolCalls.ToolOffer, followUp: GuidedFollowUp, callID: () -> String,
    send: (GuidedToolCalls.Attempt, _ shouldStop: (String) -> Bool) async throws -> StreamedReply,
    yield: (ModelStreamEvent) throws -> Void
  ) async throws {
    if let answer = answerFromResults(request, offer: offer, followUp: followUp) {
      try yield(.textDelta(answer.text))
      try yield(.finished(answer))
      return
    }
    var attempt = GuidedToolCalls.Attempt()
    while true {
      var partial = ""
      var watched = attempt
      let reply = try await send(attempt) { piece in
        partial += piece
        // Judged at the end of a word (or of the answer's string) only.
        guard piece.contains(where: { $0.isWhitespace || $0 == "\"" }) else { return false }
        return watched.abandons(partialReply: partial, for: request)
      }
      guard case .finished(let raw) = reply else {
        attempt = watched
        continue
      }
      let turn = GuidedToolCalls.turn(fromReply: raw.text, base: raw, callID: callID())
      guard case .accept(let accepted) = attempt.review(turn, reply: raw.text, for: request) else { continue }
      if accepted.toolCalls.isEmpty, !accepted.text.isEmpty { try yield(.textDelta(accepted.text)) }
      try yield(.finished(accepted))
      return
    }
  }

  /// The answer the results give by themselves (``GuidedToolCalls/answerFromResults(_:tools:)``, with the tools
  /// `offer` lists), when `followUp` is ``GuidedFollowUp/results`` and they do.
  static func answerFromResults(
    _ request: ModelRequest, offer: GuidedToolCalls.ToolOffer, followUp: GuidedFollowUp
  ) -> ModelTurn? {
    guard followUp == .results,
      let text = GuidedToolCalls.answerFromResults(request.transcript, tools: offer.tools)
    else { return nil }
    return ModelTurn(text: text, finishReason: "stop")
  }
}
