// The verdict on one question of the `answers` eval: right only when every check of issue 30's Goal holds.
import ToolhostJSON

/// Why a question was not answered right.
public enum FailureKind: String, Sendable, CaseIterable {
  /// `ask` did not end within its time.
  case timedOut = "timed out"
  /// `ask` exited with a failure status.
  case exit = "exit"
  /// No answer, or an empty one.
  case emptyAnswer = "empty answer"
  /// An expected call was not made with the expected arguments (Goal 1).
  case missingCall = "missing call"
  /// An expected call was made but failed or was refused, and no retry succeeded (a refusal is no failure for a
  /// call that needs approval by design, ``ExpectedCall/needsApproval``).
  case callFailed = "call failed"
  /// Independent calls took several rounds (Goal 1).
  case severalRounds = "calls in several rounds"
  /// A call for a question no tool serves (Goal 2).
  case needlessCall = "needless call"
  /// Calls beyond the expected ones and one retry (Goal 2).
  case extraCalls = "extra calls"
  /// An argument the user did not give or imply (Goal 3).
  case inventedArgument = "invented argument"
  /// A figure of the answer found neither in the results nor in the question (Goal 4).
  case numberNotInResults = "number not in results"
  /// The question given back as the answer (Goal 4).
  case echo = "echo"
  /// A failed call, and an answer that does not say so (Goal 4).
  case hidesFailure = "hides failure"
}

/// One reason a question was not right, with its particulars.
public struct FailureReason: Sendable, Equatable, CustomStringConvertible {
  /// The kind, for counting.
  public var kind: FailureKind
  /// For people: `missing getWeather {"city":"Miami"}`, `number 57 not in results`.
  public var description: String
  /// Makes a reason.
  public init(_ kind: FailureKind, _ description: String? = nil) {
    self.kind = kind
    self.description = description ?? kind.rawValue
  }
}

/// The verdict on one question, and the counts the tables add up.
public struct AnswerVerdict: Sendable, Equatable {
  /// Why it is wrong; empty when it is right.
  public var reasons: [FailureReason] = []
  /// The old measure: the first call is an expected tool with its expected arguments (no call, for a question no
  /// tool serves).
  public var firstCallRight = false
  /// Calls for a question no tool serves.
  public var needlessCalls = 0
  /// Calls beyond the expected ones and one retry of an expected tool.
  public var extraCalls = 0
  /// Whether one tool was called three times or more beyond what the question needs.
  public var loops = false

  /// Whether the question was answered right.
  public var right: Bool { reasons.isEmpty }
  /// Whether a reason of this kind is among the reasons.
  public func has(_ kind: FailureKind) -> Bool { reasons.contains { $0.kind == kind } }
}

/// The verdict on `transcript`, the outcome of asking `question`: `status` is the exit status (nil: timed out).
public func answerVerdict(
  for question: EvalQuestion, transcript: AskTranscript, status: Int32?, stderr: String = ""
) -> AnswerVerdict {
  var verdict = AnswerVerdict()
  let calls = transcript.calls
  if let status {
    if status != 0 { verdict.reasons.append(FailureReason(.exit, "exit \(status): \(lastLine(of: stderr))")) }
  } else {
    verdict.reasons.append(FailureReason(.timedOut))
  }
  let answer = transcript.answer ?? ""
  if answer.allSatisfy(\.isWhitespace), status != nil { verdict.reasons.append(FailureReason(.emptyAnswer)) }
  var counts: [String: Int] = [:]
  for call in calls { counts[call.tool, default: 0] += 1 }

  guard !question.calls.isEmpty else {
    verdict.firstCallRight = calls.isEmpty
    verdict.needlessCalls = calls.count
    verdict.loops = counts.values.contains { $0 >= 3 }
    if !calls.isEmpty {
      verdict.reasons.append(
        FailureReason(
          .needlessCall,
          "\(calls.count) needless call\(calls.count == 1 ? "" : "s")"))
    }
    return verdict
  }

  // 1. Every expected call made, each by a call of its own.
  let assignment = assign(question.calls, to: calls)
  for (n, expected) in question.calls.enumerated() {
    guard let index = assignment[n] else {
      verdict.reasons.append(FailureReason(.missingCall, "missing \(expected.summary)"))
      continue
    }
    let succeeded = calls.contains { call in
      expected.isMet(tool: call.tool, arguments: call.arguments) && transcript.result(of: call)?.ok == true
    }
    let error = transcript.result(of: calls[index])?.error
    // A call that needs approval by design is refused with no terminal: the answer must say so (below).
    if !succeeded, !(expected.needsApproval && error?["code"]?.stringValue == "refused") {
      let why = error?["message"]?.stringValue ?? error?["code"]?.stringValue ?? "no result"
      verdict.reasons.append(FailureReason(.callFailed, "\(expected.tool) failed: \(why)"))
    }
  }
  let matched = assignment.compactMap { $0 }
  let rounds = Set(matched.map { calls[$0].round }).count
  if !question.sequential, rounds > 1 {
    verdict.reasons.append(FailureReason(.severalRounds, "calls in \(rounds) rounds"))
  }
  // 2. No call beyond the expected ones, except one retry of an expected tool.
  let expectedTools = Set(question.calls.map(\.tool))
  let unmatched = calls.indices.filter { !matched.contains($0) }
  let retries = unmatched.contains { expectedTools.contains(calls[$0].tool) } ? 1 : 0
  verdict.extraCalls = unmatched.count - retries
  if verdict.extraCalls > 0 {
    let names = unmatched.map { calls[$0].tool }.joined(separator: ", ")
    verdict.reasons.append(
      FailureReason(
        .extraCalls,
        "\(verdict.extraCalls) extra call\(verdict.extraCalls == 1 ? "" : "s") (\(names))"))
  }
  let needed = Dictionary(question.calls.map { ($0.tool, 1) }, uniquingKeysWith: +)
  verdict.loops = counts.contains { tool, count in count >= 3 && count > (needed[tool] ?? 0) }
  // 3. No argument the user did not give or imply.
  verdict.reasons += inventedArguments(in: calls, of: question, assignment: assignment).map {
    FailureReason(.inventedArgument, "invented argument \($0)")
  }
  verdict.firstCallRight =
    calls.first.map { first in
      question.calls.contains { $0.isMet(tool: first.tool, arguments: first.arguments) }
    } ?? false
  // 4. The answer states what the results say.
  guard !answer.allSatisfy(\.isWhitespace) else { return verdict }
  verdict.reasons += answerProblems(answer, to: question, transcript: transcript)
  return verdict
}

/// The arguments of the calls of expected tools that the user did not give or imply, each named once: a call is
/// held to the expected call it was matched with (`assignment`), an extra one to every expected call of its tool.
func inventedArguments(in calls: [ObservedCall], of question: EvalQuestion, assignment: [Int?]) -> [String] {
  let expectedTools = Set(question.calls.map(\.tool))
  var invented: [String] = []
  for (index, call) in calls.enumerated() where expectedTools.contains(call.tool) {
    let expectations: [ExpectedCall]
    if let n = assignment.firstIndex(of: index) {
      expectations = [question.calls[n]]
    } else {
      expectations = question.calls.filter { $0.tool == call.tool }
    }
    var keys = JSONObject()
    for e in expectations { for (k, v) in e.arguments { keys[k] = v } }
    let allowed = expectations.reduce(into: Set<String>()) { $0.formUnion($1.allowedArguments) }
    for name in inventedArguments(call.arguments, expected: keys, allowed: allowed) where !invented.contains(name) {
      invented.append(name)
    }
  }
  return invented
}

/// What is wrong with a (non-empty) answer: numbers the results do not hold, the question echoed, a failure the
/// results show and the answer hides.
func answerProblems(_ answer: String, to question: EvalQuestion, transcript: AskTranscript) -> [FailureReason] {
  var reasons: [FailureReason] = []
  let facts = ResultFacts(transcript.results)
  for number in numbersNotFound(in: answer, question: question.prompt, facts: facts) {
    reasons.append(FailureReason(.numberNotInResults, "number \(number) not in results"))
  }
  if isEcho(answer, question: question.prompt, facts: facts) { reasons.append(FailureReason(.echo)) }
  if !unresolvedFailures(transcript).isEmpty, !admitsFailure(answer) { reasons.append(FailureReason(.hidesFailure)) }
  return reasons
}

/// For each expected call, the index of a distinct call that meets it (nil when none is left): the largest such
/// matching, found by augmenting paths (a handful of calls), earlier calls first.
func assign(_ expected: [ExpectedCall], to calls: [ObservedCall]) -> [Int?] {
  var owner: [Int: Int] = [:]  // call index → expected index
  func candidates(_ e: Int) -> [Int] {
    calls.indices.filter { expected[e].isMet(tool: calls[$0].tool, arguments: calls[$0].arguments) }
  }
  func augment(_ e: Int, _ seen: inout Set<Int>) -> Bool {
    for c in candidates(e) where seen.insert(c).inserted {
      if let other = owner[c] {
        guard augment(other, &seen) else { continue }
      }
      owner[c] = e
      return true
    }
    return false
  }
  for e in expected.indices {
    var seen = Set<Int>()
    _ = augment(e, &seen)
  }
  var result = [Int?](repeating: nil, count: expected.count)
  for (c, e) in owner { result[e] = c }
  return result
}

/// The last line of `text` that is not blank, cut to 160 characters.
private func lastLine(of text: String) -> String {
  String((text.split(separator: "\n").last { !$0.allSatisfy(\.isWhitespace) } ?? "").prefix(160))
}
