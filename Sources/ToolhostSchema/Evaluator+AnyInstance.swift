// Evaluation of the keywords that apply to any instance: `const`, `enum`, `$ref`, `$dynamicRef`, `allOf`, `anyOf`,
// `oneOf`, `not` and `if`/`then`/`else`, and the explanation of a failed `anyOf` or `oneOf`.

import ToolhostJSON

extension Program {
  // MARK: - Any instance

  /// Evaluates one keyword that applies to any instance.
  func evaluateGeneral(_ check: Check, _ instance: JSONValue, _ context: inout Context)
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
      return evaluateDynamicRef(target, anchor, instance, &context)

    case .allOf(let subschemas):
      var valid = true
      for subschema in subschemas where !evaluate(subschema, instance, &context) {
        guard context.collect else { return false }
        valid = false
      }
      return valid

    case .anyOf(let subschemas):
      return evaluateAnyOf(check, subschemas, instance, &context)

    case .oneOf(let subschemas):
      return evaluateOneOf(check, subschemas, instance, &context)

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

  /// `$dynamicRef`: the outermost resource in the dynamic scope that has its dynamic anchor, else its static target.
  private func evaluateDynamicRef(_ target: Int, _ anchor: String?, _ instance: JSONValue, _ context: inout Context)
    -> Bool
  {
    if let anchor {
      for resource in context.scope {
        if let node = dynamicAnchors[resource][anchor] { return evaluate(node, instance, &context) }
      }
    }
    return evaluate(target, instance, &context)
  }

  /// `anyOf`: at least one alternative matches.
  private func evaluateAnyOf(_ check: Check, _ subschemas: [Int], _ instance: JSONValue, _ context: inout Context)
    -> Bool
  {
    // When annotations are collected, every alternative that matches contributes, so none is skipped.
    var any = false
    for subschema in subschemas where matches(subschema, instance, &context) {
      any = true
      if context.evaluated == nil { break }
    }
    if any { return true }
    if context.collect { reportNoAlternative(check, subschemas, instance, &context) }
    return false
  }

  /// `oneOf`: exactly one alternative matches; reports none or the several that do.
  private func evaluateOneOf(_ check: Check, _ subschemas: [Int], _ instance: JSONValue, _ context: inout Context)
    -> Bool
  {
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
}
