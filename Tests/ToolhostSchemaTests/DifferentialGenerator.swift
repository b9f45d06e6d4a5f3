import Foundation
import ToolhostJSON

/// SplitMix64: a small 64-bit generator whose output depends only on its seed.
///
/// The differential test uses it instead of the standard library's `random(in:using:)`, whose algorithms are not
/// promised to stay the same across Swift versions: a seed printed by one run reproduces the same pairs anywhere.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  /// A generator started at `seed`.
  init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<n`; `n` must be positive (the modulo bias is irrelevant here).
  mutating func below(_ n: Int) -> Int {
    Int(next() % UInt64(n))
  }

  /// A number in `range`.
  mutating func int(_ range: ClosedRange<Int>) -> Int {
    range.lowerBound + below(range.count)
  }

  /// `true` with probability `p`.
  mutating func chance(_ p: Double) -> Bool {
    Double(next() >> 11) / 9_007_199_254_740_992.0 < p
  }

  /// One element of a non-empty array.
  mutating func pick<T>(_ items: [T]) -> T {
    items[below(items.count)]
  }

  /// An index into `weights`, chosen with probability proportional to its weight.
  mutating func weighted(_ weights: [Int]) -> Int {
    var roll = below(weights.reduce(0, +))
    for (i, w) in weights.enumerated() {
      if roll < w { return i }
      roll -= w
    }
    return weights.count - 1
  }

  /// `count` distinct elements of `items` (all of them when there are fewer), in random order.
  mutating func distinct<T>(_ items: [T], count: Int) -> [T] {
    var pool = items
    var result: [T] = []
    while result.count < count && !pool.isEmpty {
      result.append(pool.remove(at: below(pool.count)))
    }
    return result
  }
}

/// Generates one schema document and one instance for it, deterministically from a seed and the pair's index.
///
/// The schema covers the draft 2020-12 keywords, including the ones ToolhostSchema does not implement yet (`$anchor`,
/// `$dynamicRef`/`$dynamicAnchor`, nested `$id`, `unevaluatedProperties`/`unevaluatedItems`, remote references). The
/// instance is built from the schema to satisfy it where that is easy, then mutated about half of the time, so that
/// valid and invalid answers are both common. Nesting is bounded, and references that do not step into the instance
/// only go to definitions generated earlier, so no schema loops without consuming the instance.
///
/// A small fraction of schemas is broken on purpose (a wrong keyword value, a reference that designates nothing), to
/// compare how both validators reject schemas.
struct DifferentialGenerator {
  /// The base URI of documents that have a root `$id`.
  static let base = "https://example.com/"

  /// Property names: shared by properties, required and instances so that they meet often.
  static let keys = ["a", "b", "c", "d", "é", "ключ", "k1", "x-y"]

  /// Letters for strings: ASCII, Latin-1, CJK, an astral emoji, a decomposed `é` (two code points) and a flag (two
  /// regional indicators): lengths count code points, which none of the last three is one of.
  static let letters = ["a", "b", "c", "x", "Z", "0", "7", " ", "-", ".", "é", "ß", "日", "😀", "e\u{301}", "🇳🇴"]

  /// Characters near line breaks (ECMA-262's `.` excludes \n, \r and \u{2028} but not \u{85} or \u{0C}); instances
  /// get them only by mutation.
  static let lineBreaks = ["\n", "\r", "\u{85}", "\u{2028}", "\u{0C}"]

  /// Letters for property-name patterns.
  static let keyLetters = ["a", "b", "c", "d", "k", "1", "é", "x", "-", "y"]

  /// Values that equality in JSON Schema is easy to get wrong on: `1`, `1.0` and `true`; key order; nesting.
  static let specialValues: [JSONValue] = [
    1, 1.0, true, false, 0, 0.0, .null, "1", "", "a", "é", "e\u{301}", [], [:], [1, "a"], [1.0, "a"],
    ["a": 1, "b": [1.0, true]], ["b": [1, true], "a": 1.0], [[1], [true]], ["a": ["b": .null]],
    9_007_199_254_740_993, 0.1, -2, 2.5,
  ]

  private enum Focus {
    case object, array, string, number, integer, boolean, null, any
  }

  /// A document of the schema: the root (index 0) or a subschema with its own `$id`.
  private struct Resource {
    /// The directory its `$id` places it in, relative to ``DifferentialGenerator/base``: `""` or `"sub/"`.
    let directory: String
    let file: String
  }

  /// Something a `$ref` can designate: a resource's root or one of its definitions.
  private struct Target {
    /// Generation order: a reference that does not step into the instance only goes to a smaller order.
    let order: Int
    let resource: Int
    /// Reference tokens inside the resource: `[]` for its root, `["$defs", name]` for a definition.
    let pointer: [String]
    let anchor: String?
  }

  /// Where a subschema is being generated.
  private struct Context {
    var depth: Int
    /// The order of the target being generated; the root's is the largest.
    var owner: Int
    /// Whether the path from the target's top to here steps into the instance (properties, items, ...).
    var consumed: Bool
    /// The resource that relative references are resolved against.
    var resource: Int
    var focus: Focus?

    func deeper(consuming: Bool, focus: Focus? = nil, by steps: Int = 1) -> Context {
      Context(depth: depth + steps, owner: owner, consumed: consumed || consuming, resource: resource, focus: focus)
    }
  }

  private var rng: SplitMix64
  private let maxDepth = 3
  /// Strings that match each pattern written into the schema, for the instance.
  private var samples: [String: [String]] = [:]
  private var resources: [Resource] = []
  private var targets: [Target] = []
  private var rootHasID = false

  /// The generator of pair `index` for `seed`.
  init(seed: UInt64, index: Int) {
    rng = SplitMix64(seed: seed ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
    _ = rng.next()
  }

  /// A schema document and an instance for it.
  mutating func pair() -> (schema: JSONValue, instance: JSONValue) {
    var schema = rng.chance(0.07) ? dynamicDocument() : document()
    if rng.chance(0.04) { schema = breakSchema(schema) }
    if rng.chance(0.015) { schema = danglingReference(schema) }
    let index = SchemaIndex(schema)
    var instance = self.instance(for: schema, index: index, budget: 4)
    if rng.chance(0.55) {
      for _ in 0..<rng.int(1...2) { instance = mutate(instance) }
    }
    return (schema, instance)
  }

  // MARK: - Documents

  /// A document with definitions, anchors and embedded resources that refer to each other.
  private mutating func document() -> JSONValue {
    rootHasID = rng.chance(0.3)
    resources = [Resource(directory: "", file: "root.json")]
    targets = []
    var order = 0
    var nextName = 0
    func newName(_ rng: inout SplitMix64) -> String {
      defer { nextName += 1 }
      // Names that JSON Pointer and URI fragments must escape: '/', '~', '%', a space, a non-ASCII letter.
      if rng.chance(0.12) { return rng.pick(["x/y", "t~n", "p%q", "a b", "é"]) + "\(nextName)" }
      return "d\(nextName)"
    }

    // Embedded resources first (their definitions, then their roots), then the root's definitions.
    var embedded: [(resource: Int, defs: [(String, String?)])] = []
    for k in 0..<(rng.chance(0.12) ? rng.int(1...2) : 0) {
      let directory = rootHasID && rng.chance(0.4) ? "sub/" : ""
      resources.append(Resource(directory: directory, file: "r\(k).json"))
      let resource = resources.count - 1
      var defs: [(String, String?)] = []
      for _ in 0..<(rng.chance(0.5) ? rng.int(1...2) : 0) {
        let name = newName(&rng)
        let anchor = rng.chance(0.3) ? "anchor\(nextName)" : nil
        defs.append((name, anchor))
        targets.append(Target(order: order, resource: resource, pointer: ["$defs", name], anchor: anchor))
        order += 1
      }
      targets.append(Target(order: order, resource: resource, pointer: [], anchor: nil))
      order += 1
      embedded.append((resource, defs))
    }
    var rootDefs: [(String, String?)] = []
    for _ in 0..<(rng.chance(0.55) ? rng.int(1...3) : 0) {
      let name = newName(&rng)
      let anchor = rng.chance(0.15) ? "anchor\(nextName)" : nil
      rootDefs.append((name, anchor))
      targets.append(Target(order: order, resource: 0, pointer: ["$defs", name], anchor: anchor))
      order += 1
    }
    let rootOrder = order
    targets.append(Target(order: rootOrder, resource: 0, pointer: [], anchor: nil))

    // Bodies in order, each allowed to refer (without consuming the instance) only to earlier ones.
    var bodies: [Int: JSONValue] = [:]
    for target in targets where target.order < rootOrder {
      let context = Context(
        depth: 1, owner: target.order, consumed: false, resource: target.resource, focus: nil)
      bodies[target.order] = subschema(context)
    }
    var root = objectOf(subschema(Context(depth: 0, owner: rootOrder, consumed: false, resource: 0, focus: nil)))

    var defs = JSONObject()
    func definition(_ order: Int, anchor: String?) -> JSONValue {
      guard let anchor else { return bodies[order]! }
      var object = objectOf(bodies[order]!)
      object = JSONObject([("$anchor", .string(anchor))] + object.map { ($0.key, $0.value) })
      return .object(object)
    }
    var byOrder: [String: Int] = [:]
    for target in targets where !target.pointer.isEmpty {
      byOrder["\(target.resource)/\(target.pointer[1])"] = target.order
    }
    for (resource, embeddedDefs) in embedded {
      let order = targets.first { $0.resource == resource && $0.pointer.isEmpty }!.order
      var object = objectOf(bodies[order]!)
      let place = resources[resource]
      let id =
        rootHasID && rng.chance(0.3) ? Self.base + place.directory + place.file : place.directory + place.file
      object = JSONObject([("$id", .string(id))] + object.map { ($0.key, $0.value) })
      if !embeddedDefs.isEmpty {
        var own = JSONObject()
        for (name, anchor) in embeddedDefs {
          own[name] = definition(byOrder["\(resource)/\(name)"]!, anchor: anchor)
        }
        object["$defs"] = .object(own)
      }
      defs["resource\(resource)"] = .object(object)
    }
    for (name, anchor) in rootDefs {
      defs[name] = definition(byOrder["0/\(name)"]!, anchor: anchor)
    }
    var head: [(String, JSONValue)] = []
    if rootHasID { head.append(("$id", .string(Self.base + "root.json"))) }
    if rng.chance(0.1) { head.append(("$schema", "https://json-schema.org/draft/2020-12/schema")) }
    root = JSONObject(head + root.map { ($0.key, $0.value) })
    if !defs.isEmpty { root["$defs"] = .object(defs) }
    return .object(root)
  }

  /// One of the classic `$dynamicRef` shapes, with random parts; the root always has an `$id`, so that the dynamic
  /// scope starts at a resource with a URI.
  private mutating func dynamicDocument() -> JSONValue {
    rootHasID = true
    resources = [Resource(directory: "", file: "root.json")]
    targets = []
    let hole = Context(depth: 1, owner: 0, consumed: true, resource: 0, focus: nil)
    switch rng.below(4) {
    case 0:
      // An extensible list: list.json's items are `$dynamicRef: "#elem"`, which the root may override.
      let anchorKeyword = rng.chance(0.85) ? "$dynamicAnchor" : "$anchor"
      var generic = JSONObject([(anchorKeyword, JSONValue.string("elem"))])
      if rng.chance(0.5) { generic["type"] = ["string", "integer", "object"] }
      var list: JSONObject = [
        "$id": "list.json", "$defs": ["elem": .object(generic)], "type": "array",
        "items": .object(JSONObject([(rng.chance(0.9) ? "$dynamicRef" : "$ref", JSONValue.string("#elem"))])),
      ]
      if rng.chance(0.3) { list["maxItems"] = .integer(Int64(rng.int(1...4))) }
      var defs: JSONObject = ["list": .object(list)]
      if rng.chance(0.85) {
        let element = subschema(Context(depth: 1, owner: 0, consumed: true, resource: 0, focus: nil))
        defs["elem"] = .object(JSONObject([("$dynamicAnchor", "elem")] + objectOf(element).map { ($0.key, $0.value) }))
      }
      var root: JSONObject = ["$id": .string(Self.base + "root.json"), "$ref": "list.json", "$defs": .object(defs)]
      if rng.chance(0.3) { root["unevaluatedItems"] = rng.chance(0.5) ? false : subschema(hole) }
      if rng.chance(0.2) { root["contains"] = subschema(hole) }
      return .object(root)
    case 1:
      // A tree and its strict extension, which forbids properties that the tree does not evaluate.
      var tree: JSONObject = [
        "$id": "tree.json", "$dynamicAnchor": "node", "type": "object",
        "properties": [
          "data": subschema(hole), "children": ["type": "array", "items": ["$dynamicRef": "#node"]],
        ],
      ]
      if rng.chance(0.2) { tree["required"] = ["data"] }
      var root: JSONObject = ["$id": .string(Self.base + "strict-tree.json")]
      if rng.chance(0.8) { root["$dynamicAnchor"] = "node" }
      root["$ref"] = "tree.json"
      root["unevaluatedProperties"] = rng.chance(0.7) ? false : subschema(hole)
      root["$defs"] = ["tree": .object(tree)]
      return .object(root)
    case 2:
      // A schema that recurses into itself through `$dynamicRef`, with nothing to override it.
      var root: JSONObject = [
        "$id": .string(Self.base + "node.json"), "$dynamicAnchor": "node",
        "type": ["object", "integer"],
        "properties": ["next": ["$dynamicRef": "#node"], "v": subschema(hole)],
      ]
      if rng.chance(0.4) { root["unevaluatedProperties"] = false }
      return .object(root)
    default:
      // `$dynamicRef` with a JSON Pointer fragment behaves as `$ref`.
      return [
        "$id": .string(Self.base + "root.json"), "$defs": ["x": subschema(hole)],
        "$dynamicRef": "#/$defs/x", "type": ["array", "object", "string", "number"],
      ]
    }
  }

  /// The schema with one keyword's value made invalid, somewhere a subschema is.
  private mutating func breakSchema(_ schema: JSONValue) -> JSONValue {
    let places = SchemaIndex.subschemaPaths(schema).filter {
      if case .object = SchemaIndex.value(at: $0, in: schema) { return true }
      return false
    }
    let breakage: [(String, JSONValue)] = [
      ("minLength", -1), ("minLength", 2.5), ("type", "strin"), ("type", ["string", "string"]),
      ("required", "a"), ("pattern", "(a"), ("enum", "a"), ("multipleOf", 0), ("multipleOf", -2),
      ("maximum", "3"), ("properties", [1]), ("additionalProperties", 1), ("allOf", []),
      ("items", [true, ["type": "string"]]), ("$ref", 3), ("dependentRequired", ["a": "b"]),
      ("minContains", -1), ("uniqueItems", "yes"), ("$anchor", "1bad"), ("$id", "#frag"), ("not", 1),
      ("prefixItems", ["type": "string"]), ("enum", []), ("propertyNames", "a"),
    ]
    let (key, value) = rng.pick(breakage)
    return SchemaIndex.replacing(at: rng.pick(places), in: schema) { sub in
      var object = sub.objectValue ?? [:]
      object[key] = value
      return .object(object)
    }
  }

  /// The schema with a root `$ref` that designates nothing; at the root it is always evaluated.
  private mutating func danglingReference(_ schema: JSONValue) -> JSONValue {
    var object = objectOf(schema)
    object["$ref"] = .string(
      rng.pick(["#/$defs/missing", "https://example.com/missing.json", "#nowhere", "other.json#/x"]))
    return .object(object)
  }

  // MARK: - Subschemas

  private mutating func subschema(_ context: Context) -> JSONValue {
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
  private mutating func leaf() -> JSONValue {
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

  private mutating func body(_ context: Context) -> JSONObject {
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
  private mutating func small(_ context: Context) -> JSONValue {
    subschema(context.deeper(consuming: false, focus: context.focus, by: 1))
  }

  private mutating func focus() -> Focus {
    let all: [Focus] = [.object, .array, .string, .number, .integer, .boolean, .null, .any]
    return all[rng.weighted([26, 20, 16, 10, 10, 4, 3, 11])]
  }

  private mutating func typeKeyword(_ focus: Focus) -> JSONValue {
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

  private mutating func objectKeywords(_ object: inout JSONObject, _ context: Context) {
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

  private mutating func arrayKeywords(_ object: inout JSONObject, _ context: Context) {
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

  private mutating func stringKeywords(_ object: inout JSONObject) {
    if rng.chance(0.35) { object["minLength"] = .integer(Int64(rng.int(0...3))) }
    if rng.chance(0.35) { object["maxLength"] = .integer(Int64(rng.int(0...4))) }
    if rng.chance(0.35) { object["pattern"] = .string(pattern(Self.letters)) }
    if rng.chance(0.08) { object["format"] = .string(rng.pick(["email", "date", "uri", "ipv4", "uuid"])) }
  }

  private mutating func numberKeywords(_ object: inout JSONObject) {
    let limits: [Double] = [-3, -1, 0, 1, 2, 3, 5, 10, 0.5, 2.5, -1.5, 1.0, 9_007_199_254_740_992.0]
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] where rng.chance(0.22) {
      object[key] = number(rng.pick(limits))
    }
    if rng.chance(0.35) {
      object["multipleOf"] = rng.pick([2, 3, 5, 0.5, 0.1, 0.01, 0.25, 1.5, 2.0, 0.3, 1e-3] as [JSONValue])
    }
  }

  private mutating func combinator(_ object: inout JSONObject, _ context: Context, _ focus: Focus) {
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
  private func referenceCandidates(_ context: Context) -> [Target] {
    targets.filter { target in
      (context.consumed || target.order < context.owner)
        && relativeURI(from: context.resource, to: target.resource) != nil
    }
  }

  /// A `$ref` value that designates `target` from within `resource`.
  private mutating func reference(to target: Target, from resource: Int) -> String {
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
  private func relativeURI(from: Int, to: Int) -> String? {
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
  private mutating func pattern(_ letters: [String]) -> String {
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

  // MARK: - Instances

  /// What the keywords met on the way (through `allOf`, references, one branch of `anyOf`/`oneOf`, ...) ask of the
  /// instance.
  private struct Hints {
    var types: [[String]] = []
    var consts: [JSONValue] = []
    var enums: [[JSONValue]] = []
    var families: Set<String> = []
    var properties: [(String, JSONValue)] = []
    var required: [String] = []
    var patternProperties: [(String, JSONValue)] = []
    var additional: JSONValue?
    var minProperties: Int?
    var maxProperties: Int?
    var dependentRequired: [(String, [String])] = []
    var prefixItems: [JSONValue]?
    var items: JSONValue?
    var contains: JSONValue?
    var minContains: Int?
    var maxContains: Int?
    var minItems: Int?
    var maxItems: Int?
    var unique = false
    var minLength: Int?
    var maxLength: Int?
    var patterns: [String] = []
    var lower: (Double, exclusive: Bool)?
    var upper: (Double, exclusive: Bool)?
    var multipleOf: JSONValue?
  }

  /// An instance that probably satisfies `schema` (it is not checked: that is the validators' job).
  private mutating func instance(for schema: JSONValue, index: SchemaIndex, budget: Int) -> JSONValue {
    guard case .object = schema, budget > 0 else { return randomValue(depth: budget > 0 ? 1 : 0) }
    var hints = Hints()
    gather(schema, into: &hints, index: index, depth: 0)
    if let value = hints.consts.first, rng.chance(0.9) { return variant(of: value) }
    if let values = hints.enums.first, rng.chance(0.9) { return variant(of: rng.pick(values)) }
    switch chooseType(hints) {
    case "object": return object(hints, index: index, budget: budget)
    case "array": return array(hints, index: index, budget: budget)
    case "string": return string(hints)
    case "integer": return number(hints, integer: true)
    case "number": return number(hints, integer: false)
    case "boolean": return .bool(rng.chance(0.5))
    case "null": return .null
    default: return randomValue(depth: 1)
    }
  }

  private mutating func gather(_ schema: JSONValue, into hints: inout Hints, index: SchemaIndex, depth: Int) {
    guard depth < 5, case .object(let o) = schema else { return }
    if let type = o["type"] {
      hints.types.append(type.arrayValue?.compactMap(\.stringValue) ?? type.stringValue.map { [$0] } ?? [])
    }
    if let value = o["const"] { hints.consts.append(value) }
    if let values = o["enum"]?.arrayValue, !values.isEmpty { hints.enums.append(values) }
    for (key, value) in o["properties"]?.objectValue ?? [:] { hints.properties.append((key, value)) }
    hints.required += (o["required"]?.arrayValue ?? []).compactMap(\.stringValue)
    for (key, value) in o["patternProperties"]?.objectValue ?? [:] { hints.patternProperties.append((key, value)) }
    if hints.additional == nil { hints.additional = o["additionalProperties"] }
    if let n = o["minProperties"]?.integerValue { hints.minProperties = max(hints.minProperties ?? 0, Int(n)) }
    if let n = o["maxProperties"]?.integerValue { hints.maxProperties = min(hints.maxProperties ?? .max, Int(n)) }
    for (key, value) in o["dependentRequired"]?.objectValue ?? [:] {
      hints.dependentRequired.append((key, (value.arrayValue ?? []).compactMap(\.stringValue)))
    }
    if hints.prefixItems == nil { hints.prefixItems = o["prefixItems"]?.arrayValue }
    if hints.items == nil { hints.items = o["items"] }
    if hints.contains == nil, let contains = o["contains"] {
      hints.contains = contains
      hints.minContains = o["minContains"]?.integerValue.map { Int($0) }
      hints.maxContains = o["maxContains"]?.integerValue.map { Int($0) }
    }
    if let n = o["minItems"]?.integerValue { hints.minItems = max(hints.minItems ?? 0, Int(n)) }
    if let n = o["maxItems"]?.integerValue { hints.maxItems = min(hints.maxItems ?? .max, Int(n)) }
    if o["uniqueItems"] == true { hints.unique = true }
    if let n = o["minLength"]?.integerValue { hints.minLength = max(hints.minLength ?? 0, Int(n)) }
    if let n = o["maxLength"]?.integerValue { hints.maxLength = min(hints.maxLength ?? .max, Int(n)) }
    if let p = o["pattern"]?.stringValue { hints.patterns.append(p) }
    for (key, exclusive) in [("minimum", false), ("exclusiveMinimum", true)] {
      if let d = o[key]?.doubleValue, d >= hints.lower?.0 ?? -.infinity { hints.lower = (d, exclusive) }
    }
    for (key, exclusive) in [("maximum", false), ("exclusiveMaximum", true)] {
      if let d = o[key]?.doubleValue, d <= hints.upper?.0 ?? .infinity { hints.upper = (d, exclusive) }
    }
    if hints.multipleOf == nil { hints.multipleOf = o["multipleOf"] }
    let families: [(String, [String])] = [
      ("object", ["properties", "required", "patternProperties", "additionalProperties", "dependentRequired"]),
      ("array", ["items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems"]),
      ("string", ["minLength", "maxLength", "pattern"]),
      ("number", ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
    ]
    for (family, keywords) in families where keywords.contains(where: { o[$0] != nil }) {
      hints.families.insert(family)
    }

    for branch in o["allOf"]?.arrayValue ?? [] { gather(branch, into: &hints, index: index, depth: depth + 1) }
    for key in ["$ref", "$dynamicRef"] {
      if let ref = o[key]?.stringValue, let target = index.resolve(ref) {
        gather(target, into: &hints, index: index, depth: depth + 1)
      }
    }
    for key in ["anyOf", "oneOf"] {
      if let branches = o[key]?.arrayValue, !branches.isEmpty {
        gather(rng.pick(branches), into: &hints, index: index, depth: depth + 1)
      }
    }
    if let condition = o["if"] {
      if rng.chance(0.5) {
        gather(condition, into: &hints, index: index, depth: depth + 1)
        if let then = o["then"] { gather(then, into: &hints, index: index, depth: depth + 1) }
      } else if let otherwise = o["else"] {
        gather(otherwise, into: &hints, index: index, depth: depth + 1)
      }
    }
  }

  private mutating func chooseType(_ hints: Hints) -> String {
    let all = ["object", "array", "string", "number", "integer", "boolean", "null"]
    var allowed = Set(all)
    for list in hints.types where !list.isEmpty {
      var names = Set(list)
      if names.contains("number") { names.insert("integer") }
      allowed.formIntersection(names)
    }
    if allowed.isEmpty { allowed = Set(hints.types.last ?? all) }
    let preferred = allowed.filter { hints.families.contains($0 == "integer" ? "number" : $0) }
    if !preferred.isEmpty && rng.chance(0.85) { return rng.pick(preferred.sorted()) }
    if allowed.count < all.count { return rng.pick(allowed.sorted()) }
    if !hints.families.isEmpty { return rng.pick(hints.families.sorted()) }
    return rng.pick(all)
  }

  private mutating func object(_ hints: Hints, index: SchemaIndex, budget: Int) -> JSONValue {
    var names: [String] = []
    func add(_ name: String) { if !names.contains(name) { names.append(name) } }
    hints.required.forEach(add)
    for (name, _) in hints.properties where rng.chance(0.6) { add(name) }
    for (pattern, _) in hints.patternProperties where rng.chance(0.5) {
      if let matches = samples[pattern], !matches.isEmpty { add(rng.pick(matches)) }
    }
    // Sometimes an unlisted name; the decomposed "e\u{301}" is a different name from "é" (code points differ).
    if rng.chance(0.15) { add(rng.pick(Self.keys + ["e\u{301}"])) }
    for (trigger, dependents) in hints.dependentRequired where names.contains(trigger) { dependents.forEach(add) }
    while names.count < hints.minProperties ?? 0 { add(rng.pick(Self.keys + ["k\(names.count)"])) }
    if let most = hints.maxProperties, names.count > most, rng.chance(0.8) {
      names = Array(names.prefix(max(most, hints.required.count)))
    }
    var object = JSONObject()
    for name in names {
      let schemas =
        hints.properties.filter { $0.0 == name }.map(\.1)
        + hints.patternProperties.filter { samples[$0.0]?.contains(name) ?? false }.map(\.1)
      let schema = schemas.first ?? hints.additional ?? true
      object[name] = instance(for: schema, index: index, budget: budget - 1)
    }
    return .object(object)
  }

  private mutating func array(_ hints: Hints, index: SchemaIndex, budget: Int) -> JSONValue {
    let prefix = hints.prefixItems ?? []
    let low = min(hints.minItems ?? 0, 5)
    let high = max(low, min(hints.maxItems ?? (prefix.count + 2), 5))
    var count = rng.int(low...high)
    if hints.items == false && rng.chance(0.8) { count = min(count, prefix.count) }
    var items: [JSONValue] = (0..<count).map { i in
      instance(for: i < prefix.count ? prefix[i] : (hints.items ?? true), index: index, budget: budget - 1)
    }
    if let contains = hints.contains {
      let wanted = rng.int((hints.minContains ?? 1)...max(hints.minContains ?? 1, min(hints.maxContains ?? 2, 3)))
      for _ in 0..<wanted {
        let element = instance(for: contains, index: index, budget: budget - 1)
        if items.count > prefix.count && rng.chance(0.5) {
          items[rng.int(prefix.count...(items.count - 1))] = element
        } else {
          items.append(element)
        }
      }
    }
    if hints.unique && rng.chance(0.85) {
      var kept: [JSONValue] = []
      for item in items where !kept.contains(where: { $0.jsonEquals(item) }) { kept.append(item) }
      items = kept
    }
    return .array(items)
  }

  private mutating func string(_ hints: Hints) -> JSONValue {
    if let pattern = hints.patterns.first, let matches = samples[pattern], rng.chance(0.85) {
      return .string(rng.pick(matches))
    }
    let low = min(hints.minLength ?? 0, 6)
    let length = rng.int(low...max(low, min(hints.maxLength ?? (low + 4), 8)))
    return .string(text(scalars: length))
  }

  /// A string of exactly `scalars` code points, from ``letters``.
  private mutating func text(scalars: Int) -> String {
    var text = ""
    var count = 0
    while count < scalars {
      var letter = rng.pick(Self.letters)
      if count + letter.unicodeScalars.count > scalars { letter = "a" }
      text += letter
      count += letter.unicodeScalars.count
    }
    return text
  }

  private mutating func number(_ hints: Hints, integer: Bool) -> JSONValue {
    let lower = hints.lower.map { $0.exclusive ? $0.0 + (integer ? 1 : 0.5) : $0.0 }
    let upper = hints.upper.map { $0.exclusive ? $0.0 - (integer ? 1 : 0.5) : $0.0 }
    if let divisor = hints.multipleOf, let d = divisor.doubleValue, d > 0 {
      let low = lower.map { Int(max(min(($0 / d).rounded(.up), 1e6), -1e6)) } ?? -3
      let high = upper.map { Int(max(min(($0 / d).rounded(.down), 1e6), -1e6)) } ?? (low + 8)
      let k = rng.int(min(low, high)...max(low, min(high, low + 20)))
      return multiple(k, of: divisor, preferInteger: integer || rng.chance(0.6))
    }
    let low = Int(max(min((lower ?? -5).rounded(.up), 1e9), -1e9))
    let high = max(low, Int(max(min((upper ?? Double(low + 15)).rounded(.down), 1e9), -1e9)))
    let whole = rng.int(low...min(high, low + 40))
    if integer || rng.chance(0.6) {
      return rng.chance(0.1) ? .real(Double(whole)) : .integer(Int64(whole))
    }
    return number(Double(whole) + rng.pick([0.5, 0.25, 0.1, 0.75, 0.0]))
  }

  /// `k × divisor`, computed in decimal so that it is the number a person would write (0.3, not 0.30000000000000004).
  private mutating func multiple(_ k: Int, of divisor: JSONValue, preferInteger: Bool) -> JSONValue {
    if case .integer(let m) = divisor {
      let (product, overflow) = m.multipliedReportingOverflow(by: Int64(k))
      if !overflow { return preferInteger ? .integer(product) : .real(Double(product)) }
    }
    guard let d = divisor.doubleValue, let decimal = Decimal(string: "\(d)") else { return .integer(Int64(k)) }
    let product = decimal * Decimal(k)
    let text = NSDecimalNumber(decimal: product).stringValue
    if preferInteger, let whole = Int64(text) { return .integer(whole) }
    return .real(Double(text) ?? Double(k) * d)
  }

  /// A number as a JSON integer when it is whole and small, else a real.
  private func number(_ d: Double) -> JSONValue {
    if d.rounded() == d && abs(d) < 1e15 { return .integer(Int64(d)) }
    return .real(d)
  }

  /// `value`, or (sometimes) a value equal to it in JSON Schema's sense written differently: `1.0` for `1`, object
  /// members in another order.
  private mutating func variant(of value: JSONValue) -> JSONValue {
    guard rng.chance(0.3) else { return value }
    switch value {
    case .integer(let i): return .real(Double(i))
    case .real(let d) where d.rounded() == d && abs(d) < 1e15: return .integer(Int64(d))
    case .object(let o): return .object(JSONObject(o.reversed().map { ($0.key, variant(of: $0.value)) }))
    case .array(let a): return .array(a.map { variant(of: $0) })
    default: return value
    }
  }

  private mutating func randomValue(depth: Int) -> JSONValue {
    switch rng.below(depth > 0 ? 9 : 7) {
    case 0: return .null
    case 1: return .bool(rng.chance(0.5))
    case 2: return .integer(Int64(rng.int(-3...10)))
    case 3: return .real(rng.pick([0.5, 1.0, -2.5, 0.1, 0.3, 1e20, 2.0]))
    case 4: return .string(text(scalars: rng.int(0...4)))
    case 5, 6: return rng.pick(Self.specialValues)
    case 7: return .array((0..<rng.int(0...3)).map { _ in randomValue(depth: depth - 1) })
    default:
      return .object(
        JSONObject(rng.distinct(Self.keys, count: rng.int(0...3)).map { ($0, randomValue(depth: depth - 1)) }))
    }
  }

  // MARK: - Mutations

  /// `value` with one node changed: a number nudged or retyped, a character added or removed, a member added or
  /// removed, an element duplicated, and so on. Some mutations keep the value equal (`1` to `1.0`, reordered keys).
  private mutating func mutate(_ value: JSONValue) -> JSONValue {
    let paths = SchemaIndex.allPaths(value)
    return SchemaIndex.replacing(at: rng.pick(paths), in: value) { node in self.mutateNode(node) }
  }

  private mutating func mutateNode(_ node: JSONValue) -> JSONValue {
    if rng.chance(0.12) { return randomValue(depth: 1) }
    switch node {
    case .integer(let i):
      return rng.pick([.integer(i &+ 1), .integer(i &- 1), .real(Double(i)), .real(Double(i) + 0.5), .string("\(i)")])
    case .real(let d):
      var options: [JSONValue] = [.real(d + 1), .real(d + 0.1), .real(d * 10), .real(-d)]
      if d.rounded() == d && abs(d) < 1e15 { options.append(.integer(Int64(d))) }
      return rng.pick(options)
    case .string(let s):
      switch rng.below(6) {
      case 0: return .string(s + rng.pick(Self.letters))
      case 1: return .string(String(s.unicodeScalars.dropLast()))
      case 2: return .string(rng.pick(Self.letters) + s)
      case 3: return .string(s + rng.pick(Self.lineBreaks))
      case 4: return .string(rng.pick(Self.lineBreaks) + s)
      default: return .string(rng.pick(Self.keys))
      }
    case .bool(let b):
      return rng.chance(0.6) ? .bool(!b) : .integer(b ? 1 : 0)
    case .null:
      return rng.pick([false, 0, ""] as [JSONValue])
    case .array(var a):
      switch rng.below(5) {
      case 0 where !a.isEmpty: a.append(rng.pick(a))
      case 1 where !a.isEmpty: a.removeLast()
      case 2 where !a.isEmpty: a.removeFirst()
      case 3: a.reverse()
      default: a.append(randomValue(depth: 1))
      }
      return .array(a)
    case .object(var o):
      switch rng.below(4) {
      case 0 where !o.isEmpty: o[rng.pick(o.keys)] = nil
      case 1: return .object(JSONObject(o.reversed().map { ($0.key, $0.value) }))
      case 2: o[rng.pick(Self.keys + ["e\u{301}", "k9", ""])] = randomValue(depth: 1)
      default: o[rng.pick(Self.keys)] = rng.pick(Self.specialValues)
      }
      return .object(o)
    }
  }

  private func objectOf(_ schema: JSONValue) -> JSONObject {
    switch schema {
    case .object(let o): return o
    case .bool(false): return ["not": [:]]
    default: return [:]
    }
  }
}

/// Where things are in a generated schema: the subschemas with an `$id` (by file name) and the anchors, for building
/// instances; and helpers to walk and rewrite JSON values by path.
struct SchemaIndex {
  /// One step of a path into a JSON value.
  enum Step: Hashable {
    case key(String)
    case index(Int)
  }

  private let root: JSONValue
  private var byFile: [String: JSONValue] = [:]
  private var anchors: [String: [JSONValue]] = [:]

  /// Keywords whose values are data, not schemas.
  static let dataKeywords: Set<String> = ["const", "enum", "default", "examples"]

  init(_ root: JSONValue) {
    self.root = root
    for path in Self.subschemaPaths(root) {
      guard case .object(let o) = Self.value(at: path, in: root) else { continue }
      if let id = o["$id"]?.stringValue, let file = id.split(separator: "/").last {
        byFile[String(file)] = .object(o)
      }
      for key in ["$anchor", "$dynamicAnchor"] {
        if let name = o[key]?.stringValue { anchors[name, default: []].append(.object(o)) }
      }
    }
  }

  /// The schema a reference probably designates (outermost anchor first; definition names are unique).
  func resolve(_ ref: String) -> JSONValue? {
    let parts = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
    let file = parts.first.flatMap { $0.split(separator: "/").last }.map(String.init)
    let fragment = parts.count > 1 ? String(parts[1]) : ""
    let document = file.flatMap { byFile[$0] } ?? root
    if fragment.isEmpty { return document }
    if !fragment.hasPrefix("/") { return anchors[fragment]?.first }
    guard let decoded = fragment.removingPercentEncoding else { return nil }
    let tokens = decoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
      $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
    for candidate in [document] + Array(byFile.values) {
      var value: JSONValue? = candidate
      for token in tokens { value = value?[token] ?? Int(token).flatMap { value?[$0] } }
      if let value { return value }
    }
    return nil
  }

  /// The paths of every subschema (a value where a schema is expected), the root first.
  static func subschemaPaths(_ schema: JSONValue) -> [[Step]] {
    var paths: [[Step]] = []
    func walk(_ value: JSONValue, _ path: [Step]) {
      guard case .object(let o) = value else {
        if case .bool = value { paths.append(path) }
        return
      }
      paths.append(path)
      for (key, member) in o {
        switch key {
        case "properties", "patternProperties", "$defs", "dependentSchemas":
          for (name, sub) in member.objectValue ?? [:] { walk(sub, path + [.key(key), .key(name)]) }
        case "allOf", "anyOf", "oneOf", "prefixItems":
          for (i, sub) in (member.arrayValue ?? []).enumerated() { walk(sub, path + [.key(key), .index(i)]) }
        case "not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
          "unevaluatedProperties", "unevaluatedItems":
          walk(member, path + [.key(key)])
        default:
          break
        }
      }
    }
    walk(schema, [])
    return paths
  }

  /// The paths of every node of a value, the root first.
  static func allPaths(_ value: JSONValue) -> [[Step]] {
    var paths: [[Step]] = [[]]
    switch value {
    case .object(let o):
      for (key, member) in o { paths += allPaths(member).map { [.key(key)] + $0 } }
    case .array(let a):
      for (i, element) in a.enumerated() { paths += allPaths(element).map { [.index(i)] + $0 } }
    default:
      break
    }
    return paths
  }

  /// The value at `path`, if there is one.
  static func value(at path: [Step], in value: JSONValue) -> JSONValue? {
    var current: JSONValue? = value
    for step in path {
      switch step {
      case .key(let key): current = current?[key]
      case .index(let i): current = current?[i]
      }
    }
    return current
  }

  /// `value` with the node at `path` replaced by `change(node)`.
  static func replacing(
    at path: [Step], in value: JSONValue, _ change: (JSONValue) -> JSONValue
  ) -> JSONValue {
    guard let step = path.first else { return change(value) }
    let rest = Array(path.dropFirst())
    switch (step, value) {
    case (.key(let key), .object(var o)):
      if let member = o[key] { o[key] = replacing(at: rest, in: member, change) }
      return .object(o)
    case (.index(let i), .array(var a)) where a.indices.contains(i):
      a[i] = replacing(at: rest, in: a[i], change)
      return .array(a)
    default:
      return value
    }
  }
}
