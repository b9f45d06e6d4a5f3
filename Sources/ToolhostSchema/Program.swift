import ToolhostJSON

/// The compiled schema: a table of nodes, one per (sub)schema, that refer to each other by index, so recursive
/// `$ref`s are plain indices and nothing is compiled twice. Node 0 is the root. Immutable once built.
final class Program: Sendable {
  let nodes: [Node]
  /// Per schema resource, its `$dynamicAnchor`s that some `$dynamicRef` may reach: name → node.
  let dynamicAnchors: [[String: Int]]
  /// Whether some `$dynamicRef` resolves dynamically, so evaluation keeps the dynamic scope (the resources entered).
  let usesDynamicScope: Bool

  init(nodes: [Node], dynamicAnchors: [[String: Int]] = [], usesDynamicScope: Bool = false) {
    self.nodes = nodes
    self.dynamicAnchors = dynamicAnchors
    self.usesDynamicScope = usesDynamicScope
  }
}

/// The JSON types as a bit set, for `type` checks without string comparisons.
struct TypeMask: OptionSet, Sendable {
  let rawValue: UInt8

  static let null = TypeMask(rawValue: 1)
  static let boolean = TypeMask(rawValue: 2)
  static let object = TypeMask(rawValue: 4)
  static let array = TypeMask(rawValue: 8)
  static let number = TypeMask(rawValue: 16)
  static let string = TypeMask(rawValue: 32)
  static let integer = TypeMask(rawValue: 64)

  /// The bit for a `type` name; `nil` for a name JSON Schema does not define.
  init?(name: String) {
    switch name {
    case "null": self = .null
    case "boolean": self = .boolean
    case "object": self = .object
    case "array": self = .array
    case "number": self = .number
    case "string": self = .string
    case "integer": self = .integer
    default: return nil
    }
  }

  init(rawValue: UInt8) {
    self.rawValue = rawValue
  }

  /// The types a value has: an integer is also a number, and a real with no fractional part is also an integer.
  @inline(__always)
  static func of(_ value: JSONValue) -> TypeMask {
    switch value {
    case .null: return .null
    case .bool: return .boolean
    case .object: return .object
    case .array: return .array
    case .string: return .string
    case .integer: return TypeMask(rawValue: 16 | 64)
    case .real(let d):
      return d.isFinite && d.rounded(.towardZero) == d ? TypeMask(rawValue: 16 | 64) : .number
    }
  }
}

/// One compiled (sub)schema.
final class Node: Sendable {
  enum Kind: Sendable {
    /// `true`, `{}`, or only annotations: everything is valid.
    case anything
    /// `false`: nothing is valid.
    case nothing
    /// Some keywords to check.
    case checks
  }

  /// Where this schema is in the source, as a JSON Pointer (in another document: its URI, `#` and a pointer).
  let location: String
  let kind: Kind
  /// The schema resource the node belongs to, for the dynamic scope.
  let resource: Int
  /// Whether the node has `unevaluatedProperties` or `unevaluatedItems`, which read what the other keywords and the
  /// subschemas applied in place evaluated.
  let collectsAnnotations: Bool
  /// The `type` keyword, checked first.
  let type: TypeCheck?
  /// Keywords that apply to every instance: `const`, `enum`, `$ref` and the applicators.
  let general: [Check]
  /// Keywords that apply to numbers only.
  let numeric: [Check]
  /// Keywords that apply to strings only.
  let string: [Check]
  /// Keywords that apply to arrays only.
  let array: [Check]
  /// Keywords that apply to objects only.
  let object: [Check]

  init(
    location: String, kind: Kind, resource: Int = 0, collectsAnnotations: Bool = false, type: TypeCheck? = nil,
    general: [Check] = [], numeric: [Check] = [], string: [Check] = [], array: [Check] = [], object: [Check] = []
  ) {
    self.location = location
    self.kind = kind
    self.resource = resource
    self.collectsAnnotations = collectsAnnotations
    self.type = type
    self.general = general
    self.numeric = numeric
    self.string = string
    self.array = array
    self.object = object
  }
}

/// The `type` keyword.
struct TypeCheck: Sendable {
  let mask: TypeMask
  /// The type names in the schema's order, for messages.
  let names: [String]
  let location: String
}

/// One keyword (or a group of keywords that work together) of a compiled schema.
///
/// A class, so that walking a node's checks retains one reference per check instead of copying strings and payloads.
final class Check: Sendable {
  /// The keyword reported in issues.
  let keyword: String
  /// Where the keyword is in the source.
  let location: String
  let rule: Rule

  init(keyword: String, location: String, rule: Rule) {
    self.keyword = keyword
    self.location = location
    self.rule = rule
  }
}

/// What a ``Check`` checks.
enum Rule: Sendable {
  // Any instance.
  case const(JSONValue)
  case enumeration(EnumRule)
  case ref(Int)
  /// `$dynamicRef`: the statically resolved node, and the anchor name when it resolves dynamically.
  case dynamicRef(Int, anchor: String?)
  case allOf([Int])
  case anyOf([Int])
  case oneOf([Int])
  case not(Int)
  case conditional(if: Int, then: Int?, else: Int?)
  // Numbers.
  case minimum(Limit)
  case maximum(Limit)
  case exclusiveMinimum(Limit)
  case exclusiveMaximum(Limit)
  case multipleOf(Divisor)
  // Strings.
  case minLength(Int)
  case maxLength(Int)
  case pattern(Pattern)
  /// `format`, when it is asserted: its name and its check.
  case format(String, FormatChecks.Check)
  // Arrays.
  case prefixItems([Int])
  /// `items` from index `start` (after `prefixItems`).
  case items(Int, start: Int)
  case contains(ContainsRule)
  case minItems(Int)
  case maxItems(Int)
  case uniqueItems
  /// `unevaluatedItems`: checked last, on the items no other keyword evaluated.
  case unevaluatedItems(Int)
  // Objects.
  /// `properties`, `required`, `patternProperties` and `additionalProperties` together.
  case members(MembersRule)
  case minProperties(Int)
  case maxProperties(Int)
  case propertyNames(Int)
  case dependentRequired([(String, [String])])
  case dependentSchemas([(String, Int)])
  /// `unevaluatedProperties`: checked last, on the members no other keyword evaluated.
  case unevaluatedProperties(Int)
}

/// `enum`, with a dictionary lookup for long lists of strings.
final class EnumRule: Sendable {
  let values: [JSONValue]
  /// The values, when they are all strings.
  let strings: [String]?
  /// For long lists of strings: the values under their Swift-equality class (canonically equivalent strings share a
  /// key), to be confirmed code point by code point.
  let index: [String: [String]]?

  init(_ values: [JSONValue]) {
    self.values = values
    let strings = values.compactMap(\.stringValue)
    self.strings = strings.count == values.count ? strings : nil
    self.index =
      strings.count == values.count && values.count > 8
      ? Dictionary(grouping: strings, by: { $0 }) : nil
  }

  @inline(__always)
  func contains(_ value: JSONValue) -> Bool {
    if let strings {
      guard case .string(let s) = value else { return false }
      if let index {
        guard let candidates = index[s] else { return false }
        return candidates.contains { Equality.sameScalars($0, s) }
      }
      for candidate in strings where Equality.sameScalars(candidate, s) { return true }
      return false
    }
    for candidate in values where Equality.equal(candidate, value) { return true }
    return false
  }
}

/// The keywords about an object's members, checked in one pass so each member is looked up once: `properties`,
/// `required`, `patternProperties` and `additionalProperties`.
final class MembersRule: Sendable {
  /// One entry of `properties`, or a `required` name that `properties` does not list (`node` is then `nil`).
  struct Member: Sendable {
    let name: String
    let node: Int?
    let required: Bool
  }

  /// The `properties` entries in the schema's order, then the other `required` names.
  let members: [Member]
  let propertiesLocation: String
  let requiredLocation: String
  let patterns: [(Pattern, Int)]
  /// The `additionalProperties` schema.
  let additional: Int?
  /// Whether `additionalProperties` is `false`, so the message can say which names are allowed.
  let additionalForbidden: Bool
  let additionalLocation: String
  /// The names `properties` lists, to find the members that are additional: under Swift equality, with the exact
  /// name that ``isKnown(_:)`` confirms code point by code point; `others` holds the rare further names that Swift
  /// calls equal to one already there.
  private let known: [String: String]
  private let others: [String]

  init(
    members: [Member], propertiesLocation: String, requiredLocation: String,
    patterns: [(Pattern, Int)],
    additional: Int?, additionalForbidden: Bool, additionalLocation: String
  ) {
    self.members = members
    self.propertiesLocation = propertiesLocation
    self.requiredLocation = requiredLocation
    self.patterns = patterns
    self.additional = additional
    self.additionalForbidden = additionalForbidden
    self.additionalLocation = additionalLocation
    var known: [String: String] = [:]
    var others: [String] = []
    known.reserveCapacity(members.count)
    for member in members where member.node != nil {
      if let previous = known.updateValue(member.name, forKey: member.name) { others.append(previous) }
    }
    self.known = known
    self.others = others
  }

  /// Whether `properties` lists this exact name (not merely a canonically equivalent one).
  @inline(__always)
  func isKnown(_ name: String) -> Bool {
    guard let exact = known[name] else { return false }
    return Equality.sameScalars(exact, name) || others.contains { Equality.sameScalars($0, name) }
  }

  /// The names of `properties` in the schema's order, for messages.
  var knownInOrder: [String] {
    members.filter { $0.node != nil }.map(\.name)
  }
}

/// `contains` with `minContains` and `maxContains`.
struct ContainsRule: Sendable {
  let node: Int
  let min: Int
  let max: Int?
  let minLocation: String?
  let maxLocation: String?
}
