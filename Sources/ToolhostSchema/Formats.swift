// The `format` assertions of JSON Schema draft 2020-12 (validation vocabulary, section 7),
// written against the Swift standard library alone: no Foundation.

/// The `format` values of JSON Schema draft 2020-12 checked as assertions.
enum FormatChecks {
  /// A check of one format: whether a string is valid for it.
  typealias Check = @Sendable (String) -> Bool

  /// The check of each format this validator knows, by name; the compiler looks one up once per `format` keyword.
  static let checks: [String: Check] = [
    "date-time": isDateTime, "date": isDate, "time": isTime, "duration": isDuration,
    "email": { isEmail($0, international: false) }, "idn-email": { isEmail($0, international: true) },
    "hostname": isHostname, "idn-hostname": isIDNHostname, "ipv4": isIPv4, "ipv6": isIPv6,
    "uri": { isURI($0, international: false, reference: false) },
    "uri-reference": { isURI($0, international: false, reference: true) },
    "iri": { isURI($0, international: true, reference: false) },
    "iri-reference": { isURI($0, international: true, reference: true) },
    "uri-template": isURITemplate, "json-pointer": isJSONPointer, "relative-json-pointer": isRelativeJSONPointer,
    "regex": isRegex, "uuid": isUUID,
  ]

  /// Whether `value` is valid for `format`; `nil` when the format is not one this validator
  /// knows (then it is only an annotation).
  static func check(_ format: String, _ value: String) -> Bool? {
    checks[format]?(value)
  }

  /// The format names known.
  static var known: Set<String> { Set(checks.keys) }

  // MARK: - Dates and times (RFC 3339 section 5.6)

  /// `date-time`: an RFC 3339 `full-date`, `T` (either case) and a `full-time`.
  static func isDateTime(_ value: String) -> Bool {
    let s = scalars(value)
    guard s.count > 11, s[10] == "T" || s[10] == "t" else { return false }
    return isFullDate(s[..<10]) && isFullTime(s[11...])
  }

  /// `date`: an RFC 3339 `full-date`, `YYYY-MM-DD`, naming a day that exists.
  static func isDate(_ value: String) -> Bool {
    isFullDate(scalars(value))
  }

  /// `time`: an RFC 3339 `full-time`: `HH:MM:SS`, an optional fraction and a zone offset; a
  /// leap second (`:60`) only where the time is 23:59 in UTC.
  static func isTime(_ value: String) -> Bool {
    isFullTime(scalars(value))
  }

  /// `YYYY-MM-DD` with a month 01–12 and a day that the month has in that year.
  private static func isFullDate(_ s: Scalars) -> Bool {
    guard s.count == 10, character(s, 4) == "-", character(s, 7) == "-",
      let year = number(s, 0, 4), let month = number(s, 5, 2), let day = number(s, 8, 2),
      (1...12).contains(month)
    else { return false }
    return day >= 1 && day <= daysIn(month: month, year: year)
  }

  /// The number of days of `month` (1–12) in the Gregorian `year`.
  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// `HH:MM:SS[.fraction]` and a `time-offset`, with a leap second only at 23:59:60 UTC.
  private static func isFullTime(_ s: Scalars) -> Bool {
    guard character(s, 2) == ":", character(s, 5) == ":",
      let hour = number(s, 0, 2), let minute = number(s, 3, 2), let second = number(s, 6, 2),
      hour <= 23, minute <= 59, second <= 60
    else { return false }
    var rest = s.dropFirst(8)
    if rest.first == "." {
      let fraction = rest.dropFirst().prefix(while: \.isASCIIDigit)
      guard !fraction.isEmpty else { return false }
      rest = rest[fraction.endIndex...]
    }
    guard let offset = offsetMinutes(rest) else { return false }
    guard second == 60 else { return true }
    let utc = ((hour * 60 + minute - offset) % 1440 + 1440) % 1440
    return utc == 23 * 60 + 59
  }

  /// The offset east of UTC, in minutes, of a `time-offset`: `Z`, `z`, `+HH:MM` or `-HH:MM`.
  private static func offsetMinutes(_ s: Scalars) -> Int? {
    if s.count == 1, s.first == "Z" || s.first == "z" { return 0 }
    guard s.count == 6, let sign = s.first, sign == "+" || sign == "-", character(s, 3) == ":",
      let hours = number(s, 1, 2), let minutes = number(s, 4, 2), hours <= 23, minutes <= 59
    else { return nil }
    return (sign == "+" ? 1 : -1) * (hours * 60 + minutes)
  }

  /// `duration`: RFC 3339 appendix A, such as `P1Y2M3DT4H5M6S`, `PT36H` or `P2W`: whole
  /// numbers, units in order and without gaps (`P1Y2D` is not one), weeks alone.
  static func isDuration(_ value: String) -> Bool {
    let s = scalars(value)
    guard s.first == "P" else { return false }
    var dateUnits: [Unicode.Scalar] = []
    var timeUnits: [Unicode.Scalar] = []
    var inTime = false
    var i = 1
    while i < s.count {
      if s[i] == "T" {
        guard !inTime else { return false }
        inTime = true
        i += 1
        continue
      }
      let start = i
      while i < s.count, s[i].isASCIIDigit { i += 1 }
      guard i > start, i < s.count else { return false }
      if inTime { timeUnits.append(s[i]) } else { dateUnits.append(s[i]) }
      i += 1
    }
    if dateUnits == ["W"] { return !inTime }
    guard !dateUnits.isEmpty || !timeUnits.isEmpty, !inTime || !timeUnits.isEmpty else {
      return false
    }
    return isRun(dateUnits, of: ["Y", "M", "D"]) && isRun(timeUnits, of: ["H", "M", "S"])
  }

  /// Whether `units` are consecutive entries of `order`: `M D` of `Y M D`, but not `Y D`.
  private static func isRun(_ units: [Unicode.Scalar], of order: [Unicode.Scalar]) -> Bool {
    guard let first = units.first else { return true }
    guard let start = order.firstIndex(of: first), start + units.count <= order.count else {
      return false
    }
    return order[start..<start + units.count].elementsEqual(units)
  }

  // MARK: - JSON pointers (RFC 6901, draft-bhutton-relative-json-pointer-00)

  /// `json-pointer`: empty, or `/`-prefixed reference tokens with `~` only in `~0` and `~1`.
  static func isJSONPointer(_ value: String) -> Bool {
    isPointer(scalars(value))
  }

  /// `relative-json-pointer`: a non-negative integer without leading zeros, then `#` or a
  /// JSON pointer.
  static func isRelativeJSONPointer(_ value: String) -> Bool {
    let s = scalars(value)
    let digits = s.prefix(while: \.isASCIIDigit)
    guard !digits.isEmpty, digits.first != "0" || digits.count == 1 else { return false }
    let rest = s[digits.endIndex...]
    return rest.elementsEqual(["#"]) || isPointer(rest)
  }

  /// The JSON pointer syntax of RFC 6901.
  private static func isPointer(_ s: Scalars) -> Bool {
    guard s.isEmpty || s.first == "/" else { return false }
    for i in s.indices where s[i] == "~" {
      guard i + 1 < s.endIndex, s[i + 1] == "0" || s[i + 1] == "1" else { return false }
    }
    return true
  }

  // MARK: - Regular expressions and UUIDs

  /// `regex`: an ECMA-262 regular expression pattern, checked as with the `u` flag.
  static func isRegex(_ value: String) -> Bool {
    var pattern = ECMAScriptPattern(value)
    return pattern.isValid()
  }

  /// `uuid`: RFC 4122's `8-4-4-4-12` hexadecimal digits (either case) with hyphens.
  static func isUUID(_ value: String) -> Bool {
    let s = scalars(value)
    return s.count == 36
      && s.indices.allSatisfy { i in
        [8, 13, 18, 23].contains(i) ? s[i] == "-" : s[i].isASCIIHexDigit
      }
  }

  // MARK: - Helpers

  /// The Unicode scalars of `value`, indexed from 0.
  static func scalars(_ value: String) -> Scalars {
    Array(value.unicodeScalars)[...]
  }

  /// The character `offset` places into `s`, if there is one.
  private static func character(_ s: Scalars, _ offset: Int) -> Unicode.Scalar? {
    let i = s.startIndex + offset
    return i < s.endIndex ? s[i] : nil
  }

  /// The value of the `count` ASCII digits `offset` places into `s`; nil if they are not
  /// all there.
  static func number(_ s: Scalars, _ offset: Int, _ count: Int) -> Int? {
    let start = s.startIndex + offset
    guard start + count <= s.endIndex else { return nil }
    var value = 0
    for c in s[start..<start + count] {
      guard let digit = c.asciiDigitValue else { return nil }
      value = value * 10 + digit
    }
    return value
  }
}

/// Part of a string's Unicode scalars.
typealias Scalars = ArraySlice<Unicode.Scalar>

extension Unicode.Scalar {
  /// The value of an ASCII digit `0`–`9` (not other scripts' digits).
  var asciiDigitValue: Int? {
    isASCIIDigit ? Int(value - 0x30) : nil
  }

  /// Whether this is an ASCII digit `0`–`9`.
  var isASCIIDigit: Bool {
    (0x30...0x39).contains(value)
  }

  /// Whether this is an ASCII letter.
  var isASCIILetter: Bool {
    (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
  }

  /// Whether this is an ASCII hexadecimal digit, in either case.
  var isASCIIHexDigit: Bool {
    hexDigitValue != nil
  }

  /// The value of an ASCII hexadecimal digit.
  var hexDigitValue: UInt32? {
    switch value {
    case 0x30...0x39: return value - 0x30
    case 0x41...0x46: return value - 0x37
    case 0x61...0x66: return value - 0x57
    default: return nil
    }
  }

  /// This character with ASCII capitals made small.
  var asciiLowercased: Unicode.Scalar {
    guard (0x41...0x5A).contains(value) else { return self }
    return Unicode.Scalar(UInt8(truncatingIfNeeded: value + 0x20))
  }
}
