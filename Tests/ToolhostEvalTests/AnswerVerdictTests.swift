import Testing
import ToolhostEval
import ToolhostJSON

/// The verdict on whole asks: each failure reason triggered by a transcript that has it, and absent from one that
/// does not.
@Suite("answer verdicts")
struct AnswerVerdictTests {
  let twoCities = EvalQuestion(
    prompt: "Is Singapore or Bangkok rainier in September?", category: .several,
    calls: [
      ExpectedCall(tool: "getWeather", arguments: ["city": "Singapore", "month": 9]),
      ExpectedCall(tool: "getWeather", arguments: ["city": "Bangkok", "month": 9]),
    ])

  func weather(_ id: String, _ city: String, round: Int, month: Int64 = 9, rain: Double, extra: JSONObject = [:])
    -> (ObservedCall, ObservedResult)
  {
    var arguments: JSONObject = ["city": .string(city), "month": .integer(month)]
    for (k, v) in extra { arguments[k] = v }
    return (
      ObservedCall(id: id, tool: "getWeather", arguments: .object(arguments), round: round),
      ObservedResult(
        id: id, tool: "getWeather", ok: true,
        result: ["city": .string(city), "precipitation": .real(rain), "averageHigh": 31.5])
    )
  }

  func transcript(_ pairs: [(ObservedCall, ObservedResult)], answer: String) -> AskTranscript {
    AskTranscript(calls: pairs.map(\.0), results: pairs.map(\.1), answer: answer)
  }

  func kinds(_ v: AnswerVerdict) -> [FailureKind] { v.reasons.map(\.kind) }

  @Test func severalCitiesInOneRoundIsRight() {
    let t = transcript(
      [weather("1", "Singapore", round: 1, rain: 170.3), weather("2", "Bangkok", round: 1, rain: 319.9)],
      answer: "Bangkok is rainier in September: 320 mm against 170.3 mm in Singapore.")
    let v = answerVerdict(for: twoCities, transcript: t, status: 0)
    #expect(v.right, "\(v.reasons)")
    #expect(v.firstCallRight)
    #expect(v.extraCalls == 0 && v.needlessCalls == 0 && !v.loops)
  }

  @Test func callsInTwoRounds() {
    let t = transcript(
      [weather("1", "Singapore", round: 1, rain: 170.3), weather("2", "Bangkok", round: 2, rain: 319.9)],
      answer: "Bangkok: 319.9 mm; Singapore: 170.3 mm.")
    let v = answerVerdict(for: twoCities, transcript: t, status: 0)
    #expect(kinds(v) == [.severalRounds])
    #expect(v.reasons.map(\.description) == ["calls in 2 rounds"])
    // The same calls are fine in two rounds when the question's calls depend on one another.
    var sequential = twoCities
    sequential.sequential = true
    #expect(answerVerdict(for: sequential, transcript: t, status: 0).right)
  }

  @Test func missingCallAndWrongArguments() {
    let one = transcript([weather("1", "Singapore", round: 1, rain: 170.3)], answer: "Singapore gets 170.3 mm.")
    let v = answerVerdict(for: twoCities, transcript: one, status: 0)
    #expect(kinds(v) == [.missingCall])
    #expect(v.reasons.first?.description.contains("Bangkok") == true)
    let wrongMonth = transcript(
      [weather("1", "Singapore", round: 1, rain: 170.3), weather("2", "Bangkok", round: 1, month: 11, rain: 40)],
      answer: "Bangkok 40 mm, Singapore 170.3 mm.")
    #expect(kinds(answerVerdict(for: twoCities, transcript: wrongMonth, status: 0)).contains(.missingCall))
  }

  @Test func inventedArgument() {
    let t = transcript(
      [
        weather("1", "Singapore", round: 1, rain: 170.3, extra: ["units": "celsius"]),
        weather("2", "Bangkok", round: 1, rain: 319.9),
      ], answer: "Bangkok: 319.9 mm; Singapore: 170.3 mm.")
    let v = answerVerdict(for: twoCities, transcript: t, status: 0)
    #expect(v.reasons.map(\.description) == ["invented argument units"])
    var allowing = twoCities
    allowing.calls[0].allowedArguments = ["units"]
    #expect(answerVerdict(for: allowing, transcript: t, status: 0).right)
  }

  @Test func numberNotInResultsAndRounding() {
    let pair = [weather("1", "Singapore", round: 1, rain: 170.3), weather("2", "Bangkok", round: 1, rain: 319.9)]
    let rounded = answerVerdict(
      for: twoCities, transcript: transcript(pair, answer: "Bangkok (about 320 mm) beats Singapore (170 mm)."),
      status: 0)
    #expect(rounded.right, "\(rounded.reasons)")
    let invented = answerVerdict(
      for: twoCities, transcript: transcript(pair, answer: "Bangkok gets 250 mm, Singapore 170.3 mm."), status: 0)
    #expect(invented.reasons.map(\.description) == ["number 250 not in results"])
  }

  @Test func needlessAndExtraCallsAndLoops() {
    let none = EvalQuestion(prompt: "What's Tesla's stock price today?", category: .none, calls: [])
    let needless = answerVerdict(
      for: none, transcript: transcript([weather("1", "New York", round: 1, rain: 1)], answer: "$18.10"), status: 0)
    #expect(kinds(needless) == [.needlessCall] && needless.needlessCalls == 1 && !needless.firstCallRight)
    // For a question no tool serves, figures are not checked.
    let noCall = answerVerdict(
      for: none, transcript: AskTranscript(answer: "I can't look up stock prices; it was $250 once."), status: 0)
    #expect(noCall.right && noCall.firstCallRight)

    let single = EvalQuestion(
      prompt: "Any rye recipes?", category: .single,
      calls: [ExpectedCall(tool: "searchBreadDatabase", arguments: ["searchTerm": "rye"])])
    func search(_ id: String, _ term: String, round: Int, count: Int64) -> (ObservedCall, ObservedResult) {
      (
        ObservedCall(id: id, tool: "searchBreadDatabase", arguments: ["searchTerm": .string(term)], round: round),
        ObservedResult(id: id, tool: "searchBreadDatabase", ok: true, result: ["count": .integer(count)])
      )
    }
    // One retry of an expected tool is allowed…
    let retry = answerVerdict(
      for: single,
      transcript: transcript(
        [search("1", "rye breads", round: 1, count: 0), search("2", "rye", round: 2, count: 3)],
        answer: "I found 3 rye breads."),
      status: 0)
    #expect(retry.right && retry.extraCalls == 0, "\(retry.reasons)")
    // …a second one, or a call of another tool, is extra; the same tool three times is a loop.
    let looping = answerVerdict(
      for: single,
      transcript: transcript(
        [
          search("1", "rye", round: 1, count: 3), search("2", "rye", round: 2, count: 3),
          search("3", "rye", round: 3, count: 3),
        ], answer: "I found 3 rye breads."),
      status: 0)
    #expect(kinds(looping) == [.extraCalls] && looping.extraCalls == 1 && looping.loops)
    let other = answerVerdict(
      for: single,
      transcript: transcript(
        [search("1", "rye", round: 1, count: 3), weather("2", "Berlin", round: 1, rain: 1)],
        answer: "I found 3 rye breads."),
      status: 0)
    #expect(kinds(other) == [.extraCalls] && other.extraCalls == 1 && !other.loops)
  }

  @Test func echoAndEmptyAnswerAndExit() {
    let done = EvalQuestion(
      prompt: "Mark to-do #1 as done.", category: .single,
      calls: [ExpectedCall(tool: "todoDone", arguments: ["id": 1])])
    let call = ObservedCall(id: "1", tool: "todoDone", arguments: ["id": 1], round: 1)
    let result = ObservedResult(id: "1", tool: "todoDone", ok: true, text: "#1 [x] buy milk")
    let echo = answerVerdict(
      for: done, transcript: AskTranscript(calls: [call], results: [result], answer: "Mark to-do #1 as done."),
      status: 0)
    #expect(kinds(echo) == [.echo])
    let fine = answerVerdict(
      for: done,
      transcript: AskTranscript(calls: [call], results: [result], answer: "Done: #1 buy milk is ticked off."),
      status: 0)
    #expect(fine.right, "\(fine.reasons)")
    let empty = answerVerdict(
      for: done, transcript: AskTranscript(calls: [call], results: [result], answer: "  "), status: 0)
    #expect(kinds(empty) == [.emptyAnswer])
    let failed = answerVerdict(
      for: done, transcript: AskTranscript(calls: [call], results: [result]), status: 1, stderr: "x\nerror: boom\n")
    #expect(failed.reasons.map(\.description) == ["exit 1: error: boom", "empty answer"])
    #expect(kinds(answerVerdict(for: done, transcript: AskTranscript(), status: nil)).contains(.timedOut))
  }

  @Test func hiddenFailure() {
    let time = EvalQuestion(
      prompt: "What's the time in Berlin?", category: .single,
      calls: [ExpectedCall(tool: "get_current_time", arguments: ["timezone": "Berlin"])])
    let call = ObservedCall(id: "1", tool: "get_current_time", arguments: ["timezone": "Europe/Berlin"], round: 1)
    let refused = ObservedResult(
      id: "1", tool: "get_current_time", ok: false,
      error: ["code": "approval_required", "message": "needs approval and there is no terminal to ask on"])
    let hides = answerVerdict(
      for: time, transcript: AskTranscript(calls: [call], results: [refused], answer: "It is 14:05 in Berlin."),
      status: 0)
    #expect(kinds(hides) == [.callFailed, .numberNotInResults, .numberNotInResults, .hidesFailure])
    let says = answerVerdict(
      for: time,
      transcript: AskTranscript(
        calls: [call], results: [refused], answer: "Sorry, I couldn't get the time: the tool needs approval."),
      status: 0)
    #expect(kinds(says) == [.callFailed])
    // A failure followed by a successful retry is resolved: nothing to own up to.
    let retry = ObservedCall(id: "2", tool: "get_current_time", arguments: ["timezone": "Europe/Berlin"], round: 2)
    let ok = ObservedResult(
      id: "2", tool: "get_current_time", ok: true, result: ["datetime": "2026-11-25T14:05:00+01:00"])
    let resolved = answerVerdict(
      for: time,
      transcript: AskTranscript(calls: [call, retry], results: [refused, ok], answer: "It is 14:05 in Berlin."),
      status: 0)
    #expect(resolved.right, "\(resolved.reasons)")
  }

  @Test func refusedCallThatNeedsApproval() {
    var clear = EvalQuestion(
      prompt: "Wipe my to-do list completely.", category: .single,
      calls: [ExpectedCall(tool: "todoClear", arguments: ["onlyDone": false], needsApproval: true)])
    let call = ObservedCall(id: "1", tool: "todoClear", arguments: [:], round: 1)
    let refused = ObservedResult(
      id: "1", tool: "todoClear", ok: false,
      error: ["code": "refused", "message": "refused: the user has not approved running todoClear"])
    func verdict(_ answer: String) -> AnswerVerdict {
      answerVerdict(
        for: clear, transcript: AskTranscript(calls: [call], results: [refused], answer: answer), status: 0)
    }
    // Refused by design, and said so: right.
    #expect(verdict("I could not clear the list: that needs your approval.").right)
    #expect(kinds(verdict("Your to-do list is now empty.")) == [.hidesFailure])
    // A refusal of a call that should have run is a failure, however honest the answer.
    clear.calls[0].needsApproval = false
    #expect(kinds(verdict("I could not clear the list: that needs your approval.")) == [.callFailed])
  }

  @Test func roundsReadFromTheEventStream() {
    let ndjson = """
      {"type":"request_started","prompt":"x"}
      {"type":"model_turn_started","round":1}
      {"type":"tool_call_started","id":"a","tool":"getWeather","arguments":{"city":"Singapore","month":9}}
      {"type":"tool_call_started","id":"b","tool":"getWeather","arguments":{"city":"Bangkok","month":9}}
      {"type":"tool_call_finished","id":"b","tool":"getWeather","ok":true,"result":{"precipitation":319.9}}
      {"type":"tool_call_finished","id":"a","tool":"getWeather","ok":false,"error":{"code":"x","message":"boom"}}
      {"type":"model_turn_started","round":2}
      {"type":"tool_call_started","id":"c","tool":"getWeather","arguments":{"city":"Singapore","month":9}}
      {"type":"tool_call_finished","id":"c","tool":"getWeather","ok":true,"result":{"precipitation":170.3},"text":"t"}
      {"type":"model_turn_started","round":3}
      {"type":"response","text":"Bangkok."}
      """
    let t = AskTranscript(ndjson: ndjson)
    #expect(t.calls.map(\.round) == [1, 1, 2])
    #expect(t.results.map(\.ok) == [true, false, true])
    #expect(t.results[2].text == "t")
    #expect(t.answer == "Bangkok.")
    #expect(t.rounds == 2)
  }
}
