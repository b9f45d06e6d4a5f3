import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@Generable` on enums: one string per case.
@Suite struct GenerableEnumTests {
  @Test func casesBecomeStringChoices() {
    assertGeneration(
      """
      @Generable
      enum Unit {
        case celsius, fahrenheit
      }
      """,
      expandedSource: #"""
        enum Unit {
          case celsius, fahrenheit
        }

        extension Unit: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(type: Self.self, anyOf: ["celsius", "fahrenheit"])
          }
          nonisolated init(_ content: GeneratedContent) throws {
            switch try String(content) {
            case "celsius":
              self = .celsius
            case "fahrenheit":
              self = .fahrenheit
            case let other:
              throw GeneratedContentError(path: "", message: "expected one of \"celsius\", \"fahrenheit\", found \"\(other)\"")
            }
          }
          nonisolated var generatedContent: GeneratedContent {
            switch self {
            case .celsius:
              GeneratedContent(kind: .string("celsius"))
            case .fahrenheit:
              GeneratedContent(kind: .string("fahrenheit"))
            }
          }
        }
        """#)
  }

  @Test func publicEnumWithDescriptionAndRawValues() {
    assertGeneration(
      """
      @Generable(description: "How sure")
      public enum Confidence: String {
        case low = "l"
        case `default`
        case high
      }
      """,
      expandedSource: #"""
        public enum Confidence: String {
          case low = "l"
          case `default`
          case high
        }

        extension Confidence: Generable {
          public nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(type: Self.self, description: "How sure", anyOf: ["low", "default", "high"])
          }
          public nonisolated init(_ content: GeneratedContent) throws {
            switch try String(content) {
            case "low":
              self = .low
            case "default":
              self = .`default`
            case "high":
              self = .high
            case let other:
              throw GeneratedContentError(path: "", message: "expected one of \"low\", \"default\", \"high\", found \"\(other)\"")
            }
          }
          public nonisolated var generatedContent: GeneratedContent {
            switch self {
            case .low:
              GeneratedContent(kind: .string("low"))
            case .`default`:
              GeneratedContent(kind: .string("default"))
            case .high:
              GeneratedContent(kind: .string("high"))
            }
          }
        }
        """#)
  }

  @Test func caseWithAssociatedValuesIsAnError() {
    assertGeneration(
      """
      @Generable
      enum Answer {
        case yes
        case number(Int)
      }
      """,
      expandedSource: """
        enum Answer {
          case yes
          case number(Int)
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Generable supports enum cases without associated values; 'number' has some: make it a @Generable "
            + "struct property instead",
          line: 4, column: 8)
      ])
  }
}
