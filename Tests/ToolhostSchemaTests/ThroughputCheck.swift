import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema

/// A throughput measurement, not a test: run with `TOOLHOST_SCHEMA_BENCH=1 swift test -c release --filter
/// ThroughputCheck` to print validations per second. It asserts nothing about time.
@Suite("Throughput (opt-in)")
struct ThroughputCheck {
  static let schema: JSONValue = [
    "type": "object",
    "properties": [
      "city": ["type": "string", "minLength": 1, "maxLength": 100],
      "units": ["enum": ["celsius", "fahrenheit", "kelvin"]],
      "days": ["type": "integer", "minimum": 1, "maximum": 14],
      "lang": ["type": "string", "maxLength": 8],
      "verbose": ["type": "boolean"],
    ],
    "required": ["city", "days"],
    "additionalProperties": false,
  ]
  static let arguments: JSONValue = [
    "city": "Oslo", "units": "celsius", "days": 5, "lang": "en", "verbose": false,
  ]

  @Test(
    "validations per second of a typical tool argument object",
    .enabled(
      if: ProcessInfo.processInfo.environment["TOOLHOST_SCHEMA_BENCH"] != nil,
      "set TOOLHOST_SCHEMA_BENCH=1"))
  func throughput() throws {
    let schema = try JSONSchema(Self.schema)
    let arguments = Self.arguments
    let invalid: JSONValue = ["city": "", "units": "rankine", "days": 30, "colour": "red"]
    #expect(schema.isValid(arguments))
    #expect(schema.validate(invalid).count == 4)
    let only = ProcessInfo.processInfo.environment["TOOLHOST_SCHEMA_BENCH"] ?? ""
    func rate(_ label: String, _ body: () -> Bool) {
      guard only == "1" || label.hasPrefix(only) else { return }
      let n = 1_000_000
      var ok = 0
      let clock = ContinuousClock()
      let elapsed = clock.measure {
        for _ in 0..<n where body() { ok += 1 }
      }
      let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      print("\(label): \(Int(Double(n) / seconds)) validations/s (\(ok) valid of \(n))")
    }
    rate("isValid, valid object") { schema.isValid(arguments) }
    rate("validate, valid object") { schema.validate(arguments).isEmpty }
    rate("isValid, invalid object") { schema.isValid(invalid) }
    rate("validate, invalid object (4 issues)") { schema.validate(invalid).isEmpty }
  }
}
