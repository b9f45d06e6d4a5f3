import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@Generable` on enums: one string per case without associated values, an object per case with them.
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

  @Test func casesWithAssociatedValuesBecomeObjects() {
    assertGeneration(
      """
      @Generable
      enum Reply {
        case none
        case count(Int)
        case place(name: String, floor: Int?)
        case pair(_ first: Int, Int)
      }
      """,
      expandedSource: #"""
        enum Reply {
          case none
          case count(Int)
          case place(name: String, floor: Int?)
          case pair(_ first: Int, Int)
        }

        extension Reply: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(type: Self.self, cases: [GenerationSchema.Case(name: "none"), GenerationSchema.Case(name: "count", value: Int.self), GenerationSchema.Case(name: "place", properties: [GenerationSchema.Property(name: "name", type: String.self), GenerationSchema.Property(name: "floor", type: Int?.self)]), GenerationSchema.Case(name: "pair", properties: [GenerationSchema.Property(name: "first", type: Int.self), GenerationSchema.Property(name: "_1", type: Int.self)])])
          }
          nonisolated init(_ content: GeneratedContent) throws {
            switch try content.enumCase() {
            case ("none", nil):
              self = .none
            case ("count", let values?):
              do {
                self = .count(try values.value(Int.self))
              } catch let error as GeneratedContentError {
                throw error.inside("/count")
              }
            case ("place", let values?):
              do {
                self = .place(name: try values.value(String.self, forProperty: "name"), floor: try values.value(Int?.self, forProperty: "floor"))
              } catch let error as GeneratedContentError {
                throw error.inside("/place")
              }
            case ("pair", let values?):
              do {
                self = .pair(try values.value(Int.self, forProperty: "first"), try values.value(Int.self, forProperty: "_1"))
              } catch let error as GeneratedContentError {
                throw error.inside("/pair")
              }
            default:
              throw GeneratedContentError(path: "", message: "expected one of \"none\", {\"count\": …}, {\"place\": …}, {\"pair\": …}, found \(content.jsonString)")
            }
          }
          nonisolated var generatedContent: GeneratedContent {
            switch self {
            case .none:
              GeneratedContent(enumCase: "none", values: nil)
            case .count(let v0):
              GeneratedContent(enumCase: "count", values: [("", v0)])
            case .place(let v0, let v1):
              GeneratedContent(enumCase: "place", values: [("name", v0), ("floor", v1)])
            case .pair(let v0, let v1):
              GeneratedContent(enumCase: "pair", values: [("first", v0), ("_1", v1)])
            }
          }
        }
        """#)
  }

  @Test func anAssociatedValueOfATypeWithoutSchemaIsAnError() {
    assertGeneration(
      """
      @Generable
      enum Reply {
        case none
        case at(when: Date)
      }
      """,
      expandedSource: """
        enum Reply {
          case none
          case at(when: Date)
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "associated value 'when' of case 'at' has type 'Date', which @Generable cannot describe; use String, Int, "
            + "Double, Float, Bool, an array, an optional or another @Generable type",
          line: 4, column: 17)
      ])
  }

  @Test func aRecursiveTypeIsAnErrorButANestedTypeOfItIsNot() {
    func recursive(_ type: String) -> String {
      "has type '\(type)', which contains the type itself: @Generable describes a type by writing its schema out "
        + "whole, so it cannot describe a recursive one; make the nested part a type of its own"
    }
    assertGeneration(
      """
      @Generable
      indirect enum Expr {
        case number(Int)
        case negated(Expr)
        case sum([Self])
      }
      """,
      expandedSource: """
        indirect enum Expr {
          case number(Int)
          case negated(Expr)
          case sum([Self])
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "associated value '_0' of case 'negated' "
            + recursive("Expr"), line: 4, column: 16),
        DiagnosticSpec(
          message: "associated value '_0' of case 'sum' " + recursive("[Self]"),
          line: 5, column: 12),
      ])
    assertGeneration(
      """
      @Generable
      struct Node {
        var children: [Node]
      }
      """,
      expandedSource: """
        struct Node {
          var children: [Node]
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "property 'children' " + recursive("[Node]"), line: 3,
          column: 17)
      ])
    // `Trip.Kind` names a type nested in Trip, not Trip: the property is described as any other named type.
    assertGeneration(
      """
      @Generable
      struct Trip {
        var kind: Trip.Kind
      }
      """,
      expandedSource: """
        struct Trip {
          var kind: Trip.Kind

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var kind: Trip.Kind.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.kind = try? content.value(Trip.Kind.PartiallyGenerated?.self, forProperty: "kind")
            }
          }
        }

        extension Trip: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "kind", type: Trip.Kind.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.kind = try content.value(Trip.Kind.self, forProperty: "kind")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["kind": kind])
          }
        }
        """)
  }

  @Test func twoCasesOfOneNameAreAnError() {
    assertGeneration(
      """
      @Generable
      enum Move {
        case to(x: Int)
        case to(name: String)
      }
      """,
      expandedSource: """
        enum Move {
          case to(x: Int)
          case to(name: String)
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Generable generates an enum case by its name, and 'to' names two cases; give one a name of its own",
          line: 4, column: 8)
      ])
  }
}
