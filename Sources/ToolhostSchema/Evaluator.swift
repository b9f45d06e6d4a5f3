import ToolhostJSON

/// One step of an instance location.
enum PathToken {
  case key(String)
  case index(Int)
}

/// What the keywords applied to one instance location evaluated so far: the annotations that `unevaluatedProperties`
/// and `unevaluatedItems` read. Only subschemas that succeed contribute.
struct Evaluated {
  var keys: Set<String> = []
  var allKeys = false
  /// Items `0..<prefix` were evaluated (by `prefixItems`).
  var prefix = 0
  var allItems = false
  /// Items that matched `contains`.
  var indices: Set<Int> = []

  mutating func merge(_ other: Evaluated) {
    keys.formUnion(other.keys)
    allKeys = allKeys || other.allKeys
    prefix = max(prefix, other.prefix)
    allItems = allItems || other.allItems
    indices.formUnion(other.indices)
  }

  func covers(key: String) -> Bool { allKeys || keys.contains(key) }
  func covers(item: Int) -> Bool { allItems || item < prefix || indices.contains(item) }
}

/// The state of one validation: whether issues are collected, how deep the evaluation is, where in the instance it
/// is (only tracked when collecting), the dynamic scope and annotations when the schema needs them, and the issues so
/// far.
struct Context {
  /// Collect every issue (`validate`) or stop at the first failure and build nothing (`isValid`).
  let collect: Bool
  /// Report a failed `anyOf` or `oneOf` as the issues of its closest alternative instead of one issue that quotes
  /// them, so that explanations of nested alternatives do not nest.
  let flatten: Bool
  var depth: Int
  var path: [PathToken]
  var issues: [ValidationIssue] = []
  /// The schema resources entered, outermost first (kept only when the program uses `$dynamicRef`).
  var scope: [Int] = []
  /// What has been evaluated at the current instance location, when some enclosing schema's `unevaluated*` needs it;
  /// `nil` otherwise.
  var evaluated: Evaluated?

  init(
    collect: Bool, flatten: Bool = false, depth: Int = 0, path: [PathToken] = [], scope: [Int] = [],
    evaluated: Evaluated? = nil
  ) {
    self.collect = collect
    self.flatten = flatten
    self.depth = depth
    self.path = path
    self.scope = scope
    self.evaluated = evaluated
  }

  /// A context that stops at the first failure, at the same depth and scope, collecting annotations afresh if this
  /// one collects them.
  func quiet() -> Context {
    Context(collect: false, depth: depth, scope: scope, evaluated: evaluated == nil ? nil : Evaluated())
  }

  /// A context that collects every issue, flattened, at the same place, depth and scope, with no annotations.
  func explaining() -> Context {
    Context(collect: true, flatten: true, depth: depth, path: path, scope: scope)
  }

  /// The JSON Pointer of the current instance location.
  var instanceLocation: String {
    var text = ""
    for token in path {
      text += "/"
      switch token {
      case .key(let key): text += JSONPointer.escape(key)
      case .index(let index): text += String(index)
      }
    }
    return text
  }

  mutating func report(_ keyword: String, _ location: String, _ message: String) {
    issues.append(
      ValidationIssue(
        instanceLocation: instanceLocation, keywordLocation: location, keyword: keyword,
        message: message)
    )
  }
}

extension Program {
  func isValid(_ instance: JSONValue) -> Bool {
    var context = Context(collect: false)
    return evaluate(0, instance, &context)
  }

  func validate(_ instance: JSONValue) -> [ValidationIssue] {
    var context = Context(collect: true)
    _ = evaluate(0, instance, &context)
    return context.issues
  }

  /// Evaluates node `index` against `instance`. When collecting, every failure has been reported when this returns
  /// `false`; otherwise it returns at the first failure.
  func evaluate(_ index: Int, _ instance: JSONValue, _ context: inout Context) -> Bool {
    let node = nodes[index]
    switch node.kind {
    case .anything:
      return true
    case .nothing:
      if context.collect {
        context.report("false", node.location, "no value is allowed here (the schema is false)")
      }
      return false
    case .checks:
      break
    }
    guard context.depth < JSONSchema.maximumDepth else {
      if context.collect {
        context.report(
          "$ref", node.location,
          "the value is nested too deeply: validation stopped after \(JSONSchema.maximumDepth) nested schemas"
        )
      }
      return false
    }
    context.depth += 1
    defer { context.depth -= 1 }
    let entered = usesDynamicScope && context.scope.last != node.resource
    if entered { context.scope.append(node.resource) }
    defer { if entered { context.scope.removeLast() } }
    guard node.collectsAnnotations else { return evaluateChecks(node, instance, &context) }
    // This node reads annotations: collect its own afresh, and pass them up if it succeeds.
    let outer = context.evaluated
    context.evaluated = Evaluated()
    let valid = evaluateChecks(node, instance, &context)
    if var outer, let mine = context.evaluated, valid {
      outer.merge(mine)
      context.evaluated = outer
    } else {
      context.evaluated = outer
    }
    return valid
  }

  /// Evaluates the keywords of a node that has some.
  @inline(__always)
  private func evaluateChecks(_ node: Node, _ instance: JSONValue, _ context: inout Context) -> Bool {
    var valid = true
    if let type = node.type, TypeMask.of(instance).isDisjoint(with: type.mask) {
      guard context.collect else { return false }
      context.report("type", type.location, Messages.type(type.names, instance))
      valid = false
    }
    for check in node.general {
      if !evaluateGeneral(check, instance, &context) {
        guard context.collect else { return false }
        valid = false
      }
    }
    switch instance {
    case .integer, .real:
      for check in node.numeric {
        if !evaluateNumber(check, instance, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .string(let s):
      for check in node.string {
        if !evaluateString(check, s, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .array(let a):
      for check in node.array {
        if !evaluateArray(check, a, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .object(let o):
      for check in node.object {
        if !evaluateObject(check, o, instance, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .bool, .null:
      break
    }
    return valid
  }

  /// Evaluates a node at the current place without collecting issues, whatever the context does. Its annotations,
  /// when the context collects them and the node succeeds, are added to the context's.
  @inline(__always)
  private func matches(_ index: Int, _ instance: JSONValue, _ context: inout Context) -> Bool {
    var quiet = context.quiet()
    let valid = evaluate(index, instance, &quiet)
    if valid, let found = quiet.evaluated { context.evaluated?.merge(found) }
    return valid
  }

  /// Evaluates a node at the current place without collecting issues or annotations.
  @inline(__always)
  private func matchesQuietly(_ index: Int, _ instance: JSONValue, _ context: borrowing Context) -> Bool {
    var quiet = Context(collect: false, depth: context.depth, scope: context.scope)
    return evaluate(index, instance, &quiet)
  }

  /// Evaluates a node on a member or an item, with the instance location extended by `token` when collecting, and
  /// annotations (which belong to one instance location) set aside meanwhile.
  @inline(__always)
  private func evaluate(
    _ index: Int, _ instance: JSONValue, at token: PathToken, _ context: inout Context
  ) -> Bool {
    let annotations = context.evaluated
    if annotations != nil { context.evaluated = nil }
    defer { if annotations != nil { context.evaluated = annotations } }
    guard context.collect else { return evaluate(index, instance, &context) }
    context.path.append(token)
    defer { context.path.removeLast() }
    return evaluate(index, instance, &context)
  }

  // MARK: - Any instance

  private func evaluateGeneral(_ check: Check, _ instance: JSONValue, _ context: inout Context)
    -> Bool
  {
    switch check.rule {
    case .const(let value):
      if Equality.equal(value, instance) { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "\(Messages.preview(instance)) is not equal to the constant \(Messages.preview(value))")
      }
      return false

    case .enumeration(let rule):
      if rule.contains(instance) { return true }
      if context.collect {
        let choices =
          rule.values.isEmpty
          ? "nothing (the enum is empty)" : Messages.list(rule.values.map(Messages.preview))
        context.report(
          check.keyword, check.location, "\(Messages.preview(instance)) is not one of \(choices)")
      }
      return false

    case .ref(let target):
      return evaluate(target, instance, &context)

    case .dynamicRef(let target, let anchor):
      if let anchor {
        // The outermost resource in the dynamic scope that has this dynamic anchor.
        for resource in context.scope {
          if let node = dynamicAnchors[resource][anchor] { return evaluate(node, instance, &context) }
        }
      }
      return evaluate(target, instance, &context)

    case .allOf(let subschemas):
      var valid = true
      for subschema in subschemas where !evaluate(subschema, instance, &context) {
        guard context.collect else { return false }
        valid = false
      }
      return valid

    case .anyOf(let subschemas):
      // When annotations are collected, every alternative that matches contributes, so none is skipped.
      var any = false
      for subschema in subschemas where matches(subschema, instance, &context) {
        any = true
        if context.evaluated == nil { break }
      }
      if any { return true }
      if context.collect { reportNoAlternative(check, subschemas, instance, &context) }
      return false

    case .oneOf(let subschemas):
      var first = -1
      var second = -1
      for (i, subschema) in subschemas.enumerated() where matches(subschema, instance, &context) {
        if first < 0 {
          first = i
        } else {
          guard context.collect else { return false }
          second = i
          break
        }
      }
      if first >= 0 && second < 0 { return true }
      guard context.collect else { return false }
      if first < 0 {
        reportNoAlternative(check, subschemas, instance, &context)
      } else {
        var matched: [String] = []
        for (i, subschema) in subschemas.enumerated() where matchesQuietly(subschema, instance, context) {
          matched.append(String(i + 1))
        }
        context.report(
          check.keyword, check.location,
          "matches alternatives \(Messages.conjunction(matched)) of the \(subschemas.count) in oneOf, but must match exactly one"
        )
      }
      return false

    case .not(let subschema):
      if !matchesQuietly(subschema, instance, context) { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "\(Messages.preview(instance)) must not match the schema in \"not\"")
      }
      return false

    case .conditional(let condition, let then, let otherwise):
      if then == nil && otherwise == nil && context.evaluated == nil { return true }
      if matches(condition, instance, &context) {
        if let then { return evaluate(then, instance, &context) }
      } else if let otherwise {
        return evaluate(otherwise, instance, &context)
      }
      return true

    default:
      return true
    }
  }

  /// Reports an `anyOf` or `oneOf` that no alternative satisfies: with the expected types when every alternative
  /// failed on its type alone, else with the issues of the closest alternative (quoted in one issue, or as they are
  /// when the context flattens).
  private func reportNoAlternative(
    _ check: Check, _ subschemas: [Int], _ instance: JSONValue, _ context: inout Context
  ) {
    let here = context.instanceLocation
    var results: [[ValidationIssue]] = []
    for subschema in subschemas {
      var inner = context.explaining()
      _ = evaluate(subschema, instance, &inner)
      results.append(inner.issues)
    }
    func typeMismatchHere(_ issue: ValidationIssue) -> Bool {
      issue.keyword == "type" && issue.instanceLocation == here
    }
    // Only the type was wrong everywhere: say which types would do.
    if results.allSatisfy({ $0.count == 1 && typeMismatchHere($0[0]) }) {
      var names: [String] = []
      var known = true
      for subschema in subschemas {
        guard let types = typeNames(subschema, of: instance, hops: 8) else {
          known = false
          break
        }
        for name in types where !names.contains(name) { names.append(name) }
      }
      if known {
        let message = "expected \(Messages.alternatives(names)), got \(instance.typeName)"
        if context.flatten {
          context.report("type", check.location, message)
        } else {
          context.report(check.keyword, check.location, message)
        }
        return
      }
    }
    // Otherwise the alternative that came closest: of the right type, with the fewest issues.
    let candidates = results.indices.filter {
      !results[$0].isEmpty && !results[$0].contains(where: typeMismatchHere)
    }
    let pool = candidates.isEmpty ? Array(results.indices) : candidates
    let best = pool.min { results[$0].count < results[$1].count } ?? 0
    let issues = results[best]
    if context.flatten && !issues.isEmpty {
      context.issues.append(contentsOf: issues)
      return
    }
    var text = "does not match any alternative in \(check.keyword)"
    if !issues.isEmpty {
      text += "; closest is alternative \(best + 1) of \(subschemas.count): "
      text += issues.prefix(3).map(\.description).joined(separator: "; ")
      if issues.count > 3 { text += "; and \(issues.count - 3) more" }
    }
    context.report(check.keyword, check.location, text)
  }

  /// The `type` names of a schema whose own `type` rejects `instance`, following a schema that is only a `$ref`;
  /// `nil` when the type mismatch came from elsewhere.
  private func typeNames(_ index: Int, of instance: JSONValue, hops: Int) -> [String]? {
    let node = nodes[index]
    if let type = node.type {
      return type.mask.isDisjoint(with: TypeMask.of(instance)) ? type.names : nil
    }
    guard hops > 0, node.general.count == 1, case .ref(let target) = node.general[0].rule else {
      return nil
    }
    return typeNames(target, of: instance, hops: hops - 1)
  }

  // MARK: - Numbers

  private func evaluateNumber(_ check: Check, _ instance: JSONValue, _ context: inout Context)
    -> Bool
  {
    let failed: Bool
    switch check.rule {
    case .minimum(let limit): failed = (limit.compare(instance) ?? 0) < 0
    case .maximum(let limit): failed = (limit.compare(instance) ?? 0) > 0
    case .exclusiveMinimum(let limit): failed = (limit.compare(instance) ?? 1) <= 0
    case .exclusiveMaximum(let limit): failed = (limit.compare(instance) ?? -1) >= 0
    case .multipleOf(let divisor): failed = !divisor.divides(instance)
    default: failed = false
    }
    guard failed else { return true }
    guard context.collect else { return false }
    let value = Messages.preview(instance)
    let message: String
    switch check.rule {
    case .minimum(let limit): message = "\(value) is less than the minimum \(limit.text)"
    case .maximum(let limit): message = "\(value) is greater than the maximum \(limit.text)"
    case .exclusiveMinimum(let limit):
      message = "\(value) is not greater than the exclusive minimum \(limit.text)"
    case .exclusiveMaximum(let limit):
      message = "\(value) is not less than the exclusive maximum \(limit.text)"
    case .multipleOf(let divisor): message = "\(value) is not a multiple of \(divisor.text)"
    default: message = "\(value) is not valid"
    }
    context.report(check.keyword, check.location, message)
    return false
  }

  // MARK: - Strings

  private func evaluateString(_ check: Check, _ s: String, _ context: inout Context) -> Bool {
    switch check.rule {
    case .minLength(let minimum):
      // A code point takes 1 to 4 bytes of UTF-8, which bounds the count without counting.
      let bytes = s.utf8.count
      if bytes / 4 >= minimum { return true }
      if bytes < minimum {
        return fail(check, "is shorter than the minimum length \(minimum)", s, &context)
      }
      let length = s.unicodeScalars.count
      if length >= minimum { return true }
      return fail(
        check, "is shorter than the minimum length \(minimum)", s, length: length, &context)
    case .maxLength(let maximum):
      if s.utf8.count <= maximum { return true }
      let length = s.unicodeScalars.count
      if length <= maximum { return true }
      return fail(
        check, "is longer than the maximum length \(maximum)", s, length: length, &context)
    case .pattern(let pattern):
      if pattern.matches(s) { return true }
      return fail(check, "does not match the pattern \(pattern.source)", s, &context)
    case .format(let name, let formatCheck):
      if formatCheck(s) { return true }
      return fail(check, "is not a valid \(name)", s, &context)
    default:
      return true
    }
  }

  private func fail(
    _ check: Check, _ problem: String, _ s: String, length: Int? = nil, _ context: inout Context
  )
    -> Bool
  {
    if context.collect {
      let shown = Messages.previewWithLength(s, length: length ?? s.unicodeScalars.count)
      context.report(check.keyword, check.location, "\(shown) \(problem)")
    }
    return false
  }

  // MARK: - Arrays

  private func evaluateArray(_ check: Check, _ items: [JSONValue], _ context: inout Context) -> Bool {
    switch check.rule {
    case .prefixItems(let schemas):
      var valid = true
      for (i, schema) in schemas.prefix(items.count).enumerated()
      where !evaluate(schema, items[i], at: .index(i), &context) {
        guard context.collect else { return false }
        valid = false
      }
      if context.evaluated != nil {
        context.evaluated!.prefix = max(context.evaluated!.prefix, min(schemas.count, items.count))
      }
      return valid

    case .items(let schema, let start):
      guard start < items.count else { return true }
      if context.evaluated != nil { context.evaluated!.allItems = true }
      if case .nothing = nodes[schema].kind {
        if context.collect {
          context.report(
            check.keyword, check.location,
            start == 0
              ? "expected an empty array, got \(Messages.items(items.count))"
              : "expected at most \(Messages.items(start)), got \(items.count)")
        }
        return false
      }
      var valid = true
      for i in start..<items.count where !evaluate(schema, items[i], at: .index(i), &context) {
        guard context.collect else { return false }
        valid = false
      }
      return valid

    case .contains(let rule):
      var found = 0
      for (i, item) in items.enumerated() where matchesQuietly(rule.node, item, context) {
        found += 1
        // When annotations are collected, every matching item is evaluated, so all are looked at.
        guard context.evaluated == nil else {
          context.evaluated!.indices.insert(i)
          continue
        }
        if rule.max == nil && found >= rule.min { return true }
        if let max = rule.max, found > max { break }
      }
      if found >= rule.min && found <= (rule.max ?? Int.max) { return true }
      guard context.collect else { return false }
      if found < rule.min {
        if rule.min == 1 {
          context.report(
            check.keyword, check.location, "no item matches the schema in \"contains\"")
        } else {
          context.report(
            "minContains", rule.minLocation ?? check.location,
            "expected at least \(Messages.items(rule.min)) matching the schema in \"contains\", got \(found)"
          )
        }
      } else if let max = rule.max {
        var total = 0
        for item in items where matchesQuietly(rule.node, item, context) { total += 1 }
        context.report(
          "maxContains", rule.maxLocation ?? check.location,
          "expected at most \(Messages.items(max)) matching the schema in \"contains\", got \(total)"
        )
      }
      return false

    case .minItems(let minimum):
      if items.count >= minimum { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "expected at least \(Messages.items(minimum)), got \(items.count)")
      }
      return false

    case .maxItems(let maximum):
      if items.count <= maximum { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "expected at most \(Messages.items(maximum)), got \(items.count)")
      }
      return false

    case .uniqueItems:
      guard let (i, j) = Uniqueness.firstDuplicate(items) else { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "items \(i) and \(j) are equal (\(Messages.preview(items[i]))); all items must be unique")
      }
      return false

    case .unevaluatedItems(let schema):
      let seen = context.evaluated ?? Evaluated()
      var valid = true
      for i in items.indices where !seen.covers(item: i) {
        if case .nothing = nodes[schema].kind {
          guard context.collect else { return false }
          context.report(
            check.keyword, check.location,
            "item \(i) is not allowed: no other keyword of the schema evaluates it (unevaluatedItems is false)")
          valid = false
        } else if !evaluate(schema, items[i], at: .index(i), &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
      if valid { context.evaluated?.allItems = true }
      return valid

    default:
      return true
    }
  }

  // MARK: - Objects

  private func evaluateObject(
    _ check: Check, _ object: JSONObject, _ instance: JSONValue, _ context: inout Context
  )
    -> Bool
  {
    switch check.rule {
    case .members(let rule):
      return evaluateMembers(check, rule, object, &context)

    case .minProperties(let minimum):
      if object.count >= minimum { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "expected at least \(Messages.properties(minimum)), got \(object.count)")
      }
      return false

    case .maxProperties(let maximum):
      if object.count <= maximum { return true }
      if context.collect {
        context.report(
          check.keyword, check.location,
          "expected at most \(Messages.properties(maximum)), got \(object.count)")
      }
      return false

    case .propertyNames(let schema):
      var valid = true
      for key in object.keys where !matchesQuietly(schema, .string(key), context) {
        guard context.collect else { return false }
        var inner = context.explaining()
        _ = evaluate(schema, .string(key), &inner)
        let reasons = inner.issues.map(\.message).joined(separator: "; ")
        context.report(
          check.keyword, inner.issues.first?.keywordLocation ?? check.location,
          "property name \(Messages.quoted(key)) is not valid: \(reasons)")
        valid = false
      }
      return valid

    case .dependentRequired(let rules):
      var valid = true
      for (name, required) in rules where object[name] != nil {
        for other in required where object[other] == nil {
          guard context.collect else { return false }
          context.report(
            check.keyword, check.location,
            "missing property \(Messages.quoted(other)), which is required when \(Messages.quoted(name)) is present"
          )
          valid = false
        }
      }
      return valid

    case .dependentSchemas(let rules):
      var valid = true
      for (name, schema) in rules where object[name] != nil && !evaluate(schema, instance, &context) {
        guard context.collect else { return false }
        valid = false
      }
      return valid

    case .unevaluatedProperties(let schema):
      let seen = context.evaluated ?? Evaluated()
      var valid = true
      for key in object.keys where !seen.covers(key: key) {
        if case .nothing = nodes[schema].kind {
          guard context.collect else { return false }
          context.report(
            check.keyword, check.location,
            "property \(Messages.quoted(key)) is not allowed: no other keyword of the schema evaluates it "
              + "(unevaluatedProperties is false)")
          valid = false
        } else if !evaluate(schema, object[key]!, at: .key(key), &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
      if valid { context.evaluated?.allKeys = true }
      return valid

    default:
      return true
    }
  }

  /// `properties`, `required`, `patternProperties` and `additionalProperties` in one pass over the members.
  private func evaluateMembers(
    _ check: Check, _ rule: MembersRule, _ object: JSONObject, _ context: inout Context
  )
    -> Bool
  {
    var valid = true
    var listedPresent = 0
    for member in rule.members {
      guard let value = object[member.name] else {
        if member.required {
          guard context.collect else { return false }
          context.report(
            "required", rule.requiredLocation,
            "missing required property \(Messages.quoted(member.name))")
          valid = false
        }
        continue
      }
      guard let schema = member.node else { continue }
      listedPresent += 1
      if context.evaluated != nil { context.evaluated!.keys.insert(member.name) }
      if case .nothing = nodes[schema].kind {
        guard context.collect else { return false }
        context.report(
          "properties", nodes[schema].location,
          "property \(Messages.quoted(member.name)) is not allowed")
        valid = false
      } else if !evaluate(schema, value, at: .key(member.name), &context) {
        guard context.collect else { return false }
        valid = false
      }
    }
    // The members that `properties` does not list, if any, for `patternProperties` and `additionalProperties`
    // (`patternProperties` also applies to the listed ones.)
    guard !rule.patterns.isEmpty || (rule.additional != nil && listedPresent < object.count) else {
      return valid
    }
    for key in object.keys {
      var matched = false
      for (pattern, schema) in rule.patterns where pattern.matches(key) {
        matched = true
        if context.evaluated != nil { context.evaluated!.keys.insert(key) }
        if !evaluate(schema, object[key]!, at: .key(key), &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
      guard let additional = rule.additional, !matched, !rule.isKnown(key) else { continue }
      if context.evaluated != nil { context.evaluated!.keys.insert(key) }
      if rule.additionalForbidden {
        guard context.collect else { return false }
        context.report(
          "additionalProperties", rule.additionalLocation,
          "property \(Messages.quoted(key)) is not allowed \(allowed(rule))")
        valid = false
      } else if !evaluate(additional, object[key]!, at: .key(key), &context) {
        guard context.collect else { return false }
        valid = false
      }
    }
    return valid
  }

  /// `(allowed: "a", "b")`, mentioning patterns and the case of no allowed names.
  private func allowed(_ rule: MembersRule) -> String {
    var parts = rule.knownInOrder.map(Messages.quoted)
    if !rule.patterns.isEmpty {
      parts.append("names matching " + Messages.alternatives(rule.patterns.map(\.0.source)))
    }
    if parts.isEmpty { return "(no properties are allowed)" }
    return "(allowed: \(Messages.list(parts)))"
  }
}
