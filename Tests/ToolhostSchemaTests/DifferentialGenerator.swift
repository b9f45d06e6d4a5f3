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

  enum Focus {
    case object, array, string, number, integer, boolean, null, any
  }

  /// A document of the schema: the root (index 0) or a subschema with its own `$id`.
  struct Resource {
    /// The directory its `$id` places it in, relative to ``DifferentialGenerator/base``: `""` or `"sub/"`.
    let directory: String
    let file: String
  }

  /// Something a `$ref` can designate: a resource's root or one of its definitions.
  struct Target {
    /// Generation order: a reference that does not step into the instance only goes to a smaller order.
    let order: Int
    let resource: Int
    /// Reference tokens inside the resource: `[]` for its root, `["$defs", name]` for a definition.
    let pointer: [String]
    let anchor: String?
  }

  /// Where a subschema is being generated.
  struct Context {
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

  var rng: SplitMix64
  let maxDepth = 3
  /// Strings that match each pattern written into the schema, for the instance.
  var samples: [String: [String]] = [:]
  var resources: [Resource] = []
  var targets: [Target] = []
  var rootHasID = false

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
  mutating func document() -> JSONValue {
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
  mutating func dynamicDocument() -> JSONValue {
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
  mutating func breakSchema(_ schema: JSONValue) -> JSONValue {
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
  mutating func danglingReference(_ schema: JSONValue) -> JSONValue {
    var object = objectOf(schema)
    object["$ref"] = .string(
      rng.pick(["#/$defs/missing", "https://example.com/missing.json", "#nowhere", "other.json#/x"]))
    return .object(object)
  }
}
