/// A URI reference split into its five parts (RFC 3986, section 3), and resolved against a base (section 5.2).
///
/// Parsing never fails: any string splits into parts, as RFC 3986's appendix B regular expression does. That is all
/// `$id` and `$ref` need; nothing here checks that the parts hold only allowed characters.
struct URIReference: Equatable {
  var scheme: String?
  var authority: String?
  var path: String
  var query: String?
  var fragment: String?

  /// Splits `text` into scheme, authority, path, query and fragment. The delimiters are ASCII, so the text is
  /// scanned as UTF-8.
  init(_ text: String) {
    let bytes = text.utf8
    var start = bytes.startIndex
    var end = bytes.endIndex
    if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) {
      fragment = String(text[bytes.index(after: hash)...])
      end = hash
    }
    if let question = bytes[start..<end].firstIndex(of: UInt8(ascii: "?")) {
      query = String(text[bytes.index(after: question)..<end])
      end = question
    }
    if let colon = bytes[start..<end].firstIndex(where: { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "/") }),
      bytes[colon] == UInt8(ascii: ":"), Self.isScheme(bytes[start..<colon])
    {
      scheme = String(text[start..<colon])
      start = bytes.index(after: colon)
    }
    let rest = bytes[start..<end]
    if rest.starts(with: "//".utf8) {
      let authorityStart = bytes.index(start, offsetBy: 2)
      let authorityEnd = bytes[authorityStart..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
      authority = String(text[authorityStart..<authorityEnd])
      start = authorityEnd
    }
    path = String(text[start..<end])
  }

  private init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
    self.scheme = scheme
    self.authority = authority
    self.path = path
    self.query = query
    self.fragment = fragment
  }

  /// A scheme is a letter followed by letters, digits, `+`, `-` or `.`.
  private static func isScheme(_ bytes: Substring.UTF8View.SubSequence) -> Bool {
    func isLetter(_ b: UInt8) -> Bool { (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) }
    guard let first = bytes.first, isLetter(first) else { return false }
    return bytes.allSatisfy {
      isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
        || $0 == UInt8(ascii: ".")
    }
  }

  /// The reference written out again, with the fragment (if any).
  var text: String {
    var result = ""
    if let scheme { result += scheme + ":" }
    if let authority { result += "//" + authority }
    result += path
    if let query { result += "?" + query }
    if let fragment { result += "#" + fragment }
    return result
  }

  /// The reference without its fragment, as text: the identifier of a schema resource.
  var withoutFragment: String {
    var copy = self
    copy.fragment = nil
    return copy.text
  }

  /// This reference resolved against `base` (RFC 3986, section 5.2.2, non-strict).
  ///
  /// A base without a scheme (a schema with no `$id` and no retrieval URI) is used as it is: a relative reference then
  /// stays relative, with its dot segments removed, so that two references to the same relative name still meet.
  func resolved(against base: URIReference) -> URIReference {
    if scheme != nil {
      return URIReference(
        scheme: scheme, authority: authority, path: Self.removingDotSegments(path), query: query, fragment: fragment)
    }
    if authority != nil {
      return URIReference(
        scheme: base.scheme, authority: authority, path: Self.removingDotSegments(path), query: query,
        fragment: fragment)
    }
    if path.isEmpty {
      return URIReference(
        scheme: base.scheme, authority: base.authority, path: base.path, query: query ?? base.query,
        fragment: fragment)
    }
    let merged: String
    if path.hasPrefix("/") {
      merged = path
    } else if base.authority != nil && base.path.isEmpty {
      merged = "/" + path
    } else if let slash = base.path.lastIndex(of: "/") {
      merged = base.path[...slash] + path
    } else {
      merged = path
    }
    return URIReference(
      scheme: base.scheme, authority: base.authority, path: Self.removingDotSegments(merged), query: query,
      fragment: fragment)
  }

  /// Removes `.` and `..` segments (RFC 3986, section 5.2.4).
  static func removingDotSegments(_ path: String) -> String {
    guard path.contains(".") else { return path }
    var output: [Substring] = []
    let absolute = path.hasPrefix("/")
    let segments = path.split(separator: "/", omittingEmptySubsequences: false)
    for (i, segment) in segments.enumerated() {
      if absolute && i == 0 { continue }
      let last = i == segments.count - 1
      switch segment {
      case ".":
        if last { output.append("") }
      case "..":
        if !output.isEmpty { output.removeLast() }
        if last { output.append("") }
      default:
        output.append(segment)
      }
    }
    return (absolute ? "/" : "") + output.joined(separator: "/")
  }
}
