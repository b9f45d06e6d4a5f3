import SwiftDiagnostics
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Guides that do not fit their property's type, and `@Guide` where it does nothing.
@Suite struct GuideDiagnosticsTests {
  @Test func rangeOnAString() {
    assertGeneration(
      """
      @Generable
      struct Person {
        @Guide(description: "Name", .range(1...3)) var name: String
      }
      """,
      expandedSource: """
        struct Person {
          var name: String

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var name: String.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.name = try? content.value(String.PartiallyGenerated?.self, forProperty: "name")
            }
          }
        }

        extension Person: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "name", description: "Name", type: String.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.name = try content.value(String.self, forProperty: "name")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["name": name])
          }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Guide .range does not fit property 'name' of type String: it applies to Int, Double, Float and Decimal",
          line: 3, column: 31)
      ])
  }

  @Test func countOnAnInt() {
    assertGeneration(
      """
      @Generable
      struct Order {
        @Guide(.count(2)) var quantity: Int
      }
      """,
      expandedSource: """
        struct Order {
          var quantity: Int

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var quantity: Int.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.quantity = try? content.value(Int.PartiallyGenerated?.self, forProperty: "quantity")
            }
          }
        }

        extension Order: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "quantity", type: Int.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.quantity = try content.value(Int.self, forProperty: "quantity")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["quantity": quantity])
          }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "@Guide .count does not fit property 'quantity' of type Int: it applies to arrays", line: 3,
          column: 10)
      ])
  }

  @Test func patternAndRegexOnAnInt() {
    assertGeneration(
      """
      @Generable
      struct Order {
        @Guide(.pattern(/\\d+/)) var quantity: Int?
        @Guide(/x/) var total: Int
      }
      """,
      expandedSource: """
        struct Order {
          var quantity: Int?
          var total: Int

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var quantity: Int.PartiallyGenerated?
            var total: Int.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.quantity = try? content.value(Int.PartiallyGenerated?.self, forProperty: "quantity")
              self.total = try? content.value(Int.PartiallyGenerated?.self, forProperty: "total")
            }
          }
        }

        extension Order: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "quantity", type: Int?.self),
                GenerationSchema.Property(name: "total", type: Int.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.quantity = try content.value(Int?.self, forProperty: "quantity")
            self.total = try content.value(Int.self, forProperty: "total")
          }
          nonisolated var generatedContent: GeneratedContent {
            var properties: [(String, any ConvertibleToGeneratedContent)] = [("total", self.total)]
            if let value = self.quantity {
              properties.append(("quantity", value))
            }
            return GeneratedContent(properties: properties, uniquingKeysWith: { first, _ in
                first
              })
          }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "@Guide .pattern does not fit property 'quantity' of type Int?: it applies to String", line: 3,
          column: 10),
        DiagnosticSpec(
          message: "@Guide regex does not fit property 'total' of type Int: it applies to String", line: 4, column: 10),
      ])
  }

  @Test func elementGuideChecksTheElements() {
    assertGeneration(
      """
      @Generable
      struct Order {
        @Guide(.element(.range(1...9))) var lines: [String]
      }
      """,
      expandedSource: """
        struct Order {
          var lines: [String]

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var lines: [String].PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.lines = try? content.value([String].PartiallyGenerated?.self, forProperty: "lines")
            }
          }
        }

        extension Order: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "lines", type: [String].self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.lines = try content.value([String].self, forProperty: "lines")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["lines": lines])
          }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Guide .range does not fit the elements of property 'lines' of type [String]: it applies to Int, Double, "
            + "Float and Decimal",
          line: 3, column: 19)
      ])
  }

  @Test func unknownGuidesPassThrough() {
    assertGeneration(
      """
      @Generable
      struct Order {
        @Guide(.custom(1), GenerationGuide.minimum(0)) var quantity: Int
      }
      """,
      expandedSource: """
        struct Order {
          var quantity: Int

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var quantity: Int.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.quantity = try? content.value(Int.PartiallyGenerated?.self, forProperty: "quantity")
            }
          }
        }

        extension Order: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "quantity", type: Int.self, guides: [.custom(1), GenerationGuide.minimum(0)]),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.quantity = try content.value(Int.self, forProperty: "quantity")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["quantity": quantity])
          }
        }
        """)
  }

  @Test func guideOnAComputedPropertyOrAFunction() {
    assertGeneration(
      """
      @Generable
      struct Order {
        var quantity: Int
        @Guide(description: "Twice") var double: Int { quantity * 2 }
        @Guide(description: "Total") func total() -> Int { quantity }
      }
      """,
      expandedSource: """
        struct Order {
          var quantity: Int
          var double: Int { quantity * 2 }
          func total() -> Int { quantity }

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var quantity: Int.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.quantity = try? content.value(Int.PartiallyGenerated?.self, forProperty: "quantity")
            }
          }
        }

        extension Order: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "quantity", type: Int.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.quantity = try content.value(Int.self, forProperty: "quantity")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["quantity": quantity])
          }
        }
        """,
      diagnostics: [
        DiagnosticSpec(message: "@Guide applies to a stored property of a @Generable type", line: 4, column: 3),
        DiagnosticSpec(message: "@Guide applies to a stored property of a @Generable type", line: 5, column: 3),
      ])
  }

  @Test func guideOutsideAGenerableType() {
    assertGeneration(
      """
      struct Plain {
        @Guide(description: "Quantity") var quantity: Int
      }
      """,
      expandedSource: """
        struct Plain {
          var quantity: Int
        }
        """,
      diagnostics: [
        DiagnosticSpec(message: "@Guide applies to a stored property of a @Generable type", line: 2, column: 3)
      ])
  }

  @Test func guideOnAConstantIsAWarning() {
    assertGeneration(
      """
      @Generable
      struct Order {
        @Guide(description: "Kind") let kind = "order"
      }
      """,
      expandedSource: """
        struct Order {
          let kind = "order"

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
            }
          }
        }

        extension Order: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: []
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: [:])
          }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "@Guide has no effect on 'kind': a 'let' with an initial value is not generated", line: 3, column: 3,
          severity: .warning)
      ])
  }
}
