import Foundation
import ToolhostJSON

/// The differential generator's subschemas: keywords, references and patterns.
extension DifferentialGenerator {
  // MARK: - Subschemas

  mutating func subschema(_ context: Context) -> JSONValue {
    if context.depth > 0 {
      if rng.chance(0.04) { return true }
      if rng.chance(0.02) { return false }
    }
    let candidates = referenceCandidates(context)
    if !candidates.isEmpty && rng.chance(context.depth >= maxDepth ? 0.35 : 0.15) {
      var object: JSONObject = ["$ref": .string(reference(to: rng.pick(candidates), from: context.resource))]
      if rng.chance(0.3) && context.depth < maxDepth {
        for (key, value) in body(context.deeper(consuming: false)) where key != "$ref" { object[key] = value }
      }
      return .object(object)
    }
    if context.depth >= maxDepth { return leaf() }
    return .object(body(context))
  }

  /// A schema with no subschemas.
  mutating func leaf() -> JSONValue {
    switch rng.below(10) {
    case 0: return ["type": .string(rng.pick(["string", "integer", "number", "object", "array", "boolean", "null"]))]
    case 1: return ["minimum": number(rng.pick([-1, 0, 2, 0.5]))]
    case 2: return ["const": rng.pick(Self.specialValues)]
    case 3: return ["enum": .array(rng.distinct(Self.specialValues, count: rng.int(1...3)))]
    case 4: return ["pattern": .string(pattern(Self.letters))]
    case 5: return ["maxLength": .integer(Int64(rng.int(0...3)))]
    case 6: return ["multipleOf": rng.pick([0.5, 2, 0.1] as [JSONValue])]
    case 7: return ["type": ["string", "null"]]
    case 8: return ["minItems": 1, "uniqueItems": true]
    default: return true
    }
  }

  mutating func body(_ context: Context) -> JSONObject {
    let focus = context.focus ?? self.focus()
    var object = JSONObject()
    if rng.chance(0.6) { object["type"] = typeKeyword(focus) }
    switch focus {
    case .object: objectKeywords(&object, context)
    case .array: arrayKeywords(&object, context)
    case .string: stringKeywords(&object)
    case .number, .integer: numberKeywords(&object)
    case .boolean, .null, .any: break
    }
    if rng.chance(focus == .boolean || focus == .null || focus == .any ? 0.3 : 0.07) {
      if rng.chance(0.45) {
        object["const"] = rng.pick(Self.specialValues)
      } else {
        object["enum"] = .array(rng.distinct(Self.specialValues, count: rng.int(1...4)))
      }
    }
    if rng.chance([0.4, 0.22, 0.1, 0][min(context.depth, 3)]) {
      combinator(&object, context, focus)
      if rng.chance(0.25) { combinator(&object, context, focus) }
    }
    let applicators = ["allOf", "anyOf", "oneOf", "if", "$ref", "dependentSchemas", "not"]
    let applied = applicators.contains { object[$0] != nil }
    if (focus == .object || (focus == .any && rng.chance(0.3))) && rng.chance(applied ? 0.15 : 0.03) {
      object["unevaluatedProperties"] = rng.chance(0.55) ? false : small(context.deeper(consuming: true))
    }
    let itemApplicators = applicators + ["prefixItems", "contains"]
    if (focus == .array || (focus == .any && rng.chance(0.3)))
      && rng.chance(itemApplicators.contains { object[$0] != nil } ? 0.15 : 0.03)
    {
      object["unevaluatedItems"] = rng.chance(0.55) ? false : small(context.deeper(consuming: true))
    }
    if rng.chance(0.08) {
      let (key, value): (String, JSONValue) = rng.pick([
        ("title", "A title"), ("description", "Described."), ("$comment", "a comment"), ("default", 3),
        ("examples", [1, "x"]), ("deprecated", true), ("x-extension", ["type": "string"]), ("readOnly", true),
        ("format", .string(rng.pick(["email", "date", "uri", "ipv4", "uuid", "date-time", "no-such-format"]))),
      ])
      object[key] = value
    }
    return object
  }

  /// A small subschema: deep enough to be cheap.
  mutating func small(_ context: Context) -> JSONValue {
    subschema(context.deeper(consuming: false, focus: context.focus, by: 1))
  }

  mutating func focus() -> Focus {
    let all: [Focus] = [.object, .array, .string, .number, .integer, .boolean, .null, .any]
    return all[rng.weighted([26, 20, 16, 10, 10, 4, 3, 11])]
  }

  mutating func typeKeyword(_ focus: Focus) -> JSONValue {
    let names = ["object", "array", "string", "number", "integer", "boolean", "null"]
    let name: String
    switch focus {
    case .object: name = "object"
    case .array: name = "array"
    case .string: name = "string"
    case .number: name = "number"
    case .integer: name = "integer"
    case .boolean: name = "boolean"
    case .null: name = "null"
    case .any: name = rng.pick(names)
    }
    if rng.chance(0.22) {
      var list = [name] + rng.distinct(names.filter { $0 != name }, count: rng.int(1...2))
      if rng.chance(0.5) { list.reverse() }
      return .array(list.map { .string($0) })
    }
    if rng.chance(0.03) { return [.string(name)] }
    return .string(name)
  }

  mutating func objectKeywords(_ object: inout JSONObject, _ context: Context) {
    var names: [String] = []
    if rng.chance(0.7) {
      names = rng.distinct(Self.keys, count: rng.int(1...3))
      var properties = JSONObject()
      for name in names { properties[name] = subschema(context.deeper(consuming: true)) }
      object["properties"] = .object(properties)
    }
    if rng.chance(0.45) {
      let from = !names.isEmpty && rng.chance(0.75) ? names : Self.keys
      object["required"] = .array(rng.distinct(from, count: rng.int(1...2)).map { .string($0) })
    }
    if rng.chance(0.18) {
      var patterns = JSONObject()
      for _ in 0..<rng.int(1...2) {
        patterns[pattern(Self.keyLetters)] = subschema(context.deeper(consuming: true))
      }
      object["patternProperties"] = .object(patterns)
    }
    if rng.chance(0.3) {
      object["additionalProperties"] = rng.chance(0.5) ? false : small(context.deeper(consuming: true))
    }
    if rng.chance(0.1) {
      switch rng.below(6) {
      case 0: object["propertyNames"] = ["pattern": .string(pattern(Self.keyLetters))]
      case 1: object["propertyNames"] = ["maxLength": .integer(Int64(rng.int(1...3)))]
      case 2: object["propertyNames"] = ["minLength": 1]
      case 3: object["propertyNames"] = ["enum": .array(rng.distinct(Self.keys, count: 3).map { .string($0) })]
      case 4: object["propertyNames"] = false
      default: object["propertyNames"] = ["not": ["const": "a"]]
      }
    }
    if rng.chance(0.15) { object["minProperties"] = .integer(Int64(rng.int(0...2))) }
    if rng.chance(0.15) { object["maxProperties"] = .integer(Int64(rng.int(1...3))) }
    if rng.chance(0.14) {
      let pair = rng.distinct(Self.keys, count: 3)
      object["dependentRequired"] = [pair[0]: .array(pair.dropFirst().prefix(rng.int(1...2)).map { .string($0) })]
    }
    if rng.chance(0.14) {
      let name = names.isEmpty ? rng.pick(Self.keys) : rng.pick(names)
      object["dependentSchemas"] = [name: subschema(context.deeper(consuming: false, focus: .object))]
    }
  }

  mutating func arrayKeywords(_ object: inout JSONObject, _ context: Context) {
    if rng.chance(0.3) {
      object["prefixItems"] = .array((0..<rng.int(1...3)).map { _ in subschema(context.deeper(consuming: true)) })
    }
    if rng.chance(0.55) {
      object["items"] =
        object["prefixItems"] != nil && rng.chance(0.35) ? false : subschema(context.deeper(consuming: true))
    }
    if rng.chance(0.28) {
      object["contains"] = small(context.deeper(consuming: true))
      if rng.chance(0.4) { object["minContains"] = .integer(Int64(rng.int(0...2))) }
      if rng.chance(0.35) { object["maxContains"] = .integer(Int64(rng.int(1...3))) }
    }
    if rng.chance(0.05) { object["maxContains"] = 1 }  // without contains: ignored
    if rng.chance(0.2) { object["minItems"] = .integer(Int64(rng.int(0...3))) }
    if rng.chance(0.2) { object["maxItems"] = .integer(Int64(rng.int(0...4))) }
    if rng.chance(0.2) { object["uniqueItems"] = .bool(rng.chance(0.85)) }
  }

  mutating func stringKeywords(_ object: inout JSONObject) {
    if rng.chance(0.35) { object["minLength"] = .integer(Int64(rng.int(0...3))) }
    if rng.chance(0.35) { object["maxLength"] = .integer(Int64(rng.int(0...4))) }
    if rng.chance(0.35) { object["pattern"] = .string(pattern(Self.letters)) }
    if rng.chance(0.08) { object["format"] = .string(rng.pick(["email", "date", "uri", "ipv4", "uuid"])) }
  }

  mutating func numberKeywords(_ object: inout JSONObject) {
    let limits: [Double] = [-3, -1, 0, 1, 2, 3, 5, 10, 0.5, 2.5, -1.5, 1.0, 9_007_199_254_740_992.0]
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] where rng.chance(0.22) {
      object[key] = number(rng.pick(limits))
    }
    if rng.chance(0.35) {
      object["multipleOf"] = rng.pick([2, 3, 5, 0.5, 0.1, 0.01, 0.25, 1.5, 2.0, 0.3, 1e-3] as [JSONValue])
    }
  }

  mutating func combinator(_ object: inout JSONObject, _ context: Context, _ focus: Focus) {
    func branches(_ rng: inout SplitMix64, _ range: ClosedRange<Int>, same: Double) -> [Focus?] {
      (0..<rng.int(range)).map { _ in rng.chance(same) ? focus : nil }
    }
    switch rng.weighted([25, 22, 18, 12, 23]) {
    case 0:
      let foci = branches(&rng, 1...3, same: 0.7)
      object["allOf"] = .array(foci.map { subschema(context.deeper(consuming: false, focus: $0)) })
    case 1:
      let foci = branches(&rng, 2...3, same: 0.5)
      object["anyOf"] = .array(foci.map { subschema(context.deeper(consuming: false, focus: $0)) })
    case 2:
      let foci = branches(&rng, 2...3, same: 0.5)
      object["oneOf"] = .array(foci.map { subschema(context.deeper(consuming: false, focus: $0)) })
    case 3:
      object["not"] = subschema(context.deeper(consuming: false, by: 2))
    default:
      object["if"] = subschema(context.deeper(consuming: false, focus: rng.chance(0.6) ? focus : nil, by: 2))
      if rng.chance(0.75) { object["then"] = subschema(context.deeper(consuming: false, focus: focus)) }
      if rng.chance(0.6) { object["else"] = subschema(context.deeper(consuming: false, focus: focus)) }
    }
  }

  // MARK: - References

  /// The targets a `$ref` may designate from here without risking a loop that consumes no instance.
  func referenceCandidates(_ context: Context) -> [Target] {
    targets.filter { target in
      (context.consumed || target.order < context.owner)
        && relativeURI(from: context.resource, to: target.resource) != nil
    }
  }

  /// A `$ref` value that designates `target` from within `resource`.
  mutating func reference(to target: Target, from resource: Int) -> String {
    var fragment = ""
    if let anchor = target.anchor, rng.chance(0.6) {
      fragment = "#" + anchor
    } else if !target.pointer.isEmpty {
      fragment = "#" + Self.fragment(target.pointer)
    }
    if target.resource == resource { return fragment.isEmpty ? "#" : fragment }
    return relativeURI(from: resource, to: target.resource)! + fragment
  }

  /// A URI reference, relative where possible, from one resource to another; `nil` when there is none (the root has
  /// no `$id`, or the two are in directories that a document without a base URI cannot relate).
  func relativeURI(from: Int, to: Int) -> String? {
    if from == to { return "" }
    let source = resources[from]
    let target = resources[to]
    if to == 0 && !rootHasID { return nil }
    let absolute = Self.base + target.directory + target.file
    // The choice between relative and absolute is a function of the pair, not a draw: this is called to filter too.
    if rootHasID && (from + to) % 3 == 0 { return absolute }
    switch (source.directory, target.directory) {
    case (let a, let b) where a == b: return target.file
    case ("", "sub/"): return "sub/" + target.file
    case ("sub/", ""): return "../" + target.file
    default: return absolute
    }
  }

  /// A JSON Pointer as a URI fragment: `~` and `/` escaped in each token, then percent-encoding where URIs need it.
  static func fragment(_ tokens: [String]) -> String {
    let pointer = tokens.map {
      "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
    .joined()
    let allowed = CharacterSet(
      charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?")
    return pointer.addingPercentEncoding(withAllowedCharacters: allowed) ?? pointer
  }

  // MARK: - Patterns

  /// A regular expression whose meaning is the same in Python's `re` and ECMA-262 (literals, `^`, `$`, `.`, classes,
  /// groups with alternatives, quantifiers), recorded with strings that match it.
  mutating func pattern(_ letters: [String]) -> String {
    let singles = letters.filter { $0.unicodeScalars.count == 1 }
    var source = ""
    var parts: [(inout SplitMix64) -> String] = []
    let anchoredStart = rng.chance(0.5)
    let anchoredEnd = rng.chance(0.4)
    if anchoredStart { source += "^" }
    for _ in 0..<rng.int(1...3) {
      var atom: String
      var make: (inout SplitMix64) -> String
      switch rng.weighted([40, 25, 10, 12, 13]) {
      case 0:
        let letter = rng.pick(singles)
        atom = Self.escaped(letter)
        make = { _ in letter }
      case 1:
        let members = rng.distinct(singles.filter { $0 != "-" }, count: rng.int(1...3))
        if rng.chance(0.25) {
          atom = "[^" + members.joined() + "]"
          let others = Self.letters.filter { !members.contains($0) && $0.unicodeScalars.count == 1 }
          make = { $0.pick(others) }
        } else {
          atom = "[" + members.joined() + "]"
          make = { $0.pick(members) }
        }
      case 2:
        let (range, first, last): (String, Unicode.Scalar, Unicode.Scalar) = rng.pick([
          ("a-c", "a", "c"), ("0-9", "0", "9"), ("A-Z", "A", "Z"), ("à-ÿ", "à", "ÿ"),
        ])
        atom = "[" + range + "]"
        make = { String(Character(Unicode.Scalar(first.value + UInt32($0.below(Int(last.value - first.value) + 1)))!)) }
      case 3:
        atom = "."
        let any = Self.letters.filter { $0.unicodeScalars.count == 1 }
        make = { $0.pick(any) }
      default:
        let options = (0..<rng.int(2...3)).map { _ in rng.distinct(singles, count: rng.int(1...2)).joined() }
        atom = "(" + options.map { Self.escaped($0) }.joined(separator: "|") + ")"
        make = { $0.pick(options) }
      }
      let (quantifier, low, high): (String, Int, Int) = rng.pick([
        ("", 1, 1), ("", 1, 1), ("?", 0, 1), ("*", 0, 3), ("+", 1, 3), ("{2}", 2, 2), ("{1,3}", 1, 3),
        ("{0,2}", 0, 2), ("{2,}", 2, 4),
      ])
      source += atom + quantifier
      parts.append { rng in (0..<rng.int(low...high)).map { _ in make(&rng) }.joined() }
    }
    if anchoredEnd { source += "$" }
    var matches: [String] = []
    for _ in 0..<4 {
      var text = parts.map { $0(&rng) }.joined()
      if !anchoredStart && rng.chance(0.3) { text = rng.pick(letters) + text }
      if !anchoredEnd && rng.chance(0.3) { text += rng.pick(letters) }
      matches.append(text)
    }
    samples[source, default: []] += matches
    return source
  }

  /// `text` with the characters that are special in regular expressions escaped, and nothing else (ECMA-262 with
  /// the `u` flag refuses needless escapes such as `\-`).
  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text {
      if "\\^$.|?*+()[]{}".contains(character) { result.append("\\") }
      result.append(character)
    }
    return result
  }
}
