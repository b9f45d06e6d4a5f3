import Foundation
import ToolhostJSON
public import ToolhostSession

/// A question about several things of one kind ("Boston, Chicago or Miami") answered with one call: the calls for
/// the others, made the same way.
extension GuidedToolCalls {
  /// `calls` and, for each argument value that the prompt names in a list ("Boston, Chicago, or Miami", "Paris and
  /// Rome", "Honolulu warmer than Anchorage", "5 and 10 miles"), the same call for each other member of the list
  /// that no call has yet; at most ``maximumCallsPerReply`` calls in all.
  ///
  /// A small model asked about several cities mostly calls the tool for the first one and then answers for all of
  /// them. Only names (a value that starts with a capital letter, and list members that do too) and numbers are
  /// expanded, only from the prompt's own words. When several arguments are lists, every combination is called
  /// ("the Lakers and the Bulls in 2018 and 2020": four calls), or, when the prompt says "respectively", the
  /// members in the order the prompt gives them ("Taylor Swift and Coldplay on Spotify and Deezer respectively":
  /// two calls).
  ///
  /// A list whose other members the call already holds in other arguments gives each member a role, not a call of
  /// its own: "the sides 4 and 5" as `x: 4, y: 5`, "Sydney, Australia" as `city: Sydney, country: Australia`; it
  /// is not expanded. Nor is a member another call already holds in the same argument.
  public static func completingLists(_ calls: [Transcript.ToolCall], prompt: String) -> [Transcript.ToolCall] {
    var result = calls
    let respectively = prompt.lowercased().contains("respectively")
    for call in calls {
      guard let arguments = call.arguments.objectValue else { continue }
      // Each argument whose value the prompt lists, with the list's members in the prompt's order.
      var axes: [(name: String, values: [JSONValue])] = []
      for (name, value) in arguments {
        guard let text = scalarText(value) else { continue }
        let listed = PromptList.siblings(of: text, in: prompt)
        guard !listed.isEmpty else { continue }
        let others = arguments.filter { $0.key != name }.map(\.value).flatMap(scalarTexts)
        if listed.contains(where: { sibling in others.contains { PromptList.holds($0, sibling) } }) { continue }
        // Another call holds a member in this argument already: it was made for it, in its own way.
        let siblings = listed.filter { sibling in
          !PromptList.holds(text, sibling)
            && !result.contains { other in
              other.toolName == call.toolName
                && other.arguments[name].flatMap(scalarText).map({ PromptList.holds($0, sibling) }) == true
            }
        }
        guard !siblings.isEmpty else { continue }
        let members = ([text] + siblings).sorted {
          PromptList.position(of: $0, in: prompt) < PromptList.position(of: $1, in: prompt)
        }
        // Each member as a value of the argument's kind: a name as a string, a number as a number.
        func asValue(_ member: String) -> JSONValue {
          if member == text { return value }
          return value.stringValue != nil ? .string(member) : (try? JSONValue.parse(member)) ?? value
        }
        axes.append((name, members.map(asValue)))
      }
      guard !axes.isEmpty else { continue }
      var combinations: [[JSONValue]] = [[]]
      if respectively, axes.count > 1, Set(axes.map(\.values.count)).count == 1 {
        combinations = (0..<axes[0].values.count).map { index in axes.map { $0.values[index] } }
      } else {
        for axis in axes {
          combinations = combinations.flatMap { partial in axis.values.map { partial + [$0] } }
        }
      }
      for combination in combinations {
        guard result.count < maximumCallsPerReply else { break }
        var changed = arguments
        for (axis, value) in zip(axes, combination) { changed[axis.name] = value }
        let completed = Transcript.ToolCall(
          id: "\(call.id)_l\(result.count + 1)", toolName: call.toolName, arguments: .object(changed))
        if result.contains(where: { $0.isSameCall(as: completed) }) { continue }
        result.append(completed)
      }
    }
    return result
  }
}

extension GuidedToolCalls {
  /// A string's text or a number's digits; `nil` for other values.
  fileprivate static func scalarText(_ value: JSONValue) -> String? {
    switch value {
    case .string(let s): s
    case .integer, .real: value.serialized()
    default: nil
    }
  }

  /// The texts of every string and number in `value`, nested ones too.
  fileprivate static func scalarTexts(_ value: JSONValue) -> [String] {
    switch value {
    case .array(let items): items.flatMap(scalarTexts)
    case .object(let members): members.map(\.value).flatMap(scalarTexts)
    default: scalarText(value).map { [$0] } ?? []
    }
  }
}

/// Lists in a prompt: the members beside a value, joined by commas, conjunctions or a comparison.
enum PromptList {
  /// Where `member` is first named in `prompt` (case aside), or the prompt's end.
  static func position(of member: String, in prompt: String) -> Int {
    guard let range = prompt.range(of: member, options: .caseInsensitive) else { return prompt.count }
    return prompt.distance(from: prompt.startIndex, to: range.lowerBound)
  }

  /// Whether an argument's text holds a list member: the same number, or the member's words among its words
  /// ("Sydney, Australia" holds "Australia").
  static func holds(_ text: String, _ member: String) -> Bool {
    if let a = Double(text), let b = Double(member) { return a == b }
    let words = tokens(text).map { $0.text.lowercased() }
    let wanted = tokens(member).map { $0.text.lowercased() }
    guard !wanted.isEmpty, words.count >= wanted.count else { return false }
    return (0...(words.count - wanted.count)).contains { Array(words[$0..<($0 + wanted.count)]) == wanted }
  }

  /// Words that join list members, in English, French, German, Spanish, Italian and Portuguese.
  static let joiners: Set<String> = [
    "and", "or", "vs", "versus", "than", "et", "ou", "und", "oder", "als", "y", "o", "e", "que", "di",
  ]

  /// The clauses of a prompt: its parts between commas, semicolons, sentence ends and the words "and", "und",
  /// "et", "y", "e", "also", trimmed, without empty ones.
  static func clauses(_ prompt: String) -> [String] {
    var clauses: [String] = []
    var current = ""
    func end() {
      let trimmed = current.trimmingCharacters(in: .whitespaces)
      if !trimmed.isEmpty { clauses.append(trimmed) }
      current = ""
    }
    var word = ""
    for character in prompt + " " {
      if ",;?!\n".contains(character) || (character == "." && !(word.last?.isNumber ?? false)) {
        current += word
        word = ""
        end()
      } else if character.isWhitespace {
        if ["and", "und", "et", "y", "e", "also"].contains(word.lowercased()) {
          end()
        } else {
          current += word + " "
        }
        word = ""
      } else {
        word.append(character)
      }
    }
    current += word
    end()
    return clauses
  }

  /// The texts a clause quotes: between straight or curly quotes (an apostrophe inside a word does not open one).
  static func quotations(_ text: String) -> [String] {
    var quotes: [String] = []
    var open: Character?
    var current = ""
    var previous: Character = " "
    for character in text {
      if let opener = open {
        let closes =
          character == "\u{201D}"
          ? opener == "\u{201C}" : character == "\u{2019}" ? opener == "\u{2018}" || opener == "'" : character == opener
        if closes {
          quotes.append(current)
          open = nil
          current = ""
        } else {
          current.append(character)
        }
      } else if "\"'\u{201C}\u{2018}".contains(character), !(previous.isLetter || previous.isNumber) {
        open = character
      }
      previous = character
    }
    return quotes.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
  }

  /// Whether `prompt` names a list of names or numbers ("Madrid or Athens", "Boston, Chicago and Miami").
  static func namesAList(_ prompt: String) -> Bool {
    let words = tokens(prompt)
    return words.contains { ($0.isName || $0.isNumber) && !siblings(of: $0.text, in: prompt).isEmpty }
  }

  /// A token of a prompt: a word (letters, digits, apostrophes, dots inside numbers) or a comma.
  struct Token: Equatable {
    var text: String
    var isComma: Bool { text == "," }
    var isName: Bool { text.first?.isUppercase ?? false }
    var isNumber: Bool { Double(text) != nil }
  }

  static func tokens(_ text: String) -> [Token] {
    var tokens: [Token] = []
    var word = ""
    for character in text {
      if character.isLetter || character.isNumber || character == "'" || character == "-"
        || (character == "." && word.last?.isNumber == true)
      {
        word.append(character)
      } else {
        if !word.isEmpty { tokens.append(Token(text: word)) }
        word = ""
        if character == "," { tokens.append(Token(text: ",")) }
      }
    }
    if !word.isEmpty { tokens.append(Token(text: word)) }
    // A full stop after a number ends the sentence: "items 2 and 3." holds 3. A possessive is its name: "Madrid's
    // music stores" names Madrid.
    return tokens.map { token in
      var token = token
      while token.text.hasSuffix(".") { token.text.removeLast() }
      for suffix in ["'s", "\u{2019}s", "'"] where token.text.count > suffix.count && token.text.hasSuffix(suffix) {
        token.text.removeLast(suffix.count)
        break
      }
      return token
    }.filter { !$0.text.isEmpty }
  }

  /// The other members of a list in `prompt` that holds `value`: names when `value` is a name, numbers when it is a
  /// number; empty when `value` is not in a list (or not in the prompt).
  static func siblings(of value: String, in prompt: String) -> [String] {
    let target = tokens(value)
    guard let first = target.first, first.isName || (target.count == 1 && first.isNumber) else { return [] }
    let words = tokens(prompt)
    guard let start = find(target, in: words) else { return [] }
    let kind: (Token) -> Bool = first.isNumber ? { $0.isNumber } : { $0.isName }
    var members: [String] = []
    // Whether a word joins the list ("and", "or", "than"): two names joined by a comma alone are a place and its
    // region ("Sydney, Australia"), not a list.
    var joinedByAWord = false
    // Forwards: joiner(s), then a member; a comparison may come between ("warmer than", "more humid than").
    var index = start + target.count
    while true {
      var next = index
      var joined = false
      var skipped = 0
      while next < words.count,
        words[next].isComma || joiners.contains(words[next].text.lowercased())
          || (!joined && skipped < 2 && next + 1 < words.count && !kind(words[next])
            && words[(next + 1)...].prefix(2).contains(where: { $0.text.lowercased() == "than" }))
      {
        if words[next].isComma || joiners.contains(words[next].text.lowercased()) {
          joined = true
          joinedByAWord = joinedByAWord || !words[next].isComma
        } else {
          skipped += 1
        }
        next += 1
      }
      guard joined, next < words.count, kind(words[next]) else { break }
      let (member, end) = member(at: next, in: words, numbers: first.isNumber)
      members.append(member)
      index = end
    }
    // Backwards: a member, then joiner(s), then the value.
    index = start
    while index > 0 {
      var previous = index - 1
      var joined = false
      while previous >= 0, words[previous].isComma || joiners.contains(words[previous].text.lowercased()) {
        joined = true
        joinedByAWord = joinedByAWord || !words[previous].isComma
        previous -= 1
      }
      guard joined, previous >= 0, kind(words[previous]) else { break }
      var begin = previous
      if !first.isNumber { while begin > 0, words[begin - 1].isName { begin -= 1 } }
      // A sentence's first word is capitalised without being a name.
      if begin == 0, words[0].text.lowercased() != words[0].text, previous > 0 { begin = 1 }
      guard begin <= previous else { break }
      members.insert(words[begin...previous].map(\.text).joined(separator: " "), at: 0)
      index = begin
    }
    if members.count == 1, !joinedByAWord, !first.isNumber { return [] }
    let own = target.map(\.text).joined(separator: " ").lowercased()
    var seen = Set<String>([own])
    // "in March, Madrid or Athens": a month or a day is not one of the names.
    return members.filter {
      !GroundingVocabulary.dayWords.contains($0.lowercased()) && seen.insert($0.lowercased()).inserted
    }
  }

  private static func find(_ target: [Token], in words: [Token]) -> Int? {
    guard words.count >= target.count else { return nil }
    for start in 0...(words.count - target.count)
    where zip(words[start...], target).allSatisfy({ $0.text.lowercased() == $1.text.lowercased() }) {
      return start
    }
    return nil
  }

  /// The member starting at `index`: one number, or a run of capitalised words ("New York", "São Paulo").
  private static func member(at index: Int, in words: [Token], numbers: Bool) -> (String, Int) {
    if numbers { return (words[index].text, index + 1) }
    var end = index
    while end < words.count, words[end].isName { end += 1 }
    return (words[index..<end].map(\.text).joined(separator: " "), end)
  }
}
