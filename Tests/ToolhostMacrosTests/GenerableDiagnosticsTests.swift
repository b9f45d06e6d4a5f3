import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@Generable` cannot describe, each error naming the property.
@Suite struct GenerableDiagnosticsTests {
  @Test func classIsNotGenerable() {
    assertGeneration(
      """
      @Generable
      class Box {
        var size: Int = 0
      }
      """,
      expandedSource: """
        class Box {
          var size: Int = 0
        }
        """,
      diagnostics: [DiagnosticSpec(message: "@Generable applies to a struct or an enum", line: 2, column: 1)])
  }

  @Test func actorIsNotGenerable() {
    assertGeneration(
      """
      @Generable
      actor Counter {
        var count: Int = 0
      }
      """,
      expandedSource: """
        actor Counter {
          var count: Int = 0
        }
        """,
      diagnostics: [DiagnosticSpec(message: "@Generable applies to a struct or an enum", line: 2, column: 1)])
  }

  @Test func extensionIsNotGenerable() {
    assertGeneration(
      """
      @Generable
      extension Box {
      }
      """,
      expandedSource: """
        extension Box {
        }
        """,
      diagnostics: [DiagnosticSpec(message: "@Generable applies to a struct or an enum", line: 2, column: 1)])
  }

  @Test func propertyWithoutTypeAnnotation() {
    assertGeneration(
      """
      @Generable
      struct Counter {
        var x = 3
      }
      """,
      expandedSource: """
        struct Counter {
          var x = 3
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "property 'x' needs a type annotation for @Generable to describe it", line: 3, column: 7)
      ])
  }

  @Test func dictionaryProperty() {
    assertGeneration(
      """
      @Generable
      struct Stock {
        var counts: [String: Int]
      }
      """,
      expandedSource: """
        struct Stock {
          var counts: [String: Int]
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "property 'counts' has type '[String: Int]', which @Generable cannot describe; use String, Int, Double, "
            + "Float, Bool, an array, an optional or another @Generable type",
          line: 3, column: 15)
      ])
  }

  @Test func dictionaryInsideAnArray() {
    assertGeneration(
      """
      @Generable
      struct Stock {
        var counts: [Dictionary<String, Int>]?
        var grid: [[String: Int]]
      }
      """,
      expandedSource: """
        struct Stock {
          var counts: [Dictionary<String, Int>]?
          var grid: [[String: Int]]
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "property 'counts' has type '[Dictionary<String, Int>]?', whose 'Dictionary<String, Int>' @Generable "
            + "cannot describe; use String, Int, Double, Float, Bool, an array, an optional or another @Generable type",
          line: 3, column: 16),
        DiagnosticSpec(
          message:
            "property 'grid' has type '[[String: Int]]', whose '[String: Int]' @Generable cannot describe; use String, "
            + "Int, Double, Float, Bool, an array, an optional or another @Generable type",
          line: 4, column: 14),
      ])
  }

  @Test func tupleProperty() {
    assertGeneration(
      """
      @Generable
      struct Span {
        var bounds: (Int, Int)
      }
      """,
      expandedSource: """
        struct Span {
          var bounds: (Int, Int)
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "property 'bounds' has type '(Int, Int)', which @Generable cannot describe; use String, Int, Double, "
            + "Float, Bool, an array, an optional or another @Generable type",
          line: 3, column: 15)
      ])
  }

  @Test func foundationAndFixedWidthTypes() {
    assertGeneration(
      """
      @Generable
      struct Record {
        var at: Date
        var byte: UInt8
        var thing: any Sendable
        var call: () -> Void
      }
      """,
      expandedSource: """
        struct Record {
          var at: Date
          var byte: UInt8
          var thing: any Sendable
          var call: () -> Void
        }
        """,
      diagnostics: [
        DiagnosticSpec(message: cannotDescribe("at", "Date"), line: 3, column: 11),
        DiagnosticSpec(message: cannotDescribe("byte", "UInt8"), line: 4, column: 13),
        DiagnosticSpec(message: cannotDescribe("thing", "any Sendable"), line: 5, column: 14),
        DiagnosticSpec(message: cannotDescribe("call", "() -> Void"), line: 6, column: 13),
      ])
  }

  @Test func optionalOfAnOptional() {
    assertGeneration(
      """
      @Generable
      struct Maybe {
        var value: Optional<String?>
      }
      """,
      expandedSource: """
        struct Maybe {
          var value: Optional<String?>
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "property 'value' has type 'Optional<String?>': @Generable describes an optional only as a property's own "
            + "type, not inside an array or another optional",
          line: 3, column: 23)
      ])
  }

  @Test func optionalInsideAnArray() {
    assertGeneration(
      """
      @Generable
      struct Sparse {
        var values: [Int?]
      }
      """,
      expandedSource: """
        struct Sparse {
          var values: [Int?]
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "property 'values' has type '[Int?]': @Generable describes an optional only as a property's own type, "
            + "not inside an array or another optional",
          line: 3, column: 16)
      ])
  }
}

/// The error on a property whose whole type has no schema.
private func cannotDescribe(_ property: String, _ type: String) -> String {
  "property '\(property)' has type '\(type)', which @Generable cannot describe; use String, Int, Double, Float, Bool, "
    + "an array, an optional or another @Generable type"
}
