import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

/// Differential testing against python-jsonschema (the version pinned in Tests/requirements.txt): generated schema and
/// instance pairs must get the same answer from both validators, except for the documented ``KnownDifference``s.
///
/// Settings, from the environment:
/// - `TOOLHOST_DIFF_SEED`: the seed (decimal or `0x` hex), or `random` for a fresh one; the seed is always printed.
/// - `TOOLHOST_DIFF_PAIRS`: how many pairs (default ``defaultPairs``).
/// - `TOOLHOST_DIFF_ONLY`: run only the pair with this index (what a failure message names), to reproduce it.
/// - `TOOLHOST_DIFF_DUMP`: a path to copy the pairs (JSON Lines, as differential.py reads them) to.
/// - `TOOLHOST_DIFF_INPUT`: a JSON Lines file of `{"schema": ..., "instance": ...}` pairs to compare instead of
///   generated ones (for a hand-written case; the pairs are numbered from 0 in file order).
/// - `TOOLHOST_SKIP_PYTHON_TESTS`: skip the test (otherwise a missing python3 or jsonschema is a failure).
@Suite("Differential: ToolhostSchema against python-jsonschema")
struct DifferentialTests {
  /// Whether a schema that ToolhostSchema refuses as `.unsupportedKeyword` is counted and reported rather than failed.
  ///
  /// `false`: the validator implements all of 2020-12, so every generated schema (with `$anchor`, `$dynamicRef`,
  /// nested `$id`, `unevaluated*` and references to other documents) must compile or be rejected as
  /// python-jsonschema rejects it.
  static let unsupportedAllowed = false

  /// The seed when `TOOLHOST_DIFF_SEED` is not set: fixed, so that a plain test run is reproducible.
  static let defaultSeed: UInt64 = 0x2020_1200_5EED_0001

  /// The number of pairs when `TOOLHOST_DIFF_PAIRS` is not set: about 13 s of python-jsonschema on a 2-core machine,
  /// most of it `check_schema` (about 4 ms a schema against the 2020-12 meta-schema).
  static let defaultPairs = 3000

  /// Individual failures recorded before the rest are only counted.
  static let recordedFailureLimit = 25

  @Test(
    "generated schemas and instances get python-jsonschema's answers",
    .disabled(
      if: ProcessInfo.processInfo.environment["TOOLHOST_SKIP_PYTHON_TESTS"] != nil,
      "TOOLHOST_SKIP_PYTHON_TESTS is set"))
  func agreesWithPythonJSONSchema() async throws {
    let settings = try DifferentialSettings(environment: ProcessInfo.processInfo.environment)
    let indices = settings.only.map { [$0] } ?? Array(0..<settings.pairs)
    print("differential: seed \(settings.seedText)")

    // The pairs, as the JSON Lines python reads, and read back from those lines so that both sides see the same text.
    var lines: [String] = []
    var pairs: [DifferentialCase] = []
    var given: [String] = []
    if let path = settings.input {
      given = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }
    for index in settings.input == nil ? indices : Array(given.indices) {
      let line: String
      if settings.input != nil {
        line = given[index]
      } else {
        var generator = DifferentialGenerator(seed: settings.seed, index: index)
        let (schema, instance) = generator.pair()
        line = JSONValue.object(["schema": schema, "instance": instance]).serialized()
      }
      let parsed = try JSONValue.parse(line)
      lines.append(line)
      pairs.append(
        DifferentialCase(
          index: index, schema: try #require(parsed["schema"]), instance: try #require(parsed["instance"])))
    }

    let folder = try TemporaryFolder.make(prefix: "toolhost-differential")
    defer { try? FileManager.default.removeItem(at: folder) }
    let input = folder.appendingPathComponent("pairs.jsonl")
    try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: input)
    if let keep = settings.dump {
      try? FileManager.default.removeItem(atPath: keep)
      try FileManager.default.copyItem(atPath: input.path, toPath: keep)
      print("differential: pairs written to \(keep)")
    }

    let timeout = 120 + Double(pairs.count) / 20
    let clock = ContinuousClock()
    let started = clock.now
    let result = await onLargeStack { PythonPeer.run(pairs: input.path, timeout: timeout) }
    print("differential: python-jsonschema took \(clock.now - started) for \(pairs.count) pairs")
    let answers: [PythonAnswer]
    switch result {
    case .unavailable(let why):
      Issue.record(
        Comment(
          rawValue: "python-jsonschema is needed for the differential test: \(why). Run scripts/install-deps --test "
            + "(or set TOOLHOST_SKIP_PYTHON_TESTS=1 to skip the tests that need Python)."))
      return
    case .failed(let why):
      Issue.record(Comment(rawValue: "differential.py failed: \(why)"))
      return
    case .answered(let texts):
      guard texts.count == pairs.count else {
        Issue.record(Comment(rawValue: "differential.py answered \(texts.count) lines for \(pairs.count) pairs"))
        return
      }
      answers = texts.map(PythonAnswer.init)
    }

    let cases = pairs
    let verdicts = await onLargeStack {
      zip(cases, answers).map { pair, answer in Comparison.verdict(pair, python: answer) }
    }
    report(verdicts, pairs: pairs, answers: answers, settings: settings)
  }

  @Test("the generator gives the same pairs for the same seed, and different ones for another")
  func generatorIsDeterministic() {
    for index in [0, 1, 17, 2999] {
      var first = DifferentialGenerator(seed: 42, index: index)
      var again = DifferentialGenerator(seed: 42, index: index)
      var other = DifferentialGenerator(seed: 43, index: index)
      let (a, b, c) = (first.pair(), again.pair(), other.pair())
      #expect(a.schema == b.schema && a.instance == b.instance)
      #expect(a.schema != c.schema || a.instance != c.instance)
    }
  }

  @Test("each known difference recognises its example, and not the same pair made plain")
  func knownDifferencesArePrecise() throws {
    let dynamicList = """
      {"$id": "https://example.com/root.json", "$ref": "list.json",
       "$defs": {"elem": {"$dynamicAnchor": "elem", "type": "integer"},
                 "list": {"$id": "list.json", "$defs": {"elem": {"$dynamicAnchor": "elem"}},
                          "type": "array", "items": {"KEYWORD": "#elem"}}}}
      """
    let itemsError = PythonAnswer.schemaError("/items: [True] is not of type 'object', 'boolean'")
    // (name, schema, instance, python's answer) for the example, then the same for a plain pair.
    let examples: [(String, String, String, PythonAnswer, String, String, PythonAnswer)] = [
      ("python-float-multipleOf", #"{"multipleOf": 0.1}"#, "0.3", .invalid, #"{"multipleOf": 0.1}"#, "0.5", .valid),
      ("python-float-multipleOf", #"{"multipleOf": 0.1}"#, "1e308", .invalid, #"{"multipleOf": 0.5}"#, "1e308", .valid),
      ("python-re-line-ends", #"{"pattern": "^a$"}"#, #""a\n""#, .valid, #"{"pattern": "^a$"}"#, #""a""#, .valid),
      ("python-re-line-ends", #"{"pattern": "^.$"}"#, #""\r""#, .valid, #"{"pattern": "^.$"}"#, #""\u0085""#, .valid),
      (
        "python-uniqueItems-sort", #"{"uniqueItems": true}"#, "[[1], [true], [1]]", .valid,
        #"{"uniqueItems": true}"#, "[[1], [1]]", .invalid
      ),
      (
        "python-ref-to-dynamic-anchor", dynamicList.replacingOccurrences(of: "KEYWORD", with: "$ref"), #"[1, "x"]"#,
        .invalid, dynamicList.replacingOccurrences(of: "KEYWORD", with: "$dynamicRef"), #"[1, "x"]"#, .invalid
      ),
      ("draft7-items-array", #"{"items": [true]}"#, "[]", itemsError, #"{"items": true}"#, "[]", .valid),
    ]
    for (name, schema, instance, answer, plainSchema, plainInstance, plainAnswer) in examples {
      let difference = try #require(KnownDifference.all.first { $0.name == name })
      let example = DifferentialCase(index: 0, schema: json(schema), instance: json(instance))
      let plain = DifferentialCase(index: 0, schema: json(plainSchema), instance: json(plainInstance))
      #expect(difference.applies(example, answer, SwiftOutcome(example)), "\(name): \(schema) \(instance)")
      #expect(
        !difference.applies(plain, plainAnswer, SwiftOutcome(plain)), "\(name): \(plainSchema) \(plainInstance)")
    }
  }

  /// JSON text with every non-ASCII character escaped, so that line breaks and invisible characters show.
  static func text(_ value: JSONValue) -> String {
    (try? value.serialized(JSONStyle(asciiOnly: true))) ?? value.serialized()
  }

  /// Prints the summary and records a failure for each disagreement.
  private func report(
    _ verdicts: [Verdict], pairs: [DifferentialCase], answers: [PythonAnswer], settings: DifferentialSettings
  ) {
    var agreed = 0
    var unsupported: [String: Int] = [:]
    var known: [String: Int] = [:]
    var bothRejected: [String] = []
    var failures: [String] = []
    var valid = 0
    var invalid = 0
    for (i, verdict) in verdicts.enumerated() {
      let pair = pairs[i]
      switch verdict {
      case .agreed:
        agreed += 1
        if answers[i] == .valid { valid += 1 }
        if answers[i] == .invalid { invalid += 1 }
      case .unsupported(let reason):
        unsupported[reason, default: 0] += 1
      case .known(let name):
        known[name, default: 0] += 1
      case .bothRejected(let detail):
        bothRejected.append("pair \(pair.index): \(detail)")
      case .disagreed(let detail):
        failures.append(
          """
          pair \(pair.index) (reproduce: \(settings.reproduction(pair.index)) swift test --filter Differential): \
          \(detail)
            schema:   \(Self.text(pair.schema))
            instance: \(Self.text(pair.instance))
          """)
      }
    }
    let unsupportedCount = unsupported.values.reduce(0, +)
    let knownCount = known.values.reduce(0, +)
    let compared = pairs.count - unsupportedCount
    var lines = [
      "differential: \(pairs.count) pairs, \(compared) compared, \(agreed) agreed (\(valid) valid, \(invalid) invalid, "
        + "\(agreed - valid - invalid) schemas rejected alike), \(unsupportedCount) unsupported, "
        + "\(knownCount) known differences, \(bothRejected.count) rejected by both for different reasons, "
        + "\(failures.count) disagreements; seed \(settings.seedText)"
    ]
    for (name, count) in known.sorted(by: { $0.key < $1.key }) {
      lines.append("  known difference \(name): \(count)")
    }
    for (reason, count) in unsupported.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
      lines.append("  unsupported (\(count)): \(reason)")
    }
    for detail in bothRejected.prefix(5) { lines.append("  rejected by both: \(detail)") }
    print(lines.joined(separator: "\n"))

    for failure in failures.prefix(Self.recordedFailureLimit) { Issue.record(Comment(rawValue: failure)) }
    if failures.count > Self.recordedFailureLimit {
      Issue.record(
        Comment(
          rawValue: "\(failures.count - Self.recordedFailureLimit) more disagreements (seed \(settings.seedText))"))
    }
    #expect(compared > 0, "nothing was compared")
  }
}

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

/// Reading generated values for the known-difference predicates.
enum Inspect {
  /// The values of `keyword` in every schema object of `schema` (`const`, `enum`, `default` and `examples` values are
  /// data and are not searched).
  static func schemaValues(of keyword: String, in schema: JSONValue) -> [JSONValue] {
    SchemaIndex.subschemaPaths(schema).compactMap { SchemaIndex.value(at: $0, in: schema)?[keyword] }
  }

  /// Every `pattern` and `patternProperties` key of a schema.
  static func patterns(in schema: JSONValue) -> [String] {
    schemaValues(of: "pattern", in: schema).compactMap(\.stringValue)
      + schemaValues(of: "patternProperties", in: schema).flatMap { $0.objectValue?.keys ?? [] }
  }

  /// Whether a pattern ends with an unescaped `$`.
  static func endsWithDollar(_ pattern: String) -> Bool {
    pattern.hasSuffix("$") && !pattern.hasSuffix("\\$")
  }

  /// Whether a pattern has a `.` that matches any character: neither escaped nor in a character class.
  static func hasWildcardDot(_ pattern: String) -> Bool {
    var escaped = false
    var inClass = false
    for character in pattern {
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if inClass {
        if character == "]" { inClass = false }
      } else if character == "[" {
        inClass = true
      } else if character == "." {
        return true
      }
    }
    return false
  }

  /// Every string in a value, member names included.
  static func strings(in value: JSONValue) -> [String] {
    switch value {
    case .string(let s): [s]
    case .array(let a): a.flatMap(strings)
    case .object(let o): o.keys + o.flatMap { strings(in: $0.value) }
    default: []
    }
  }

  /// Every number in a value.
  static func numbers(in value: JSONValue) -> [JSONValue] {
    switch value {
    case .integer, .real: [value]
    case .array(let a): a.flatMap(numbers)
    case .object(let o): o.flatMap { numbers(in: $0.value) }
    default: []
    }
  }

  /// Every array in a value, outermost first.
  static func arrays(in value: JSONValue) -> [[JSONValue]] {
    switch value {
    case .array(let a): [a] + a.flatMap(arrays)
    case .object(let o): o.flatMap { arrays(in: $0.value) }
    default: []
    }
  }

  /// The value at a JSON Pointer (unescaped tokens, no percent-encoding).
  static func value(at pointer: String, in root: JSONValue) -> JSONValue? {
    var value: JSONValue? = root
    for token in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
      let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
      if case .array = value, let i = Int(key) { value = value?[i] } else { value = value?[key] }
    }
    return value
  }

  /// Equality as JSON Schema defines it, written here independently of the validator.
  static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return x == y
    case (.integer, .real), (.real, .integer), (.real, .real): return a.doubleValue == b.doubleValue
    case (.string(let x), .string(let y)): return Array(x.unicodeScalars) == Array(y.unicodeScalars)
    case (.bool(let x), .bool(let y)): return x == y
    case (.null, .null): return true
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(equal)
    case (.object(let x), .object(let y)):
      return x.count == y.count && x.allSatisfy { member in y[member.key].map { equal(member.value, $0) } ?? false }
    default: return false
    }
  }

  /// Python's `==` on the decoded values, where `True == 1` and `False == 0` (used by its sort).
  static func pythonEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    func numeric(_ v: JSONValue) -> JSONValue {
      if case .bool(let flag) = v { return .integer(flag ? 1 : 0) }
      return v
    }
    switch (numeric(a), numeric(b)) {
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(pythonEqual)
    case (.object(let x), .object(let y)):
      return x.count == y.count
        && x.allSatisfy { member in y[member.key].map { pythonEqual(member.value, $0) } ?? false }
    case (let x, let y): return equal(x, y)
    }
  }

  /// What python-jsonschema computes for a float divisor: `int(x / d) == x / d` in binary floating point, and when
  /// the quotient overflows, `Fraction(x) / Fraction(d)`, exact on the binary values (0.1 is not one tenth there).
  static func pythonFloatMultiple(_ x: JSONValue, of d: Double) -> Bool {
    guard let value = x.doubleValue else { return true }
    let quotient = value / d
    if quotient.isFinite { return quotient.rounded(.towardZero) == quotient }
    let numerator: (UInt64, Int)?
    switch x {
    case .integer(let i): numerator = i == 0 ? nil : oddTimesPowerOfTwo(i.magnitude, 0)
    case .real(let r): numerator = binary(r)
    default: numerator = nil
    }
    guard let (xm, xe) = numerator else { return true }  // zero is a multiple of anything
    guard let (dm, de) = binary(d) else { return false }
    // x / d = (xm / dm) × 2^(xe - de) with xm and dm odd: an integer when dm divides xm and the power is not negative.
    return xm % dm == 0 && xe >= de
  }

  /// A finite, non-zero, normal double as an odd integer times a power of two.
  static func binary(_ d: Double) -> (UInt64, Int)? {
    guard d.isNormal else { return nil }
    return oddTimesPowerOfTwo(d.significandBitPattern | (1 << 52), Int(d.exponent) - 52)
  }

  /// `m × 2^e` with the factors of two moved from `m` (non-zero) into `e`.
  static func oddTimesPowerOfTwo(_ m: UInt64, _ e: Int) -> (UInt64, Int) {
    let zeros = m.trailingZeroBitCount
    return (m >> zeros, e + zeros)
  }

  /// Whether `x` is an integer multiple of `d`, in exact decimal arithmetic on the shortest texts of both numbers;
  /// `nil` when a text has more digits than this small check reads.
  static func exactlyMultiple(_ x: JSONValue, of d: Double) -> Bool? {
    let text: String
    switch x {
    case .integer(let i): text = String(i)
    case .real(let r): text = "\(r)"
    default: return nil
    }
    guard let (xm, xe) = decimal(text), let (dm, de) = decimal("\(d)"), dm != 0 else { return nil }
    // x / d = (xm / dm) × 10^(xe - de): an integer when dm divides xm × 10^(xe - de), or when dm × 10^(de - xe)
    // divides xm.
    if xe >= de {
      // The remainder of xm × 10^(xe - de) modulo dm, one factor of ten at a time.
      var remainder = xm.magnitude % dm.magnitude
      for _ in 0..<(xe - de) {
        remainder = dm.magnitude.dividingFullWidth(remainder.multipliedFullWidth(by: 10)).remainder
      }
      return remainder == 0
    }
    var denominator = dm.magnitude
    for _ in 0..<(de - xe) {
      let (product, overflow) = denominator.multipliedReportingOverflow(by: 10)
      if overflow { return xm == 0 }  // larger than any non-zero xm
      denominator = product
    }
    return xm.magnitude % denominator == 0
  }

  /// A decimal text (`-12.5`, `1e-05`, `3.0`) as mantissa × 10^exponent.
  static func decimal(_ text: String) -> (Int64, Int)? {
    let parts = text.lowercased().split(separator: "e", maxSplits: 1)
    guard let number = parts.first else { return nil }
    var exponent = parts.count > 1 ? (Int(parts[1]) ?? 0) : 0
    var digits = ""
    var seenPoint = false
    for character in number {
      if character == "." {
        seenPoint = true
      } else if character.isNumber {
        digits.append(character)
        if seenPoint { exponent -= 1 }
      } else if character != "-" && character != "+" {
        return nil
      }
    }
    guard let mantissa = Int64(digits) else { return nil }
    return (number.hasPrefix("-") ? -mantissa : mantissa, exponent)
  }
}

/// Runs differential.py (found from this file's path) with python3 from PATH, once for all pairs.
enum PythonPeer {
  /// How a run ended.
  enum Result: Sendable {
    /// One answer line per pair.
    case answered([String])
    /// python3 or the pinned jsonschema is missing.
    case unavailable(String)
    case failed(String)
  }

  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Differential/differential.py").path

  /// Runs the script on `pairs` (a JSON Lines file); kills it after `timeout` seconds. Blocks: call it from a thread
  /// of its own, not from the cooperative pool.
  static func run(pairs: String, timeout: Double) -> Result {
    guard let python = TestPackage.which("python3") else { return .unavailable("python3 is not on PATH") }
    let output: Subprocess.Output
    do {
      output = try Subprocess.run(
        executable: URL(fileURLWithPath: python), arguments: [script, pairs], timeout: timeout)
    } catch {
      return .unavailable("cannot run \(python): \(error)")
    }
    if output.timedOut { return .failed("no answer within \(Int(timeout)) s; killed") }
    switch output.status {
    case 0:
      return .answered(
        output.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init))
    case 3:
      return .unavailable(output.stderrText.trimmingCharacters(in: .whitespacesAndNewlines))
    default:
      return .failed("exit status \(output.status): \(output.stderrText.suffix(2000))")
    }
  }
}
