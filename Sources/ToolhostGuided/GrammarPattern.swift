import Foundation

/// A JSON Schema `pattern` rewritten into the regular-expression subset that llama.cpp's schema-to-grammar
/// converters turn into a grammar, so that the local model cannot write a value the pattern refuses.
///
/// The converters take an anchored expression (`^…$`) of literals, classes, groups, alternation and the quantifiers
/// `?`, `*`, `+` and `{n,m}`, and copy classes and literals into the grammar as they are; anything else makes them
/// fail, and a failed conversion unconstrains the whole reply. So the pattern is read here and written again in
/// that subset, or refused (`nil`): shorthand classes become classes (`\d` → `[0-9]`), an escaped character a class
/// of one (`\.` → `[.]`), `.` and negated classes never match a quote or a backslash (which would end the JSON
/// string), non-capturing groups plain groups, and a lazy quantifier a greedy one. Unanchored patterns, look-arounds,
/// back-references, anchors inside and counts above ``maximumCount`` are refused; toolhost's validator still checks
/// every value against the full pattern afterwards.
///
/// ```swift
/// GrammarPattern.rewrite("^\\d{3}-[A-Z]{2}$")   // "^[0-9]{3}-[A-Z]{2}$"
/// GrammarPattern.rewrite("[a-z]+")              // nil: unanchored, so it may match inside a longer value
/// ```
enum GrammarPattern {
  /// The largest repetition count kept: each unit of a bounded count is a nested rule of the grammar, and long
  /// ones make llama.cpp's grammar parser fail.
  static let maximumCount = 32

  /// `pattern` in the converters' subset, or `nil` when it cannot be said there.
  static func rewrite(_ pattern: String) -> String? {
    let characters = Array(pattern)
    guard characters.count >= 2, characters.first == "^", characters.last == "$",
      characters.count < 3 || characters[characters.count - 2] != "\\"
    else { return nil }
    var reader = Reader(characters: Array(characters.dropFirst().dropLast()))
    guard let body = reader.sequence(depth: 0), reader.atEnd else { return nil }
    return "^" + body + "$"
  }

  /// Reads a pattern's body and writes it again.
  private struct Reader {
    let characters: [Character]
    var index = 0

    var atEnd: Bool { index == characters.count }

    /// Alternatives up to the end or a closing parenthesis (left unread).
    mutating func sequence(depth: Int) -> String? {
      var out = ""
      while index < characters.count {
        let character = characters[index]
        if character == ")" { return depth > 0 ? out : nil }
        if character == "|" {
          out.append("|")
          index += 1
          continue
        }
        guard let atom = atom(depth: depth) else { return nil }
        out += atom
        guard let quantifier = quantifier() else { return nil }
        out += quantifier
      }
      return depth == 0 ? out : nil
    }

    /// One literal, class or group.
    mutating func atom(depth: Int) -> String? {
      let character = characters[index]
      index += 1
      switch character {
      case "(":
        if index < characters.count, characters[index] == "?" {
          // Only a non-capturing group; look-arounds and named groups are refused.
          guard index + 1 < characters.count, characters[index + 1] == ":" else { return nil }
          index += 2
        }
        guard depth < 8, let inner = sequence(depth: depth + 1), index < characters.count, characters[index] == ")"
        else { return nil }
        index += 1
        return "(" + inner + ")"
      case "[":
        return characterClass()
      case "\\":
        return escape(inClass: false)
      case ".":
        return #"[^\x22\x5C\x0A\x0D]"#
      case "^", "$", "*", "+", "?", "{", "}", "]":
        return nil
      case "\"":
        return nil
      default:
        return character.isASCII && !character.isWhitespace || character == " " ? String(character) : nil
      }
    }

    /// The rest of a class after its `[`.
    mutating func characterClass() -> String? {
      var out = "["
      var negated = false
      if index < characters.count, characters[index] == "^" {
        negated = true
        out.append("^")
        index += 1
      }
      var members = 0
      while index < characters.count, characters[index] != "]" || members == 0 {
        let character = characters[index]
        index += 1
        members += 1
        switch character {
        case "\\":
          guard let escaped = escape(inClass: true) else { return nil }
          out += escaped
        case "\"", "[":
          return nil
        default:
          guard character.isASCII, !character.isNewline else { return nil }
          out.append(character)
        }
      }
      guard index < characters.count, members > 0 else { return nil }
      index += 1
      // A negated class must not let the value end its JSON string, nor write a raw line break.
      if negated { out += #"\x22\x5C\x0A\x0D"# }
      return out + "]"
    }

    /// The rest of an escape after its backslash: a shorthand class, or the escaped character as a literal.
    mutating func escape(inClass: Bool) -> String? {
      guard index < characters.count else { return nil }
      let character = characters[index]
      index += 1
      let shorthand: String? =
        switch character {
        case "d": "0-9"
        case "w": "A-Za-z0-9_"
        case "s": " "
        default: nil
        }
      if let shorthand { return inClass ? shorthand : "[" + shorthand + "]" }
      // A digit or letter after a backslash is a back-reference or a class this subset does not have.
      guard !character.isLetter, !character.isNumber, character.isASCII, character != "\"", character != "\\" else {
        return nil
      }
      if inClass { return character == "]" || character == "-" || character == "^" ? nil : String(character) }
      return "[" + String(character) + "]"
    }

    /// The quantifier after an atom, if any (`""` when there is none), or `nil` when it cannot be kept.
    mutating func quantifier() -> String? {
      guard index < characters.count else { return "" }
      var out: String
      switch characters[index] {
      case "?", "*", "+":
        out = String(characters[index])
        index += 1
      case "{":
        guard let close = characters[index...].firstIndex(of: "}") else { return nil }
        let inside = String(characters[(index + 1)..<close])
        let bounds = inside.split(separator: ",", omittingEmptySubsequences: false).map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        guard (1...2).contains(bounds.count), let low = Int(bounds[0]), low <= maximumCount else { return nil }
        if bounds.count == 2, !bounds[1].isEmpty {
          guard let high = Int(bounds[1]), high >= low, high <= maximumCount else { return nil }
        }
        out = "{" + bounds.joined(separator: ",") + "}"
        index = close + 1
      default:
        return ""
      }
      // A lazy or possessive quantifier matches the same values.
      if index < characters.count, characters[index] == "?" || characters[index] == "+" { index += 1 }
      return out
    }
  }
}
