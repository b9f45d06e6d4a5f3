// Evaluation of the keywords for arrays: `prefixItems`, `items`, `contains`, `minItems`, `maxItems`, `uniqueItems`
// and `unevaluatedItems`.

import ToolhostJSON

extension Program {
  // MARK: - Arrays

  /// Evaluates one keyword for arrays on the items of an array instance.
  func evaluateArray(_ check: Check, _ items: [JSONValue], _ context: inout Context) -> Bool {
    switch check.rule {
    case .prefixItems(let schemas):
      return evaluatePrefixItems(schemas, items, &context)

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
      return evaluateContains(check, rule, items, &context)

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
      return evaluateUnevaluatedItems(check, schema, items, &context)

    default:
      return true
    }
  }

  /// `prefixItems`: each item evaluated by the subschema at its position, as far as both go.
  private func evaluatePrefixItems(_ schemas: [Int], _ items: [JSONValue], _ context: inout Context) -> Bool {
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
  }

  /// `contains`: counts the items that match its subschema against `minContains` and `maxContains`, and reports too
  /// few or too many.
  private func evaluateContains(_ check: Check, _ rule: ContainsRule, _ items: [JSONValue], _ context: inout Context)
    -> Bool
  {
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
  }

  /// `unevaluatedItems`: the items that no other keyword evaluated, evaluated by its subschema.
  private func evaluateUnevaluatedItems(
    _ check: Check, _ schema: Int, _ items: [JSONValue], _ context: inout Context
  ) -> Bool {
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
  }
}
