import ToolhostJSON
import ToolhostSchema
import ToolhostSystem
public import ToolhostTools

/// Running one round of tool calls: checking each call, asking for approval, running the approved ones at once,
/// and recording what the model is told.
extension LanguageModelSession {
  /// What a round of tool calls came to: the records in the model's order, and whether it ends the request.
  struct RoundOutcome {
    var records: [ToolCallRecord]
    var ranAny: Bool
    var repairProblem: ToolCallError?
    var failure: ToolCallError?
  }

  private struct Runnable: Sendable {
    var index: Int
    var call: Transcript.ToolCall
  }

  /// Checks, approves and runs one turn's calls; records come back in the model's order.
  func runCalls(
    _ calls: [Transcript.ToolCall], choice: ToolChoice, offered: [String]?, policy: SessionPolicy, content: String,
    sink: EventSink
  ) async throws -> RoundOutcome {
    var records = [ToolCallRecord?](repeating: nil, count: calls.count)
    var repairProblem: ToolCallError?
    var runnable: [Runnable] = []

    func settle(
      _ index: Int, _ result: Result<ToolOutput, ToolCallError>, _ duration: Duration, ran: Bool
    ) {
      let record = Self.record(
        calls[index], result, duration, ran: ran, limit: policy.toolOutputLimit, tools: self.tools)
      records[index] = record
      emit(.toolCallFinished(record), content, sink)
    }

    for (index, call) in calls.enumerated() {
      emit(.toolCallStarted(call), content, sink)
      if let problem = problem(with: call, choice: choice, offered: offered) {
        repairProblem = problem
        settle(index, .failure(problem), .zero, ran: false)
      } else {
        runnable.append(Runnable(index: index, call: call))
      }
    }

    if let approve = policy.approveCall {
      runnable = try await approval(of: runnable, by: approve) { index, refusal in
        settle(index, .failure(refusal), .zero, ran: false)
      }
    }

    let registry = self.tools
    let baseContext = policy.toolContext
    let items = runnable
    await withBoundedConcurrency(items.count, width: policy.toolConcurrency) {
      i -> (Result<ToolOutput, ToolCallError>, Duration) in
      let item = items[i]
      var context = baseContext
      context.callID = item.call.id
      let clock = ContinuousClock()
      let began = clock.now
      do throws(ToolCallError) {
        // `problem(with:choice:offered:)` validated the arguments; the registry need not do it again.
        let output = try await registry.call(
          validated: item.call.toolName, arguments: item.call.arguments, context: context)
        return (.success(output), clock.now - began)
      } catch {
        return (.failure(error), clock.now - began)
      }
    } collect: { i, outcome in
      settle(items[i].index, outcome.0, outcome.1, ran: true)
    }
    try Task.checkCancellation()

    let finished = records.map { $0! }
    var failure: ToolCallError?
    if policy.toolFailures != .reportToModel {
      for record in finished where record.ran {
        if case .failure(let error) = record.result {
          failure = error
          break
        }
      }
    }
    return RoundOutcome(
      records: finished,
      ranAny: !runnable.isEmpty || finished.contains { !$0.ran && Self.isRefusal($0) },
      repairProblem: repairProblem, failure: failure)
  }

  /// Asks `approve` about each call in turn and returns the calls it allows; each refused one goes to `refused` (its
  /// index and the refusal the model is told) before the next is asked about. A call of a tool the session does not
  /// have is left for the registry to report.
  private func approval(
    of runnable: [Runnable], by approve: @Sendable (Transcript.ToolCall, any Tool) async -> SessionPolicy.Approval,
    refused: (Int, ToolCallError) -> Void
  ) async throws -> [Runnable] {
    var approved: [Runnable] = []
    for item in runnable {
      guard let tool = tools.tool(named: item.call.toolName) else {
        approved.append(item)
        continue
      }
      switch await approve(item.call, tool) {
      case .allow:
        approved.append(item)
      case .refuse(let reason):
        refused(item.index, ToolCallError(tool: tool, underlyingError: ToolFailure.refused(reason: reason)))
      }
      try Task.checkCancellation()
    }
    return approved
  }

  private static func isRefusal(_ record: ToolCallRecord) -> Bool {
    if case .failure(let e) = record.result, case .refused = e.failure { return true }
    return false
  }

  /// Why a call cannot run as asked, in words for the model: tools off, unknown tool, unparsable or invalid
  /// arguments.
  /// Why `call` cannot run as it is (sent back to the model), or `nil`: tools not allowed this turn, a tool that is
  /// not offered (none of the session's, or not among `offered`), arguments that are not JSON or break the schema.
  private func problem(with call: Transcript.ToolCall, choice: ToolChoice, offered: [String]?) -> ToolCallError? {
    if choice == .none && !tools.tools.isEmpty {
      return ToolCallError(
        toolName: call.toolName,
        underlyingError: ToolFailure.refused(
          reason: "tool calls are not allowed in this request; answer in text"))
    }
    guard let tool = tools.tool(named: call.toolName), offered?.contains(call.toolName) ?? true else {
      let suggestions = offered ?? tools.suggestions(for: call.toolName)
      return ToolCallError(toolName: call.toolName, underlyingError: ToolFailure.unknownTool(suggestions: suggestions))
    }
    if let raw = call.argumentsText {
      let excerpt = raw.count > 200 ? String(raw.prefix(200)) + "…" : raw
      let reason = (try? JSONValue.parse(raw)).map { _ in "" } ?? Self.parseError(raw)
      return ToolCallError(
        tool: tool,
        underlyingError: ToolFailure.invalidArguments([
          ValidationIssue(
            instanceLocation: "", keywordLocation: "", keyword: "json",
            message:
              "the arguments are not valid JSON (\(reason)): «\(excerpt)»; send one JSON object")
        ]))
    }
    let issues = tools.validate(call.arguments, for: call.toolName)
    if !issues.isEmpty {
      return ToolCallError(tool: tool, underlyingError: ToolFailure.invalidArguments(issues))
    }
    return nil
  }

  private static func parseError(_ raw: String) -> String {
    do {
      _ = try JSONValue.parse(raw)
      return "unknown error"
    } catch {
      return error.description
    }
  }

  /// The record of a settled call, with the text the model is sent (capped).
  static func record(
    _ call: Transcript.ToolCall, _ result: Result<ToolOutput, ToolCallError>, _ duration: Duration,
    ran: Bool,
    limit: Int, tools: ToolRegistry
  ) -> ToolCallRecord {
    let full: String
    var value: JSONValue?
    var summary: String?
    var isError = false
    switch result {
    case .success(let output):
      full = output.modelText
      value = output.value
      if output.value != nil, let text = output.text { summary = OutputCap.apply(text, limit: limit).0 }
    case .failure(let error):
      full = modelText(for: error, tools: tools)
      isError = true
    }
    let (text, cut) = OutputCap.apply(full, limit: limit)
    if cut > 0 { value = nil }
    let output = Transcript.ToolOutput(
      callID: call.id, toolName: call.toolName, text: text, value: value, isError: isError,
      charactersCut: cut > 0 ? cut : nil, summary: summary)
    return ToolCallRecord(call: call, result: result, duration: duration, ran: ran, output: output)
  }

  /// A failure as the model is told it: `{"error": {"code", "message", "tool", ...}}`, with the tool names when the
  /// name matched none.
  public static func modelText(for error: ToolCallError, tools: ToolRegistry) -> String {
    var json = error.json
    if case .unknownTool(let suggestions) = error.failure, case .object(var e)? = json["error"] {
      var message = "there is no tool named \(error.toolName)"
      if !suggestions.isEmpty {
        message += "; did you mean \(suggestions.joined(separator: " or "))?"
      }
      let names = tools.tools.map(\.name)
      message +=
        names.isEmpty
        ? "; no tools are available" : "; the tools are: \(names.joined(separator: ", "))"
      e["message"] = .string(message)
      json = ["error": .object(e)]
    }
    return json.serialized()
  }
}
