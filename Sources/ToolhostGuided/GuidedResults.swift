import Foundation
public import ToolhostJSON
public import ToolhostSession

/// Tool results as a small model reads them, and as a plain statement when its answer cannot be trusted.
extension GuidedToolCalls {
  /// The longest string a result shows the model; longer ones (provenance notes, licences) are left out.
  public static let longestResultString = 120

  /// A tool output as the guided messages show it: the tool's own rendering for people (when it gave one beside a
  /// structured value), followed, for a value holding records (a list of objects), by the members it does not
  /// show, as compact `name: value` lines (``digest(of:)``); without a rendering, the whole value so; a failure's
  /// text as it is.
  ///
  /// Raw JSON with long provenance strings is hard for a small model to read: the weather tool's 80-token `source`
  /// note was read on every ask, and figures were misread among quoted keys. The digest keeps every figure and name.
  public static func resultText(_ output: Transcript.ToolOutput) -> String {
    guard !output.isError, let value = output.value else { return output.text }
    guard let summary = output.summary?.trimmingCharacters(in: .whitespacesAndNewlines), !summary.isEmpty else {
      return digest(of: value)
    }
    // Only records (a list of objects, as recipes with their ingredients) are added to the tool's own rendering,
    // and only what it does not show: the model copies what it is shown, so shown twice is answered twice.
    guard let object = value.objectValue,
      object.contains(where: { $0.value.arrayValue?.contains(where: { $0.objectValue != nil }) ?? false })
    else { return summary }
    let shown = AnswerFigures.numbers(in: summary)
    let lowered = summary.lowercased()
    var rest = JSONObject()
    for (name, member) in object {
      switch member {
      case .string(let text) where lowered.contains(text.lowercased()): continue
      case .integer, .real:
        if let number = member.doubleValue, shown.contains(where: { AnswerFigures.matches($0, [abs(number)]) }) {
          continue
        }
        rest[name] = member
      default: rest[name] = member
      }
    }
    let details = digest(of: .object(rest))
    return details.isEmpty ? summary : "\(summary)\nDetails:\n\(details)"
  }

  /// A structured value as compact lines: an object's members as `name: value`, one per line at the top level;
  /// nested objects as `{name: value, …}`, lists as `[a, b]`, and a list of objects one numbered line each. Strings
  /// longer than ``longestResultString`` and empty members are left out.
  public static func digest(of value: JSONValue) -> String {
    switch value {
    case .object(let object):
      return object.compactMap { name, member in
        if case .array(let items) = member, items.contains(where: { $0.objectValue != nil }) {
          let lines = items.enumerated().map { "  \($0.offset + 1). \(inline($0.element))" }
          return lines.isEmpty ? "\(name): none" : "\(name):\n" + lines.joined(separator: "\n")
        }
        return inlineMember(member).map { "\(name): \($0)" }
      }.joined(separator: "\n")
    case .array(let items) where items.contains(where: { $0.objectValue != nil }):
      return items.enumerated().map { "\($0.offset + 1). \(inline($0.element))" }.joined(separator: "\n")
    default:
      return inline(value)
    }
  }

  private static func inlineMember(_ value: JSONValue) -> String? {
    switch value {
    case .string(let text) where text.count > longestResultString || text.isEmpty: nil
    case .null: nil
    default: inline(value)
    }
  }

  private static func inline(_ value: JSONValue) -> String {
    switch value {
    case .object(let object):
      let members = object.compactMap { name, member in inlineMember(member).map { "\(name): \($0)" } }
      return "{" + members.joined(separator: ", ") + "}"
    case .array(let items):
      return "[" + items.map(inline).joined(separator: ", ") + "]"
    case .string(let text):
      return text
    default:
      return value.serialized()
    }
  }

  /// The results of several calls of one tool side by side, for a question that compares them ("Which is warmer
  /// in March, Madrid or Athens?"): for each number the structured results all hold and do not all share, which
  /// call has the highest and which the lowest, each named by the argument that tells the calls apart. `nil` when
  /// fewer than two calls of one tool succeeded, or nothing tells them apart.
  ///
  /// A small model compares figures poorly (Madrid "warmer" at 16.3 °C than Athens at 16.6 °C); the order is
  /// worked out here and shown beside the results, where the model reads it.
  public static func comparison(of outputs: [Transcript.ToolOutput], calls: [Transcript.ToolCall]) -> String? {
    ComparedResults(outputs, calls: calls)?.sideBySide
  }

  /// Whether a successful output found nothing: its value is an empty list, or an object whose lists are all empty
  /// (`{"count": 0, "recipes": []}`). Such a result may be followed by one more call (a broader search) before the
  /// answer.
  public static func foundNothing(_ output: Transcript.ToolOutput) -> Bool {
    guard !output.isError, let value = output.value else { return false }
    if case .array(let items) = value { return items.isEmpty }
    guard let object = value.objectValue else { return false }
    let lists = object.compactMap { $0.value.arrayValue }
    return !lists.isEmpty && lists.allSatisfy(\.isEmpty)
  }

  /// The outputs of the calls made since the transcript's last prompt, in order.
  public static func outputsSinceLastPrompt(_ transcript: Transcript) -> [Transcript.ToolOutput] {
    var outputs: [Transcript.ToolOutput] = []
    for entry in transcript.entries.reversed() {
      if case .prompt = entry { break }
      if case .toolOutput(let output) = entry { outputs.insert(output, at: 0) }
    }
    return outputs
  }

  /// The parts of `prompt` that `calls` leave undone: its clauses (split at commas, semicolons, sentence ends and
  /// "and" in six languages) that hold a number (also one written as a word, "one gallon") that no call's
  /// arguments hold, or that are about what an offered
  /// tool does (``TopicWords``) and hold a quoted text or a name (a capitalised word past the prompt's start, not a
  /// month or a day) that no call's arguments hold (a translated name counts), or no word about a called tool or
  /// in its arguments (or fewer than a tool not called). "Convert 10 km to
  /// miles and 20 kg to pounds" with only the call for 10 km → `["20 kg to pounds"]`; "What's on my to-do list,
  /// and what's the weather in Dublin in June?" with only `todoList` → `["what's the weather in Dublin in June"]`.
  public static func uncoveredParts(
    of prompt: String, by calls: [Transcript.ToolCall], tools: [Transcript.ToolDefinition]
  ) -> [String] {
    guard !calls.isEmpty else { return [] }
    let (numbers, argumentWords) = argumentContent(of: calls)
    func covered(_ word: Substring) -> Bool {
      let lowered = Substring(word.lowercased())
      return argumentWords.contains { $0 == lowered || GroundingText.sameStem($0, lowered) }
    }
    let calledTools = tools.filter { tool in calls.contains { $0.toolName == tool.name } }
    let called = calledTools.map { TopicWords($0) }
    let offered = tools.map { TopicWords($0) }
    // Tools of another family than every called one: within a family ("todoList", "todoClear") their words tell
    // the members apart too poorly to say a clause is about another.
    let families = Set(calledTools.compactMap { TopicWords.family(of: $0.name) })
    let others = tools.filter { TopicWords.family(of: $0.name).map { !families.contains($0) } ?? true }
      .filter { tool in !calls.contains { $0.toolName == tool.name } }.map { TopicWords($0) }
    var parts: [String] = []
    var isFirst = true
    for clause in PromptList.clauses(prompt) {
      defer { isFirst = false }
      let figures = AnswerFigures.numbers(in: clause).map(\.value) + spelledNumbers(in: clause)
      if figures.contains(where: { !numbers.contains($0) }) {
        parts.append(clause)
        continue
      }
      // A quotation or a name counts only in a clause about what an offered tool does: "the stock price of Apple"
      // is left for the answer to decline.
      let servable = offered.contains(where: { $0.relates(clause) })
      if servable,
        PromptList.quotations(clause).contains(where: { quote in
          !GroundingText.words(of: quote.lowercased()).contains(where: covered)
        })
      {
        parts.append(clause)
        continue
      }
      let words = clause.split { !($0.isLetter || $0.isNumber || $0 == "'") }
      // A capitalised word of what a called tool is about names no thing: German capitalises every noun ("Was
      // steht auf meiner To-do-Liste?" after `todoList`), and a compound counts whole.
      let topical = Set(
        clause.split { !($0.isLetter || $0.isNumber || $0 == "-") }.filter { token in
          called.contains { $0.matches(token.replacingOccurrences(of: "-", with: " ")) > 0 }
        }.flatMap { $0.split(separator: "-").map { $0.lowercased() } })
      let names = words.enumerated().filter { index, word in
        !(isFirst && index == 0) && word.count > 1 && word.first?.isUppercase == true
          && !GroundingVocabulary.dayWords.contains(word.lowercased()) && !word.contains("'")
          && !topical.contains(word.lowercased())
      }
      // A clause that is only names ("and in London") continues a list, whatever it is about.
      let bare = TopicWords.contentWords(clause).allSatisfy { word in
        names.contains { $0.element.lowercased() == word }
      }
      if servable || bare, names.contains(where: { !covered($0.element) }) {
        parts.append(clause)
        continue
      }
      // A clause about no called tool, or more about a tool of another family than about any called one ("What's
      // on my to-do list" after only a weather call).
      // A compound is read whole and by its parts too: "To-do-Liste" is "todoliste", and "liste" (list).
      let content = TopicWords.contentWords(clause)
      let spaced = clause.replacingOccurrences(of: "-", with: " ")
      let calledMatch = called.map { max($0.matches(clause), $0.matches(spaced)) }.max() ?? 0
      let aboutAnother = others.contains { $0.matches(clause) > calledMatch }
      guard !content.isEmpty, !content.contains(where: { covered(Substring($0)) }),
        !called.contains(where: { $0.relates(clause) || $0.relates(spaced) }) || aboutAnother, servable
      else { continue }
      parts.append(clause)
    }
    return parts
  }

  /// What `calls`' arguments hold: their numbers, and their words (with the words of the name of each flag set:
  /// `includeDone: true` covers "including the finished ones" as far as "including" goes).
  static func argumentContent(of calls: [Transcript.ToolCall]) -> (numbers: [Double], words: Set<Substring>) {
    var numbers: [Double] = []
    var text = ""
    for call in calls {
      AnswerFigures.collect(call.arguments, into: &numbers)
      text += " " + call.arguments.serialized()
      for (name, value) in call.arguments.objectValue ?? [:] where value.boolValue == true {
        text += " " + TopicWords.split(name).joined(separator: " ")
      }
    }
    return (numbers, GroundingText(text).words)
  }

  /// Whether `call`'s arguments hold nothing the prompt says: no number or word of theirs is in it (flags do not
  /// count; a call without arguments takes nothing).
  static func takesNothing(from prompt: String, _ call: Transcript.ToolCall) -> Bool {
    let text = GroundingText(prompt)
    var leaves: [GroundingLeaf] = []
    collectLeaves(call.arguments, schema: [:], into: &leaves)
    return !leaves.contains { text.mentions($0) }
  }

  /// The numbers from 1 to 12 written as words of three letters or more in `text` ("one gallon", "zwei"), in the
  /// languages of ``GroundingVocabulary/numberWords``, and 0.5 for "half" in those languages ("half a cup").
  static func spelledNumbers(in text: String) -> [Double] {
    // Words that are also articles ("une", "eine", "una", "uno", "uma") are left out.
    let articles: Set<String> = ["une", "ein", "eine", "una", "uno", "uma", "single"]
    // "to-dos" is one word, not "to" and "dos" (two, in Spanish).
    let words = text.lowercased().replacingOccurrences(of: "-", with: "").split { !$0.isLetter }.map(String.init)
      .filter {
        $0.count >= 3 && !articles.contains($0)
      }
    let halves: Set<String> = ["half", "halb", "halbe", "halben", "demi", "demie", "moitié", "mezzo", "mezza", "meio"]
    return GroundingVocabulary.numberWords.compactMap { number, names in
      words.contains(where: names.contains) ? Double(number) : nil
    } + (words.contains(where: halves.contains) ? [0.5] : [])
  }

  /// The calls made since the transcript's last prompt, in order.
  static func callsSinceLastPrompt(_ transcript: Transcript) -> [Transcript.ToolCall] {
    var calls: [Transcript.ToolCall] = []
    for entry in transcript.entries.reversed() {
      if case .prompt = entry { break }
      if case .toolCalls(let round) = entry { calls.insert(contentsOf: round.calls, at: 0) }
    }
    return calls
  }

  /// The most words a follow-up prompt has whose calls keep what the conversation fixed before
  /// (``keepingWhatTheConversationFixed(_:of:in:)``): "How about Madrid?", "And in Paris?", "¿Y en Lima?".
  static let mostWordsOfAFollowUp = 6

  /// `call` with the arguments the last successful call of the same tool for an earlier prompt had and it lacks,
  /// when the last prompt is a short follow-up (at most ``mostWordsOfAFollowUp`` words) and `call` is of its first
  /// round: "What's Lisbon like in March?" then "How about Madrid?" asks for March again, though the follow-up
  /// names only the city. An argument the call gives, or the tool's schema does not have, is left as it is.
  static func keepingWhatTheConversationFixed(
    _ call: Transcript.ToolCall, of tool: Transcript.ToolDefinition, in transcript: Transcript
  ) -> Transcript.ToolCall {
    guard roundsSinceLastPrompt(transcript) == 0, var arguments = call.arguments.objectValue,
      let prompt = transcript.lastPrompt,
      prompt.split(whereSeparator: \.isWhitespace).count <= mostWordsOfAFollowUp
    else { return call }
    let properties = tool.parameters["properties"]?.objectValue ?? [:]
    // The entries before the last prompt, newest first: the last call of this tool whose output was no error.
    var beforePrompt = false
    var failed: Set<String> = []
    var earlier: JSONObject?
    search: for entry in transcript.entries.reversed() {
      switch entry {
      case .prompt: beforePrompt = true
      case .toolOutput(let output) where beforePrompt && output.isError: failed.insert(output.callID)
      case .toolCalls(let round) where beforePrompt:
        if let match = round.calls.last(where: { $0.toolName == call.toolName && !failed.contains($0.id) }) {
          earlier = match.arguments.objectValue
          break search
        }
      default: break
      }
    }
    guard let earlier else { return call }
    var changed = false
    for (name, value) in earlier where arguments[name] == nil && properties[name] != nil {
      arguments[name] = value
      changed = true
    }
    guard changed else { return call }
    var kept = call
    kept.arguments = .object(arguments)
    return kept
  }

  /// How many rounds of calls were made since the transcript's last prompt.
  static func roundsSinceLastPrompt(_ transcript: Transcript) -> Int {
    var rounds = 0
    for entry in transcript.entries.reversed() {
      if case .prompt = entry { break }
      if case .toolCalls = entry { rounds += 1 }
    }
    return rounds
  }

  /// The error a failed call's output reports: the `error` object of a ``ToolCallError`` rendered as JSON
  /// (`{"error": {"message": …, "data": …}}`), or the whole value when it is JSON without one; `nil` for text.
  static func reportedError(_ output: Transcript.ToolOutput) -> JSONValue? {
    guard let parsed = try? JSONValue.parse(output.text) else { return nil }
    return parsed["error"] ?? parsed
  }

  /// What a failed call's output says, for a person: the `message` of its ``reportedError(_:)``, or the text as it
  /// is.
  static func failureMessage(_ output: Transcript.ToolOutput) -> String {
    reportedError(output)?["message"]?.stringValue ?? output.text
  }

  /// The answer the results give by themselves, for ``GuidedFollowUp/results``: each result as its tool rendered
  /// it for people, one per line (a result that found nothing is left out when another found something), led by
  /// what they say to a comparison the request asks for (``ComparedResults/verdict(for:)``). A rendering that is
  /// JSON is shown as its ``digest(of:)``.
  ///
  /// `nil`, and the model writes the answer, unless the transcript ends with results that ``answersResults(_:tools:)``
  /// asks the answer for, every call since the last prompt succeeded and gave text for people (``rendering(_:)``),
  /// and the request asks for no choice the figures leave open: a comparative ("warmer", "more") or "which",
  /// "better" or "best" without a verdict. A refused call (``isRefusal(_:)``: "Delete
  /// to-do #3" in `ask` with no terminal to approve it on) is stated as its failure: no other call can fix it.
  public static func answerFromResults(_ transcript: Transcript, tools: [Transcript.ToolDefinition]) -> String? {
    // Checked first: most requests (every first one of a turn) do not follow results.
    guard case .toolOutput = transcript.entries.last else { return nil }
    let outputs = outputsSinceLastPrompt(transcript)
    let prompt = transcript.lastPrompt ?? ""
    guard !outputs.isEmpty, outputs.allSatisfy({ !$0.isError || isRefusal($0) }) else { return nil }
    if outputs.contains(where: \.isError) {
      // A refused call cannot be fixed by another: the answer says so, beside what the others found.
      guard
        roundsSinceLastPrompt(transcript) > 1
          || uncoveredParts(of: prompt, by: callsSinceLastPrompt(transcript), tools: tools).isEmpty
      else { return nil }
    } else {
      guard answersResults(transcript, tools: tools) else { return nil }
    }
    let found = outputs.filter { !foundNothing($0) }
    var lines: [String] = []
    for output in found.isEmpty ? outputs : found {
      if output.isError {
        lines.append(failureLine(output))
        continue
      }
      guard let summary = rendering(output) else { return nil }
      // A rendering that is JSON (an MCP server's text content often is) is shown as its compact lines.
      let json = summary.first == "{" || summary.first == "[" ? try? JSONValue.parse(summary) : nil
      lines.append(json.map(digest(of:)) ?? summary)
    }
    if let verdict = ComparedResults(outputs, calls: callsSinceLastPrompt(transcript))?.verdict(for: prompt) {
      lines.insert(verdict, at: 0)
    } else if asksForAChoice(prompt) {
      return nil
    }
    return lines.joined(separator: "\n")
  }

  /// What a successful output says for people, trimmed: the tool's own rendering of its structured value
  /// (``Transcript/ToolOutput/summary``), or a plain-text result whole (a plugin whose `output` is `text`, as the
  /// to-do list's "#1 [ ] buy milk" lines), since that text is already written for people. `nil` for a failure,
  /// a value without a rendering, a text cut to fit the output limit, or nothing but white space.
  static func rendering(_ output: Transcript.ToolOutput) -> String? {
    guard !output.isError else { return nil }
    let text: String?
    if let summary = output.summary {
      text = summary
    } else if output.value == nil, output.charactersCut == nil {
      text = output.text
    } else {
      text = nil
    }
    guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
    return trimmed
  }

  /// A failed call as the answers built from the results state it: `todoRemove failed: MESSAGE`.
  static func failureLine(_ output: Transcript.ToolOutput) -> String {
    "\(output.toolName) failed: \(failureMessage(output))"
  }

  /// Whether a failed output is a refusal (``ToolCallError`` code `refused`: the user did not approve the call), which
  /// no other call can fix.
  static func isRefusal(_ output: Transcript.ToolOutput) -> Bool {
    output.isError && reportedError(output)?["code"]?.stringValue == "refused"
  }

  /// Whether `prompt` asks for a choice or a judgement between things: it holds a comparative
  /// (``GroundingVocabulary/comparatives``), "which", "better", "best", "worse" or "worst", or any word before
  /// "than" ("warmer than usual").
  static func asksForAChoice(_ prompt: String) -> Bool {
    let words = GroundingText.words(of: prompt.lowercased())
    return words.contains { word in
      GroundingVocabulary.comparative(for: String(word)) != nil
        || ["which", "better", "best", "worse", "worst", "than"].contains(word)
    }
  }

  /// An answer built from the results alone, for when the model's answer states what they do not say: each result
  /// as the tool rendered it (or its digest), and each failure as the tool reported it; for a question that compares
  /// several results of one tool, first what they say to it (``ComparedResults/verdict(for:)``), else the results
  /// side by side.
  public static func statement(fromResultsIn transcript: Transcript) -> String {
    let outputs = outputsSinceLastPrompt(transcript)
    guard !outputs.isEmpty else { return "" }
    var lines = [
      outputs.count == 1 ? "Here is what \(outputs[0].toolName) returned:" : "Here is what the tools returned:"
    ]
    for output in outputs {
      let body: String
      if output.isError {
        body = failureLine(output)
      } else if let summary = rendering(output) {
        body = summary
      } else {
        body = output.value.map(digest(of:)) ?? output.text
      }
      lines.append(outputs.count == 1 ? body : "- " + body.replacingOccurrences(of: "\n", with: "\n  "))
    }
    if let compared = ComparedResults(outputs, calls: callsSinceLastPrompt(transcript)) {
      if let verdict = compared.verdict(for: transcript.lastPrompt ?? "") {
        lines.insert(verdict, at: 0)
      } else if let sideBySide = compared.sideBySide {
        lines.append(sideBySide)
      }
    }
    return lines.joined(separator: "\n")
  }
}
