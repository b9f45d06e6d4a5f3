public import Foundation
import ToolhostJSON
import ToolhostSchema
public import ToolhostSession
import ToolhostTools

/// Checks of a guided reply against the conversation: a call no offered tool serves, arguments the user never gave,
/// and an answer that does not state what the results say. Pure functions.
extension GuidedToolCalls {
  /// Whether `call` is a needless call: its arguments are invented (most of them are never mentioned in the
  /// conversation, also allowing for a translated name, as "New York" for "What's the stock price of Apple?"), or
  /// neither the reply's `need` nor the user's prompt has anything to do with the tool (no word of either is a word
  /// of the tool's name, description or parameters: "the discoverer of penicillin" and `searchBreadDatabase`).
  ///
  /// A reply without a `need` is judged by its arguments only; a call that changes something, by the user's words
  /// only (``changesUnasked(_:in:)``).
  public static func servesNoNeed(
    _ call: Transcript.ToolCall, of tool: Transcript.ToolDefinition, need: String?, in transcript: Transcript
  ) -> Bool {
    if inventsArguments(call, of: tool, in: transcript) || changesUnasked(tool, in: transcript) { return true }
    guard let need else { return false }
    let topic = TopicWords(tool)
    let prompt = transcript.lastPrompt ?? ""
    // A prompt with no word to judge by ("What is 2+2?") is judged by the need alone.
    return !topic.relates(need) && (TopicWords.contentWords(prompt).isEmpty || !topic.relates(prompt))
  }

  /// Whether a call of `tool` would change something (``Transcript/ToolDefinition/changesThings``: a write, a
  /// delete) that the user's prompt does not ask for: no word of the prompt is a word of what the tool is for, its
  /// name, title, first sentence or examples (``TopicWords/init(purposeOf:)``); the words of its parameters do not
  /// count, since a request for something else shares them by chance (a time, a title). The model's `need` does
  /// not count either: a small model finds a reason for any write ("Write a short poem about fresh bread." became a
  /// to-do item), and a needless write is worse than a missed one, which the answer can still offer.
  public static func changesUnasked(_ tool: Transcript.ToolDefinition, in transcript: Transcript) -> Bool {
    tool.changesThings && !TopicWords(purposeOf: tool).relates(transcript.lastPrompt ?? "")
  }

  /// Whether another of `tools` shares more words with the need and the prompt than `call`'s tool
  /// (``TopicWords/matches(_:)``): `searchBreadDatabase` for "the temperature in Boston, Chicago, or Miami" when a
  /// weather tool speaks of temperatures.
  static func anotherToolFitsBetter(
    _ call: Transcript.ToolCall, among tools: [Transcript.ToolDefinition], need: String?, in transcript: Transcript
  ) -> Bool {
    let text = (need ?? "") + " " + (transcript.lastPrompt ?? "")
    guard let tool = tools.first(where: { $0.name == call.toolName }) else { return false }
    let own = TopicWords(tool).matches(text)
    return tools.contains { $0.name != call.toolName && TopicWords($0).matches(text) > own }
  }

  /// Whether `call`'s tool is one of a family (tools whose names start with the same word: `todoAdd`, `todoDone`,
  /// `todoRemove`) and the prompt names another member's action but not its own: "done #2" and `todoRemove`,
  /// "Mark 'call the dentist' as done" and `todoAdd`. Such a call is a wrong choice of tool, like a copied one.
  /// Only an action that is no ``genericNameWords`` counts as named: in "Put 'milk' on my list", "list" is what
  /// the family is about, not `todoList`.
  public static func picksTheWrongSibling(
    _ call: Transcript.ToolCall, among tools: [Transcript.ToolDefinition], prompt: String
  ) -> Bool {
    guard let family = TopicWords.family(of: call.toolName),
      let tool = tools.first(where: { $0.name == call.toolName }), !namesTheAction(of: tool, prompt)
    else { return false }
    return tools.contains { other in
      other.name != call.toolName && TopicWords.family(of: other.name) == family && namesTheMember(other, prompt)
    }
  }

  /// The tools of `rest` left out of a second try after a wrong choice: the family members whose action the prompt
  /// does not name when it names another's ("done #2": every to-do tool but `todoDone`), and the tools neither the
  /// prompt nor the need shares a word with, when some do. A small model asked again among all the tools picks
  /// another wrong one ("How do Toronto, Montreal and Vancouver compare in January?" tried the unit, time and to-do
  /// tools in turn, never the weather).
  static func unlikelyTools(_ rest: [Transcript.ToolDefinition], prompt: String, need: String?)
    -> Set<String>
  {
    var unlikely: Set<String> = []
    for tool in rest {
      guard let family = TopicWords.family(of: tool.name), !namesTheMember(tool, prompt) else { continue }
      if rest.contains(where: {
        $0.name != tool.name && TopicWords.family(of: $0.name) == family && namesTheMember($0, prompt)
      }) {
        unlikely.insert(tool.name)
      }
    }
    let text = prompt + " " + (need ?? "")
    let about = rest.filter { !unlikely.contains($0.name) && TopicWords($0).matches(text) > 0 }
    if !about.isEmpty {
      unlikely.formUnion(rest.filter { tool in !about.contains { $0.name == tool.name } }.map(\.name))
    }
    return unlikely
  }

  /// Whether `prompt` names a family member by a specific action (``namesTheAction(of:_:)``, its name's action no
  /// ``genericNameWords``): "list" in "my to-do list" names the family, not `todoList`.
  static func namesTheMember(_ tool: Transcript.ToolDefinition, _ prompt: String) -> Bool {
    !TopicWords.split(tool.name).dropFirst().contains(where: genericNameWords.contains)
      && namesTheAction(of: tool, prompt)
  }

  /// Whether `prompt` names what a family member does: its action (the words of its name after the family's,
  /// "done" of `todoDone`), or the verb its description starts with ("Marks" of "Marks the to-do item … as done",
  /// for "Mark to-do 3 as complete").
  static func namesTheAction(of tool: Transcript.ToolDefinition, _ prompt: String) -> Bool {
    let words = TopicWords.contentWords(prompt)
    func said(_ part: String) -> Bool { words.contains { TopicWords.sameWord($0, part) } }
    let action = TopicWords.split(tool.name).dropFirst().filter { $0.count >= 3 }
    if !action.isEmpty, action.allSatisfy(said) { return true }
    // The verb of the family's own name ("Converts" of `convertUnits`, whose family `convert_time` shares) names
    // the family, not the member.
    let verb = tool.description.split(separator: " ").first.map { $0.lowercased() } ?? ""
    let family = TopicWords.family(of: tool.name) ?? ""
    return verb.count >= 4 && verb.hasSuffix("s") && !genericNameWords.contains(String(verb.dropLast()))
      && !TopicWords.sameWord(String(verb.dropLast()), family) && said(verb)
  }

  /// The member of a called tool's family that the prompt names (``namesTheMember(_:_:)``) and that the first
  /// round of calls, all successful, did not call: "Mark 'call the dentist' as done" after `todoList` → `todoDone`,
  /// whose id the list shows. The next reply may then be that call, the second step the request asks for, or the
  /// answer: it is not forced, since "List my to-dos, including the done ones" names `todoDone` too.
  public static func actionLeftUndone(_ transcript: Transcript, tools: [Transcript.ToolDefinition])
    -> Transcript.ToolDefinition?
  {
    guard roundsSinceLastPrompt(transcript) == 1, case .toolOutput = transcript.entries.last else { return nil }
    return actionLeftUndone(
      prompt: transcript.lastPrompt ?? "", calls: callsSinceLastPrompt(transcript),
      round: outputsSinceLastPrompt(transcript), tools: tools)
  }

  /// ``actionLeftUndone(_:tools:)`` for a first round of `calls` and their outputs `round`, made for `prompt`.
  static func actionLeftUndone(
    prompt: String, calls: [Transcript.ToolCall], round: [Transcript.ToolOutput], tools: [Transcript.ToolDefinition]
  ) -> Transcript.ToolDefinition? {
    guard !round.isEmpty, !round.contains(where: \.isError) else { return nil }
    let called = Set(calls.map(\.toolName))
    let families = Set(called.compactMap { TopicWords.family(of: $0) })
    // A flag a call set that holds the member's action and another word the prompt says covers that action:
    // `includeDone: true` is what "including the finished ones" asks for, not `todoDone`.
    var flags: [[String]] = []
    for call in calls {
      for (name, value) in call.arguments.objectValue ?? [:] where value.boolValue == true {
        flags.append(TopicWords.split(name))
      }
    }
    let said = TopicWords.contentWords(prompt)
    return tools.first { tool in
      guard !called.contains(tool.name), let family = TopicWords.family(of: tool.name), families.contains(family)
      else { return false }
      let actions = Set(TopicWords.split(tool.name).dropFirst())
      let covered = flags.contains { flag in
        flag.contains(where: actions.contains)
          && flag.contains { word in !actions.contains(word) && said.contains { TopicWords.sameWord($0, word) } }
      }
      return !covered && namesTheMember(tool, prompt)
    }
  }

  /// Whether most of `call`'s counted arguments (as ``copiesDescription(_:of:in:)`` counts them) are never
  /// mentioned in the conversation, a translated name allowed. An argument holding numbers counts as mentioned
  /// only by its numbers: a data set named "Tesla" of figures nobody gave is invented data. A call whose every
  /// number the conversation mentions is not invented: its strings name what the user wrote more shortly
  /// ("350F to C" → 350, "fahrenheit", "celsius").
  static func inventsArguments(
    _ call: Transcript.ToolCall, of tool: Transcript.ToolDefinition, in transcript: Transcript
  ) -> Bool {
    guard let arguments = call.arguments.objectValue else { return false }
    let properties =
      JSONSchema.inliningReferences(in: tool.parameters, maximumDepth: 4)["properties"]?
      .objectValue ?? [:]
    let conversation = GroundingText(transcript.groundingText)
    var counted = 0
    var mentioned = 0
    for (name, value) in arguments {
      var leaves: [GroundingLeaf] = []
      collectLeaves(value, schema: properties[name] ?? [:], into: &leaves)
      guard !leaves.isEmpty else { continue }
      counted += 1
      let numbers = leaves.filter { if case .number = $0 { true } else { false } }
      if (numbers.isEmpty ? leaves : numbers).contains(where: { conversation.mentions($0, fuzzy: true) }) {
        mentioned += 1
      }
    }
    return counted > 0 && mentioned * 2 < counted && !conversation.mentionsEveryNumber(of: call.arguments)
  }

  /// `call` without the optional arguments the user did not give or imply.
  ///
  /// An optional argument stays when the conversation mentions its value: a number it holds (also as a word, "two",
  /// or, for a number from 1 to 12, a month's name in English, French, German, Spanish, Italian or Portuguese), a
  /// word of a string, a day or date word for an ISO date (the model turned "Friday" into a date), any part of a
  /// list or object; a `true` stays when a word of the property's name is mentioned ("done" for `includeDone`). A
  /// value equal to the property's default is dropped too: it changes nothing. Small models fill optional
  /// properties with invented values: a due date for every to-do, a month for a question about now, weights for a
  /// data set. A list of records keeps only those with a figure the user gave (or none at all), and a time zone the
  /// schema asks for by IANA name but given as a city ("Berlin") or as an unknown zone ("Australia/London") becomes
  /// its city's zone (`Europe/Berlin`, `Europe/London`), and a clock time it asks for as 24-hour `HH:MM` but given
  /// as "8:00 AM" becomes `08:00`.
  public static func withoutUngivenArguments(
    _ call: Transcript.ToolCall, of tool: Transcript.ToolDefinition, in transcript: Transcript, today: Date = Date()
  ) -> Transcript.ToolCall {
    guard var arguments = call.arguments.objectValue else { return call }
    let schema = JSONSchema.inliningReferences(in: tool.parameters, maximumDepth: 4)
    let properties = schema["properties"]?.objectValue ?? [:]
    let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
    let conversation = GroundingText(transcript.groundingText)
    var changed = false
    for (name, value) in arguments where !required.contains(name) {
      let property = properties[name] ?? [:]
      let isDefault = property["default"]?.jsonEquals(value) ?? false
      if isDefault || !isGiven(value, named: name, schema: property, in: conversation) {
        arguments[name] = nil
        changed = true
      }
    }
    // A list of records (data sets) keeps the records with something the user gave: a "weights" data set of ones
    // nobody mentioned goes.
    for (name, value) in arguments {
      guard let items = value.arrayValue, items.count > 1, items.allSatisfy({ $0.objectValue != nil }) else { continue }
      let itemSchema = properties[name]?["items"] ?? [:]
      let given = items.filter { item in
        var leaves: [GroundingLeaf] = []
        collectLeaves(item, schema: itemSchema, into: &leaves)
        let numbers = leaves.filter { if case .number = $0 { true } else { false } }
        return numbers.isEmpty || numbers.contains { conversation.mentions($0) }
      }
      if !given.isEmpty, given.count < items.count {
        arguments[name] = .array(given)
        changed = true
      }
    }
    // A date for a day the user named ("on Sunday", "tomorrow") that falls on another day: the date of that day.
    // Only the prompt names the day: a weekday in a tool's output ("day_of_week": "Friday") or an earlier prompt
    // does not, and a date whose day of the month the prompt gives ("Friday the 11th") stands as the user said it.
    let asked = GroundingText(transcript.lastPrompt ?? "")
    if let named = namedDay(in: asked, today: today) {
      for (name, value) in arguments {
        guard let text = value.stringValue, isISODate(text), !text.hasPrefix(named),
          !(Double(text.dropFirst(8).prefix(2)).map(asked.numbers.contains) ?? false)
        else { continue }
        arguments[name] = .string(named)
        changed = true
      }
    }
    // A time zone the schema asks for by IANA name, given as a city: the zone whose last part is that city.
    for (name, value) in arguments {
      guard let text = value.stringValue, !TimeZone.knownTimeZoneIdentifiers.contains(text),
        let description = properties[name]?["description"]?.stringValue, description.contains("IANA"),
        let zone = ianaZone(forCity: String(text.split(separator: "/").last ?? Substring(text)))
      else { continue }
      arguments[name] = .string(zone)
      changed = true
    }
    // A clock time the schema asks for as 24-hour HH:MM, given in another form ("8:00 AM"): that time as HH:MM.
    for (name, value) in arguments {
      guard let text = value.stringValue,
        properties[name]?["description"]?.stringValue?.contains("HH:MM") == true,
        let time = twentyFourHourTime(text)
      else { continue }
      arguments[name] = .string(time)
      changed = true
    }
    guard changed else { return call }
    var pruned = call
    pruned.arguments = .object(arguments)
    return pruned
  }

  /// `call` with every string argument that the model wrapped whole in quote marks (`'JBL Flip 4'`, `"Shape of
  /// You"`, `«Le Monde»`) given as the text inside them: a user quotes a name or a title to set it apart in the
  /// prompt, and the model copies the marks along with it, which no tool wants in the value.
  static func withoutQuoteMarks(_ call: Transcript.ToolCall) -> Transcript.ToolCall {
    var unquoted = call
    unquoted.arguments = withoutQuoteMarks(call.arguments)
    return unquoted
  }

  /// The quote marks that wrap a quotation, by the mark that opens it.
  static let closingQuoteMark: [Character: Character] = [
    "'": "'", "\"": "\"", "‘": "’", "“": "”", "«": "»", "„": "“", "‚": "‘", "「": "」",
  ]

  private static func withoutQuoteMarks(_ value: JSONValue) -> JSONValue {
    switch value {
    case .string(let text):
      let trimmed = text.trimmingCharacters(in: .whitespaces)
      guard trimmed.count > 2, let first = trimmed.first, let closing = closingQuoteMark[first],
        trimmed.last == closing
      else { return value }
      let inside = trimmed.dropFirst().dropLast()
      // 'a' and 'b' is two quotations, not one.
      guard !inside.contains(first), !inside.contains(closing), !inside.trimmingCharacters(in: .whitespaces).isEmpty
      else { return value }
      return .string(String(inside))
    case .array(let items):
      return .array(items.map(withoutQuoteMarks))
    case .object(let members):
      return .object(JSONObject(members.map { ($0.key, withoutQuoteMarks($0.value)) }))
    default:
      return value
    }
  }

  private static func isGiven(_ value: JSONValue, named name: String, schema: JSONValue, in conversation: GroundingText)
    -> Bool
  {
    switch value {
    case .bool(let flag):
      guard flag else { return true }
      let words = TopicWords.split(name).filter { $0.count >= 4 }
      return words.contains { conversation.mentions(.text($0), fuzzy: true) }
    case .string(let text):
      if isISODate(text) {
        // The date itself, or a word of a day or month the model turned into it ("Friday", "December 3").
        return conversation.mentions(.text(text), fuzzy: false)
          || conversation.words.contains { GroundingVocabulary.dayWords.contains(String($0)) }
      }
      return conversation.mentions(.text(text), fuzzy: true)
    case .integer, .real:
      guard let number = value.doubleValue else { return true }
      if conversation.mentions(.number(number)) { return true }
      if let words = GroundingVocabulary.numberWords[Int(number)], number == number.rounded(),
        conversation.words.contains(where: { words.contains(String($0)) })
      {
        return true
      }
      if schema["minimum"]?.doubleValue == 1, schema["maximum"]?.doubleValue == 12, (1...12).contains(number),
        let months = GroundingVocabulary.monthNames[Int(number)]
      {
        return conversation.words.contains { months.contains(String($0)) }
      }
      return false
    case .array, .object:
      // Numbers of a closed range count here: percentiles [1, 2] nobody asked for are not given.
      var leaves: [GroundingLeaf] = []
      collectLeaves(value, schema: schema, into: &leaves, bounded: true)
      return leaves.isEmpty || leaves.contains { conversation.mentions($0, fuzzy: true) }
    case .null:
      return false
    }
  }
}

/// The words a tool is about: its name's parts, and the words of its description and parameters, without the
/// words every question and tool has ("the", "user", "current").
struct TopicWords {
  let words: Set<String>

  /// Quoted names and sample questions ("e.g. \"Boston\"", "what is the weather usually like in Lisbon in
  /// April?": a quotation with a capital) are not the tool's topic: a question about flights from Boston to Lisbon
  /// in April is not about the weather. Quoted units ("km", "fahrenheit") are. The prompts of the tool's examples
  /// (``Transcript/ToolDefinition/examples``) are, but for their capitalised words and the words of their
  /// arguments' text, which are what one request asks about ("How many feet is 3 metres?" gives "feet" and
  /// "metres"; "Weather in Lisbon?" does not give "Lisbon").
  init(_ tool: Transcript.ToolDefinition) {
    let name = TopicWords.split(tool.name).filter { !GuidedToolCalls.genericNameWords.contains($0) }
    var text = name.joined(separator: " ") + " " + tool.description
    TopicWords.collect(tool.parameters, into: &text)
    self.init(text: text, examples: tool.examples)
  }

  /// The words of what the tool is for, not of what it takes: its name's parts, its title and the first sentence of
  /// its description, and its examples' prompts, without the rest of the description and the parameters, whose
  /// words (a title, a time, a place) a request for something else shares by chance.
  init(purposeOf tool: Transcript.ToolDefinition) {
    let name = TopicWords.split(tool.name).filter { !GuidedToolCalls.genericNameWords.contains($0) }
    let text = [
      name.joined(separator: " "), tool.annotations.title ?? "", GuidedToolCalls.summary(of: tool.description),
    ]
    .joined(separator: " ")
    self.init(text: text, examples: tool.examples)
  }

  private init(text: String, examples: [ToolExample]) {
    var text = text
    for quote in PromptList.quotations(text) where quote.contains(where: \.isUppercase) {
      text = text.replacingOccurrences(of: quote, with: " ")
    }
    var words = Set(TopicWords.contentWords(text))
    for example in examples.prefix(ToolExample.mostPerTool) {
      guard let prompt = example.prompt else { continue }
      let given = GuidedToolCalls.texts(in: example.arguments).joined(separator: " ")
      let instance = Set(TopicWords.contentWords(given))
      let lowercase = prompt.split(separator: " ").filter { !($0.first?.isUppercase ?? false) }
      words.formUnion(TopicWords.contentWords(lowercase.joined(separator: " ")).filter { !instance.contains($0) })
    }
    self.words = words
  }

  /// Whether a word of `text` is one of the tool's (``sameWord(_:_:)``). A text without such words (all common, or
  /// too short) is taken as related: there is nothing to judge by.
  func relates(_ text: String) -> Bool {
    let candidates = TopicWords.contentWords(text)
    return candidates.isEmpty || candidates.contains { word in words.contains { TopicWords.sameWord(word, $0) } }
  }

  /// How many different content words of `text` are the tool's (``sameWord(_:_:)``): "What's on my to-do list"
  /// is two words of `todoList` ("todo", "list") and at most one of a weather tool.
  func matches(_ text: String) -> Int {
    Set(TopicWords.contentWords(text)).filter { word in
      words.contains { TopicWords.sameWord(word, $0) }
    }.count
  }

  /// Whether two lowercase words are the same word for the checks: equal, the same but for a last "s" or "e"
  /// ("lists" and "liste"), one the other's plural ("todos" and "todo", "cups" and "cup") or comparative ("rainier"
  /// and "rain", "hotter" and "hot"), or sharing a start of five letters ("recipes" and "recipe", "temperatures" and
  /// "temperature").
  static func sameWord(_ a: String, _ b: String) -> Bool {
    if a == b { return true }
    let (short, long) = a.count <= b.count ? (a, b) : (b, a)
    // A plural, or a comparative or superlative ("rain" and "rainier", "hot" and "hotter", "cold" and "coldest").
    let suffix = String(long.dropFirst(short.count))
    if short.count >= 3, long.hasPrefix(short),
      ["s", "es", "er", "ier", "est", "iest"].contains(suffix)
        || (suffix.first == short.last && ["er", "est"].contains(String(suffix.dropFirst())))
    {
      return true
    }
    // A word and its inflection in another language ("list", "lists" and "liste").
    func stem(_ word: String) -> Substring {
      var stem = Substring(word)
      for letter: Character in ["s", "e"] where stem.count > 4 && stem.last == letter { stem = stem.dropLast() }
      return stem
    }
    if short.count >= 4, stem(a) == stem(b) { return true }
    return short.count >= 5 && a.prefix(5) == b.prefix(5)
  }

  /// The lowercase words of `text` of three letters or more that are not ``GroundingVocabulary/commonWords``.
  static func contentWords(_ text: String) -> [String] {
    // "to-do" and "e-mail" are the words "todo" and "email".
    text.lowercased().replacingOccurrences(of: "-", with: "").split { !($0.isLetter || $0.isNumber) }.map(String.init)
      .filter {
        $0.count >= 3 && !GroundingVocabulary.commonWords.contains($0) && !$0.allSatisfy(\.isNumber)
      }
  }

  /// The family of a tool's name: its first word when more follow and it is no verb of any tool ("todo" for
  /// `todoAdd` and `todoList`; none for `getWeather` or `searchBreadDatabase`).
  static func family(of name: String) -> String? {
    let parts = split(name)
    guard parts.count >= 2, parts[0] != "get", !GuidedToolCalls.genericNameWords.contains(parts[0]) else { return nil }
    return parts[0]
  }

  /// A name's parts: `getCurrentTime`, `get_current_time` → get, current, time.
  static func split(_ name: String) -> [String] {
    var parts: [String] = []
    var part = ""
    for character in name {
      if character == "_" || character == "-" || character == " " || (character.isUppercase && !part.isEmpty) {
        if !part.isEmpty { parts.append(part.lowercased()) }
        part = character.isLetter || character.isNumber ? String(character) : ""
      } else {
        part.append(character)
      }
    }
    if !part.isEmpty { parts.append(part.lowercased()) }
    return parts
  }

  private static func collect(_ schema: JSONValue, into text: inout String) {
    if let description = schema["description"]?.stringValue { text += " " + description }
    for (name, property) in schema["properties"]?.objectValue ?? [:] {
      text += " " + split(name).joined(separator: " ")
      collect(property, into: &text)
    }
    if let items = schema["items"] { collect(items, into: &text) }
  }
}
