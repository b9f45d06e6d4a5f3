import Foundation
public import ToolhostJSON
public import ToolhostSession

/// Checking an answer given after tool results: does it state what they say?
extension GuidedToolCalls {
  /// What is wrong with `answer` as the answer to the transcript's last prompt once its calls' results are in, or
  /// `nil` when nothing is found (always `nil` when no call was made for that prompt).
  ///
  /// Wrong is: an empty answer; the question echoed (the answer's words are the prompt's, with no figure); a figure
  /// found in neither the results nor the conversation (see ``AnswerFigures``; "57°C" when the result says
  /// 57 mm of rain is not caught, "350" ounces in a kilogram is); every call failed and the answer does not say so;
  /// of several results of one tool, one left out, a figure given for the wrong one, or a comparison they
  /// contradict (``ComparedResults``). With `reply`, the guided reply the answer came in: when it says by which
  /// figure it chooses among several results (``ComparedResults/choiceSchema``), naming another call first than
  /// the one that figure puts first ("Madrid is warmer" when Athens has the highest `averageHigh`).
  public static func answerProblem(_ answer: String, in transcript: Transcript, reply: JSONValue? = nil) -> String? {
    let outputs = outputsSinceLastPrompt(transcript)
    guard !outputs.isEmpty else { return nil }
    let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
    if text.isEmpty { return "the answer is empty" }
    let prompt = transcript.lastPrompt ?? ""
    let lowered = text.lowercased()
    if ["the user's request", "result of ", "details:", "call the tool once more", "the call to ", "my request"]
      .contains(where: lowered.contains)
    {
      return "the answer repeats the instructions"
    }
    let answerFigures = AnswerFigures.numbers(in: text)
    let resultText = outputs.map { [$0.text, $0.summary ?? ""].joined(separator: "\n") }.joined(separator: "\n")
    if echoes(text, prompt, results: resultText) { return "the answer repeats the question" }
    var known: [Double] = []
    for output in outputs {
      known += AnswerFigures.numbers(in: output.text).map(\.value)
      if let summary = output.summary { known += AnswerFigures.numbers(in: summary).map(\.value) }
      if let value = output.value { AnswerFigures.collect(value, into: &known) }
    }
    known += AnswerFigures.numbers(in: transcript.groundingText).map(\.value)
    if let stray = answerFigures.first(where: { !AnswerFigures.matches($0, known) }) {
      return "the figure \(stray.text) is in no result"
    }
    if outputs.allSatisfy(\.isError), !AnswerFigures.saysFailure(text) {
      return "every call failed and the answer does not say so"
    }
    let calls = callsSinceLastPrompt(transcript)
    // A question that asks which of several is warmer (or rainier) is answered by naming the one the results put
    // first.
    let compared = ComparedResults(outputs, calls: calls)
    let chosen = compared.flatMap { compared in compared.choice(inReply: reply).flatMap(compared.lead(by:)) }
    let namesTheLeader =
      compared.map { compared in
        (compared.lead(for: prompt)?.leader ?? chosen?.leader).map { [$0] == compared.named(in: text) } ?? false
      } ?? false
    if let compared, let chosen, let first = compared.named(in: text).first, first != chosen.leader {
      let end = chosen.figure.highest == chosen.leader ? "highest" : "lowest"
      return "the answer names \(compared.labels[first]) first, but \(compared.labels[chosen.leader]) has the "
        + "\(end) \(chosen.figure.name)"
    }
    if !namesTheLeader,
      let left = leftOut(by: text, outputs: outputs, calls: calls)
    {
      return "the answer leaves out the result for \(left)"
    }
    if let compared {
      if let wrong = compared.misattributedFigure(in: text) {
        return "the answer gives \(wrong.figure) for \(wrong.label), which is another result's figure"
      }
      if let wrong = compared.contradictedComparison(in: text, question: prompt) {
        return "the answer says \(wrong.label) is \(wrong.word), which the results contradict"
      }
    }
    return nil
  }

  /// The first of several successful calls that `answer` says nothing about: no word of its text arguments
  /// ("Cairo", "pita", "America/New_York") is in it, also as a translated name. `nil` with fewer than two such
  /// calls; a call without text arguments is not judged.
  static func leftOut(by answer: String, outputs: [Transcript.ToolOutput], calls: [Transcript.ToolCall]) -> String? {
    let succeeded = outputs.filter { !$0.isError }
    guard succeeded.count >= 2 else { return nil }
    let said = GroundingText(answer).words
    for output in succeeded {
      guard let call = calls.first(where: { $0.id == output.callID }) else { continue }
      let words = texts(in: call.arguments).flatMap { text in
        GroundingText.words(of: text.lowercased()).filter { $0.count >= 3 }
      }
      guard !words.isEmpty else { continue }
      if !words.contains(where: { word in said.contains { $0 == word || GroundingText.sameStem($0, word) } }) {
        return call.arguments.objectValue?.lazy.compactMap(\.value.stringValue).first ?? call.toolName
      }
    }
    return nil
  }

  /// Whether `answer`, given without a call, says it did what an offered tool does: a word of it is a verb of a
  /// tool's name (``actionWords``: `add` of `todoAdd`, `done` of `todoDone`, `convert` of `convertUnits`) as a
  /// past participle ("added", "removed", "converted", "done"), not the bare verb ("add 32" in a formula). "I've
  /// added 'comprare il pane' to my list." with `todoAdd` offered did nothing: the model claims an action it never
  /// took.
  public static func claimsAnAction(_ answer: String, _ tools: [Transcript.ToolDefinition]) -> Bool {
    let words = Set(answer.lowercased().split { !$0.isLetter }.map(String.init))
    return tools.contains { tool in
      TopicWords.split(tool.name).contains { verb in
        actionWords.contains(verb)
          && [verb + "ed", verb + "d", verb == "done" ? verb : ""].contains(where: words.contains)
      }
    }
  }

  /// Whether `answer`, given without a call, says it cannot do what the prompt asks (``refusals``: "I can't
  /// arrange a flight for you", "Lo siento, no puedo…") while an offered tool is for it: a content word of the
  /// prompt is a word of what the tool is for (its name, title, first sentence or examples, ``TopicWords``). A
  /// model that refuses with `book_flight` offered has only not seen that the tool does it.
  public static func declinesWhatAToolDoes(
    _ answer: String, prompt: String, tools: [Transcript.ToolDefinition]
  ) -> Bool {
    // Words between single spaces, a curly apostrophe as a straight one: "I can\u{2019}t." is " i can't ".
    let words = answer.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
      .split { !($0.isLetter || $0.isNumber || $0 == "'") }
    let said = " " + words.joined(separator: " ") + " "
    guard refusals.contains(where: { said.contains(" " + $0 + " ") }) else { return false }
    return tools.contains { TopicWords(purposeOf: $0).matches(prompt) > 0 }
  }

  /// How an answer says it cannot do something, in the six languages the checks know: whole words, lowercase.
  static let refusals: [String] = [
    "can't", "cannot", "can not", "unable to", "not able to", "don't have access", "do not have access", "no puedo",
    "no es posible", "je ne peux pas", "je ne suis pas en mesure", "ich kann nicht", "ich kann leider nicht",
    "non posso", "non sono in grado", "não posso", "não consigo",
  ]

  /// Verbs in tool names that change something or compute it, which an answer cannot do by itself.
  static let actionWords: Set<String> = [
    "add", "remove", "delete", "clear", "done", "mark", "complete", "create", "update", "send", "save", "convert",
    "schedule", "cancel", "book",
  ]

  /// Whether `answer`, given without a call for the transcript's last prompt, answers from memory what a tool
  /// would compute: the prompt holds figures, the answer holds figures the prompt does not, and the reply's `need`
  /// (or, without one, the prompt) is about one of `tools` (a word of its name, description or parameters). "Convert
  /// 10 km to miles and 20 kg to pounds" answered "6.28 miles, 45.3 pounds" with `convertUnits` offered is;
  /// "What is 2+2?" is not (no word to relate to a tool).
  public static func answersFromMemory(
    _ answer: String, need: String?, in transcript: Transcript, tools: [Transcript.ToolDefinition]
  ) -> Bool {
    guard outputsSinceLastPrompt(transcript).isEmpty, let prompt = transcript.lastPrompt else { return false }
    let asked = AnswerFigures.numbers(in: prompt).map(\.value) + spelledNumbers(in: prompt)
    guard !asked.isEmpty else { return false }
    let answered = AnswerFigures.numbers(in: answer)
    guard answered.contains(where: { !AnswerFigures.matches($0, asked) }) else { return false }
    let about = need ?? prompt
    guard !TopicWords.contentWords(about).isEmpty else { return false }
    return tools.contains { TopicWords($0).relates(about) }
  }

  /// Whether `prompt` asks for what an offered tool does, by the tool's own words: at least two different content
  /// words of the prompt, and a third of them, are words of one tool's name, description or parameters
  /// (``TopicWords``). "Could you retrieve the recommendation details from the URL 'https://…'?" and a tool that
  /// gets a URL with parameters; not "Write a short poem about fresh bread" and a bread-recipe search.
  public static func asksWhatAToolDoes(_ prompt: String, _ tools: [Transcript.ToolDefinition]) -> Bool {
    let words = Set(TopicWords.contentWords(prompt))
    guard words.count >= 2 else { return false }
    return tools.contains { tool in
      let matched = TopicWords(tool).matches(prompt)
      return matched >= 2 && matched * 3 >= words.count
    }
  }

  /// Whether a reply's `need` (in the model's words, mostly English whatever the prompt's language) holds a word of
  /// an offered tool's name: "the weather in Berlin in December" and `getWeather`, "mark task 1 as done" and
  /// `todoDone`. The model then answered what a tool is named for from memory.
  public static func needNamesATool(_ need: String?, _ tools: [Transcript.ToolDefinition]) -> Bool {
    guard let need else { return false }
    let words = Set(TopicWords.contentWords(need))
    return tools.contains { tool in
      TopicWords.split(tool.name).contains { part in
        part.count >= 3 && !GroundingVocabulary.commonWords.contains(part) && !genericNameWords.contains(part)
          && words.contains { TopicWords.sameWord($0, part) }
      }
    }
  }

  /// Whether an answer given without a call states figures the prompt does not hold, about something the prompt
  /// names (a capitalised word past its start): "I'm visiting Reykjavik in March. How cold will it be?" → "2°C".
  public static func inventsFiguresAboutANamedThing(_ answer: String, prompt: String) -> Bool {
    let asked = AnswerFigures.numbers(in: prompt).map(\.value)
    guard AnswerFigures.numbers(in: answer).contains(where: { !AnswerFigures.matches($0, asked) }) else {
      return false
    }
    return namesAThing(prompt)
  }

  /// Whether `prompt` names something: a capitalised word past its start, not a day or "I".
  static func namesAThing(_ prompt: String) -> Bool {
    prompt.split { !($0.isLetter || $0.isNumber) }.dropFirst().contains { word in
      word.count > 1 && word.first?.isUppercase == true && !GroundingVocabulary.dayWords.contains(word.lowercased())
        && word != "I"
    }
  }

  /// Whether an answer given without a call says yes or no to a yes-or-no question about something the prompt
  /// names, on the topic of an offered tool (``TopicWords/matches(_:)``): "Is Nairobi hot in February?" → "No,
  /// Nairobi is not hot in February.", a judgement with no figure to check, where the weather tool has the figures.
  public static func judgesFromMemory(_ answer: String, prompt: String, tools: [Transcript.ToolDefinition]) -> Bool {
    let question = prompt.trimmingCharacters(in: .whitespacesAndNewlines)
    let opening = question.split { !$0.isLetter }.first.map { $0.lowercased() } ?? ""
    let reply = answer.split { !$0.isLetter }.first.map { $0.lowercased() } ?? ""
    guard question.hasSuffix("?"), ["is", "are", "does", "do", "will", "was", "were"].contains(opening),
      ["yes", "no"].contains(reply), namesAThing(question)
    else { return false }
    return tools.contains { TopicWords($0).matches(question) > 0 }
  }

  /// Whether an answer given without a call states figures the prompt does not hold, in words of its own that
  /// are the topic of a tool the prompt is about too: "how hot is dubay in july" → "The temperature of Dubay in
  /// July is 25°C." with a weather tool about temperatures. A bare figure ("$0.50" for the price of flour) says
  /// nothing of what it is about, and is not judged.
  public static func inventsFiguresOnATopic(
    _ answer: String, prompt: String, tools: [Transcript.ToolDefinition]
  ) -> Bool {
    guard statesFiguresNotIn(prompt, answer) else { return false }
    let asked = Set(TopicWords.contentWords(prompt))
    let own = TopicWords.contentWords(answer).filter { !asked.contains($0) }.joined(separator: " ")
    guard !own.isEmpty else { return false }
    return tools.contains { tool in
      let topic = TopicWords(tool)
      return topic.matches(prompt) > 0 && topic.matches(own) > 0
    }
  }

  /// Whether `answer` states a figure that `prompt` does not hold.
  static func statesFiguresNotIn(_ prompt: String, _ answer: String) -> Bool {
    let asked = AnswerFigures.numbers(in: prompt).map(\.value)
    return AnswerFigures.numbers(in: answer).contains { !AnswerFigures.matches($0, asked) }
  }

  /// The answer to a question none of `tools` serves, in place of figures the model would guess: says so, and
  /// names what the tools are for.
  public static func declining(tools: [Transcript.ToolDefinition]) -> String {
    let names = tools.prefix(12).map(\.name).joined(separator: ", ")
    return "I could not get that from my tools, and I won't guess figures. "
      + (names.isEmpty ? "" : "The tools I have: \(names).")
  }

  /// Words of tool names that say how, not what: a need for a list of novels is not about `todoList`, nor "add 2
  /// and 2" about `todoAdd`.
  static let genericNameWords: Set<String> = [
    "search", "database", "query", "lookup", "list", "fetch", "run", "tool", "add", "set", "remove", "delete",
  ]

  /// Whether `answer` is `prompt` said again: at least four in five of its words are the prompt's and it has at
  /// least half of the prompt's, and it adds no word or number of the results. "Marked items 1 and 3 on my to-do
  /// list as done." after "Mark items 1 and 3 on my to-do list as done." is; "Done: #1 buy milk, #3 water the
  /// plants" is not.
  static func echoes(_ answer: String, _ prompt: String, results: String = "") -> Bool {
    func words(_ text: String) -> [Substring] { text.lowercased().split { !($0.isLetter || $0.isNumber) } }
    let answerWords = Set(words(answer))
    let promptWords = Set(words(prompt))
    guard !answerWords.isEmpty, !promptWords.isEmpty else { return false }
    let common = answerWords.intersection(promptWords)
    let shared = Double(common.count)
    guard shared >= 0.8 * Double(answerWords.count), shared >= 0.5 * Double(promptWords.count) else { return false }
    // An answer that says the prompt's words in another order ("Athens is warmer than Madrid in March." to "Which
    // is warmer in March, Madrid or Athens?") says something of its own: four in five in the prompt's order echo.
    func firstOccurrences(_ text: String) -> [Substring] {
      var seen: Set<Substring> = []
      return words(text).filter { common.contains($0) && seen.insert($0).inserted }
    }
    let inAnswer = firstOccurrences(answer)
    let inPrompt = firstOccurrences(prompt)
    var row = Array(repeating: 0, count: inPrompt.count + 1)
    for word in inAnswer {
      var previous = 0
      for (index, other) in inPrompt.enumerated() {
        let saved = row[index + 1]
        row[index + 1] = word == other ? previous + 1 : max(row[index + 1], row[index])
        previous = saved
      }
    }
    guard Double(row[inPrompt.count]) >= 0.8 * Double(inAnswer.count) else { return false }
    let resultWords = words(results)
    return !answerWords.subtracting(promptWords).contains(where: resultWords.contains)
  }
}

/// The figures of a text, and whether they come from the results.
enum AnswerFigures {
  /// A number as written: its value (unsigned) and how many decimals it was written with.
  struct Figure: Equatable {
    var text: String
    var value: Double
    var decimals: Int
  }

  /// The numbers written in `text`, without a sign: `6.21`, `1,000` (thousands), `6,2` (a decimal comma),
  /// `14:00` (two numbers). A list marker (`1.` or `2)` starting a line) is not a figure.
  static func numbers(in text: String) -> [Figure] {
    var figures: [Figure] = []
    let characters = Array(text)
    var index = 0
    var lineStart = true
    while index < characters.count {
      let character = characters[index]
      guard character.isASCII, character.isNumber else {
        if character == "\n" {
          lineStart = true
        } else if !character.isWhitespace && !"-*•".contains(character) {
          lineStart = false
        }
        index += 1
        continue
      }
      var end = index
      var digits = ""
      var decimals = 0
      var seenSeparator = false
      while end < characters.count {
        let c = characters[end]
        if c.isASCII && c.isNumber {
          digits.append(c)
          if seenSeparator { decimals += 1 }
          end += 1
        } else if c == "." || c == ",", !seenSeparator, end + 1 < characters.count,
          characters[end + 1].isASCII, characters[end + 1].isNumber
        {
          // A comma followed by exactly three digits groups thousands; otherwise it is a decimal separator.
          var run = 0
          while end + 1 + run < characters.count, characters[end + 1 + run].isASCII, characters[end + 1 + run].isNumber
          {
            run += 1
          }
          if c == ",", run == 3 {
            end += 1
            continue
          }
          digits.append(".")
          seenSeparator = true
          end += 1
        } else {
          break
        }
      }
      let isMarker =
        lineStart && !seenSeparator && end < characters.count && (characters[end] == "." || characters[end] == ")")
        && (end + 1 == characters.count || characters[end + 1].isWhitespace)
      if !isMarker, let value = Double(digits) {
        figures.append(Figure(text: String(characters[index..<end]), value: value, decimals: decimals))
      }
      lineStart = false
      index = end
    }
    return figures
  }

  /// Every number in a JSON value, unsigned, and the numbers written in its strings.
  static func collect(_ value: JSONValue, into numbers: inout [Double]) {
    switch value {
    case .integer, .real: if let n = value.doubleValue { numbers.append(abs(n)) }
    case .string(let text): numbers += AnswerFigures.numbers(in: text).map(\.value)
    case .array(let items): for item in items { collect(item, into: &numbers) }
    case .object(let object): for (_, member) in object { collect(member, into: &numbers) }
    case .bool, .null: break
    }
  }

  /// Whether `figure` is one of `known` as written or rounded to its decimals (6.2 and 6 for 6.21371), or the same
  /// hour on a 12-hour clock (1 for 13).
  static func matches(_ figure: Figure, _ known: [Double]) -> Bool {
    let scale = pow(10, Double(figure.decimals))
    return known.contains { number in
      abs((number * scale).rounded() / scale - figure.value) < 0.5 / scale + 1e-9
        || (figure.decimals == 0 && (1...12).contains(figure.value) && number == figure.value + 12)
    }
  }

  /// Whether a text says that something failed or could not be done, in English, French, German, Spanish,
  /// Italian or Portuguese.
  static func saysFailure(_ text: String) -> Bool {
    let words = Set(text.lowercased().split { !($0.isLetter || $0.isNumber || $0 == "'") }.map(String.init))
    let failureWords: Set<String> = [
      "not", "no", "couldn't", "can't", "cannot", "unable", "failed", "fails", "error", "sorry", "unknown",
      "unfortunately", "don't", "doesn't", "isn't", "wasn't", "didn't", "pas", "impossible", "erreur", "nicht",
      "kein", "keine", "fehler", "leider", "non", "errore", "não", "erro", "lo", "siento", "desculpe",
    ]
    return !words.isDisjoint(with: failureWords)
  }
}
