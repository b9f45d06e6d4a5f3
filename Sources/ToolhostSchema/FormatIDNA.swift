// IDNA2008 (RFC 5890-5893) for the idn-hostname and idn-email formats: labels, contextual rules, bidi, Punycode.

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

// MARK: - ECMA-262 patterns

/// A syntax check of ECMA-262 regular expression patterns (section 22.2.1) as parsed with the
/// `u` flag, so that Annex B's leniencies, such as `\a`, a lone `]` or `{`, or `\8` without
/// eight groups, are errors. `\p{…}` names are not checked against Unicode's.

/// Sorted code point ranges, read from a list of hexadecimal code points and ranges such as
/// `"5D0-5EA 5F0"`.
struct CodePointSet: Sendable {
  private let ranges: [ClosedRange<UInt32>]

  init(_ list: String) {
    ranges = list.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { item in
      let ends = item.split(separator: "-").compactMap { UInt32($0, radix: 16) }
      guard let low = ends.first, let high = ends.last, ends.count <= 2, low <= high else {
        return nil
      }
      return low...high
    }.sorted { $0.lowerBound < $1.lowerBound }
  }

  /// Whether `c` is in one of the ranges.
  func contains(_ c: Unicode.Scalar) -> Bool {
    var low = 0
    var high = ranges.count
    while low < high {
      let middle = (low + high) / 2
      if ranges[middle].upperBound < c.value {
        low = middle + 1
      } else if ranges[middle].lowerBound > c.value {
        high = middle
      } else {
        return true
      }
    }
    return false
  }
}

/// The few Unicode data that `Unicode.Scalar.Properties` lacks, for the IDNA2008 rules.
enum UnicodeTables {
  /// Joining_Type D (dual-joining), from Unicode's ArabicShaping.txt.
  static let dualJoining = CodePointSet(
    """
    620 626 628 62A-62E 633-63F 641-647 649-64A 66E-66F 678-687 69A-6BF 6C1-6C2 6CC 6CE
    6D0-6D1 6FA-6FC 6FF 712-714 71A-71D 71F-727 729 72B 72D-72E 74E-758 75C-76A 76D-770 772
    775-777 77A-77F 7CA-7EA 841-845 848 84A-853 855 860 862-865 868 886 889-88D 88F 8A0-8A9
    8AF-8B0 8B3-8B8 8BA-8C8 1807 1820-1878 1887-18A8 18AA A840-A871 10AC0-10AC4 10AD3-10AD6
    10AD8-10ADC 10ADE-10AE0 10AEB-10AEE 10B80 10B82 10B86-10B88 10B8A-10B8B 10B8D 10B90
    10BAD-10BAE 10D01-10D21 10D23 10EC3-10EC4 10EC6-10EC7 10F30-10F32 10F34-10F44 10F51-10F53
    10F70-10F73 10F76-10F81 10FB0 10FB2-10FB3 10FB8 10FBB-10FBC 10FBE-10FBF 10FC1 10FC4 10FCA
    1E900-1E943
    """)

  /// Joining_Type R (right-joining), from Unicode's ArabicShaping.txt.
  static let rightJoining = CodePointSet(
    """
    622-625 627 629 62F-632 648 671-673 675-677 688-699 6C0 6C3-6CB 6CD 6CF 6D2-6D3 6D5
    6EE-6EF 710 715-719 71E 728 72A 72C 72F 74D 759-75B 76B-76C 771 773-774 778-779 840
    846-847 849 854 856-858 867 869-86A 870-882 88E 8AA-8AC 8AE 8B1-8B2 8B9 10AC5 10AC7
    10AC9-10ACA 10ACE-10AD2 10ADD 10AE1 10AE4 10AEF 10B81 10B83-10B85 10B89 10B8C 10B8E-10B8F
    10B91 10BA9-10BAC 10D22 10EC2 10F33 10F54 10F74-10F75 10FB4-10FB6 10FB9-10FBA 10FBD
    10FC2-10FC3 10FC9
    """)

  /// Joining_Type L (left-joining), from Unicode's ArabicShaping.txt.
  static let leftJoining = CodePointSet("A872 10ACD 10AD7 10D00 10ED9-10EEE 10FCB")

  /// Script=Greek, from Unicode's Scripts.txt.
  static let greek = CodePointSet(
    """
    370-373 375-377 37A-37D 37F 384 386 388-38A 38C 38E-3A1 3A3-3E1 3F0-3FF 1D26-1D2A
    1D5D-1D61 1D66-1D6A 1DBF 1F00-1F15 1F18-1F1D 1F20-1F45 1F48-1F4D 1F50-1F57 1F59 1F5B 1F5D
    1F5F-1F7D 1F80-1FB4 1FB6-1FC4 1FC6-1FD3 1FD6-1FDB 1FDD-1FEF 1FF2-1FF4 1FF6-1FFE 2126 AB65
    10140-1018E 101A0 1D200-1D245 1DFF3-1DFF4
    """)

  /// Script=Hebrew, from Unicode's Scripts.txt.
  static let hebrew = CodePointSet(
    "591-5C9 5D0-5EA 5EF-5F4 FB1D-FB36 FB38-FB3C FB3E FB40-FB41 FB43-FB44 FB46-FB4F")

  /// Script=Hiragana, from Unicode's Scripts.txt.
  static let hiragana = CodePointSet(
    "3041-3096 309D-309F 1B001-1B11F 1B123 1B132 1B150-1B152 1F200")

  /// Script=Katakana, from Unicode's Scripts.txt.
  static let katakana = CodePointSet(
    """
    30A1-30FA 30FD-30FF 31F0-31FF 32D0-32FE 3300-3357 FF66-FF6F FF71-FF9D 1AFF0-1AFF3
    1AFF5-1AFFB 1AFFD-1AFFE 1B000 1B120-1B122 1B124-1B128 1B155 1B164-1B168
    """)

  /// Script=Han, from Unicode's Scripts.txt.
  static let han = CodePointSet(
    """
    2E80-2E99 2E9B-2EF3 2F00-2FD5 3005 3007 3021-3029 3038-303B 3400-4DBF 4E00-9FFF F900-FA6D
    FA70-FAD9 16FE2-16FE3 16FF0-16FF6 20000-2A6DF 2A700-2B81E 2B820-2CEAD 2CEB0-2EBE0
    2EBF0-2EE5D 2F800-2FA1D 30000-3134A 31350-33479
    """)

  /// Bidi_Class R, by the blocks whose unlisted code points default to it.
  static let rightToLeft = CodePointSet(
    """
    590-5FF 7C0-85F FB1D-FB4F 10800-10CFF 10D40-10EBF 10F00-10F2F 10F70-10FFF 1E800-1EC6F
    1ECC0-1ECFF 1ED50-1EDFF 1EF00-1EFFF
    """)

  /// Bidi_Class AL, by the blocks whose unlisted code points default to it.
  static let arabicLetter = CodePointSet(
    """
    600-7BF 860-8FF FB50-FDCF FDF0-FDFF FE70-FEFF 10D00-10D3F 10EC0-10EFF 10F30-10F6F
    1EC70-1ECBF 1ED00-1ED4F 1EE00-1EEFF
    """)

  /// Nonspacing marks (PVALID) of Bidi_Class L.
  static let leftToRightMarks = CodePointSet("CBF CC6 11A07-11A08 11C3F")

  /// Modifier letters (PVALID) of Bidi_Class ON.
  static let neutralLetters = CodePointSet("2B9-2BA 2C6-2CF 2EC 2E2F A67F A717-A71F A788")

  /// Bidi_Class AN (Arabic numbers).
  static let arabicNumber = CodePointSet(
    "600-605 660-669 66B-66C 6DD 890-891 8E2 10D30-10D39 10E60-10E7E")
}
