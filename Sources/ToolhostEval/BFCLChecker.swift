public import ToolhostJSON

/// BFCL's AST checker (`bfcl_eval/eval_checker/ast_eval/ast_checker.py` of bfcl-eval 2026.3.23), ported rule for
/// rule for Python-style functions, so that a call toolhost's model made is right exactly when BFCL would say so.
/// `toolhost-bench bfcl` runs the package's own checker on the same calls and reports where the two differ.
///
/// ```swift
/// let verdict = BFCLChecker.check(category: .simple, functions: c.functions, calls: made, groundTruth: c.groundTruth)
/// if !verdict.valid { print(verdict.errorType ?? "") }
/// ```
public enum BFCLChecker {
  /// A call as BFCL scores it: the function's name and its arguments (an object).
  public typealias Call = (name: String, arguments: JSONValue)

  /// BFCL's verdict on a case: right or not, and BFCL's error type and message when not.
  public struct Verdict: Sendable, Equatable {
    /// Whether the calls are right.
    public var valid: Bool
    /// BFCL's `error_type` (`simple_function_checker:missing_required`, `value_error:string`, …).
    public var errorType: String?
    /// What is wrong, for people.
    public var error: String?

    static let right = Verdict(valid: true)

    /// Makes a verdict.
    public init(valid: Bool, errorType: String? = nil, error: String? = nil) {
      self.valid = valid
      self.errorType = errorType
      self.error = error
    }

    static func wrong(_ type: String, _ error: String) -> Verdict {
      Verdict(valid: false, errorType: type, error: error)
    }
  }

  /// Scores the calls of one case of `category`: `irrelevance` is right with no call; `parallel` needs each
  /// expected call matched by a different call, in any order, and no other; `multiple` and the simple categories
  /// exactly one call.
  public static func check(
    category: BFCLCategory, functions: [JSONValue], calls: [Call], groundTruth: [JSONValue]
  ) -> Verdict {
    switch category {
    case .irrelevance:
      return calls.isEmpty ? .right : .wrong("irrelevance:made_a_call", "a call was made: \(calls.map(\.name))")
    case .parallel:
      return parallelNoOrder(functions: functions, calls: calls, possible: groundTruth)
    case .multiple:
      guard calls.count == groundTruth.count, let expected = groundTruth.first else {
        return .wrong("multiple_function_checker:wrong_count", "Wrong number of functions.")
      }
      let name = expected.objectValue?.keys.first ?? ""
      guard let description = functions.first(where: { $0["name"]?.stringValue == name }) else {
        return .wrong("multiple_function_checker:no_description", "no function named \(name)")
      }
      return simple(description: description, call: calls[0], possible: expected)
    case .simple, .liveSimple:
      guard calls.count == 1 else { return .wrong("simple_function_checker:wrong_count", "Wrong number of functions.") }
      guard let description = functions.first, let expected = groundTruth.first else {
        return .wrong("simple_function_checker:no_description", "the case has no function or answer")
      }
      return simple(description: description, call: calls[0], possible: expected)
    }
  }

  // MARK: Python's types and equality

  /// The Python type a JSON value decodes to (`json.loads`).
  enum PyType: String, Equatable {
    case str, int, float, bool, list, dict, none
  }

  static func pyType(_ value: JSONValue) -> PyType {
    switch value {
    case .string: .str
    case .integer: .int
    case .real: .float
    case .bool: .bool
    case .array: .list
    case .object: .dict
    case .null: .none
    }
  }

  /// BFCL's `PYTHON_TYPE_MAPPING`.
  static func pyType(named name: String) -> PyType? {
    switch name {
    case "string", "any": .str
    case "integer": .int
    case "float": .float
    case "boolean": .bool
    case "array", "tuple": .list
    case "dict": .dict
    default: nil
    }
  }

  /// Python's `==` on decoded JSON: numbers by value (`True == 1`, `2 == 2.0`), lists item by item, dicts by keys
  /// and values whatever their order.
  static func pyEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    func number(_ v: JSONValue) -> Double? {
      switch v {
      case .integer(let i): Double(i)
      case .real(let d): d
      case .bool(let b): b ? 1 : 0
      default: nil
      }
    }
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return x == y
    case (.string(let x), .string(let y)): return x == y
    case (.null, .null): return true
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { pyEqual($0, $1) }
    case (.object(let x), .object(let y)):
      return x.count == y.count && x.allSatisfy { member in y[member.key].map { pyEqual(member.value, $0) } ?? false }
    default:
      guard let x = number(a), let y = number(b) else { return false }
      return x == y
    }
  }

  static func pyContains(_ list: [JSONValue], _ value: JSONValue) -> Bool { list.contains { pyEqual($0, value) } }

  /// `standardize_string`: no spaces or `,./-_*^`, lower case, `'` as `"`.
  static func standardize(_ text: String) -> String {
    let dropped: Set<Character> = [" ", ",", ".", "/", "-", "_", "*", "^"]
    return String(text.filter { !dropped.contains($0) }.lowercased().map { $0 == "'" ? "\"" : $0 })
  }

  static func standardized(_ value: JSONValue) -> JSONValue {
    if case .string(let s) = value { return .string(standardize(s)) }
    return value
  }

  /// Python's `len(x)` and `x[j]` on a possible answer that should be a list (a string is its characters).
  static func items(_ value: JSONValue) -> [JSONValue] {
    switch value {
    case .array(let a): a
    case .string(let s): s.map { .string(String($0)) }
    default: []
    }
  }

  // MARK: The checks

  /// `type_checker`: whether `value` has the type the function declares, or is a "variable" (the type of the
  /// possible answers instead).
  static func typeCheck(
    param: String, value: JSONValue, possible: [JSONValue], expected: PyType, nested: PyType?
  ) -> (valid: Bool, isVariable: Bool, error: Verdict?) {
    let possibleType = possible.first { !pyEqual($0, .string("")) }.map(pyType)
    let isVariable = possibleType.map { $0 != expected } ?? false
    if pyType(value) == expected {
      guard let nested else { return (true, isVariable, nil) }
      for option in possible {
        var flag = true
        if case .array(let optionItems) = option {
          for item in value.arrayValue ?? [] {
            if !typeCheck(param: param, value: item, possible: optionItems, expected: nested, nested: nil).valid {
              flag = false
              break
            }
          }
        }
        if flag { return (true, isVariable, nil) }
      }
      return (
        false, false,
        .wrong(
          "type_error:nested",
          "Nested type checking failed for parameter '\(param)'. Expected inner type \(nested.rawValue).")
      )
    }
    if let possibleType, pyType(value) == possibleType { return (true, true, nil) }
    return (
      false, false,
      .wrong(
        "type_error:simple",
        "Incorrect type for parameter '\(param)'. Expected type \(expected.rawValue), got \(pyType(value).rawValue). "
          + "Parameter value: \(value.serialized()).")
    )
  }

  /// `simple_function_checker`: one call against one function and its acceptable arguments.
  static func simple(description: JSONValue, call: Call, possible expected: JSONValue) -> Verdict {
    let possible = expected.objectValue?.makeIterator().next()?.value.objectValue ?? [:]
    let name = description["name"]?.stringValue ?? ""
    let details = description["parameters"]?["properties"]?.objectValue ?? [:]
    let required = description["parameters"]?["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
    guard call.name == name else {
      return .wrong("simple_function_checker:wrong_func_name", "Function name '\(name)' not found in model output.")
    }
    let arguments = call.arguments.objectValue ?? [:]
    for param in required where arguments[param] == nil {
      return .wrong("simple_function_checker:missing_required", "Missing required parameter: '\(param)'.")
    }
    for (param, original) in arguments {
      guard let detail = details[param], let allowed = possible[param]?.arrayValue else {
        return .wrong("simple_function_checker:unexpected_param", "Unexpected parameter: '\(param)'.")
      }
      let typeName = detail["type"]?.stringValue ?? ""
      guard let expectedType = pyType(named: typeName) else {
        return .wrong("simple_function_checker:unknown_type", "The function declares an unknown type \(typeName).")
      }
      var nested: PyType?
      if typeName == "array" || typeName == "tuple" {
        nested = detail["items"]?["type"]?.stringValue.flatMap(pyType(named:))
      }
      var value = original
      if typeName == "float", case .integer(let i) = value { value = .real(Double(i)) }
      let typed = typeCheck(param: param, value: value, possible: allowed, expected: expectedType, nested: nested)
      guard typed.valid else { return typed.error ?? .wrong("type_error:simple", "type") }
      if !typed.isVariable {
        var verdict: Verdict?
        if expectedType == .dict {
          verdict = dictCheck(param: param, value: value, possible: allowed)
        } else if expectedType == .list, nested == .dict {
          verdict = listDictCheck(param: param, value: value, possible: allowed)
        } else if expectedType == .str {
          verdict = stringCheck(param: param, value: value, possible: allowed)
        } else if expectedType == .list {
          verdict = listCheck(param: param, value: value, possible: allowed)
        }
        if let verdict {
          guard verdict.valid else { return verdict }
          continue
        }
      }
      guard pyContains(allowed, value) else {
        return .wrong(
          "value_error:others",
          "Invalid value for parameter '\(param)': \(value.serialized()). Expected one of \(JSONValue.array(allowed)).")
      }
    }
    for (param, allowed) in possible where arguments[param] == nil {
      guard pyContains(allowed.arrayValue ?? [], .string("")) else {
        return .wrong(
          "simple_function_checker:missing_optional",
          "Optional parameter '\(param)' not provided and not marked as optional.")
      }
    }
    return .right
  }

  static func stringCheck(param: String, value: JSONValue, possible: [JSONValue]) -> Verdict {
    let options = possible.compactMap(\.stringValue).map(standardize)
    guard let text = value.stringValue, options.contains(standardize(text)) else {
      return .wrong(
        "value_error:string",
        "Invalid value for parameter '\(param)': \(value.serialized()). Expected one of \(JSONValue.array(possible)).")
    }
    return .right
  }

  static func listCheck(param: String, value: JSONValue, possible: [JSONValue]) -> Verdict {
    let made = JSONValue.array((value.arrayValue ?? []).map(standardized))
    let options = possible.map { JSONValue.array(items($0).map(standardized)) }
    guard pyContains(options, made) else {
      return .wrong(
        "value_error:list/tuple",
        "Invalid value for parameter '\(param)': \(value.serialized()). Expected one of \(JSONValue.array(possible)).")
    }
    return .right
  }

  static func dictCheck(param: String, value: JSONValue, possible: [JSONValue]) -> Verdict {
    var result = Verdict.wrong("dict_checker:unclear", "")
    let made = value.objectValue ?? [:]
    for option in possible where !pyEqual(option, .string("")) {
      result = .wrong("dict_checker:unclear", "")
      var flag = true
      let answer = option.objectValue ?? [:]
      for (key, item) in made {
        guard let allowed = answer[key] else {
          result = .wrong("value_error:dict_key", "Unexpected dict key parameter: '\(key)'.")
          flag = false
          break
        }
        if !pyContains(items(allowed).map(standardized), standardized(item)) {
          result = .wrong("value_error:dict_value", "Invalid value for parameter '\(key)': \(item.serialized()).")
          flag = false
          break
        }
      }
      for (key, allowed) in answer where made[key] == nil && !pyContains(items(allowed), .string("")) {
        result = .wrong("value_error:dict_key", "Missing dict key parameter: '\(key)'.")
        flag = false
        break
      }
      if flag { return .right }
    }
    return result
  }

  static func listDictCheck(param: String, value: JSONValue, possible: [JSONValue]) -> Verdict {
    var result = Verdict.wrong("list_dict_checker:unclear", "")
    let made = value.arrayValue ?? []
    for option in possible {
      let dicts = items(option)
      guard made.count == dicts.count else {
        result = .wrong("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
        continue
      }
      var flag = true
      for (index, item) in made.enumerated() {
        result = dictCheck(param: param, value: item, possible: [dicts[index]])
        if !result.valid {
          flag = false
          break
        }
      }
      if flag { return .right }
    }
    return result
  }

  /// `parallel_function_checker_no_order`.
  static func parallelNoOrder(functions: [JSONValue], calls: [Call], possible: [JSONValue]) -> Verdict {
    guard calls.count == possible.count else {
      return .wrong("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
    }
    var matched: Set<Int> = []
    for (i, expected) in possible.enumerated() {
      let name = expected.objectValue?.keys.first ?? ""
      guard let description = functions.first(where: { $0["name"]?.stringValue == name }) else {
        return .wrong("parallel_function_checker_no_order:no_description", "no function named \(name)")
      }
      let found = calls.indices.first { index in
        !matched.contains(index) && simple(description: description, call: calls[index], possible: expected).valid
      }
      guard let found else {
        return .wrong(
          "parallel_function_checker_no_order:cannot_find_match",
          "Could not find a matching function for index \(i) of possible answers.")
      }
      matched.insert(found)
    }
    return .right
  }
}
