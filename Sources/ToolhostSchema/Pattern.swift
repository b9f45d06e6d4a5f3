/// A compiled `pattern` (or `patternProperties` key): a Swift `Regex` set up to behave like ECMA-262 where it matters
/// for schemas, searched unanchored.
///
/// The options: Unicode-scalar semantics (`.` matches one code point, not one grapheme cluster), ASCII-only `\d` and
/// `\w`, and simple word boundaries (`\b` from `\w`), as in ECMA-262. `\p{L}`, `\p{Letter}` and the other Unicode
/// properties work. Syntax that Swift does not accept (such as `\cX`) makes the schema invalid; syntax that Swift
/// reads differently from ECMA-262 (such as `(?i)` inline options) is read the Swift way.
///
/// A class so that rules holding it have a fixed layout (`Regex` is resilient). `@unchecked Sendable` is safe here: `Regex` is an immutable value whose only mutable state is the lowered program
/// it caches on first use, and the standard library stores that cache with an atomic compare-and-swap
/// (`_stdlib_atomicInitializeARCRef`), so concurrent first uses are safe; ``init(_:)`` also performs a first match,
/// so the cache is filled before the value is shared at all. Matching never mutates the regex.
final class Pattern: @unchecked Sendable {
  /// The pattern as written in the schema.
  let source: String
  private let regex: Regex<AnyRegexOutput>

  /// Compiles a pattern; returns the regex parser's complaint for invalid syntax.
  init(_ source: String) throws(PatternError) {
    self.source = source
    do {
      regex = try Regex(Self.ecmaDots(source))
        .matchingSemantics(.unicodeScalar)
        .asciiOnlyDigits()
        .asciiOnlyWordCharacters()
        .wordBoundaryKind(.simple)
    } catch {
      throw PatternError(message: String(describing: error))
    }
    _ = matches("")  // lowers the program now, before the schema is shared
  }

  /// The pattern with each `.` outside a character class spelled as ECMA-262 means it: any code point but the four
  /// line terminators (`\n`, `\r`, U+2028, U+2029). Swift's `.` also leaves out U+000B, U+000C and U+0085.
  static func ecmaDots(_ source: String) -> String {
    guard source.contains(".") else { return source }
    var result = ""
    var inClass = false
    var escaped = false
    for character in source.unicodeScalars {
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if inClass {
        if character == "]" { inClass = false }
      } else if character == "[" {
        inClass = true
      } else if character == "." {
        result += #"[^\n\r\u{2028}\u{2029}]"#
        continue
      }
      result.unicodeScalars.append(character)
    }
    return result
  }

  /// Whether the pattern matches anywhere in `string`.
  @inline(__always)
  func matches(_ string: String) -> Bool {
    (try? regex.firstMatch(in: string)) != nil
  }
}

/// Why a pattern did not compile.
struct PatternError: Error {
  let message: String
}
