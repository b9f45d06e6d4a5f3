import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

/// The test's settings, read from the environment.
struct DifferentialSettings {
  let seed: UInt64
  let pairs: Int
  let only: Int?
  let dump: String?
  let input: String?

  /// The seed as the failure messages and the summary print it, ready for `TOOLHOST_DIFF_SEED`.
  var seedText: String { "0x" + String(seed, radix: 16) }

  /// The environment that runs pair `index` alone.
  func reproduction(_ index: Int) -> String {
    if let input { return "TOOLHOST_DIFF_INPUT=\(input) (line \(index + 1))" }
    return "TOOLHOST_DIFF_SEED=\(seedText) TOOLHOST_DIFF_ONLY=\(index)"
  }

  /// Reads `TOOLHOST_DIFF_SEED`, `TOOLHOST_DIFF_PAIRS`, `TOOLHOST_DIFF_ONLY`, `TOOLHOST_DIFF_DUMP` and
  /// `TOOLHOST_DIFF_INPUT`.
  /// - Throws: ``SettingError`` for a value that is not a number.
  init(environment: [String: String]) throws {
    if let text = environment["TOOLHOST_DIFF_SEED"], !text.isEmpty {
      if text == "random" {
        var system = SystemRandomNumberGenerator()
        seed = system.next()
      } else if text.lowercased().hasPrefix("0x"), let value = UInt64(text.dropFirst(2), radix: 16) {
        seed = value
      } else if let value = UInt64(text) {
        seed = value
      } else {
        throw SettingError(message: "TOOLHOST_DIFF_SEED must be a number, 0x-hex or 'random', not '\(text)'")
      }
    } else {
      seed = DifferentialTests.defaultSeed
    }
    if let text = environment["TOOLHOST_DIFF_PAIRS"], !text.isEmpty {
      guard let value = Int(text), value > 0 else {
        throw SettingError(message: "TOOLHOST_DIFF_PAIRS must be a positive integer, not '\(text)'")
      }
      pairs = value
    } else {
      pairs = DifferentialTests.defaultPairs
    }
    if let text = environment["TOOLHOST_DIFF_ONLY"], !text.isEmpty {
      guard let value = Int(text), value >= 0 else {
        throw SettingError(message: "TOOLHOST_DIFF_ONLY must be a pair index, not '\(text)'")
      }
      only = value
    } else {
      only = nil
    }
    dump = environment["TOOLHOST_DIFF_DUMP"].flatMap { $0.isEmpty ? nil : $0 }
    input = environment["TOOLHOST_DIFF_INPUT"].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// A setting that cannot be read.
  struct SettingError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }
}

/// One generated pair, as both validators read it.
struct DifferentialCase: Sendable {
  let index: Int
  let schema: JSONValue
  let instance: JSONValue
}

/// python-jsonschema's answer for one pair: a line of differential.py's output.
enum PythonAnswer: Sendable, Equatable, CustomStringConvertible {
  case valid
  case invalid
  /// `check_schema` rejected the schema: where in the schema, and why.
  case schemaError(String)
  /// A reference designates nothing (python-jsonschema finds that out only when validation reaches it).
  case refError(String)
  /// Any other exception.
  case error(String)

  /// Reads one output line.
  init(_ line: String) {
    func rest(_ prefix: String) -> String { String(line.dropFirst(prefix.count)) }
    switch line {
    case "valid": self = .valid
    case "invalid": self = .invalid
    case _ where line.hasPrefix("schema-error "): self = .schemaError(rest("schema-error "))
    case _ where line.hasPrefix("ref-error "): self = .refError(rest("ref-error "))
    case _ where line.hasPrefix("error "): self = .error(rest("error "))
    default: self = .error("unreadable answer line: \(line)")
    }
  }

  /// The answer in the words the failure messages use.
  var description: String {
    switch self {
    case .valid: "valid"
    case .invalid: "invalid"
    case .schemaError(let message): "the schema is invalid (\(message))"
    case .refError(let message): "a reference does not resolve (\(message))"
    case .error(let message): "an exception (\(message))"
    }
  }

  /// The pointer in the schema that `check_schema` complained about, for a schema error.
  var schemaErrorPointer: String? {
    guard case .schemaError(let text) = self, let colon = text.range(of: ": ") else { return nil }
    return String(text[..<colon.lowerBound])
  }
}

/// What ToolhostSchema made of one pair.
enum SwiftOutcome: Sendable, CustomStringConvertible {
  /// The schema compiled; what `isValid` and `validate` said of the instance.
  case compiled(isValid: Bool, issues: [ValidationIssue])
  case rejected(SchemaError)

  /// Compiles and validates.
  init(_ pair: DifferentialCase) {
    do {
      let schema = try JSONSchema(pair.schema)
      self = .compiled(isValid: schema.isValid(pair.instance), issues: schema.validate(pair.instance))
    } catch {
      self = .rejected(error)
    }
  }

  /// The outcome in the words the failure messages use.
  var description: String {
    switch self {
    case .compiled(let isValid, let issues):
      let said = issues.isEmpty ? "[]" : "[" + issues.map(\.description).joined(separator: "; ") + "]"
      return "isValid \(isValid), validate \(said)"
    case .rejected(let error):
      return "compiling throws \(error.kind): \(error.schemaLocation.isEmpty ? "/" : error.schemaLocation): "
        + error.message
    }
  }
}

/// How one pair came out.
enum Verdict: Sendable {
  case agreed
  /// ToolhostSchema refused a keyword it does not implement yet; the reason, without pair-specific details.
  case unsupported(String)
  /// A documented ``KnownDifference``, by name.
  case known(String)
  /// Both rejected the schema, for different reasons (for example python-jsonschema's `check_schema` found a bad
  /// keyword value where ToolhostSchema stopped at an unresolved reference first): reported, not failed.
  case bothRejected(String)
  /// A real disagreement: a failure.
  case disagreed(String)
}

/// The comparison of both answers for a pair.
enum Comparison {
  static func verdict(_ pair: DifferentialCase, python: PythonAnswer) -> Verdict {
    let swift = SwiftOutcome(pair)
    if case .rejected(let error) = swift, error.kind == .unsupportedKeyword {
      guard DifferentialTests.unsupportedAllowed else {
        return .disagreed(
          "ToolhostSchema refuses the schema as unsupported: \(swift); python-jsonschema says \(python)")
      }
      return .unsupported(unsupportedReason(error))
    }
    let agrees: Bool
    switch (swift, python) {
    case (.compiled(let isValid, let issues), .valid), (.compiled(let isValid, let issues), .invalid):
      let expected = python == .valid
      agrees = isValid == expected && issues.isEmpty == expected
    case (.rejected(let error), .schemaError):
      agrees = error.kind == .invalidSchema
      if !agrees { return .bothRejected("ToolhostSchema: \(swift); python-jsonschema: \(python)") }
    case (.rejected(let error), .refError):
      agrees = error.kind == .unresolvedReference
      if !agrees { return .bothRejected("ToolhostSchema: \(swift); python-jsonschema: \(python)") }
    default:
      agrees = false
    }
    if agrees { return .agreed }
    if case .error = python {
      return .disagreed("python-jsonschema raised: \(python); ToolhostSchema: \(swift)")
    }
    for difference in KnownDifference.all where difference.applies(pair, python, swift) {
      return .known(difference.name)
    }
    return .disagreed("python-jsonschema says \(python); ToolhostSchema says \(swift)")
  }

  /// An unsupported-keyword message without the parts that differ from schema to schema (reference text).
  static func unsupportedReason(_ error: SchemaError) -> String {
    let message = error.message
    if message.hasPrefix("remote reference") { return "remote references" }
    if message.hasPrefix("'$ref'") && message.contains("anchor") { return "references to anchors" }
    return message
  }
}

/// A documented difference between python-jsonschema and the specification (or a deliberate choice of ToolhostSchema),
/// recognised by a precise predicate over the pair so that it cannot hide anything else.
struct KnownDifference: Sendable {
  let name: String
  /// Why the answers differ, and which one the specification supports.
  let reason: String
  let applies: @Sendable (DifferentialCase, PythonAnswer, SwiftOutcome) -> Bool

  static let all: [KnownDifference] = [
    KnownDifference(
      name: "python-float-multipleOf",
      reason: """
        python-jsonschema divides by a multipleOf written with a fraction in binary floating point (0.3 / 0.1 is \
        2.9999999999999996, so 0.3 is "not a multiple of 0.1"); the specification asks whether the quotient is an \
        integer, and ToolhostSchema computes that exactly in decimal.
        """,
      applies: { pair, _, _ in
        let divisors = Inspect.schemaValues(of: "multipleOf", in: pair.schema).compactMap { value -> Double? in
          if case .real(let d) = value, d > 0 { return d }
          return nil
        }
        return Inspect.numbers(in: pair.instance).contains { x in
          divisors.contains { d in
            guard let exact = Inspect.exactlyMultiple(x, of: d) else { return false }
            return Inspect.pythonFloatMultiple(x, of: d) != exact
          }
        }
      }),
    KnownDifference(
      name: "python-re-line-ends",
      reason: """
        Python's re lets $ match before a final \\n, and its . matches \\r and \\u2028, which ECMA-262 (the \
        specification's regular expressions) counts as line terminators; ToolhostSchema follows ECMA-262 there.
        """,
      applies: { pair, _, _ in
        let patterns = Inspect.patterns(in: pair.schema)
        let strings = Inspect.strings(in: pair.instance)
        let dollar = patterns.contains(where: Inspect.endsWithDollar) && strings.contains { $0.hasSuffix("\n") }
        let dot =
          patterns.contains(where: Inspect.hasWildcardDot)
          && strings.contains { $0.unicodeScalars.contains { $0 == "\r" || $0 == "\u{2028}" || $0 == "\u{2029}" } }
        return dollar || dot
      }),
    KnownDifference(
      name: "python-uniqueItems-sort",
      reason: """
        python-jsonschema checks uniqueItems by sorting the items and comparing neighbours; Python orders [1] and \
        [true] as equal, so an array such as [[1], [true], [1]] keeps its two equal items apart and passes.
        """,
      applies: { pair, _, _ in
        Inspect.arrays(in: pair.instance).contains { items in
          let duplicated = items.indices.contains { j in (0..<j).contains { Inspect.equal(items[$0], items[j]) } }
          let confusable = items.indices.contains { j in
            (0..<j).contains { i in
              items[i].arrayValue != nil && Inspect.pythonEqual(items[i], items[j])
                && !Inspect.equal(items[i], items[j])
            }
          }
          return duplicated && confusable
        }
      }),
    KnownDifference(
      name: "python-ref-to-dynamic-anchor",
      reason: """
        python-jsonschema (referencing) resolves a $ref to a name declared by $dynamicAnchor dynamically, like \
        $dynamicRef; in the specification $ref is always static.
        """,
      applies: { pair, _, _ in
        let dynamic = Inspect.schemaValues(of: "$dynamicAnchor", in: pair.schema).compactMap(\.stringValue)
        let plain = Set(Inspect.schemaValues(of: "$anchor", in: pair.schema).compactMap(\.stringValue))
        return Inspect.schemaValues(of: "$ref", in: pair.schema).compactMap(\.stringValue).contains { ref in
          guard let hash = ref.firstIndex(of: "#") else { return false }
          let name = String(ref[ref.index(after: hash)...])
          return !plain.contains(name) && dynamic.filter { $0 == name }.count >= 2
        }
      }),
    KnownDifference(
      name: "draft7-items-array",
      reason: """
        ToolhostSchema accepts the draft 7 tuple form of items (an array of schemas) as prefixItems, for schemas \
        written for older drafts; the 2020-12 meta-schema that python-jsonschema checks against refuses it.
        """,
      applies: { pair, python, swift in
        guard case .compiled = swift, let pointer = python.schemaErrorPointer, pointer.hasSuffix("/items") else {
          return false
        }
        return Inspect.value(at: pointer, in: pair.schema)?.arrayValue != nil
      }),
  ]
}
