public import ToolhostTools

/// Why a session could not answer.
public enum LanguageModelSessionError: Error, Sendable, CustomStringConvertible {
  /// Another request is running on this session.
  case concurrentRequests
  /// The model kept calling tools for more rounds than the limit allows.
  case toolRoundLimitReached(limit: Int)
  /// The model kept sending invalid tool calls; `lastProblem` is the last one.
  case repairLimitReached(limit: Int, lastProblem: ToolCallError)
  /// The session's transcript was set while the request ran; the request's entries were not kept over it.
  case transcriptMutationWhileResponding

  /// What went wrong and what to do.
  public var description: String {
    switch self {
    case .concurrentRequests:
      return
        "the session is already answering a request; a session answers one request at a time, so wait for it "
        + "to finish or use another session"
    case .toolRoundLimitReached(let limit):
      return
        "the model called tools in \(limit) rounds without answering, the most allowed for one request; raise "
        + "the limit (SessionPolicy.maximumToolRounds) or, with a required tool-calling mode, use "
        + "requiredUntilFirstCall so the model may answer after its calls"
    case .repairLimitReached(let limit, let problem):
      return
        "the model sent invalid tool calls \(limit + 1) times and was told the problem each time; last: "
        + "\(problem.description)"
    case .transcriptMutationWhileResponding:
      return
        "the session's transcript was replaced while this request ran, so its answer was not added; set the "
        + "transcript between requests (isResponding is false), then ask again"
    }
  }
}
