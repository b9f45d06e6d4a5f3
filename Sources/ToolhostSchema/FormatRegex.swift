// ECMA-262 regular expression syntax, for the regex format.

/// A syntax check of ECMA-262 regular expression patterns (section 22.2.1) as parsed with the
/// `u` flag, so that Annex B's leniencies, such as `\a`, a lone `]` or `{`, or `\8` without
/// eight groups, are errors. `\p{…}` names are not checked against Unicode's.
struct ECMAScriptPattern {
  private let s: [Unicode.Scalar]
  private var i = 0
  private var depth = 0
  private var captureCount = 0
  private var disjunctionCount = 0
  /// The disjunctions that the parse is in, each with the index of its current alternative.
  private var path: [Place] = []
  /// The places of the named groups so far, by name.
  private var groupPlaces: [String: [[Place]]] = [:]
  private var highestBackReference = 0
  private var namedReferences: [String] = []

  /// One step of a place in the pattern: a disjunction and the index of an alternative.
  private typealias Place = (disjunction: Int, alternative: Int)

  /// A character class element: one code point, or a class escape such as `\d`.
  private enum ClassAtom {
    case character(UInt32)
    case set
  }

  init(_ pattern: String) {
    s = Array(pattern.unicodeScalars)
  }

  /// Whether the whole pattern parses, and its back references name groups it has.
  mutating func isValid() -> Bool {
    guard disjunction(), i == s.count else { return false }
    return highestBackReference <= captureCount
      && namedReferences.allSatisfy { groupPlaces[$0] != nil }
  }

  /// The character `offset` places ahead, if any.
  private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
    i + offset < s.count ? s[i + offset] : nil
  }

  /// Skips `c` if it comes next.
  private mutating func eat(_ c: Unicode.Scalar) -> Bool {
    guard peek() == c else { return false }
    i += 1
    return true
  }

  /// `Disjunction`: alternatives of terms, separated by `|`.
  private mutating func disjunction() -> Bool {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 200 else { return false }
    path.append((disjunctionCount, 0))
    disjunctionCount += 1
    defer { path.removeLast() }
    repeat {
      while let c = peek(), c != "|", c != ")" {
        guard term() else { return false }
      }
      path[path.count - 1].alternative += 1
    } while eat("|")
    return true
  }

  /// `Term`: an assertion (`^`, `$`, `\b`, `\B`, a lookaround), or an atom and an optional
  /// quantifier.
  private mutating func term() -> Bool {
    if peek() == "^" || peek() == "$" {
      i += 1
      return true
    }
    if peek() == "\\", peek(1) == "b" || peek(1) == "B" {
      i += 2
      return true
    }
    if peek() == "(", peek(1) == "?" {
      if peek(2) == "=" || peek(2) == "!" {
        i += 3
        return disjunction() && eat(")")
      }
      if peek(2) == "<", peek(3) == "=" || peek(3) == "!" {
        i += 4
        return disjunction() && eat(")")
      }
    }
    return atom() && quantifier()
  }

  /// `Atom`: `.`, a group, a class, an escape, or a character other than a syntax one.
  private mutating func atom() -> Bool {
    guard let c = peek() else { return false }
    i += 1
    switch c {
    case "(": return group()
    case "[": return characterClass()
    case "\\": return atomEscape()
    case "*", "+", "?", "{", "}", "]", ")", "|": return false
    default: return true
    }
  }

  /// The rest of a group after `(`: capturing, named (`(?<name>`), non-capturing (`(?:`), or
  /// with modifiers (`(?i-m:`).
  private mutating func group() -> Bool {
    if eat("?") {
      if eat("<") {
        guard let name = groupName(), eat(">") else { return false }
        let others = groupPlaces[name, default: []]
        guard !others.contains(where: mightBothParticipate) else { return false }
        groupPlaces[name] = others + [path]
        captureCount += 1
      } else if !eat(":") {
        guard modifiers() else { return false }
      }
    } else {
      captureCount += 1
    }
    return disjunction() && eat(")")
  }

  /// Whether a group here and one at `other` might both take part in a match: a name may
  /// repeat only in different alternatives (ES2025).
  private func mightBothParticipate(_ other: [Place]) -> Bool {
    for (mine, theirs) in zip(path, other) where mine != theirs {
      return mine.disjunction != theirs.disjunction
    }
    return true
  }

  /// The flags and colon of `(?ims-ims:`: each of `i`, `m`, `s` at most once, one at least.
  private mutating func modifiers() -> Bool {
    var seen: Set<Unicode.Scalar> = []
    var removing = false
    while let c = peek(), c != ":" {
      if c == "-" && !removing {
        removing = true
      } else {
        guard c == "i" || c == "m" || c == "s", seen.insert(c).inserted else { return false }
      }
      i += 1
    }
    return !seen.isEmpty && eat(":")
  }

  /// An optional `Quantifier`: `*`, `+`, `?`, `{n}`, `{n,}` or `{n,m}` with n ≤ m, and then
  /// an optional `?`.
  private mutating func quantifier() -> Bool {
    switch peek() {
    case "*", "+", "?":
      i += 1
    case "{":
      i += 1
      let low = digits()
      var high = low
      if eat(",") { high = digits() }
      guard !low.isEmpty, eat("}") else { return false }
      if !high.isEmpty && isGreater(low, high) { return false }
    default:
      return true
    }
    _ = eat("?")
    return true
  }

  /// The values of the ASCII digits that come next.
  private mutating func digits() -> [UInt32] {
    var result: [UInt32] = []
    while let c = peek(), c.isASCIIDigit {
      result.append(c.value - 0x30)
      i += 1
    }
    return result
  }

  /// Whether the decimal number with digits `a` is greater than that with digits `b`.
  private func isGreater(_ a: [UInt32], _ b: [UInt32]) -> Bool {
    let x = a.drop { $0 == 0 }
    let y = b.drop { $0 == 0 }
    guard x.count == y.count else { return x.count > y.count }
    return y.lexicographicallyPrecedes(x)
  }

  /// An `AtomEscape` after `\`: a back reference (`\1`, `\k<name>`), a class escape such as
  /// `\d` or `\p{L}`, or a `CharacterEscape`.
  private mutating func atomEscape() -> Bool {
    if eat("k") {
      guard eat("<"), let name = groupName(), eat(">") else { return false }
      namedReferences.append(name)
      return true
    }
    if let c = peek(), c.isASCIIDigit, c != "0" {
      let number = digits().reduce(0) { min($0 * 10 + Int($1), 1 << 30) }
      highestBackReference = max(highestBackReference, number)
      return true
    }
    return classEscape(inClass: false) != nil
  }

  /// After `\`: a class escape (`\d`, `\p{…}`, …) or a `CharacterEscape`, and inside a class
  /// also `\b` and `\-`; nil when it is none of these.
  private mutating func classEscape(inClass: Bool) -> ClassAtom? {
    guard let c = peek() else { return nil }
    i += 1
    switch c {
    case "d", "D", "s", "S", "w", "W": return .set
    case "p", "P": return propertyName() ? .set : nil
    case "f": return .character(0x0C)
    case "n": return .character(0x0A)
    case "r": return .character(0x0D)
    case "t": return .character(0x09)
    case "v": return .character(0x0B)
    case "c":
      guard let letter = peek(), letter.isASCIILetter else { return nil }
      i += 1
      return .character(letter.value % 32)
    case "0": return peek()?.isASCIIDigit == true ? nil : .character(0)
    case "x": return hexNumber(length: 2).map(ClassAtom.character)
    case "u": return unicodeEscape().map(ClassAtom.character)
    case "b" where inClass: return .character(0x08)
    case "-" where inClass: return .character(0x2D)
    case "^", "$", "\\", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "/":
      return .character(c.value)
    default: return nil
    }
  }

  /// The `{Name}` or `{Name=Value}` of `\p` or `\P`.
  private mutating func propertyName() -> Bool {
    guard eat("{") else { return false }
    var parts = 0
    repeat {
      let start = i
      while let c = peek(), c.isASCIILetter || c.isASCIIDigit || c == "_" { i += 1 }
      guard i > start else { return false }
      parts += 1
    } while parts < 2 && eat("=")
    return eat("}")
  }

  /// The value of `length` hex digits.
  private mutating func hexNumber(length: Int) -> UInt32? {
    var value: UInt32 = 0
    for _ in 0..<length {
      guard let digit = peek()?.hexDigitValue else { return nil }
      value = value * 16 + digit
      i += 1
    }
    return value
  }

  /// The code point after `\u`: `XXXX` (a surrogate pair `\uD83D\uDE00` counting as one) or
  /// `{X…}` up to 10FFFF.
  private mutating func unicodeEscape() -> UInt32? {
    if eat("{") {
      var value: UInt32 = 0
      var count = 0
      while let digit = peek()?.hexDigitValue {
        value = value * 16 + digit
        guard value <= 0x10FFFF else { return nil }
        i += 1
        count += 1
      }
      return count > 0 && eat("}") ? value : nil
    }
    guard let unit = hexNumber(length: 4) else { return nil }
    if (0xD800...0xDBFF).contains(unit), peek() == "\\", peek(1) == "u" {
      let start = i
      i += 2
      if let trail = hexNumber(length: 4), (0xDC00...0xDFFF).contains(trail) {
        return 0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00)
      }
      i = start
    }
    return unit
  }

  /// The rest of a `CharacterClass` after `[`: an optional `^`, then atoms and ranges `a-z`
  /// whose ends are single characters in order, then `]`.
  private mutating func characterClass() -> Bool {
    _ = eat("^")
    while let c = peek(), c != "]" {
      guard let low = classAtom() else { return false }
      if peek() == "-", let next = peek(1), next != "]" {
        i += 1
        guard case .character(let from) = low, case .character(let to)? = classAtom(),
          from <= to
        else { return false }
      }
    }
    return eat("]")
  }

  /// One class element: an escape, or any other character.
  private mutating func classAtom() -> ClassAtom? {
    guard let c = peek() else { return nil }
    i += 1
    return c == "\\" ? classEscape(inClass: true) : .character(c.value)
  }

  /// A `RegExpIdentifierName`: `$`, `_` or an ID_Start character, then these, ID_Continue
  /// characters and joiners; any of them may be written `\uXXXX` or `\u{X…}`.
  private mutating func groupName() -> String? {
    var name = String.UnicodeScalarView()
    while let c = identifierCharacter(first: name.isEmpty) { name.append(c) }
    return name.isEmpty ? nil : String(name)
  }

  /// The next identifier character, consumed; nil (consuming nothing) when there is none.
  private mutating func identifierCharacter(first: Bool) -> Unicode.Scalar? {
    let start = i
    guard var c = peek() else { return nil }
    i += 1
    if c == "\\" {
      guard eat("u"), let value = unicodeEscape(), let escaped = Unicode.Scalar(value) else {
        i = start
        return nil
      }
      c = escaped
    }
    let p = c.properties
    let isJoiner = c == "\u{200C}" || c == "\u{200D}"
    if c == "$" || c == "_" || (first ? p.isIDStart : p.isIDContinue || isJoiner) { return c }
    i = start
    return nil
  }
}

// MARK: - Unicode tables
