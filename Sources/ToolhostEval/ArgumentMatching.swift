// Whether a call's arguments are what a question expects, and which arguments nobody asked for.
public import ToolhostJSON

/// Whether an argument value is what was expected: numbers as numbers, strings as a case-insensitive substring, an
/// array as alternatives (or, compared element by element, the same list: `[12, 15]` is met by `[12, 15]`), an
/// array of objects as objects each met by some element of the array, an object as a part of an object (each key
/// matching, an expected `false` also met by absence) or of some element of an array.
public func matches(_ actual: JSONValue?, _ expected: JSONValue) -> Bool {
  guard let actual else { return false }
  if let options = expected.arrayValue {
    if !options.isEmpty, options.allSatisfy({ $0.objectValue != nil }) {
      guard let elements = actual.arrayValue else { return false }
      return options.allSatisfy { option in elements.contains { matches($0, option) } }
    }
    return options.contains { matches(actual, $0) } || sameList(actual, options)
  }
  if let parts = expected.objectValue {
    if let elements = actual.arrayValue { return elements.contains { matches($0, expected) } }
    return actual.objectValue != nil && argumentsMatch(actual, parts)
  }
  if let e = expected.doubleValue, expected.stringValue == nil {
    return actual.doubleValue == e
  }
  if let e = expected.stringValue?.lowercased(), let a = actual.stringValue?.lowercased() {
    return a.contains(e)
  }
  return actual.jsonEquals(expected)
}

/// Whether `arguments` has every expected key matching (``matches(_:_:)``); an expected `false` is also met by
/// leaving the key out (its default).
public func argumentsMatch(_ arguments: JSONValue, _ expected: JSONObject) -> Bool {
  expected.allSatisfy { key, value in
    value == .bool(false) && arguments[key] == nil || matches(arguments[key], value)
  }
}

/// Whether `actual` is an array of the same length as `expected` with equal elements, numbers compared as numbers.
private func sameList(_ actual: JSONValue, _ expected: [JSONValue]) -> Bool {
  guard let elements = actual.arrayValue, elements.count == expected.count else { return false }
  return zip(elements, expected).allSatisfy { a, e in
    if let x = a.doubleValue, let y = e.doubleValue { return x == y }
    return a.jsonEquals(e)
  }
}

/// The argument names of `arguments` that are neither expected nor allowed: dotted (`datasets.weights`) inside a
/// nested object the expectation describes (an expected object, or array of objects), and, where the argument is an
/// array of such objects, an element that meets none of them (`datasets[1]`: a data set nobody gave).
public func inventedArguments(_ arguments: JSONValue, expected: JSONObject, allowed: Set<String>) -> [String] {
  var invented: [String] = []
  collectInvented(arguments, expected: expected, allowed: allowed, prefix: "", into: &invented)
  var seen = Set<String>()
  return invented.filter { seen.insert($0).inserted }
}

private func collectInvented(
  _ value: JSONValue, expected: JSONObject, allowed: Set<String>, prefix: String, into invented: inout [String]
) {
  guard let object = value.objectValue else { return }
  for (key, member) in object {
    let path = prefix + key
    guard let expectation = expected[key] else {
      if !allowed.contains(path) { invented.append(path) }
      continue
    }
    // The objects a nested expectation describes, and the keys they name.
    let parts = ([expectation] + (expectation.arrayValue ?? [])).filter { $0.objectValue != nil }
    guard !parts.isEmpty else { continue }
    var keys = JSONObject()
    for part in parts { for (k, v) in part.objectValue ?? [:] { keys[k] = v } }
    if let elements = member.arrayValue {
      for (n, element) in elements.enumerated() {
        if parts.contains(where: { matches(element, $0) }) {
          collectInvented(element, expected: keys, allowed: allowed, prefix: path + ".", into: &invented)
        } else {
          invented.append("\(path)[\(n)]")
        }
      }
    } else {
      collectInvented(member, expected: keys, allowed: allowed, prefix: path + ".", into: &invented)
    }
  }
}
