import Foundation
public import ToolhostJSON
public import ToolhostSession

/// Several results of one tool side by side ("Which is warmer in March, Madrid or Athens?"): each call named by
/// the argument that tells the calls apart, and for each number the results all hold and do not all share, which
/// call has the highest and which the lowest.
///
/// A small model compares figures poorly: Madrid "warmer" at 16.3 °C than Athens at 16.6 °C, Seattle's rain given
/// as Denver's. The order is worked out here, shown beside the results and checked in the answer.
struct ComparedResults {
  /// One number the results hold, by call: its name, each call's value as the result wrote it, and the indices of
  /// the highest and the lowest.
  struct Figure {
    var name: String
    var shown: [String]
    var values: [Double]
    var highest: Int
    var lowest: Int
  }

  /// Each call's label: the value of the argument that differs between every call ("Madrid", "Athens").
  let labels: [String]
  /// Each call's other names for what it is about: the strings of its result no other result holds ("Spain").
  let aliases: [[String]]
  /// Each call's numbers, from its structured result.
  let numbers: [[Double]]
  /// The numbers that tell the calls apart, by name.
  let figures: [Figure]

  /// The comparison of the successful structured `outputs` of one tool, called with `calls`; `nil` when fewer than
  /// two such outputs, more than one tool, or nothing tells them apart.
  init?(_ outputs: [Transcript.ToolOutput], calls: [Transcript.ToolCall]) {
    let compared = outputs.filter { !$0.isError && $0.value?.objectValue != nil }
    guard compared.count >= 2, Set(compared.map(\.toolName)).count == 1 else { return nil }
    let arguments = compared.map { output in calls.first { $0.id == output.callID }?.arguments.objectValue ?? [:] }
    guard
      let key = arguments[0].keys.sorted().first(where: { key in
        Set(arguments.map { $0[key]?.serialized() ?? "" }).count == compared.count
      })
    else { return nil }
    let objects = compared.compactMap { $0.value?.objectValue }
    let strings = objects.map { object in Set(object.compactMap { $0.value.stringValue }) }
    let aliases = strings.indices.map { index in
      strings[index].filter { text in
        text.count <= 40 && strings.indices.allSatisfy { $0 == index || !strings[$0].contains(text) }
      }.sorted()
    }
    self.aliases = aliases
    // A number tells the calls apart poorly for a person ("10 is warmer"): a name the result has for it does better
    // ("October").
    labels = arguments.indices.map { index in
      let label = arguments[index][key].map { $0.stringValue ?? $0.serialized() } ?? ""
      return label.allSatisfy(\.isNumber) ? aliases[index].first ?? label : label
    }
    numbers = compared.map { output in
      var found: [Double] = []
      if let value = output.value { AnswerFigures.collect(value, into: &found) }
      return found
    }
    var figures: [Figure] = []
    for name in objects[0].keys.sorted() {
      let members = objects.map { $0[name] }
      let values = members.compactMap { member -> Double? in
        switch member {
        case .integer, .real: member?.doubleValue
        default: nil
        }
      }
      guard values.count == objects.count, Set(values).count > 1,
        let high = values.indices.max(by: { values[$0] < values[$1] }),
        let low = values.indices.min(by: { values[$0] < values[$1] })
      else { continue }
      figures.append(
        Figure(
          name: name, shown: members.map { $0?.serialized() ?? "" }, values: values, highest: high, lowest: low))
    }
    self.figures = figures
  }

  /// The text shown beside the results: `Compared:` and a line `name: highest LABEL (value), lowest LABEL
  /// (value)` per figure; `nil` without figures.
  var sideBySide: String? {
    guard !figures.isEmpty else { return nil }
    let lines = figures.map { figure in
      "\(figure.name): highest \(labels[figure.highest]) (\(figure.shown[figure.highest])), "
        + "lowest \(labels[figure.lowest]) (\(figure.shown[figure.lowest]))"
    }
    return "Compared:\n" + lines.joined(separator: "\n")
  }

  /// The calls a clause names, in the order it names them (a label or an alias, as whole words).
  func named(in clause: String) -> [Int] {
    // Lowercase words between spaces, so that a name is found as whole words.
    func spaced(_ text: String) -> String {
      " " + text.lowercased().map { $0.isLetter || $0.isNumber ? $0 : " " }.map(String.init).joined() + " "
    }
    let lowered = spaced(clause)
    var found: [(position: String.Index, call: Int)] = []
    for index in labels.indices {
      let names = ([labels[index]] + aliases[index]).map(spaced)
      let positions = names.compactMap { name in name.count > 3 ? lowered.range(of: name)?.lowerBound : nil }
      if let first = positions.min() { found.append((first, index)) }
    }
    return found.sorted { $0.position < $1.position }.map(\.call)
  }

  /// The first figure of `answer` given for the wrong call: in a clause (``PromptList/clauses(_:)``) that names
  /// one call only, a number found in another call's result and not in its own ("Seattle gets 40 mm" when 40 mm
  /// is Denver's). Returns the figure as written and the call's label.
  func misattributedFigure(in answer: String) -> (figure: String, label: String)? {
    for clause in PromptList.clauses(answer) {
      let calls = named(in: clause)
      guard calls.count == 1, let call = calls.first else { continue }
      for figure in AnswerFigures.numbers(in: clause) where !AnswerFigures.matches(figure, numbers[call]) {
        if numbers.indices.contains(where: { $0 != call && AnswerFigures.matches(figure, numbers[$0]) }) {
          return (figure.text, labels[call])
        }
      }
    }
    return nil
  }

  /// The first comparison `answer` makes that the results contradict: a clause with a comparative
  /// (``GroundingVocabulary/comparatives``) whose first named call is, for every figure the comparative is about,
  /// the lowest when the word says more ("Madrid is warmer" when Athens is higher in each temperature) or the
  /// highest when it says less. An answer that only names one call ("Singapore") to a question with a comparative
  /// ("Is Singapore or Bangkok rainier?") is judged by the question's words. A clause with a negation is not
  /// judged. Returns the label and the word.
  func contradictedComparison(in answer: String, question: String = "") -> (label: String, word: String)? {
    var judged = false
    var negated = false
    for clause in PromptList.clauses(answer) {
      let lowered = clause.lowercased()
      let words = GroundingText.words(of: lowered).map(String.init)
      if words.contains(where: { ["not", "no", "isn", "doesn", "nor", "t"].contains($0) }) {
        negated = true
        continue
      }
      guard let first = words.first(where: { GroundingVocabulary.comparative(for: $0) != nil }) else { continue }
      // The subject is the call named last before the comparative ("Compared with Madrid, Athens is warmer"), or
      // else the first one after it ("the warmest is Athens").
      let cut = lowered.range(of: first)?.lowerBound ?? lowered.endIndex
      if let subject = named(in: String(lowered[..<cut])).last ?? named(in: String(lowered[cut...])).first {
        judged = true
        if let word = contradicted(subject: subject, words: words) { return (labels[subject], word) }
      } else if let wrong = contradictedFigure(in: clause, words: words) {
        return wrong
      }
    }
    let calls = Set(named(in: answer))
    guard !judged, !negated, calls.count == 1, let subject = calls.first else { return nil }
    let words = GroundingText.words(of: question.lowercased()).map(String.init)
    return contradicted(subject: subject, words: words).map { (labels[subject], $0) }
  }

  /// What the results say to a question with a comparative ("Is Singapore or Bangkok rainier in September?"),
  /// when every figure the comparative is about puts the same call first: "By the results, Bangkok is rainier
  /// (precipitation: Bangkok 334, Singapore 141)." `nil` otherwise.
  func verdict(for question: String) -> String? {
    guard let (leader, word, relevant) = lead(for: question) else { return nil }
    let shown = relevant.map { figure in
      "\(figure.name): " + labels.indices.map { "\(labels[$0]) \(figure.shown[$0])" }.joined(separator: ", ")
    }
    return "By the results, \(labels[leader]) is \(word) (\(shown.joined(separator: "; ")))."
  }

  /// The call every figure a comparative of `question` is about puts first, with that word and those figures.
  func lead(for question: String) -> (leader: Int, word: String, figures: [Figure])? {
    let words = GroundingText.words(of: question.lowercased()).map(String.init)
    for word in words {
      guard let comparative = GroundingVocabulary.comparative(for: word) else { continue }
      let relevant = relevantFigures(for: comparative, words: words)
      let leaders = Set(relevant.map { comparative.more ? $0.highest : $0.lowest })
      guard !relevant.isEmpty, leaders.count == 1, let leader = leaders.first else { continue }
      return (leader, word, relevant)
    }
    return nil
  }

  /// What a question that asks for a choice is about, as the model read it: the figure that decides
  /// (``Figure/name``) and whether the one with the highest or the lowest value is wanted. "Which is warmer in March,
  /// Madrid or Athens?" is `averageHigh`, highest: the library knows no word of any topic ("warmer"), so the model
  /// says what the word means among the figures the results hold, and the library finds which call that is.
  struct Choice: Equatable {
    /// The figure's name, one of ``figures``.
    var figure: String
    /// Whether the call with the highest value is wanted (else the lowest).
    var highest: Bool
  }

  /// The JSON Schema of an answer that first says which figure decides and which end of it is wanted:
  /// `{"figure": NAME, "pick": "highest" | "lowest", "answer": STRING}`, NAME one of the figures' names.
  var choiceSchema: JSONValue {
    [
      "type": "object",
      "properties": [
        "figure": ["enum": .array(figures.map { .string($0.name) })],
        "pick": ["enum": ["highest", "lowest"]],
        "answer": ["type": "string"],
      ],
      "required": ["figure", "pick", "answer"], "additionalProperties": false,
    ]
  }

  /// The choice a reply under ``choiceSchema`` made, `nil` when it names no figure of these results.
  func choice(inReply reply: JSONValue?) -> Choice? {
    guard let object = reply?.objectValue, let name = object["figure"]?.stringValue,
      figures.contains(where: { $0.name == name }), let pick = object["pick"]?.stringValue,
      ["highest", "lowest"].contains(pick)
    else { return nil }
    return Choice(figure: name, highest: pick == "highest")
  }

  /// The call `choice` picks, with its figure: the highest or the lowest in it.
  func lead(by choice: Choice) -> (leader: Int, figure: Figure)? {
    guard let figure = figures.first(where: { $0.name == choice.figure }) else { return nil }
    return (choice.highest ? figure.highest : figure.lowest, figure)
  }

  /// Every figure the calls differ in, in words, each call's value beside it: "By the results: average high Madrid
  /// 16.3, Athens 16.6; precipitation Madrid 25, Athens 41." What an answer that names its choice without figures
  /// is shown with, so that the user can check it, whichever figure the model judged by.
  var figuresInWords: String {
    let parts = figures.map { figure in
      TopicWords.split(figure.name).joined(separator: " ") + " "
        + labels.indices.map { "\(labels[$0]) \(figure.shown[$0])" }.joined(separator: ", ")
    }
    return "By the results: " + parts.joined(separator: "; ") + "."
  }

  /// The figures a comparative is about: those whose names a word of the sentence names ("a higher low"), else
  /// every figure.
  private func relevantFigures(for comparative: GroundingVocabulary.Comparative, words: [String]) -> [Figure] {
    let said = words.filter { !comparative.words.contains($0) && $0.count >= 3 }
    let named = figures.filter { figure in
      TopicWords.split(figure.name).contains { part in said.contains { TopicWords.sameWord($0, part) } }
    }
    return named.isEmpty ? figures : named
  }

  /// A figure a clause that names no call gives with a comparative that says the opposite: "lowest precipitation
  /// (168 mm)" when 168 mm is the highest and not also the lowest. Returns the label of the call the figure is,
  /// and the word.
  private func contradictedFigure(in clause: String, words: [String]) -> (label: String, word: String)? {
    let given = AnswerFigures.numbers(in: clause)
    guard !given.isEmpty else { return nil }
    for word in words {
      guard let comparative = GroundingVocabulary.comparative(for: word) else { continue }
      for figure in relevantFigures(for: comparative, words: words) {
        let (wrong, right) =
          comparative.more ? (figure.lowest, figure.highest) : (figure.highest, figure.lowest)
        if given.contains(where: {
          AnswerFigures.matches($0, [abs(figure.values[wrong])])
            && !AnswerFigures.matches($0, [abs(figure.values[right])])
        }) {
          return (labels[wrong], word)
        }
      }
    }
    return nil
  }

  /// The first comparative of `words` that the results contradict for the call `subject`.
  private func contradicted(subject: Int, words: [String]) -> String? {
    for word in words {
      guard let comparative = GroundingVocabulary.comparative(for: word) else { continue }
      let relevant = relevantFigures(for: comparative, words: words)
      guard !relevant.isEmpty else { continue }
      let contradicted = relevant.allSatisfy { figure in
        comparative.more ? figure.lowest == subject : figure.highest == subject
      }
      if contradicted { return word }
    }
    return nil
  }
}

extension GroundingVocabulary {
  /// Comparatives and superlatives of one meaning: whether they say more or less.
  struct Comparative {
    let words: Set<String>
    let more: Bool

    init(_ words: Set<String>, _ more: Bool) {
      self.words = words
      self.more = more
    }
  }

  /// The comparative `word` is one of, if any.
  static func comparative(for word: String) -> Comparative? {
    comparatives.first { $0.words.contains(word) }
  }

  /// The comparatives and superlatives the checks know: words of size and amount only, which say the same of any
  /// figure. Words of a topic ("warmer", "rainier") would need to know which figures the topic's tool returns,
  /// which only that tool's manifest could say.
  static let comparatives: [Comparative] = [
    Comparative(
      ["higher", "highest", "more", "most", "bigger", "biggest", "larger", "largest", "greater", "greatest"], true),
    Comparative(["lower", "lowest", "less", "least", "fewer", "fewest", "smaller", "smallest"], false),
  ]
}

extension GuidedToolCalls {
  /// The results the answer to the transcript's last prompt must choose among: the transcript ends with several
  /// results of one tool that differ in some figure, the prompt asks for a choice (``asksForAChoice(_:)``: "Which
  /// is warmer in March, Madrid or Athens?") and no comparative of size or amount settles it
  /// (``ComparedResults/lead(for:)``). The answer then first says which figure decides and which end of it is
  /// wanted (``ComparedResults/choiceSchema``); `nil` otherwise.
  static func comparisonToChoose(in transcript: Transcript) -> ComparedResults? {
    guard case .toolOutput = transcript.entries.last else { return nil }
    return choosing(
      among: ComparedResults(outputsSinceLastPrompt(transcript), calls: callsSinceLastPrompt(transcript)),
      for: transcript.lastPrompt ?? "")
  }

  /// As ``comparisonToChoose(in:)``, for results compared already (`compared`, `nil` when they do not compare),
  /// made for `prompt`.
  static func choosing(among compared: ComparedResults?, for prompt: String) -> ComparedResults? {
    guard let compared, !compared.figures.isEmpty, asksForAChoice(prompt), compared.lead(for: prompt) == nil
    else { return nil }
    return compared
  }

  /// `answer` as it stands once it names the call the reply's choice picks: with the figures the calls differ in
  /// after it (``ComparedResults/figuresInWords``) when it gives no figure itself ("Athens, Greece" becomes
  /// "Athens, Greece\nBy the results: average high Madrid 16.3, Athens 16.6; …"), so that the user sees on what it
  /// stands: the model's reading of the question's word ("warmer") is not checked, only that the answer keeps to
  /// it. Unchanged when the answer chooses among nothing, or gives figures.
  static func showingTheChoice(_ answer: String, in transcript: Transcript, reply: JSONValue?) -> String {
    guard let compared = comparisonToChoose(in: transcript), compared.choice(inReply: reply) != nil,
      AnswerFigures.numbers(in: answer).isEmpty
    else { return answer }
    return answer.trimmingCharacters(in: .whitespacesAndNewlines) + "\n" + compared.figuresInWords
  }

  /// The JSON Schema of an answer to the transcript's last prompt: ``answerSchema``, or, when the answer chooses
  /// among several results (``comparisonToChoose(in:)``), ``ComparedResults/choiceSchema``.
  public static func answerSchema(for transcript: Transcript) -> JSONValue {
    comparisonToChoose(in: transcript)?.choiceSchema ?? answerSchema
  }
}
