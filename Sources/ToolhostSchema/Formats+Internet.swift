// The `format` assertions for Internet names and addresses: e-mail addresses, host names, IP addresses, URIs and
// IRIs, and URI templates.

extension FormatChecks {
  // MARK: - E-mail addresses (RFC 5321, RFC 5322, RFC 6531)

  /// `email` (`international` false) and `idn-email` (true): an RFC 5321 `Mailbox`, that is
  /// a `dot-atom` or quoted local part, `@`, and a host name or a bracketed IPv4 or `IPv6:`
  /// address literal. RFC 6531 adds non-ASCII characters to the local part, and IDNA names.
  static func isEmail(_ value: String, international: Bool) -> Bool {
    let s = scalars(value)
    guard let at = s.lastIndex(of: "@"), isLocalPart(s[..<at], international: international)
    else { return false }
    let domain = s[(at + 1)...]
    guard domain.first == "[", domain.last == "]" else {
      // The suite takes a domain that is not in NFC as valid in an address.
      return isDomainName(domain, international: international, requireNFC: false)
    }
    let literal = domain.dropFirst().dropLast()
    if literal.prefix(5).map(\.asciiLowercased).elementsEqual("ipv6:".unicodeScalars) {
      return isIPv6Address(literal.dropFirst(5))
    }
    return isIPv4Address(literal)
  }

  /// An RFC 5322 `dot-atom-text` or `quoted-string` local part of at most 64 octets.
  private static func isLocalPart(_ s: Scalars, international: Bool) -> Bool {
    guard !s.isEmpty, s.reduce(0, { $0 + UTF8.width($1) }) <= 64 else { return false }
    if s.first == "\"" { return isQuotedString(s, international: international) }
    var afterDot = true
    for c in s {
      if c == "." {
        guard !afterDot else { return false }
        afterDot = true
      } else if c.isASCII ? isAtext(c) : international {
        afterDot = false
      } else {
        return false
      }
    }
    return !afterDot
  }

  /// `"…"` holding printable ASCII (and, when `international`, non-ASCII) characters, with
  /// `"` and `\` escaped by a backslash.
  private static func isQuotedString(_ s: Scalars, international: Bool) -> Bool {
    guard s.count >= 2, s.first == "\"", s.last == "\"" else { return false }
    var escaped = false
    for c in s.dropFirst().dropLast() {
      let printable = (0x20...0x7E).contains(c.value) || c == "\t" || (international && !c.isASCII)
      if escaped {
        guard printable else { return false }
        escaped = false
      } else if c == "\\" {
        escaped = true
      } else if c == "\"" || !printable {
        return false
      }
    }
    return !escaped
  }

  /// RFC 5322 `atext`: ASCII letters, digits and ``!#$%&'*+-/=?^_`{|}~``.
  private static func isAtext(_ c: Unicode.Scalar) -> Bool {
    c.isASCIILetter || c.isASCIIDigit || "!#$%&'*+-/=?^_`{|}~".unicodeScalars.contains(c)
  }

  // MARK: - Host names (RFC 1123, IDNA2008)

  /// `hostname`: RFC 1123 labels of ASCII letters, digits and inner hyphens, 1–63 octets each
  /// and 253 in all; a label starting `xn--` must be a valid IDNA2008 A-label.
  static func isHostname(_ value: String) -> Bool {
    isDomainName(scalars(value), international: false, requireNFC: true)
  }

  /// `idn-hostname`: as `hostname`, but labels may also be IDNA2008 U-labels (RFC 5890–5893),
  /// and the ideographic and fullwidth full stops separate labels too.
  static func isIDNHostname(_ value: String) -> Bool {
    isDomainName(scalars(value), international: true, requireNFC: true)
  }

  /// A host name: each label valid, 253 octets at most in ASCII form, and, in a name with a
  /// right-to-left label, the Bidi rule of RFC 5893 met by every label.
  private static func isDomainName(_ s: Scalars, international: Bool, requireNFC: Bool) -> Bool {
    guard !s.isEmpty else { return false }
    let labels = s.split(omittingEmptySubsequences: false) {
      international ? IDNA.isLabelSeparator($0) : $0 == "."
    }
    var octets = labels.count - 1
    var unicodeLabels: [[Unicode.Scalar]] = []
    for label in labels {
      guard
        let checked = IDNA.checkLabel(
          label, international: international, requireNFC: requireNFC)
      else { return false }
      octets += checked.octets
      unicodeLabels.append(checked.unicode)
    }
    guard octets <= 253 else { return false }
    return !unicodeLabels.contains(where: IDNA.isRightToLeft)
      || unicodeLabels.allSatisfy(IDNA.satisfiesBidiRule)
  }

  // MARK: - IP addresses

  /// `ipv4`: an RFC 2673 dotted-quad, four decimal numbers 0–255 without leading zeros.
  static func isIPv4(_ value: String) -> Bool {
    isIPv4Address(scalars(value))
  }

  /// `ipv6`: the RFC 4291 section 2.2 text forms: eight groups of 1–4 hex digits, one `::`
  /// for a run of zero groups, the last two groups as dotted IPv4; no zone, no prefix length.
  static func isIPv6(_ value: String) -> Bool {
    isIPv6Address(scalars(value))
  }

  /// Four decimal numbers 0–255, without leading zeros, separated by dots.
  private static func isIPv4Address(_ s: Scalars) -> Bool {
    let parts = s.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4
      && parts.allSatisfy { part in
        guard part.first != "0" || part.count == 1, (1...3).contains(part.count),
          let value = number(part, 0, part.count)
        else { return false }
        return value <= 255
      }
  }

  /// Hex groups separated by colons: eight, or fewer with one `::`.
  private static func isIPv6Address(_ s: Scalars) -> Bool {
    var gap: Int?
    for i in s.indices.dropLast() where s[i] == ":" && s[i + 1] == ":" {
      guard gap == nil else { return false }
      gap = i
    }
    guard let gap else { return groupCount(s, ipv4Last: true) == 8 }
    let head = s[..<gap]
    let tail = s[(gap + 2)...]
    guard let before = head.isEmpty ? 0 : groupCount(head, ipv4Last: false),
      let after = tail.isEmpty ? 0 : groupCount(tail, ipv4Last: true)
    else { return false }
    return before + after <= 7
  }

  /// The number of 16-bit groups in colon-separated hex groups, the last of which may be a
  /// dotted IPv4 address (two groups) if `ipv4Last`; nil when one is malformed.
  private static func groupCount(_ s: Scalars, ipv4Last: Bool) -> Int? {
    let groups = s.split(separator: ":", omittingEmptySubsequences: false)
    var count = 0
    for (n, group) in groups.enumerated() {
      if ipv4Last && n == groups.count - 1 && group.contains(".") {
        guard isIPv4Address(group) else { return nil }
        count += 2
      } else {
        guard (1...4).contains(group.count), group.allSatisfy(\.isASCIIHexDigit) else {
          return nil
        }
        count += 1
      }
    }
    return count
  }

  // MARK: - URIs and IRIs (RFC 3986, RFC 3987)

  /// `uri` and `uri-reference` (`international` false), `iri` and `iri-reference` (true): the
  /// `URI` / `URI-reference` syntax of RFC 3986, or that of RFC 3987, which also allows
  /// non-ASCII `ucschar`s (and private-use ones in the query). Only a `reference` may be
  /// relative, without a scheme.
  static func isURI(_ value: String, international: Bool, reference: Bool) -> Bool {
    let s = scalars(value)
    let colon = schemeEnd(s)
    guard colon != nil || reference else { return false }
    var rest = colon.map { s[($0 + 1)...] } ?? s
    if let hash = rest.firstIndex(of: "#") {
      let fragment = rest[(hash + 1)...]
      guard isURIText(fragment, extra: "/?:@", international: international) else {
        return false
      }
      rest = rest[..<hash]
    }
    if let question = rest.firstIndex(of: "?") {
      let query = rest[(question + 1)...]
      guard
        isURIText(query, extra: "/?:@", international: international, privateUse: international)
      else { return false }
      rest = rest[..<question]
    }
    if rest.starts(with: ["/", "/"]) {
      let authority = rest.dropFirst(2)
      let path = authority[(authority.firstIndex(of: "/") ?? authority.endIndex)...]
      return isAuthority(authority[..<path.startIndex], international: international)
        && isURIText(path, extra: "/:@", international: international)
    }
    // A relative path's first segment cannot hold a colon: it would read as a scheme.
    let firstSegment = rest[..<(rest.firstIndex(of: "/") ?? rest.endIndex)]
    guard colon != nil || !firstSegment.contains(":") else { return false }
    return isURIText(rest, extra: "/:@", international: international)
  }

  /// The index of the `:` after an RFC 3986 `scheme` (a letter, then letters, digits, `+`,
  /// `-` or `.`) that `s` starts with; nil when it starts with none.
  private static func schemeEnd(_ s: Scalars) -> Int? {
    guard let first = s.first, first.isASCIILetter, let colon = s.firstIndex(of: ":") else {
      return nil
    }
    let isScheme = s[..<colon].allSatisfy {
      $0.isASCIILetter || $0.isASCIIDigit || $0 == "+" || $0 == "-" || $0 == "."
    }
    return isScheme ? colon : nil
  }

  /// RFC 3986 `authority`: `[userinfo@]host[:port]`, the host a registered name or a
  /// bracketed IPv6 or IPvFuture literal.
  private static func isAuthority(_ s: Scalars, international: Bool) -> Bool {
    var host = s
    if let at = s.firstIndex(of: "@") {
      guard isURIText(s[..<at], extra: ":", international: international) else { return false }
      host = s[(at + 1)...]
    }
    let port: Scalars
    if host.first == "[" {
      guard let close = host.firstIndex(of: "]"), isIPLiteral(host[(host.startIndex + 1)..<close])
      else { return false }
      let after = host[(close + 1)...]
      guard after.isEmpty || after.first == ":" else { return false }
      port = after.dropFirst()
    } else {
      let colon = host.firstIndex(of: ":") ?? host.endIndex
      guard isURIText(host[..<colon], extra: "", international: international) else {
        return false
      }
      port = host[colon...].dropFirst()
    }
    return port.allSatisfy(\.isASCIIDigit)
  }

  /// The inside of an RFC 3986 `IP-literal`: an IPv6 address, or `v`, hex digits, `.` and
  /// text (IPvFuture).
  private static func isIPLiteral(_ s: Scalars) -> Bool {
    guard s.first == "v" || s.first == "V" else { return isIPv6Address(s) }
    guard let dot = s.firstIndex(of: ".") else { return false }
    let version = s[(s.startIndex + 1)..<dot]
    let text = s[(dot + 1)...]
    return !version.isEmpty && version.allSatisfy(\.isASCIIHexDigit) && !text.isEmpty
      && text.allSatisfy { isUnreservedOrSubDelim($0) || $0 == ":" }
  }

  /// Whether `s` consists of RFC 3986 `unreserved` and `sub-delims` characters, the ASCII
  /// ones in `extra`, percent-encoded octets and, when `international`, RFC 3987 `ucschar`s
  /// (and `iprivate` ones when `privateUse`).
  private static func isURIText(
    _ s: Scalars, extra: String, international: Bool, privateUse: Bool = false
  ) -> Bool {
    allPercentEncodedOr(s) { c, _ in
      c.isASCII
        ? isUnreservedOrSubDelim(c) || extra.unicodeScalars.contains(c)
        : international && (isUCSChar(c) || (privateUse && isPrivateUse(c)))
    }
  }

  /// Whether every character of `s` is part of a percent-encoded octet or one that `allowed` accepts (given the
  /// character and its index).
  private static func allPercentEncodedOr(_ s: Scalars, _ allowed: (Unicode.Scalar, Int) -> Bool) -> Bool {
    var i = s.startIndex
    while i < s.endIndex {
      if s[i] == "%" {
        guard isPercentEncoded(s, at: i) else { return false }
        i += 3
        continue
      }
      guard allowed(s[i], i) else { return false }
      i += 1
    }
    return true
  }

  /// RFC 3986 `unreserved` (letters, digits, `-._~`) and `sub-delims` (`!$&'()*+,;=`).
  private static func isUnreservedOrSubDelim(_ c: Unicode.Scalar) -> Bool {
    c.isASCIILetter || c.isASCIIDigit || "-._~!$&'()*+,;=".unicodeScalars.contains(c)
  }

  /// `%` and two hex digits at `i`.
  private static func isPercentEncoded(_ s: Scalars, at i: Int) -> Bool {
    i + 2 < s.endIndex && s[i + 1].isASCIIHexDigit && s[i + 2].isASCIIHexDigit
  }

  /// RFC 3987 `ucschar`: the non-ASCII characters allowed in IRIs.
  private static func isUCSChar(_ c: Unicode.Scalar) -> Bool {
    switch c.value {
    case 0xA0...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFEF: return true
    case 0x10000...0xDFFFF, 0xE1000...0xEFFFF: return c.value & 0xFFFF <= 0xFFFD
    default: return false
    }
  }

  /// RFC 3987 `iprivate`: private-use characters, allowed in an IRI's query.
  private static func isPrivateUse(_ c: Unicode.Scalar) -> Bool {
    switch c.value {
    case 0xE000...0xF8FF: return true
    case 0xF0000...0x10FFFF: return c.value & 0xFFFF <= 0xFFFD
    default: return false
    }
  }

  // MARK: - URI templates (RFC 6570)

  /// `uri-template`: RFC 6570 literals and `{…}` expressions: an optional operator, then
  /// comma-separated variable names, each with an optional `:length` prefix or `*` explode.
  static func isURITemplate(_ value: String) -> Bool {
    let s = scalars(value)
    var i = s.startIndex
    while i < s.endIndex {
      switch s[i] {
      case "{":
        guard let close = s[i...].firstIndex(of: "}"),
          isTemplateExpression(s[(i + 1)..<close])
        else { return false }
        i = close + 1
      case "%":
        guard isPercentEncoded(s, at: i) else { return false }
        i += 3
      default:
        guard isTemplateLiteral(s[i]) else { return false }
        i += 1
      }
    }
    return true
  }

  /// A `literals` character: printable ASCII other than ``"%<>\^`{|}``, or a `ucschar` or
  /// `iprivate`. (RFC 6570's grammar also leaves out `'`, a URI sub-delim; the suite, and
  /// this check, allow it.)
  private static func isTemplateLiteral(_ c: Unicode.Scalar) -> Bool {
    guard c.isASCII else { return isUCSChar(c) || isPrivateUse(c) }
    return (0x21...0x7E).contains(c.value) && !"\"%<>\\^`{|}".unicodeScalars.contains(c)
  }

  /// The inside of `{…}`: an optional operator, then `varspec`s separated by commas.
  private static func isTemplateExpression(_ s: Scalars) -> Bool {
    var body = s
    if let first = body.first, "+#./;?&=,!@|".unicodeScalars.contains(first) {
      body = body.dropFirst()
    }
    return !body.isEmpty
      && body.split(separator: ",", omittingEmptySubsequences: false).allSatisfy(isVarspec)
  }

  /// A `varspec`: a `varname`, then optionally `:` and a length 1–9999, or `*`.
  private static func isVarspec(_ s: Scalars) -> Bool {
    var name = s
    if s.last == "*" {
      name = s.dropLast()
    } else if let colon = s.firstIndex(of: ":") {
      let length = s[(colon + 1)...]
      guard (1...4).contains(length.count), length.first != "0",
        length.allSatisfy(\.isASCIIDigit)
      else { return false }
      name = s[..<colon]
    }
    return isVarname(name)
  }

  /// A `varname`: ASCII letters, digits, `_` and percent-encoded octets, single dots between.
  private static func isVarname(_ s: Scalars) -> Bool {
    guard !s.isEmpty, s.first != ".", s.last != "." else { return false }
    return allPercentEncodedOr(s) { c, i in
      c.isASCIILetter || c.isASCIIDigit || c == "_" || (c == "." && s[i - 1] != ".")
    }
  }
}
