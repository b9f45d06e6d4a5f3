// Evaluation of the keywords for numbers (`minimum`, `multipleOf`, ...) and strings (`minLength`, `pattern`,
// `format`, ...).

import ToolhostJSON

extension Program {
  // MARK: - Numbers

  func evaluateNumber(_ check: Check, _ instance: JSONValue, _ context: inout Context)
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

  func evaluateString(_ check: Check, _ s: String, _ context: inout Context) -> Bool {
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
}
