import Foundation
import ToolhostJSON
public import ToolhostSession

/// Ranks tools against a request with BM25 over each tool's name, description and argument names and descriptions,
/// the way "tool search" in coding assistants narrows a long tool list. Pure functions, no I/O.
///
/// ```swift
/// let ranked = ToolRanking.rank(tools, for: "What's the weather in Boston?")
/// // ranked.first?.tool.name == "getWeather"
/// ```
public enum ToolRanking {
  /// One tool and its score (0 when no word of the request is in its text).
  public struct Ranked: Sendable {
    /// The tool.
    public var tool: Transcript.ToolDefinition
    /// Its BM25 score.
    public var score: Double
  }

  /// `tools` ordered by BM25 score for `query`, best first; ties keep the given order.
  public static func rank(
    _ tools: [Transcript.ToolDefinition], for query: String, k1: Double = 1.2, b: Double = 0.75
  ) -> [Ranked] {
    guard !tools.isEmpty else { return [] }
    let documents = tools.map { terms(in: text(of: $0)) }
    let average = Double(documents.map(\.count).reduce(0, +)) / Double(documents.count)
    let queryTerms = Set(terms(in: query))
    var frequency: [String: Int] = [:]
    for document in documents {
      for term in Set(document) where queryTerms.contains(term) { frequency[term, default: 0] += 1 }
    }
    let n = Double(documents.count)
    var ranked: [(offset: Int, element: Ranked)] = []
    for (i, document) in documents.enumerated() {
      var counts: [String: Int] = [:]
      for term in document where queryTerms.contains(term) { counts[term, default: 0] += 1 }
      var score = 0.0
      let lengthRatio: Double = Double(document.count) / max(average, 1)
      let norm: Double = k1 * (1 - b + b * lengthRatio)
      for (term, count) in counts {
        let df = Double(frequency[term] ?? 0)
        let idf = log(1 + (n - df + 0.5) / (df + 0.5))
        let f = Double(count)
        let weight: Double = f * (k1 + 1) / (f + norm)
        score += idf * weight
      }
      ranked.append((i, Ranked(tool: tools[i], score: score)))
    }
    ranked.sort { $0.element.score != $1.element.score ? $0.element.score > $1.element.score : $0.offset < $1.offset }
    return ranked.map(\.element)
  }

  /// The words a tool is found by: its name twice (split at capitals and underscores), its description, and each
  /// argument's name and description.
  static func text(of tool: Transcript.ToolDefinition) -> String {
    var parts = [tool.name, tool.name, tool.description]
    if let properties = tool.parameters["properties"]?.objectValue {
      for (name, property) in properties {
        parts.append(name)
        if let description = property["description"]?.stringValue { parts.append(description) }
      }
    }
    return parts.joined(separator: " ")
  }

  /// Lower-case terms without common English words, with simple plural and verb endings removed; `getWeather`
  /// gives `get` and `weather`, `to-do` gives `todo` (and `to`, `do`, which are common words).
  public static func terms(in text: String) -> [String] {
    var words: [String] = []
    var current = ""
    var hyphenated = ""
    var previousLower = false
    func flush(endOfHyphenation: Bool) {
      if !current.isEmpty { words.append(current) }
      current = ""
      if endOfHyphenation {
        if hyphenated.contains("-") { words.append(hyphenated.replacingOccurrences(of: "-", with: "")) }
        hyphenated = ""
      }
    }
    for character in text {
      if character.isLetter || character.isNumber {
        // A capital after a lower-case letter starts a new word (camelCase).
        if character.isUppercase && previousLower { flush(endOfHyphenation: false) }
        current.append(Character(character.lowercased()))
        hyphenated.append(Character(character.lowercased()))
        previousLower = character.isLowercase
      } else if character == "-" && !current.isEmpty {
        flush(endOfHyphenation: false)
        hyphenated.append("-")
        previousLower = false
      } else {
        flush(endOfHyphenation: true)
        previousLower = false
      }
    }
    flush(endOfHyphenation: true)
    return words.filter { !stopWords.contains($0) }.map(stem)
  }

  static func stem(_ word: String) -> String {
    for suffix in ["ing", "ies", "es", "ed", "s"] where word.count > suffix.count + 3 && word.hasSuffix(suffix) {
      return String(word.dropLast(suffix.count)) + (suffix == "ies" ? "y" : "")
    }
    return word
  }

  static let stopWords: Set<String> = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "give", "how", "i", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "please", "show", "so", "tell", "that", "the", "their",
    "them", "then", "there", "these", "this", "to", "up", "us", "was", "we", "what", "when", "where", "which", "who",
    "why", "will", "with", "you", "your", "yes", "no", "not", "s", "t", "m",
  ]
}
