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

  /// Splits `text` into scheme, authority, path, query and fragment.
  init(_ text: String) {
    var rest = Substring(text)
    if let hash = rest.firstIndex(of: "#") {
      fragment = String(rest[rest.index(after: hash)...])
      rest = rest[..<hash]
    }
    if let question = rest.firstIndex(of: "?") {
      query = String(rest[rest.index(after: question)...])
      rest = rest[..<question]
    }
    if let colon = rest.firstIndex(of: ":"), Self.isScheme(rest[..<colon]) {
      scheme = String(rest[..<colon])
      rest = rest[rest.index(after: colon)...]
    }
    if rest.hasPrefix("//") {
      rest = rest.dropFirst(2)
      let end = rest.firstIndex(of: "/") ?? rest.endIndex
      authority = String(rest[..<end])
      rest = rest[end...]
    }
    path = String(rest)
  }

  private init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
    self.scheme = scheme
    self.authority = authority
    self.path = path
    self.query = query
    self.fragment = fragment
  }

  /// A scheme is a letter followed by letters, digits, `+`, `-` or `.`.
  private static func isScheme(_ text: Substring) -> Bool {
    guard let first = text.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else {
      return false
    }
    return text.unicodeScalars.allSatisfy {
      $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
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
