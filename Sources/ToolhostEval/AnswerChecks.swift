// The checks of an answer against what the tools returned (issue 30's Goal 4): its figures found in the results or
// the question, not the question echoed, a failure not hidden.
public import ToolhostJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A number written in a text, with the values it may mean: `1,609` is 1609 in English and 1.609 in French.
public struct WrittenNumber: Sendable, Equatable {
  /// As written, sign included (`−6.2`, `1,000`).
  public var text: String
  /// The values it may mean, each with the decimal places it was written with.
  public var readings: [Reading]

  /// One value a number may mean.
  public struct Reading: Sendable, Equatable {
    /// The value.
    public var value: Double
    /// Decimal places written (0 for `6`, 2 for `6.21`).
    public var decimals: Int
    /// Makes a reading.
    public init(_ value: Double, decimals: Int) {
      self.value = value
      self.decimals = decimals
    }
  }

  /// Whether the number is `value` given to the places it was written with (6.2 and 6 are 6.21371; 6.3 is not).
  public func stands(for value: Double) -> Bool {
    readings.contains { r in
      abs(r.value - value) <= 0.5 * pow(10, -Double(r.decimals)) + 1e-9 * max(1, abs(value))
    }
  }
}

/// The numbers in `text`: a sign (`-`, `+` or the Unicode minus `−`) counts only where it does not join two words
/// (`10-15` is 10 and 15; `Covid-19` is 19), thousands separators (`1,000`, `1.000`) and decimal commas are read both
/// ways when that is ambiguous, and, with `skippingListMarkers`, a number that opens a line and is followed by `.` or
/// `)` and a space (`1. `, `2) `) is left out.
public func writtenNumbers(in text: String, skippingListMarkers: Bool = false) -> [WrittenNumber] {
  let chars = Array(text)
  var found: [WrittenNumber] = []
  var i = 0
  func isDigit(_ at: Int) -> Bool { at >= 0 && at < chars.count && chars[at].isASCII && chars[at].isNumber }
  func isWordCharacter(_ at: Int) -> Bool { at >= 0 && at < chars.count && (chars[at].isLetter || isDigit(at)) }
  while i < chars.count {
    guard isDigit(i), !isDigit(i - 1) else {
      i += 1
      continue
    }
    let start = i
    // Digit groups joined by single `.` or `,` (a separator counts only between digits).
    var groups: [String] = []
    var separators: [Character] = []
    var group = ""
    while i < chars.count {
      if isDigit(i) {
        group.append(chars[i])
        i += 1
      } else if chars[i] == "." || chars[i] == ",", isDigit(i + 1) {
        groups.append(group)
        separators.append(chars[i])
        group = ""
        i += 1
      } else {
        break
      }
    }
    groups.append(group)
    // The sign: a minus or plus right before the digits, not joining two words.
    var sign = 1.0
    var textStart = start
    if start > 0, "-−+".contains(chars[start - 1]), !isWordCharacter(start - 2) {
      sign = chars[start - 1] == "+" ? 1 : -1
      textStart = start - 1
    }
    if skippingListMarkers, separators.isEmpty, i < chars.count, chars[i] == "." || chars[i] == ")",
      i + 1 == chars.count || chars[i + 1].isWhitespace
    {
      let before = chars[..<start].reversed().prefix { $0 != "\n" }
      if before.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
    }
    let written = String(chars[textStart..<i])
    let pieces = readings(groups: groups, separators: separators)
    for (n, piece) in pieces.enumerated() {
      // The sign belongs to the first piece only.
      let factor = n == 0 ? sign : 1
      found.append(
        WrittenNumber(
          text: pieces.count == 1 ? written : piece.text,
          readings: piece.readings.map { .init(factor * $0.value, decimals: $0.decimals) }))
    }
  }
  return found
}

/// How digit groups joined by separators read: one number (with every plausible reading) or, for a list written
/// without spaces (`3,5,8`), one number a piece.
private func readings(groups: [String], separators: [Character]) -> [(
  text: String, readings: [WrittenNumber.Reading]
)] {
  func plain(_ digits: String, _ fraction: String = "") -> WrittenNumber.Reading {
    .init(Double(digits + (fraction.isEmpty ? "" : "." + fraction)) ?? 0, decimals: fraction.count)
  }
  if separators.isEmpty { return [(groups[0], [plain(groups[0])])] }
  let tail = groups.dropFirst()
  // One separator: a decimal point or comma; with three digits after it, maybe thousands.
  if separators.count == 1 {
    var options = [plain(groups[0], groups[1])]
    if groups[1].count == 3 { options.append(plain(groups[0] + groups[1])) }
    return [("", options)]
  }
  // Thousands groups, then maybe a decimal part after the other separator (1,609.34 or 1.609,34).
  let first = separators[0]
  if groups[0].count <= 3 {
    if separators.allSatisfy({ $0 == first }), tail.allSatisfy({ $0.count == 3 }) {
      return [("", [plain(groups.joined())])]
    }
    if separators.dropLast().allSatisfy({ $0 == first }), separators.last != first,
      tail.dropLast().allSatisfy({ $0.count == 3 })
    {
      return [("", [plain(groups.dropLast().joined(), groups.last!)])]
    }
  }
  // A list: each piece a number of its own (a `.` inside a piece is a decimal point).
  var pieces: [(text: String, readings: [WrittenNumber.Reading])] = []
  var current = groups[0]
  var fraction: String? = nil
  for (separator, next) in zip(separators, tail) {
    if separator == ".", fraction == nil {
      fraction = next
      continue
    }
    pieces.append((current + (fraction.map { "." + $0 } ?? ""), [plain(current, fraction ?? "")]))
    current = next
    fraction = nil
  }
  pieces.append((current + (fraction.map { "." + $0 } ?? ""), [plain(current, fraction ?? "")]))
  return pieces
}

/// Every number in a tool's output: numbers as they are, and numbers written in its strings (keys are not read).
public func numbers(in value: JSONValue) -> [Double] {
  switch value {
  case .integer(let n): return [Double(n)]
  case .real(let x): return [x]
  case .string(let s): return writtenNumbers(in: s).flatMap { $0.readings.map(\.value) }
  case .array(let items): return items.flatMap(numbers(in:))
  case .object(let members): return members.flatMap { numbers(in: $0.value) }
  case .bool, .null: return []
  }
}

/// Every string in a tool's output, keys left out.
public func strings(in value: JSONValue) -> [String] {
  switch value {
  case .string(let s): return [s]
  case .array(let items): return items.flatMap(strings(in:))
  case .object(let members): return members.flatMap { strings(in: $0.value) }
  default: return []
  }
}

/// What the tools said in one ask: every number and word of the results (their `result`, `text` and errors).
public struct ResultFacts: Sendable {
  /// The numbers, as values.
  public var numbers: [Double]
  /// The words, lowercased.
  public var words: Set<String>

  /// The facts of `results`.
  public init(_ results: [ObservedResult]) {
    var values: [JSONValue] = []
    for r in results {
      if let result = r.result { values.append(result) }
      if let text = r.text { values.append(.string(text)) }
      if let error = r.error { values.append(error) }
    }
    numbers = values.flatMap { ToolhostEval.numbers(in: $0) }
    words = Set(values.flatMap(strings(in:)).flatMap(lowercaseWords))
  }
}

/// The words of `text`, lowercased: runs of letters and digits.
public func lowercaseWords(_ text: String) -> [String] {
  text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
}

/// The numbers of `answer` (list markers left out) that are neither in the results nor in the question, allowing
/// for rounding: 6.2, 6.21 and 6 are all 6.21371.
public func numbersNotFound(in answer: String, question: String, facts: ResultFacts) -> [String] {
  let sources = facts.numbers + writtenNumbers(in: question).flatMap { $0.readings.map(\.value) }
  return writtenNumbers(in: answer, skippingListMarkers: true).filter { number in
    !sources.contains { number.stands(for: $0) }
  }.map(\.text)
}

/// Whether `answer` is `question` echoed back: the same text once case, punctuation and spacing are set aside, or
/// made of the question's words (at least 80% of the answer's distinct words are the question's, and they carry at
/// least half of the question's, so that a bare "Done." is not an echo, in the question's order, ``keepsOrder(_:_:shared:)``)
/// while adding no number or word from the results.
public func isEcho(_ answer: String, question: String, facts: ResultFacts) -> Bool {
  let a = lowercaseWords(answer)
  let q = lowercaseWords(question)
  if a == q { return !a.isEmpty }
  let answerWords = Set(a)
  let questionWords = Set(q)
  guard !answerWords.isEmpty, !questionWords.isEmpty else { return false }
  let shared = Double(answerWords.intersection(questionWords).count)
  guard shared >= 0.8 * Double(answerWords.count), shared >= 0.5 * Double(questionWords.count),
    keepsOrder(a, q, shared: answerWords.intersection(questionWords))
  else { return false }
  let addsWord = answerWords.subtracting(questionWords).contains { facts.words.contains($0) }
  let questionNumbers = writtenNumbers(in: question).flatMap { $0.readings.map(\.value) }
  let addsNumber = writtenNumbers(in: answer).contains { n in
    !questionNumbers.contains { n.stands(for: $0) } && facts.numbers.contains { n.stands(for: $0) }
  }
  return !addsWord && !addsNumber
}

/// Whether the `shared` words come in `answer` in `question`'s order, four in five of them (the longest common
/// subsequence of their first occurrences): "Athens is warmer than Madrid in March." answers "Which is warmer in
/// March, Madrid or Athens?" with its words in another order; an echo keeps it.
func keepsOrder(_ answer: [String], _ question: [String], shared: Set<String>) -> Bool {
  func firstOccurrences(_ words: [String]) -> [String] {
    var seen: Set<String> = []
    return words.filter { shared.contains($0) && seen.insert($0).inserted }
  }
  let a = firstOccurrences(answer)
  let q = firstOccurrences(question)
  var row = Array(repeating: 0, count: q.count + 1)
  for word in a {
    var previous = 0
    for (index, other) in q.enumerated() {
      let saved = row[index + 1]
      row[index + 1] = word == other ? previous + 1 : max(row[index + 1], row[index])
      previous = saved
    }
  }
  return Double(row[q.count]) >= 0.8 * Double(a.count)
}

/// Words that say something did not work, in English, French, German, Spanish, Italian and Portuguese.
let failureWords: Set<String> = [
  // English
  "not", "no", "cannot", "unable", "failed", "fail", "fails", "failure", "error", "errors", "sorry", "unfortunately",
  "unknown", "unavailable", "couldn", "wasn", "isn", "didn", "doesn", "don", "won", "refused", "denied", "approval",
  "approve", "impossible", "none", "nothing",
  // French
  "pas", "erreur", "désolé", "désolée", "échec", "échoué", "aucun", "aucune", "ne", "malheureusement", "rien",
  "impossible",
  // German
  "nicht", "kein", "keine", "keinen", "leider", "fehler", "fehlgeschlagen", "unbekannt", "nichts",
  // Spanish
  "siento", "desafortunadamente", "lamentablemente", "imposible", "ningún", "ninguna", "falló", "nada",
  // Italian
  "non", "errore", "purtroppo", "impossibile", "nessun", "nessuna", "spiacente", "dispiace", "niente",
  // Portuguese
  "não", "nao", "erro", "infelizmente", "impossível", "nenhum", "nenhuma", "desculpe", "falhou",
]

/// Whether `answer` says that something failed (a negation or failure word, or an English `n't`).
public func admitsFailure(_ answer: String) -> Bool {
  let lower = answer.lowercased()
  return lower.contains("n't") || lower.contains("n’t") || lowercaseWords(lower).contains { failureWords.contains($0) }
}

/// The calls that failed (or were refused) with no later successful call of the same tool: what the answer must
/// own up to.
public func unresolvedFailures(_ transcript: AskTranscript) -> [ObservedCall] {
  transcript.calls.filter { call in
    guard let result = transcript.result(of: call), !result.ok else { return false }
    return !transcript.calls.contains { later in
      later.tool == call.tool && later.round > call.round && transcript.result(of: later)?.ok == true
    }
  }
}
