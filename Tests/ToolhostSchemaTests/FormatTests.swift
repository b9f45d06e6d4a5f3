import Testing

@testable import ToolhostSchema

/// The format checks on their own: names, and inputs that must never trap. (The official suite's format tests run
/// through the validator in ConformanceTests.)
@Suite("Format checks")
struct FormatTests {
  @Test func knownFormats() {
    #expect(FormatChecks.known.count == 19)
    for name in FormatChecks.known {
      #expect(FormatChecks.check(name, "") != nil)
    }
    #expect(FormatChecks.check("unknown", "x") == nil)
  }

  /// Random strings, from characters that the checks treat specially, must not trap.
  @Test func fuzzDoesNotTrap() {
    let characters =
      "aAzZ09xn-.:/@%[]{}()?#*+,;=_~!$&'\\\"<>|^ \u{0}\n\tTZPWYMDHSv'l`"
      + "\u{B7}\u{375}\u{5D0}\u{5F3}\u{30FB}\u{3002}\u{FF0E}\u{200C}\u{200D}\u{94D}\u{915}"
      + "\u{628}\u{660}\u{6F0}\u{301}\u{1F600}\u{E000}\u{FFFF}\u{10FFFD}\u{D7FF}é"
      + "kubBdDsSwWpPcCu"
    let alphabet = Array(characters.unicodeScalars)
    var generator = SplitMix64(seed: 0x5EED_F0A7)  // fixed, so that a failure can be run again
    var checked = 0
    for _ in 0..<5_000 {
      let length = Int.random(in: 0...40, using: &generator)
      var view = String.UnicodeScalarView()
      for _ in 0..<length {
        if let c = alphabet.randomElement(using: &generator) { view.append(c) }
      }
      let value = String(view)
      for format in FormatChecks.known {
        _ = FormatChecks.check(format, value)
        checked += 1
      }
    }
    // A-label look-alikes, and characters from all of Unicode.
    let punycodeDigits = Array("abcdefghijklmnopqrstuvwxyz0123456789-XN".unicodeScalars)
    for _ in 0..<5_000 {
      var label = String.UnicodeScalarView("xn--".unicodeScalars)
      var anything = String.UnicodeScalarView()
      for _ in 0..<Int.random(in: 0...30, using: &generator) {
        if let c = punycodeDigits.randomElement(using: &generator) { label.append(c) }
        let value = UInt32.random(in: 0...0x10FFFF, using: &generator)
        if let c = Unicode.Scalar(value) { anything.append(c) }
      }
      for value in [String(label), String(anything), String(label) + "." + String(anything)] {
        for format in FormatChecks.known { _ = FormatChecks.check(format, value) }
      }
    }
    // Long and deeply nested inputs.
    for value in [
      String(repeating: "(", count: 100_000), String(repeating: "a.", count: 100_000),
      "xn--" + String(repeating: "9", count: 60), String(repeating: "\u{E9}", count: 100_000),
      "xn--" + String(repeating: "zzzzz", count: 12), String(repeating: "[", count: 50_000),
    ] {
      for format in FormatChecks.known { _ = FormatChecks.check(format, value) }
    }
    #expect(checked > 0)
  }
}
