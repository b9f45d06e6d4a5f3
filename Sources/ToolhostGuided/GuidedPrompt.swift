public import Foundation
public import ToolhostJSON
import ToolhostSchema
public import ToolhostSession
import ToolhostTools

/// The guided format as the model reads it: the tool list and reply format in the system message, and the
/// transcript as chat messages.
extension GuidedToolCalls {
  /// The text added to the system message when tools may be called: one line per tool with a compact signature
  /// (see ``signature(of:)``) and the first sentence of its description, under it a line for each argument whose
  /// description says more than its name (``argumentNotes(of:)``), then the reply format, examples with
  /// made-up tools and, last, the tools' own examples nearest `prompt` (``examples(for:among:)``), so that the
  /// text before them is the same from question to question (the server's prompt cache keeps it).
  ///
  /// Compact on purpose: a small model on two cores reads about 80 prompt tokens a second, and full schemas for the
  /// example plugins come to over 2,000 tokens; the reply schema enforces the structure anyway.
  public static func toolInstructions(
    tools: [Transcript.ToolDefinition], choice: ToolChoice, today: String? = nil, prompt: String? = nil
  ) -> String {
    var lines = ["You can use these tools:"]
    for tool in tools {
      let summary = summary(of: tool.description)
      lines.append("- \(tool.name)(\(signature(of: tool.parameters)))\(summary.isEmpty ? "" : ": " + summary)")
      for note in argumentNotes(of: tool.parameters) { lines.append("    " + note) }
    }
    lines.append("")
    lines.append(
      "Reply with one JSON object. First write \"need\": what the user asks for, in a few English words. Then, if the "
        + "tools do that, \"calls\": one call per thing asked (several cities, amounts or questions: several "
        + "calls), each with \"tool\" and \"arguments\" (use the tools rather than compute, recall or guess what "
        + "they provide; give only the arguments the user gave or implied)"
        + (choice == .required
          ? ". A tool call is required now."
          : "; otherwise \"answer\": your reply. After the tools' results, answer with them."))
    if let today { lines.append("Today is \(today).") }
    lines.append("")
    // Examples measurably help a 0.5B model (BENCHMARKS.md); their "need" phrases are specific on purpose: generic
    // ones ("a fact about art") get copied ("a fact about weather") along with the decision that follows them. The
    // one answer without a tool is a reply to thanks: answers to questions ("Who painted the Mona Lisa?") taught the
    // model to answer conversions and averages from memory, and a short prompt ("ok") got an example's answer
    // copied; a copied "You're welcome!" is a fitting reply to most prompts that short. The example with two calls
    // is from a domain no offered tool covers, so that its arguments cannot be copied into a real call.
    lines.append("Examples (the tools in them are made up):")
    if choice != .required {
      lines.append("User: Thank you, that was helpful.")
      lines.append(#"{"need": "a reply to thanks", "answer": "You're welcome!"}"#)
    }
    lines.append("User: Send Bob an email saying I am late. (with a tool sendEmail)")
    lines.append(
      #"{"need": "an email to Bob", "calls": [{"tool": "sendEmail", "arguments": {"to": "Bob", "body": "I am late."}}]}"#
    )
    lines.append("User: What are the stock prices of ACME and Globex? (with a tool getStockPrice)")
    lines.append(
      #"{"need": "the stock prices of ACME and Globex", "calls": [{"tool": "getStockPrice", "arguments": "#
        + #"{"symbol": "ACME"}}, {"tool": "getStockPrice", "arguments": {"symbol": "Globex"}}]}"#)
    // Several calls whose arguments differ in more than one place: each thing asked keeps its own values.
    lines.append("User: Ship 2 boxes to Lyon by air, and 5 crates to Porto by sea. (with a tool shipCargo)")
    lines.append(
      #"{"need": "two shipments", "calls": [{"tool": "shipCargo", "arguments": {"count": 2, "item": "box", "#
        + #""city": "Lyon", "mode": "air"}}, {"tool": "shipCargo", "arguments": {"count": 5, "item": "crate", "#
        + #""city": "Porto", "mode": "sea"}}]}"#)
    let own = prompt.map { examples(for: $0, among: tools) } ?? []
    if !own.isEmpty {
      lines.append("Examples of the tools above:")
      for (tool, example) in own {
        let call: JSONValue = ["tool": .string(tool), "arguments": example.arguments]
        if let asked = example.prompt {
          let need = asked.trimmingCharacters(in: CharacterSet(charactersIn: " ?!.")).lowercased()
          lines.append("User: \(asked)")
          lines.append((["need": .string(need), "calls": [call]] as JSONValue).serialized())
        } else {
          lines.append("A call of \(tool): " + call.serialized())
        }
      }
    }
    return lines.joined(separator: "\n")
  }

  /// The most of the tools' own examples the instructions show.
  static let examplesShown = 3
  /// The fewest words an example shares with the question to be shown.
  static let wordsAnExampleShares = 2

  /// The tools' own examples (``Transcript/ToolDefinition/examples``) nearest `prompt`, best first: those sharing
  /// the most words (``ToolRanking/terms(in:)``, numbers aside) with it, in their prompt or their arguments' text,
  /// at most ``examplesShown`` and two of one tool; none that shares fewer than ``wordsAnExampleShares``, so that an
  /// example never draws the model to a tool the question is not about. A small model copies what it is shown: an
  /// example that shared one word ("weather") with a question about a recipe and the weather in Cairo was given back
  /// as the answer, and one that shared "feet" turned "5 feet to meters" into its own metres to feet.
  static func examples(
    for prompt: String, among tools: [Transcript.ToolDefinition]
  ) -> [(tool: String, example: ToolExample)] {
    func words(_ text: String) -> Set<String> {
      Set(ToolRanking.terms(in: text).filter { !$0.allSatisfy(\.isNumber) })
    }
    let asked = words(prompt)
    guard !asked.isEmpty else { return [] }
    var scored: [(score: Int, tool: String, example: ToolExample)] = []
    for tool in tools {
      for example in tool.examples.prefix(ToolExample.mostPerTool) {
        let text = ([example.prompt ?? ""] + texts(in: example.arguments)).joined(separator: " ")
        let score = words(text).intersection(asked).count
        if score >= wordsAnExampleShares { scored.append((score, tool.name, example)) }
      }
    }
    // A stable sort: of equal scores, the tool listed first and its examples in their order.
    let ranked = scored.enumerated().sorted { first, second in
      first.element.score != second.element.score
        ? first.element.score > second.element.score : first.offset < second.offset
    }
    var chosen: [(tool: String, example: ToolExample)] = []
    for (_, candidate) in ranked where chosen.count < examplesShown {
      guard chosen.count(where: { $0.tool == candidate.tool }) < 2 else { continue }
      chosen.append((candidate.tool, candidate.example))
    }
    return chosen
  }

  /// Today's date as the instructions give it: `Wednesday, 25 November 2026`, in the local time zone.
  public static func today(_ date: Date = Date()) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.dateFormat = "EEEE, d MMMM yyyy"
    return formatter.string(from: date)
  }

  /// What each argument of a schema is, as its description says, one line each (`location: The city, in the form
  /// 'City, ST'`): the whole description, cut to about ``argumentNoteLength`` characters, of the arguments whose
  /// description says more than their name (not `city: The city.`). The signature says what a value may be; this,
  /// what it is for and in what form, which the grammar cannot hold ("in the format 'City, State'", a unit, which
  /// of two places). Whole, not its first sentence: a second one often qualifies the first ("'City, Country' where
  /// there is no state"), and few run long (BFCL's: 49 characters at the median, 2 % over 160).
  ///
  /// The members of an object argument, or of the objects an array argument holds, follow it by their path
  /// (`body.windStrength`, `people[].age`), one level down.
  static func argumentNotes(of schema: JSONValue) -> [String] {
    argumentNotes(of: JSONSchema.inliningReferences(in: schema, maximumDepth: 4), path: "", depth: 0)
  }

  private static func argumentNotes(of schema: JSONValue, path: String, depth: Int) -> [String] {
    guard let properties = schema["properties"]?.objectValue else { return [] }
    return properties.flatMap { name, property -> [String] in
      var notes: [String] = []
      if let description = property["description"]?.stringValue {
        let note = cut(description.split(whereSeparator: \.isNewline).joined(separator: " "), to: argumentNoteLength)
        let named = Set(TopicWords.split(name))
        if TopicWords.contentWords(note).contains(where: { !named.contains($0) }) {
          notes.append("\(path)\(name): \(note)")
        }
      }
      guard depth == 0 else { return notes }
      if property["properties"] != nil {
        notes += argumentNotes(of: property, path: path + name + ".", depth: depth + 1)
      } else if let items = property["items"], items["properties"] != nil {
        notes += argumentNotes(of: items, path: path + name + "[].", depth: depth + 1)
      }
      return notes
    }
  }

  /// The most characters of an argument's description ``argumentNotes(of:)`` shows.
  static let argumentNoteLength = 250

  /// A schema's properties as a compact signature: `city: string, month?: integer 1..12, units?: "c"|"f"`,
  /// `day: string YYYY-MM-DD`, `code: string /^[A-Z]{3}$/` (`?` marks optional properties; arrays are `T[]`, nested
  /// objects `{…}`; a string's format as the form of its values, a short pattern as it is).
  public static func signature(of schema: JSONValue) -> String {
    signature(of: JSONSchema.inliningReferences(in: schema, maximumDepth: 4), depth: 0)
  }

  private static func signature(of schema: JSONValue, depth: Int) -> String {
    guard let properties = schema["properties"]?.objectValue else { return "" }
    let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
    return properties.map { name, property in
      "\(name)\(required.contains(name) ? "" : "?"): \(typeText(property, depth: depth))"
    }.joined(separator: ", ")
  }

  private static func typeText(_ schema: JSONValue, depth: Int) -> String {
    if let values = schema["enum"]?.arrayValue {
      return values.prefix(12).map { $0.serialized() }.joined(separator: "|") + (values.count > 12 ? "|…" : "")
    }
    if let value = schema["const"] { return value.serialized() }
    if let members = schema["allOf"]?.arrayValue, members.count == 1, schema["type"] == nil {
      return typeText(members[0], depth: depth)  // a described reference, as Pydantic writes one
    }
    if let options = (schema["anyOf"] ?? schema["oneOf"])?.arrayValue {
      return options.map { typeText($0, depth: depth) }.joined(separator: "|")
    }
    var type =
      schema["type"]?.stringValue ?? schema["type"]?.arrayValue?.compactMap(\.stringValue).joined(
        separator: "|") ?? (schema["properties"] != nil ? "object" : "any")
    switch type {
    case "array":
      let item = schema["items"].map { typeText($0, depth: depth + 1) } ?? "any"
      type = (item.contains("|") || item.contains(" ") ? "(\(item))" : item) + "[]"
    case "object" where depth < 2 && schema["properties"] != nil:
      type = "{\(signature(of: schema, depth: depth + 1))}"
    case "string":
      // What the grammar holds the value to (``stringConstraints(_:)``, the one rule for both), said first, so that
      // the model writes it so from the start: a format by the form of its values, a short pattern as it is.
      let held = stringConstraints(schema.objectValue ?? [:])
      let format = schema["format"]?.stringValue ?? ""
      if let shown = Self.formatShown[format],
        held["format"] != nil || held["pattern"]?.stringValue == formatPatterns[format]
      {
        type += " " + shown
      } else if let pattern = held["pattern"]?.stringValue, pattern.count <= 40 {
        type += " /" + pattern + "/"
      }
    case "integer", "number":
      let low = schema["minimum"].map { $0.serialized() }
      let high = schema["maximum"].map { $0.serialized() }
      if low != nil || high != nil { type += " \(low ?? "")..\(high ?? "")" }
    default:
      break
    }
    return type
  }

  /// How the signature shows a string's `format`: as the form a value takes.
  static let formatShown: [String: String] = [
    "date": "YYYY-MM-DD", "date-time": "YYYY-MM-DDTHH:MM:SSZ", "time": "HH:MM:SSZ", "uuid": "uuid",
    "email": "email", "uri": "uri",
  ]

  /// The first sentence of a description, at most about 200 characters.
  static func summary(of description: String) -> String {
    let flat = description.split(whereSeparator: \.isNewline).joined(separator: " ")
    var end = flat.endIndex
    var search = flat.startIndex
    // A sentence ends at a full stop followed by the end or by a space and a capital ("e.g. km" goes on).
    while let dot = flat[search...].firstIndex(of: ".") {
      let next = flat.index(after: dot)
      if next == flat.endIndex { break }
      if flat[next] == " " {
        let after = flat.index(after: next)
        if after == flat.endIndex || flat[after].isUppercase {
          end = next
          break
        }
      }
      search = next
    }
    return cut(String(flat[..<end]), to: 200)
  }

  /// `text`, or when it is longer than `limit` characters its first words within them and "…".
  static func cut(_ text: String, to limit: Int) -> String {
    guard text.count > limit else { return text }
    var start = String(text.prefix(limit))
    if let space = start.lastIndex(of: " ") { start = String(start[..<space]) }
    return start + "…"
  }

  /// The transcript as chat messages for guided calling.
  ///
  /// The instructions (plus ``toolInstructions(tools:choice:today:)`` when `tools` is not empty) are the `system`
  /// message; prompts are `user` messages; answers are `assistant` messages holding `{"answer": …}` and each round
  /// of calls one `assistant` message holding `{"calls": [{"tool": …, "arguments": …}, …]}` (when `tools` is empty,
  /// answers stay plain text); each round's outputs are one `user` message naming each tool, with its result as
  /// ``resultText(_:)`` renders it (several results of one tool also side by side, ``comparison(of:calls:)``), and
  /// what to do next: with `followUp` ``GuidedFollowUp/answer`` an answer in plain
  /// words with the results' figures, with `strict` one that copies them and adds nothing (the second try after an
  /// answer that did not state what they say, ``answerProblem(_:in:)``); a first round that found nothing
  /// (``foundNothing(_:)``) may be followed by one more call.
  public static func messages(
    from transcript: Transcript, tools: [Transcript.ToolDefinition], choice: ToolChoice,
    followUp: GuidedFollowUp = .answerOrCall, strict: Bool = false, today: String? = nil
  ) -> [JSONValue] {
    let instructions =
      tools.isEmpty
      ? nil : toolInstructions(tools: tools, choice: choice, today: today, prompt: transcript.lastPrompt)
    return messages(from: transcript, tools: tools, instructions: instructions, followUp: followUp, strict: strict)
  }

  /// As ``messages(from:tools:choice:followUp:strict:today:)``, with the text describing `tools` already made
  /// (``ToolOffer/instructions``, `nil` when `tools` is empty), so that a turn's re-asks do not make it again.
  package static func messages(
    from transcript: Transcript, tools: [Transcript.ToolDefinition], instructions: String?,
    followUp: GuidedFollowUp, strict: Bool
  ) -> [JSONValue] {
    let guided = !tools.isEmpty
    let extra = guided ? instructions : nil
    var messages: [JSONValue] = []
    var sawInstructions = false
    var lastPrompt = ""
    var round: [Transcript.ToolOutput] = []
    var roundsForPrompt = 0
    var callsForPrompt: [Transcript.ToolCall] = []
    func flushRound() {
      guard !round.isEmpty else { return }
      let question = lastPrompt.count > 300 ? String(lastPrompt.prefix(300)) + "…" : lastPrompt
      var parts = round.map { output in
        output.isError
          ? "The call to \(output.toolName) failed:\n\(output.text)"
          : "Result of \(output.toolName):\n\(resultText(output))"
      }
      let compared = ComparedResults(round, calls: callsForPrompt)
      if let sideBySide = compared?.sideBySide { parts.append(sideBySide) }
      let failed = round.contains(where: \.isError)
      let nothing = roundsForPrompt == 1 && round.contains(where: foundNothing)
      let uncovered = roundsForPrompt == 1 ? uncoveredParts(of: lastPrompt, by: callsForPrompt, tools: tools) : []
      let undone =
        roundsForPrompt == 1 && !failed
        ? actionLeftUndone(prompt: lastPrompt, calls: callsForPrompt, round: round, tools: tools) : nil
      let next = nextStep(
        question: question, undone: undone?.name, failed: failed, uncovered: uncovered, nothing: nothing,
        strict: strict, followUp: followUp)
      parts.append(next)
      if choosing(among: compared, for: lastPrompt) != nil {
        parts.append(
          "First say which figure decides the choice, and whether the one with the highest or the lowest value is "
            + "wanted; then name that one in the answer.")
      }
      messages.append(["role": "user", "content": .string(parts.joined(separator: "\n\n"))])
      round = []
    }
    for entry in transcript {
      if case .toolOutput(let output) = entry {
        round.append(output)
        continue
      }
      flushRound()
      switch entry {
      case .instructions(let i):
        let text = [i.text, extra ?? ""].filter { !$0.isEmpty }.joined(separator: "\n\n")
        if !text.isEmpty { messages.append(["role": "system", "content": .string(text)]) }
        sawInstructions = true
      case .prompt(let p):
        lastPrompt = p.text
        roundsForPrompt = 0
        callsForPrompt = []
        messages.append(["role": "user", "content": .string(p.text)])
      case .response(let r):
        let content: String = guided ? (["answer": .string(r.text)] as JSONValue).serialized() : r.text
        messages.append(["role": "assistant", "content": .string(content)])
      case .toolCalls(let calls):
        roundsForPrompt += 1
        callsForPrompt += calls.calls
        let list: [JSONValue] = calls.calls.map { call in
          ["tool": .string(call.toolName), "arguments": call.argumentsText.map { .string($0) } ?? call.arguments]
        }
        let content: JSONValue = ["calls": .array(list)]
        messages.append(["role": "assistant", "content": .string(content.serialized())])
      case .toolOutput, .reasoning:
        break
      }
    }
    flushRound()
    if !sawInstructions, let extra {
      messages.insert(["role": "system", "content": .string(extra)], at: 0)
    }
    return messages
  }

  /// What a round's results ask of the model next, in the order that decides it: a call that does what the request
  /// also asks (`undone`, the tool's name), a failed call fixed, the parts of the request the calls left out, a
  /// broader search when nothing was found, or the answer (strictly from the results, in plain words, or with
  /// another call allowed).
  static func nextStep(
    question: String, undone: String?, failed: Bool, uncovered: [String], nothing: Bool, strict: Bool,
    followUp: GuidedFollowUp
  ) -> String {
    if let undone {
      return
        "The request also asks for what \(undone) does. Call it with what these results show, or answer the "
        + "user's request (\"\(question)\") with them."
    } else if failed {
      return "Fix the call, or answer the user's request (\"\(question)\") without it, saying what failed."
    } else if !uncovered.isEmpty && !nothing {
      return
        "The request also asks: \(uncovered.map { "\"\($0)\"" }.joined(separator: " and ")). Call the tools for "
        + "that, or answer the user's request (\"\(question)\") with these results."
    } else if nothing {
      return
        "Nothing was found. Call the tool once more with a broader argument if the result suggests one, or "
        + "tell the user (\"\(question)\") that nothing was found."
    } else if strict {
      return
        "Answer the user's request (\"\(question)\") using only what these results say: copy their names and "
        + "figures exactly, with their units, and add nothing they do not say."
    } else if followUp.answersOnly {
      return
        "Now answer the user's request (\"\(question)\") with these results, in plain words; give their figures "
        + "as they are, with their units."
    } else {
      return
        "Now answer the user's request (\"\(question)\") with these results, or call another tool if it needs more."
    }
  }
}
