import Foundation
import ToolhostJSON

/// The differential generator's instances, and the mutations that make them miss their schema.
extension DifferentialGenerator {
  // MARK: - Instances

  /// What the keywords met on the way (through `allOf`, references, one branch of `anyOf`/`oneOf`, ...) ask of the
  /// instance.
  struct Hints {
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
  mutating func instance(for schema: JSONValue, index: SchemaIndex, budget: Int) -> JSONValue {
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

  mutating func gather(_ schema: JSONValue, into hints: inout Hints, index: SchemaIndex, depth: Int) {
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

  mutating func chooseType(_ hints: Hints) -> String {
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

  mutating func object(_ hints: Hints, index: SchemaIndex, budget: Int) -> JSONValue {
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

  mutating func array(_ hints: Hints, index: SchemaIndex, budget: Int) -> JSONValue {
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

  mutating func string(_ hints: Hints) -> JSONValue {
    if let pattern = hints.patterns.first, let matches = samples[pattern], rng.chance(0.85) {
      return .string(rng.pick(matches))
    }
    let low = min(hints.minLength ?? 0, 6)
    let length = rng.int(low...max(low, min(hints.maxLength ?? (low + 4), 8)))
    return .string(text(scalars: length))
  }

  /// A string of exactly `scalars` code points, from ``letters``.
  mutating func text(scalars: Int) -> String {
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

  mutating func number(_ hints: Hints, integer: Bool) -> JSONValue {
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
  mutating func multiple(_ k: Int, of divisor: JSONValue, preferInteger: Bool) -> JSONValue {
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
  func number(_ d: Double) -> JSONValue {
    if d.rounded() == d && abs(d) < 1e15 { return .integer(Int64(d)) }
    return .real(d)
  }

  /// `value`, or (sometimes) a value equal to it in JSON Schema's sense written differently: `1.0` for `1`, object
  /// members in another order.
  mutating func variant(of value: JSONValue) -> JSONValue {
    guard rng.chance(0.3) else { return value }
    switch value {
    case .integer(let i): return .real(Double(i))
    case .real(let d) where d.rounded() == d && abs(d) < 1e15: return .integer(Int64(d))
    case .object(let o): return .object(JSONObject(o.reversed().map { ($0.key, variant(of: $0.value)) }))
    case .array(let a): return .array(a.map { variant(of: $0) })
    default: return value
    }
  }

  mutating func randomValue(depth: Int) -> JSONValue {
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
  mutating func mutate(_ value: JSONValue) -> JSONValue {
    let paths = SchemaIndex.allPaths(value)
    return SchemaIndex.replacing(at: rng.pick(paths), in: value) { node in self.mutateNode(node) }
  }

  mutating func mutateNode(_ node: JSONValue) -> JSONValue {
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

  func objectOf(_ schema: JSONValue) -> JSONObject {
    switch schema {
    case .object(let o): return o
    case .bool(false): return ["not": [:]]
    default: return [:]
    }
  }
}
