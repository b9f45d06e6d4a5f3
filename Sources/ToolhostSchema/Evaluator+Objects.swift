// Evaluation of the keywords for objects: `properties`, `required`, `patternProperties`, `additionalProperties`,
// `propertyNames`, `min/maxProperties`, `dependentRequired`, `dependentSchemas` and `unevaluatedProperties`.

import ToolhostJSON

extension Program {
  // MARK: - Objects

  /// Evaluates one keyword for objects on the members of an object instance (`instance` is the same object).
  func evaluateObject(
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
      return evaluatePropertyNames(check, schema, object, &context)

    case .dependentRequired(let rules):
      return evaluateDependentRequired(check, rules, object, &context)

    case .dependentSchemas(let rules):
      var valid = true
      for (name, schema) in rules where object[name] != nil && !evaluate(schema, instance, &context) {
        guard context.collect else { return false }
        valid = false
      }
      return valid

    case .unevaluatedProperties(let schema):
      return evaluateUnevaluatedProperties(check, schema, object, &context)

    default:
      return true
    }
  }

  /// `propertyNames`: every member name, as a string, matches its subschema; a bad name is reported with the reasons.
  private func evaluatePropertyNames(_ check: Check, _ schema: Int, _ object: JSONObject, _ context: inout Context)
    -> Bool
  {
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
  }

  /// `dependentRequired`: each listed member that is present brings the members it requires.
  private func evaluateDependentRequired(
    _ check: Check, _ rules: [(String, [String])], _ object: JSONObject, _ context: inout Context
  ) -> Bool {
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
  }

  /// `unevaluatedProperties`: the members that no other keyword evaluated, evaluated by its subschema.
  private func evaluateUnevaluatedProperties(
    _ check: Check, _ schema: Int, _ object: JSONObject, _ context: inout Context
  ) -> Bool {
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
