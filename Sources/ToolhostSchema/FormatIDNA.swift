// IDNA2008 (RFC 5890-5893) for the idn-hostname and idn-email formats: labels, contextual rules, bidi, Punycode.

/// The IDNA2008 label rules (RFC 5890–5893), derived from the standard library's Unicode
/// properties and a few small tables.
enum IDNA {
  /// The label separators of RFC 3490 section 3.1: `.` and the ideographic and fullwidth
  /// full stops.
  static func isLabelSeparator(_ c: Unicode.Scalar) -> Bool {
    c == "." || c == "\u{3002}" || c == "\u{FF0E}" || c == "\u{FF61}"
  }

  /// A checked label's length in octets in ASCII form, and its Unicode form; nil when it is
  /// not a valid label. Without `international`, only ASCII labels are.
  static func checkLabel(
    _ label: Scalars, international: Bool, requireNFC: Bool
  ) -> (octets: Int, unicode: [Unicode.Scalar])? {
    guard !label.isEmpty else { return nil }
    guard label.allSatisfy(\.isASCII) else {
      // Encoded, more than 59 characters take more than 63 octets.
      guard international, label.count <= 59, isULabel(label, requireNFC: requireNFC) else {
        return nil
      }
      let octets = 4 + Punycode.encode(Array(label)).count
      return octets <= 63 ? (octets, Array(label)) : nil
    }
    let lower = label.map(\.asciiLowercased)
    let isLDH = lower.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "-" }
    guard lower.count <= 63, isLDH, lower.first != "-", lower.last != "-" else { return nil }
    if lower.starts(with: ["x", "n", "-", "-"]) {
      let encoded = lower.dropFirst(4)
      guard let decoded = Punycode.decode(encoded), decoded.contains(where: { !$0.isASCII }),
        Punycode.encode(decoded).elementsEqual(encoded),
        isULabel(decoded[...], requireNFC: requireNFC)
      else { return nil }
      return (lower.count, decoded)
    }
    // Other labels with `--` in the 3rd and 4th positions are reserved (RFC 5891 4.2.3.1).
    if international, lower.count >= 4, lower[2] == "-", lower[3] == "-" { return nil }
    return (lower.count, lower)
  }

  /// Whether `label` is a valid U-label: in NFC (if `requireNFC`), no hyphen at either end or
  /// in both the 3rd and 4th positions, not starting with a combining mark, and each code
  /// point PVALID or allowed where it stands by the CONTEXTJ / CONTEXTO rules of RFC 5892.
  static func isULabel(_ label: Scalars, requireNFC: Bool) -> Bool {
    let s = Array(label)
    guard let first = s.first, first != "-", s.last != "-",
      !(s.count >= 4 && s[2] == "-" && s[3] == "-"), !isMark(first)
    else { return false }
    for i in s.indices {
      switch property(of: s[i]) {
      case .pvalid: continue
      case .contextJ: guard isJoinerAllowed(s, at: i) else { return false }
      case .contextO: guard isContextOAllowed(s, at: i) else { return false }
      case .disallowed: return false
      }
    }
    return !requireNFC || isNFC(s)
  }

  /// Whether `c` is a combining mark (general category Mn, Mc or Me).
  static func isMark(_ c: Unicode.Scalar) -> Bool {
    switch c.properties.generalCategory {
    case .nonspacingMark, .spacingMark, .enclosingMark: return true
    default: return false
    }
  }

  /// Whether `s` is in Unicode Normalization Form C.
  static func isNFC(_ s: [Unicode.Scalar]) -> Bool {
    guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
      return true
    }
    var view = String.UnicodeScalarView()
    view.append(contentsOf: s)
    let text = String(view)
    var span = text.utf8Span
    return span.checkForNFC(quickCheck: false)
  }

  /// The IDNA2008 derived properties (RFC 5892 section 2), UNASSIGNED counted as DISALLOWED.
  enum Property {
    case pvalid, contextJ, contextO, disallowed
  }

  /// The derived property of `c`, by the rules of RFC 5892 section 3 in order.
  static func property(of c: Unicode.Scalar) -> Property {
    switch c.value {
    case 0xDF, 0x3C2, 0x6FD, 0x6FE, 0xF0B, 0x3007:  // Exceptions: PVALID
      return .pvalid
    case 0xB7, 0x375, 0x5F3, 0x5F4, 0x30FB, 0x660...0x669, 0x6F0...0x6F9:  // CONTEXTO
      return .contextO
    case 0x640, 0x7FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B:  // Exceptions: DISALLOWED
      return .disallowed
    case 0x2D, 0x30...0x39, 0x61...0x7A:  // LDH
      return .pvalid
    case 0x200C, 0x200D:  // JoinControl
      return .contextJ
    default:
      break
    }
    let p = c.properties
    // Unassigned, Unstable (approximated by Changes_When_NFKC_Casefolded), IgnorableProperties.
    if p.generalCategory == .unassigned || p.changesWhenNFKCCaseFolded
      || p.isDefaultIgnorableCodePoint || p.isWhitespace || p.isNoncharacterCodePoint
    {
      return .disallowed
    }
    switch c.value {
    case 0x20D0...0x20FF, 0x1D100...0x1D24F:  // IgnorableBlocks
      return .disallowed
    case 0x1100...0x11FF, 0xA960...0xA97F, 0xD7B0...0xD7FF:  // OldHangulJamo
      return .disallowed
    default:
      break
    }
    switch p.generalCategory {  // LetterDigits
    case .lowercaseLetter, .uppercaseLetter, .otherLetter, .decimalNumber, .modifierLetter,
      .nonspacingMark, .spacingMark:
      return .pvalid
    default:
      return .disallowed
    }
  }

  /// RFC 5892 appendix A.1 and A.2: ZERO WIDTH NON-JOINER and JOINER may follow a virama;
  /// the non-joiner may also stand between a left- or dual-joining and a right- or
  /// dual-joining character, with only transparent ones between.
  static func isJoinerAllowed(_ s: [Unicode.Scalar], at i: Int) -> Bool {
    if i > 0, s[i - 1].properties.canonicalCombiningClass == .virama { return true }
    guard s[i] == "\u{200C}",
      let before = s[..<i].last(where: { joiningType($0) != .transparent }),
      let after = s[(i + 1)...].first(where: { joiningType($0) != .transparent })
    else { return false }
    let left = joiningType(before)
    let right = joiningType(after)
    return (left == .left || left == .dual) && (right == .right || right == .dual)
  }

  /// The Unicode Joining_Type values that the ZERO WIDTH NON-JOINER rule looks at.
  enum JoiningType {
    case dual, left, right, transparent, other
  }

  /// The Joining_Type of `c`: from tables, transparent for other marks and format characters.
  static func joiningType(_ c: Unicode.Scalar) -> JoiningType {
    if UnicodeTables.dualJoining.contains(c) { return .dual }
    if UnicodeTables.rightJoining.contains(c) { return .right }
    if UnicodeTables.leftJoining.contains(c) { return .left }
    if c == "\u{200C}" || c == "\u{200D}" { return .other }
    switch c.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return .transparent
    default: return .other
    }
  }

  /// The CONTEXTO rules of RFC 5892 appendix A.3–A.9.
  static func isContextOAllowed(_ s: [Unicode.Scalar], at i: Int) -> Bool {
    let before = i > 0 ? s[i - 1] : nil
    let after = i + 1 < s.count ? s[i + 1] : nil
    switch s[i].value {
    case 0xB7:  // MIDDLE DOT, only in Catalan's "l·l"
      return before == "l" && after == "l"
    case 0x375:  // GREEK LOWER NUMERAL SIGN (KERAIA), before Greek
      return after.map(UnicodeTables.greek.contains) ?? false
    case 0x5F3, 0x5F4:  // HEBREW PUNCTUATION GERESH and GERSHAYIM, after Hebrew
      return before.map(UnicodeTables.hebrew.contains) ?? false
    case 0x30FB:  // KATAKANA MIDDLE DOT, with Hiragana, Katakana or Han in the label
      return s.contains { c in
        c != "\u{30FB}"
          && (UnicodeTables.hiragana.contains(c) || UnicodeTables.katakana.contains(c)
            || UnicodeTables.han.contains(c))
      }
    case 0x660...0x669:  // ARABIC-INDIC DIGITS, not mixed with the extended ones
      return !s.contains { (0x6F0...0x6F9).contains($0.value) }
    case 0x6F0...0x6F9:  // EXTENDED ARABIC-INDIC DIGITS, not mixed with the others
      return !s.contains { (0x660...0x669).contains($0.value) }
    default:
      return false
    }
  }

  /// The Bidi_Class values that the Bidi rule tells apart; `neutral` stands for ES, CS, ET,
  /// ON and BN, which it treats alike.
  enum BidiClass {
    case leftToRight, rightToLeft, arabicLetter, europeanNumber, arabicNumber, nonspacingMark
    case neutral
  }

  /// The Bidi_Class of `c`, approximated for the code points allowed in labels: marks are
  /// NSM, a few digit ranges EN or AN, the right-to-left blocks R or AL, other letters and
  /// digits L (with a few exceptions listed), and the rest neutral.
  static func bidiClass(_ c: Unicode.Scalar) -> BidiClass {
    let category = c.properties.generalCategory
    if UnicodeTables.leftToRightMarks.contains(c) { return .leftToRight }
    if category == .nonspacingMark || category == .enclosingMark { return .nonspacingMark }
    if UnicodeTables.arabicNumber.contains(c) { return .arabicNumber }
    if c.isASCIIDigit || (0x6F0...0x6F9).contains(c.value) { return .europeanNumber }
    if UnicodeTables.rightToLeft.contains(c) { return .rightToLeft }
    if UnicodeTables.arabicLetter.contains(c) { return .arabicLetter }
    if UnicodeTables.neutralLetters.contains(c) { return .neutral }
    if c == "\u{F0B}" { return .leftToRight }  // TIBETAN MARK INTERSYLLABIC TSHEG, PVALID
    switch category {
    case .lowercaseLetter, .uppercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
      .spacingMark, .decimalNumber, .letterNumber:
      return .leftToRight
    default:
      return .neutral
    }
  }

  /// Whether `label` is an RTL label of RFC 5893: one with a character of Bidi class R, AL
  /// or AN. A name with one is a Bidi domain name, whose labels must all meet the Bidi rule.
  static func isRightToLeft(_ label: [Unicode.Scalar]) -> Bool {
    label.contains { [.rightToLeft, .arabicLetter, .arabicNumber].contains(bidiClass($0)) }
  }

  /// The six conditions of the Bidi rule, RFC 5893 section 2.
  static func satisfiesBidiRule(_ label: [Unicode.Scalar]) -> Bool {
    let classes = label.map(bidiClass)
    let last = classes.last { $0 != .nonspacingMark }
    switch classes.first {
    case .rightToLeft, .arabicLetter:
      let ends: [BidiClass] = [.rightToLeft, .arabicLetter, .europeanNumber, .arabicNumber]
      return !classes.contains(.leftToRight) && last.map(ends.contains) == true
        && !(classes.contains(.europeanNumber) && classes.contains(.arabicNumber))
    case .leftToRight:
      let rightToLeft: [BidiClass] = [.rightToLeft, .arabicLetter, .arabicNumber]
      return !classes.contains(where: rightToLeft.contains)
        && (last == .leftToRight || last == .europeanNumber)
    default:
      return false
    }
  }
}

// MARK: - Punycode

/// Punycode (RFC 3492), the encoding of a label's Unicode characters in ASCII after `xn--`.
enum Punycode {
  private static let base = 36
  private static let tMin = 1
  private static let tMax = 26
  private static let skew = 38
  private static let damp = 700
  private static let initialBias = 72
  private static let initialN = 128

  /// The Unicode characters that `input` (lowercase, after `xn--`) encodes; nil when it is
  /// not valid Punycode.
  static func decode(_ input: ArraySlice<Unicode.Scalar>) -> [Unicode.Scalar]? {
    var output: [Unicode.Scalar] = []
    var digits = input
    if let delimiter = input.lastIndex(of: "-") {
      output = Array(input[..<delimiter])
      digits = input[(delimiter + 1)...]
    }
    var n = initialN
    var i = 0
    var bias = initialBias
    var position = digits.startIndex
    while position < digits.endIndex {
      let oldI = i
      var weight = 1
      var k = base
      while true {
        guard position < digits.endIndex, let digit = value(of: digits[position]) else {
          return nil
        }
        position += 1
        let (product, overflow) = digit.multipliedReportingOverflow(by: weight)
        guard !overflow, product <= Int.max - i else { return nil }
        i += product
        let t = threshold(k, bias)
        if digit < t { break }
        let (nextWeight, weightOverflow) = weight.multipliedReportingOverflow(by: base - t)
        guard !weightOverflow else { return nil }
        weight = nextWeight
        k += base
      }
      let count = output.count + 1
      bias = adapt(i - oldI, count, oldI == 0)
      guard i / count <= 0x10FFFF - n else { return nil }
      n += i / count
      i %= count
      guard let scalar = Unicode.Scalar(UInt32(n)) else { return nil }
      output.insert(scalar, at: i)
      i += 1
    }
    return output
  }

  /// The Punycode form of `input` (without `xn--`), in lowercase.
  static func encode(_ input: [Unicode.Scalar]) -> [Unicode.Scalar] {
    var output = input.filter(\.isASCII)
    let basicCount = output.count
    if basicCount > 0 { output.append("-") }
    var n = initialN
    var delta = 0
    var bias = initialBias
    var handled = basicCount
    while handled < input.count {
      guard let m = input.map({ Int($0.value) }).filter({ $0 >= n }).min() else { break }
      delta += (m - n) * (handled + 1)
      n = m
      for c in input {
        if Int(c.value) < n { delta += 1 }
        guard Int(c.value) == n else { continue }
        var q = delta
        var k = base
        while true {
          let t = threshold(k, bias)
          if q < t { break }
          output.append(digit(t + (q - t) % (base - t)))
          q = (q - t) / (base - t)
          k += base
        }
        output.append(digit(q))
        bias = adapt(delta, handled + 1, handled == basicCount)
        delta = 0
        handled += 1
      }
      delta += 1
      n += 1
    }
    return output
  }

  /// The value of a Punycode digit: `a`–`z` (either case) 0–25, `0`–`9` 26–35.
  private static func value(of c: Unicode.Scalar) -> Int? {
    switch c.value {
    case 0x61...0x7A: return Int(c.value - 0x61)
    case 0x41...0x5A: return Int(c.value - 0x41)
    case 0x30...0x39: return Int(c.value - 0x30) + 26
    default: return nil
    }
  }

  /// The lowercase Punycode digit for `value` (0–35).
  private static func digit(_ value: Int) -> Unicode.Scalar {
    Unicode.Scalar(UInt8(truncatingIfNeeded: value < 26 ? 0x61 + value : 0x16 + value))
  }

  /// The threshold `t` for the digit at position `k`.
  private static func threshold(_ k: Int, _ bias: Int) -> Int {
    min(max(k - bias, tMin), tMax)
  }

  /// The bias adaptation of RFC 3492 section 6.1.
  private static func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
    var delta = first ? delta / damp : delta / 2
    delta += delta / count
    var k = 0
    while delta > (base - tMin) * tMax / 2 {
      delta /= base - tMin
      k += base
    }
    return k + (base - tMin + 1) * delta / (delta + skew)
  }
}
