import Foundation

/// Words of languages the checks know: months, numbers and days in six languages, and words too common to tell
/// topics apart. Nothing here is about what any tool does: what a tool is about comes from its manifest only.
enum GroundingVocabulary {
  /// Month names (and English abbreviations) by number, in English, French, German, Spanish, Italian and
  /// Portuguese.
  static let monthNames: [Int: Set<String>] = {
    let lists = [
      "january february march april may june july august september october november december",
      "jan feb mar apr may jun jul aug sep oct nov dec",
      "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
      "januar februar märz april mai juni juli august september oktober november dezember",
      "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
      "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
      "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    ]
    return numbered(lists, adding: [9: ["sept"]])
  }()

  /// Number words from 1 to 12, in the same languages.
  static let numberWords: [Int: Set<String>] = {
    let lists = [
      "one two three four five six seven eight nine ten eleven twelve",
      "un deux trois quatre cinq six sept huit neuf dix onze douze",
      "eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
      "uno dos tres cuatro cinco seis siete ocho nueve diez once doce",
      "uno due tre quattro cinque sei sette otto nove dieci undici dodici",
      "um dois três quatro cinco seis sete oito nove dez onze doze",
    ]
    return numbered(
      lists, adding: [1: ["a", "an", "une", "ein", "eine", "una", "uma", "single"], 2: ["duas", "couple", "pair"]])
  }()

  /// Each list's words by their place in it (the first is 1), with `extra` words added.
  private static func numbered(_ lists: [String], adding extra: [Int: Set<String>]) -> [Int: Set<String>] {
    var words = extra
    for list in lists {
      for (index, word) in list.split(separator: " ").enumerated() {
        words[index + 1, default: []].insert(String(word))
      }
    }
    return words
  }

  /// The weekdays from Sunday, each in English, French, German, Spanish and Italian (no abbreviations: "mon" is
  /// also French for "my").
  static let weekdays: [Set<String>] = [
    ["sunday", "dimanche", "sonntag", "domingo", "domenica"],
    ["monday", "lundi", "montag", "lunes", "lunedì"],
    ["tuesday", "mardi", "dienstag", "martes", "martedì"],
    ["wednesday", "mercredi", "mittwoch", "miércoles", "mercoledì"],
    ["thursday", "jeudi", "donnerstag", "jueves", "giovedì"],
    ["friday", "vendredi", "freitag", "viernes", "venerdì"],
    ["saturday", "samedi", "samstag", "sábado", "sabato"],
  ]

  /// Words that name a day or date: a weekday, today, tomorrow, a month, in the same languages ("mon" is left out:
  /// in French it is "my").
  static let dayWords: Set<String> = {
    var words: Set<String> = [
      "today", "tomorrow", "tonight", "yesterday", "week", "weekend", "month", "next", "monday", "tuesday",
      "wednesday", "thursday", "friday", "saturday", "sunday", "tue", "wed", "thu", "fri", "sat", "sun",
      "aujourd", "demain", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "heute",
      "morgen", "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "hoy", "mañana",
      "lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo", "oggi", "domani", "lunedì",
      "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "hoje", "amanhã", "segunda", "terça", "quarta",
      "quinta", "sexta",
    ]
    for names in monthNames.values { words.formUnion(names) }
    return words
  }()

  /// Words in most questions and tool descriptions, which say nothing about a topic.
  static let commonWords: Set<String> = [
    "the", "and", "for", "with", "what", "whats", "how", "who", "when", "where", "which", "why", "can", "could",
    "you", "your", "yours", "are", "was", "were", "this", "that", "these", "those", "does", "did", "please",
    "tell", "give", "show", "find", "get", "gets", "about", "from", "will", "would", "need", "needs", "want",
    "like", "some", "any", "good", "best", "now", "today", "current", "currently", "there", "here", "one", "two",
    "use", "used", "using", "user", "users", "when", "into", "than", "then", "them", "they", "their", "its", "it's",
    "not", "but", "all", "each", "every", "other", "more", "most", "less", "also", "only", "just", "very", "much",
    "many", "may", "might", "should", "must", "has", "have", "had", "been", "being", "returns", "return",
    "returned", "given", "gives", "optional", "default", "defaults", "e.g", "etc", "information", "info",
    "details", "detail", "know", "let", "make", "makes", "see", "say", "says", "said", "look", "looking", "help",
    "thing", "things", "something", "anything", "way", "well", "new", "name", "names", "number", "numbers", "value",
    "values", "result", "results", "tool", "tools", "call", "calls", "error",
    "errors", "string", "integer", "boolean", "object", "array", "true", "false", "null", "our", "his", "her",
    "him", "she", "myself", "quick", "quickly", "right", "really", "thanks", "thank", "hello", "hey", "answer",
    "answers", "question", "questions", "reply",
  ]
}
