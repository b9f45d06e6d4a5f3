import Foundation
import ToolhostJSON
import ToolhostSchema
public import ToolhostSession

/// Spotting a call whose arguments were copied from its tool's description instead of taken from the conversation.
extension GuidedToolCalls {
  /// Whether `call` looks copied from its tool's description: most of its arguments hold values that the
  /// conversation never mentions, and some of those values appear in the tool's description or argument schema.
  ///
  /// A small model that picks the wrong tool fills it with the examples its description gives: "Tell me the
  /// temperature in Tokyo" became `convertUnits {"value": 25, "from": "celsius", "to": "fahrenheit"}`, and "What is
  /// Lisbon like in April" `{"value": 350, ...}` out of "e.g. 5 mi to km, 350 °F to °C". Such a call is a wrong
  /// choice of tool, not a call to repair, so a guided backend asks again with that tool left out of the reply's
  /// schema (the prompt stays the same, so the server's prompt cache still holds).
  ///
  /// The conversation is the transcript's instructions, prompts and tool outputs. An argument counts when it holds a
  /// number or a string that is not one of the schema's listed values (`enum`, `const`) and not a number the schema
  /// bounds on both sides (a month, a limit): those are choices, not copies. A number is mentioned when it appears as
  /// a number in the conversation; a string when one of its words (letters and digits) begins a word of the
  /// conversation (`"mi"` for "miles") or is begun by one of four letters or more (`"flatbreads"` for "flatbread").
  /// A call with at least half of its counted arguments mentioned, or none
  /// counted, is never taken for a copy; nor is one whose unmentioned values the description does not hold (a model
  /// that knows "the Big Apple" is `America/New_York`), or whose every number the conversation mentions.
  public static func copiesDescription(
    _ call: Transcript.ToolCall, of tool: Transcript.ToolDefinition, in transcript: Transcript
  ) -> Bool {
    guard let arguments = call.arguments.objectValue else { return false }
    let schema = JSONSchema.inliningReferences(in: tool.parameters, maximumDepth: 4)
    let properties = schema["properties"]?.objectValue ?? [:]
    let conversation = GroundingText(transcript.groundingText)
    var counted = 0
    var mentioned = 0
    var unmentioned: [GroundingLeaf] = []
    for (name, value) in arguments {
      var leaves: [GroundingLeaf] = []
      collectLeaves(value, schema: properties[name] ?? [:], into: &leaves)
      guard !leaves.isEmpty else { continue }
      counted += 1
      let missing = leaves.filter { !conversation.mentions($0) }
      if missing.count < leaves.count { mentioned += 1 }
      unmentioned += missing
    }
    guard counted > 0, mentioned * 2 < counted else { return false }
    // Every figure of the call is the user's: the units around it may be the description's words ("350F to C" →
    // 350, "fahrenheit", "celsius", as its example "350 °F to °C"), the call is still the user's.
    if conversation.mentionsEveryNumber(of: call.arguments) { return false }
    let description = GroundingText(tool.description + " " + tool.parameters.serialized())
    return unmentioned.contains { description.contains($0) }
  }

  /// The strings of `value`, at any depth: the text a call's or an example's arguments hold.
  static func texts(in value: JSONValue) -> [String] {
    var leaves: [GroundingLeaf] = []
    collectLeaves(value, schema: [:], into: &leaves)
    return leaves.compactMap { leaf in
      guard case .text(let text) = leaf else { return nil }
      return text
    }
  }

  /// The strings and numbers of `value` that a conversation could mention, leaving out values of an enum or a
  /// constant and, unless `bounded`, numbers of a closed range (a month, a rounding's digits: chosen, not given).
  static func collectLeaves(
    _ value: JSONValue, schema: JSONValue, into leaves: inout [GroundingLeaf], bounded: Bool = false
  ) {
    guard schema["enum"] == nil, schema["const"] == nil else { return }
    switch value {
    case .object(let object):
      let properties = schema["properties"]?.objectValue ?? [:]
      for (name, member) in object {
        collectLeaves(member, schema: properties[name] ?? [:], into: &leaves, bounded: bounded)
      }
    case .array(let items):
      for item in items { collectLeaves(item, schema: schema["items"] ?? [:], into: &leaves, bounded: bounded) }
    case .string(let text):
      leaves.append(.text(text))
    case .integer, .real:
      guard bounded || schema["minimum"] == nil || schema["maximum"] == nil, let number = value.doubleValue else {
        return
      }
      leaves.append(.number(number))
    case .bool, .null:
      break
    }
  }
}

/// One value of a call's arguments, as grounding compares it.
enum GroundingLeaf {
  case number(Double)
  case text(String)
}

/// A text cut into lowercase words (runs of letters and digits) and numbers.
struct GroundingText {
  let lowered: String
  let words: Set<Substring>
  let numbers: Set<Double>

  init(_ text: String) {
    lowered = text.lowercased()
    words = Set(GroundingText.words(of: lowered) + lowered.split { !($0.isLetter || $0.isNumber) })
    var numbers = Set<Double>()
    var run = ""
    for character in lowered + " " {
      if character.isASCII && (character.isNumber || (character == "." && !run.isEmpty)) {
        run.append(character)
      } else {
        if let number = Double(run.hasSuffix(".") ? String(run.dropLast()) : run) { numbers.insert(number) }
        run = ""
      }
    }
    self.numbers = numbers
  }

  /// Runs of letters and digits, also split where digits meet letters: "350F" is "350" and "f", "5km" "5" and "km".
  static func words(of text: String) -> [Substring] {
    text.split { !($0.isLetter || $0.isNumber) }.flatMap { word -> [Substring] in
      guard word.contains(where: \.isNumber), word.contains(where: \.isLetter) else { return [word] }
      var parts: [Substring] = []
      var start = word.startIndex
      for index in word.indices.dropFirst() where word[index].isNumber != word[word.index(before: index)].isNumber {
        parts.append(word[start..<index])
        start = index
      }
      parts.append(word[start...])
      return parts
    }
  }

  /// Whether the conversation mentions `leaf` (see ``GuidedToolCalls/copiesDescription(_:of:in:)``); with `fuzzy`,
  /// a word also matches one that starts the same way (``sameStem(_:_:)``): a name the model translated. A time
  /// zone is mentioned by its city's name or short name (``GuidedToolCalls/ianaZone(forCity:)``: "nyc").
  func mentions(_ leaf: GroundingLeaf, fuzzy: Bool = false) -> Bool {
    switch leaf {
    case .number(let number):
      return numbers.contains(number)
    case .text(let text):
      let valueWords = GroundingText.words(of: text.lowercased())
      if valueWords.isEmpty { return true }
      // A time zone named by its city's short name: "nyc" for `America/New_York`.
      if text.contains("/"), words.contains(where: { GuidedToolCalls.ianaZone(forCity: String($0)) == text }) {
        return true
      }
      return valueWords.contains { word in
        words.contains(word)
          || words.contains { (word.count >= 2 && $0.hasPrefix(word)) || ($0.count >= 4 && word.hasPrefix($0)) }
          || (fuzzy && words.contains { GroundingText.sameStem(word, $0) })
      }
    }
  }

  /// Whether `arguments` hold a number and the text mentions every number they hold.
  func mentionsEveryNumber(of arguments: JSONValue) -> Bool {
    var figures: [Double] = []
    AnswerFigures.collect(arguments, into: &figures)
    return !figures.isEmpty && figures.allSatisfy { numbers.contains($0) }
  }

  /// Whether two words share a start of three letters or more that is at least half the shorter one, accents
  /// aside: "Londres" and "London", "Roma" and "Rome", "München" and "Munich".
  static func sameStem(_ a: Substring, _ b: Substring) -> Bool {
    let x = Array(a.folding(options: .diacriticInsensitive, locale: nil))
    let y = Array(b.folding(options: .diacriticInsensitive, locale: nil))
    var shared = 0
    while shared < min(x.count, y.count), x[shared] == y[shared] { shared += 1 }
    return shared >= 3 && shared * 2 >= min(x.count, y.count) && x.allSatisfy(\.isLetter)
  }

  /// Whether the text holds `leaf`: the number among its numbers, or the string (two characters or more) in it.
  func contains(_ leaf: GroundingLeaf) -> Bool {
    switch leaf {
    case .number(let number): numbers.contains(number)
    case .text(let text): text.count >= 2 && lowered.contains(text.lowercased())
    }
  }
}

extension Transcript {
  /// What the user and the tools said: instructions, prompts and tool outputs, one per line.
  var groundingText: String {
    var parts: [String] = []
    for entry in entries {
      switch entry {
      case .instructions(let instructions): parts.append(instructions.text)
      case .prompt(let prompt): parts.append(prompt.text)
      case .toolOutput(let output): parts.append(output.text)
      case .toolCalls, .response, .reasoning: break
      }
    }
    return parts.joined(separator: "\n")
  }
}
