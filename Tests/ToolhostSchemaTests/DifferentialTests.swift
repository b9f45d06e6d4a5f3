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
