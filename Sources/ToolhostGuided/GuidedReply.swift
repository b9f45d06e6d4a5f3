import Foundation
import ToolhostJSON
public import ToolhostSession

/// Reading a guided reply: the turn it stands for, and whether it repeats an earlier call.
extension GuidedToolCalls {
  /// The turn a guided reply stands for.
  ///
  /// `{"calls": [{"tool": NAME, "arguments": …}, …]}` becomes those tool calls (a call repeated in the list once),
  /// with ids `callID`, `callID_2`, … (arguments that are not an object are kept as they are, for the session to
  /// report back); the single-call form `{"tool": NAME, "arguments": …}` is read too. `{"answer": TEXT}` (also with
  /// `"tool": "none"`) becomes text; `need` is not kept. A reply in a ```json fence is read the same way. Anything
  /// else (a server that ignored the format, a reply cut off by the token limit) is kept as text, so nothing the
  /// model said is lost. Usage and finish reason come from `base`.
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
    var requested: [JSONValue] = object["calls"]?.arrayValue ?? []
    if let name = object["tool"]?.stringValue, name != "none" { requested.append(value) }
    var calls: [Transcript.ToolCall] = []
    for item in requested {
      guard let name = item["tool"]?.stringValue, name != "none" else { continue }
      let id = calls.isEmpty ? callID : "\(callID)_\(calls.count + 1)"
      let call = Transcript.ToolCall(id: id, toolName: name, arguments: item["arguments"] ?? [:])
      if !calls.contains(where: { $0.isSameCall(as: call) }) { calls.append(call) }
    }
    if !calls.isEmpty {
      turn.text = ""
      turn.toolCalls = calls
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
    let earlier = callsSinceLastPrompt(transcript)
    return turn.toolCalls.allSatisfy { call in earlier.contains { $0.isSameCall(as: call) } }
  }

  /// `call` with the argument an earlier failure of the same call named replaced by that failure's first
  /// suggestion (`error.data.suggestions`, as the weather tool gives for "Unknown city \"Dubay\". Did you mean
  /// Dubai?"), or `nil` when no failure of the same call suggests anything.
  static func followingSuggestion(_ call: Transcript.ToolCall, in transcript: Transcript) -> Transcript.ToolCall? {
    let calls = callsSinceLastPrompt(transcript)
    for output in outputsSinceLastPrompt(transcript) where output.isError {
      guard calls.contains(where: { $0.id == output.callID && $0.isSameCall(as: call) }),
        let error = reportedError(output),
        let suggestion = error["data"]?["suggestions"]?.arrayValue?.first?.stringValue,
        let message = error["message"]?.stringValue, var arguments = call.arguments.objectValue
      else { continue }
      for (name, value) in arguments {
        guard let text = value.stringValue, !text.isEmpty, text != suggestion, message.contains(text) else { continue }
        arguments[name] = .string(suggestion)
        var fixed = call
        fixed.arguments = .object(arguments)
        return fixed
      }
    }
    return nil
  }

  /// One guided request and its second tries: what the next request constrains the reply to, and what of a reply
  /// stands.
  ///
  /// In this order:
  /// - A reply that repeats a call already answered for this prompt (``repeatsEarlierCall(_:in:)``) is asked for
  ///   again as an answer only, unless that call failed with a suggestion: then the call is made with it
  ///   (``followingSuggestion(_:in:)``).
  /// - A call copied from its tool's description (``copiesDescription(_:of:in:)``), of the wrong family member
  ///   (``picksTheWrongSibling(_:among:prompt:)``) or needless (``servesNoNeed(_:of:need:in:)``) is dropped from
  ///   the reply; when no call is left, the reply is asked for again without those tools and the tools unlikely to
  ///   serve (``unlikelyTools(_:prompt:need:)``), at most ``maximumExclusions`` times (never when no other offered
  ///   tool is about the prompt or the need, ``TopicWords``), and then as an answer only. The calls that stand lose
  ///   the quote marks the model copied around a value (``withoutQuoteMarks(_:)``) and the optional arguments the
  ///   user did not give (``withoutUngivenArguments(_:of:in:today:)``), and in the
  ///   first round are completed over the lists the prompt names (``completingLists(_:prompt:)``); when they still
  ///   leave parts of the prompt undone (``uncoveredParts(of:by:tools:)``), the calls for those parts are asked for
  ///   once (``continuation``) and join them in the same round.
  /// - An answer without a call, with figures, to a question with figures about what an offered tool does
  ///   (``answersFromMemory(_:need:in:tools:)``: "Convert 10 km to miles" → "6.28 miles"), or to a question that
  ///   names a list ("Madrid or Athens"), or whose `need` names what a tool's name says
  ///   (``needNamesATool(_:_:)``), or that gives figures about something the prompt names
  ///   (``inventsFiguresAboutANamedThing(_:prompt:)``) or in words of a tool's topic
  ///   (``inventsFiguresOnATopic(_:prompt:tools:)``), or that says it did what a tool does
  ///   (``claimsAnAction(_:_:)``: "I've added it to your list") or that it cannot do what a tool is for
  ///   (``declinesWhatAToolDoes(_:prompt:tools:)``: "I can't arrange a flight"), is asked for again as a call
  ///   (``callRequired``); that call is reviewed like any other (for a list, only its arguments), so a needless
  ///   one still ends in an answer.
  /// - An answer given once the call asked for, or tried, was not made (no offered tool served the question) that
  ///   still states figures the prompt does not hold ("Tesla's stock price today is $39.00") is replaced by a plain
  ///   "no tool for that" (``declining(tools:)``).
  /// - An answer after results that does not state what they say (``answerProblem(_:in:)``) is asked for again
  ///   under stricter words (``strict``); when the second answer fails too, the answer is a plain statement of the
  ///   results (``statement(fromResultsIn:)``).
  ///
  /// Each second try sends the same messages (a stricter answer changes only the last one), so the server's prompt
  /// cache holds. Pure: no I/O.
  public struct Attempt: Sendable, Equatable {
    /// The most second tries without the tools of rejected calls.
    public static let maximumExclusions = 2
    /// The second tries made without the tools of rejected calls.
    var exclusions = 0
    /// Whether a call of a reply was rejected (needless, copied, a wrong sibling, invented arguments).
    var rejectedACall = false
    /// Whether the reply is constrained to an answer.
    public private(set) var answerOnly = false
    /// The tools left out of the reply's schema.
    public private(set) var excluded: Set<String> = []
    /// Whether the answer is asked for under stricter words, after an answer that did not state what the results
    /// say.
    public private(set) var strict = false
    /// Whether the reply must be a call: the second try after a question with the user's figures, about what an
    /// offered tool does, was answered from memory with other figures (``answersFromMemory(_:need:in:tools:)``).
    public private(set) var callRequired = false
    /// Whether the call is asked for because the prompt names a list.
    var callForList = false
    /// The first reply's calls and the parts of the prompt they leave undone, while their calls are asked for.
    public private(set) var continuation: GuidedToolCalls.Continuation?

    /// The first try: nothing constrained beyond the request.
    public init() {}

    /// What to do with a reply.
    public enum Verdict: Sendable, Equatable {
      /// Ask again, with this attempt's changed constraints.
      case retry
      /// The reply stands as this turn (its needless calls dropped, ungiven arguments removed, or an untrustworthy
      /// answer replaced by the results).
      case accept(ModelTurn)
    }

    /// Whether this try is the model's first decision on the request: whether to call a tool or answer, with no
    /// results yet and nothing constrained. Only then is an answer checked for what a tool should have done.
    func decidesOnCalling(_ request: ModelRequest) -> Bool {
      !answerOnly && !callRequired && continuation == nil && request.toolChoice == .auto
        && GuidedToolCalls.outputsSinceLastPrompt(request.transcript).isEmpty
    }

    /// Whether an answer (with the reply's `need`) gives what an offered tool is for from memory, so that it is
    /// asked for again as a call: the prompt names a list (``PromptList/namesAList(_:)``), or the answer answers
    /// from memory, names a tool in its need, invents figures or a judgement, or claims an action. When it does,
    /// the attempt becomes that second try (``callRequired``), among the tools the prompt or the need is about.
    ///
    /// Each check holds for a longer answer whenever it holds for the answer's first words, so it can be made
    /// while the answer is still being generated (``abandons(partialReply:for:)``).
    private mutating func askForACall(answer: String, need: String?, for request: ModelRequest) -> Bool {
      let transcript = request.transcript
      let prompt = transcript.lastPrompt ?? ""
      let list = PromptList.namesAList(prompt)
      guard
        list || GuidedToolCalls.answersFromMemory(answer, need: need, in: transcript, tools: request.tools)
          || GuidedToolCalls.needNamesATool(need, request.tools)
          || GuidedToolCalls.asksWhatAToolDoes(prompt, request.tools)
          || GuidedToolCalls.inventsFiguresAboutANamedThing(answer, prompt: prompt)
          || GuidedToolCalls.inventsFiguresOnATopic(answer, prompt: prompt, tools: request.tools)
          || GuidedToolCalls.claimsAnAction(answer, request.tools)
          || GuidedToolCalls.declinesWhatAToolDoes(answer, prompt: prompt, tools: request.tools)
          || GuidedToolCalls.judgesFromMemory(answer, prompt: prompt, tools: request.tools)
      else { return false }
      // Asked for again as a call among the tools the prompt or the need is about: among all of them, a small
      // model that answered "How many acres is 2 hectares?" from memory called the weather tool next.
      callRequired = true
      callForList = list
      excluded.formUnion(GuidedToolCalls.unlikelyTools(request.tools, prompt: prompt, need: need))
      return true
    }

    /// Reviews a guided reply to `request` while it is still being generated: once the model's first decision
    /// (``decidesOnCalling(_:)``) is an answer whose complete words already would be asked for again as a call
    /// (see ``review(_:reply:for:)``), the attempt becomes that second try and this returns `true`: the caller
    /// stops reading the reply, whose rest would only cost time (a recipe recited from memory ran to 512 tokens,
    /// 22 s with the default local model, before it was rejected). `false` while the reply may still stand.
    ///
    /// Only whole words are judged (the text up to its last space), so a figure or word still being generated
    /// ("25" of "250", "add" of "added") is not misread.
    public mutating func abandons(partialReply: String, for request: ModelRequest) -> Bool {
      guard decidesOnCalling(request), let partial = GuidedToolCalls.partialAnswer(in: partialReply) else {
        return false
      }
      return askForACall(answer: partial.words, need: partial.need, for: request)
    }

    /// Reviews `turn`, read from the guided reply `reply` to `request` under this attempt; a retry changes the
    /// attempt for the next try.
    public mutating func review(_ turn: ModelTurn, reply: String, for request: ModelRequest) -> Verdict {
      let transcript = request.transcript
      guard !turn.toolCalls.isEmpty else { return reviewAnswer(turn, reply: reply, for: request) }
      if answerOnly { return .accept(turn) }
      if GuidedToolCalls.repeatsEarlierCall(turn, in: transcript) {
        let fixed = turn.toolCalls.compactMap { GuidedToolCalls.followingSuggestion($0, in: transcript) }
        if !fixed.isEmpty {
          var accepted = turn
          accepted.toolCalls = fixed
          return .accept(accepted)
        }
        answerOnly = true
        return .retry
      }
      let need = GuidedToolCalls.parseReply(reply)?["need"]?.stringValue
      let prompt = transcript.lastPrompt ?? ""
      let (kept, rejected) = sortedCalls(turn, need: need, for: request)
      guard kept.isEmpty else { return accept(kept, of: turn, prompt: prompt, for: request) }
      return retry(without: rejected, need: need, prompt: prompt, for: request, standing: turn)
    }

    /// Reviews an answer (a turn without calls): asked again for a call when one was needed, declined when it gives
    /// figures no tool looked up, asked again strictly (then stated from the results) when it misstates them.
    private mutating func reviewAnswer(_ turn: ModelTurn, reply: String, for request: ModelRequest) -> Verdict {
      let transcript = request.transcript
      if let continuation { return .accept(continuation.standing(turn)) }
      if decidesOnCalling(request),
        askForACall(answer: turn.text, need: GuidedToolCalls.parseReply(reply)?["need"]?.stringValue, for: request)
      {
        return .retry
      }
      if answerOnly, callRequired || rejectedACall, GuidedToolCalls.outputsSinceLastPrompt(transcript).isEmpty,
        GuidedToolCalls.statesFiguresNotIn(transcript.lastPrompt ?? "", turn.text)
      {
        // A call was asked for or tried, none of the tools served, and the answer still gives figures: a guess.
        var declined = turn
        declined.text = GuidedToolCalls.declining(tools: request.tools)
        return .accept(declined)
      }
      let parsed = GuidedToolCalls.parseReply(reply)
      guard GuidedToolCalls.answerProblem(turn.text, in: transcript, reply: parsed) != nil else {
        var accepted = turn
        accepted.text = GuidedToolCalls.showingTheChoice(turn.text, in: transcript, reply: parsed)
        return .accept(accepted)
      }
      if !strict {
        strict = true
        answerOnly = true
        return .retry
      }
      var stated = turn
      stated.text = GuidedToolCalls.statement(fromResultsIn: transcript)
      return .accept(stated)
    }

    /// The calls of `turn` kept (their ungiven arguments dropped) and the tools of those rejected: a call that
    /// copies its tool's description, picks the wrong sibling, invents arguments or serves no need.
    private func sortedCalls(_ turn: ModelTurn, need: String?, for request: ModelRequest) -> (
      kept: [Transcript.ToolCall], rejected: Set<String>
    ) {
      let transcript = request.transcript
      var kept: [Transcript.ToolCall] = []
      var rejected: Set<String> = []
      let prompt = transcript.lastPrompt ?? ""
      for call in turn.toolCalls {
        // A tool that is not offered is the session's to report back to the model.
        guard let tool = request.tools.first(where: { $0.name == call.toolName }) else {
          kept.append(call)
          continue
        }
        // A call asked for because the prompt names a list was judged needed already: only its arguments are
        // checked, and that no other tool fits the request better.
        if GuidedToolCalls.copiesDescription(call, of: tool, in: transcript)
          || GuidedToolCalls.picksTheWrongSibling(call, among: request.tools, prompt: prompt)
          || (callForList
            ? GuidedToolCalls.inventsArguments(call, of: tool, in: transcript)
              || GuidedToolCalls.changesUnasked(tool, in: transcript)
              || GuidedToolCalls.anotherToolFitsBetter(call, among: request.tools, need: need, in: transcript)
            : GuidedToolCalls.servesNoNeed(call, of: tool, need: need, in: transcript))
        {
          rejected.insert(call.toolName)
        } else {
          kept.append(
            GuidedToolCalls.keepingWhatTheConversationFixed(
              GuidedToolCalls.withoutUngivenArguments(
                GuidedToolCalls.withoutQuoteMarks(call), of: tool, in: transcript), of: tool, in: transcript))
        }
      }
      return (kept, rejected)
    }

    /// Accepts the kept calls: completed over the lists the prompt names, joined to a first reply's calls, or asked
    /// for again for the parts of the prompt they leave undone.
    private mutating func accept(
      _ kept: [Transcript.ToolCall], of turn: ModelTurn, prompt: String, for request: ModelRequest
    ) -> Verdict {
      let transcript = request.transcript
      var accepted = turn
      guard GuidedToolCalls.roundsSinceLastPrompt(transcript) == 0 else {
        accepted.toolCalls = kept
        return .accept(accepted)
      }
      if let continuation {
        // The calls for the parts the first reply left undone join it (one round), or replace it when it took
        // nothing from the prompt.
        var calls = continuation.replaces ? [] : continuation.calls
        for call in GuidedToolCalls.completingLists(kept, prompt: prompt)
        where !calls.contains(where: { $0.isSameCall(as: call) })
          && !continuation.calls.contains(where: { $0.isSameCall(as: call) })
          && calls.count < GuidedToolCalls.maximumCallsPerReply
        {
          var call = call
          call.id += "_c"
          calls.append(call)
        }
        let firstTools = Set(continuation.calls.map(\.toolName))
        if calls.isEmpty, continuation.replaces, !firstTools.isSubset(of: excluded) {
          // The same calls again, and they take nothing from the prompt: once more without their tools.
          excluded.formUnion(firstTools)
          return .retry
        }
        accepted.toolCalls = calls.isEmpty ? continuation.calls : calls
        return .accept(accepted)
      }
      let calls = GuidedToolCalls.completingLists(kept, prompt: prompt)
      let parts = GuidedToolCalls.uncoveredParts(of: prompt, by: calls, tools: request.tools)
      if !parts.isEmpty, calls.count < GuidedToolCalls.maximumCallsPerReply {
        continuation = GuidedToolCalls.Continuation(
          calls: calls, parts: parts,
          replaces: calls.allSatisfy { GuidedToolCalls.takesNothing(from: prompt, $0) })
        callRequired = true
        return .retry
      }
      accepted.toolCalls = calls
      return .accept(accepted)
    }

    /// Every call was rejected: another try without the rejected tools, or an answer only.
    private mutating func retry(
      without rejected: Set<String>, need: String?, prompt: String, for request: ModelRequest, standing turn: ModelTurn
    ) -> Verdict {
      // Another try without the rejected tools, unless none of the rest is about the prompt or the need: then it
      // would be rejected too, at the cost of one more request ("Send an e-mail to my landlord" tried the weather,
      // the time and the to-do tools in turn).
      rejectedACall = rejectedACall || !rejected.isEmpty
      let rest = request.tools.filter { !excluded.contains($0.name) && !rejected.contains($0.name) }
      let anotherMayServe = rest.contains { tool in
        let topic = TopicWords(tool)
        return topic.relates(prompt) || need.map(topic.relates) == true
      }
      let canExclude =
        exclusions < Self.maximumExclusions && !rejected.isSubset(of: excluded) && anotherMayServe
      if let continuation, !canExclude { return .accept(continuation.standing(turn)) }
      guard canExclude else {
        answerOnly = true
        return .retry
      }
      exclusions += 1
      excluded.formUnion(rejected)
      excluded.formUnion(GuidedToolCalls.unlikelyTools(rest, prompt: prompt, need: need))
      return .retry
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

  /// The answer of a guided reply still being generated, once the reply is an answer object and its `answer`
  /// string has begun: the reply's `need` and the answer's complete words (up to its last white space; empty
  /// while the first word is being written). `nil` for a call, for a reply before its answer has begun, and for
  /// one whose answer is finished (the whole reply is reviewed then).
  static func partialAnswer(in reply: String) -> (need: String?, words: String)? {
    guard let value = parseReply(reply + "\"}"), value["calls"] == nil, let answer = value["answer"]?.stringValue
    else { return nil }
    let words = answer.lastIndex(where: \.isWhitespace).map { String(answer[..<$0]) } ?? ""
    return (value["need"]?.stringValue, words)
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
