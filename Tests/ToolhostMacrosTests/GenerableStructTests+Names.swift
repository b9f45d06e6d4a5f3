import Testing

extension GenerableStructTests {
  @Test func escapedNamesAndSeveralBindings() {
    assertGeneration(
      """
      @Generable
      struct Shape {
        var `default`: Bool
        var width, height: Int
        var tagged: String { didSet {} }
      }
      """,
      expandedSource: """
        struct Shape {
          var `default`: Bool
          var width, height: Int
          var tagged: String { didSet {} }

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var `default`: Bool.PartiallyGenerated?
            var width: Int.PartiallyGenerated?
            var height: Int.PartiallyGenerated?
            var tagged: String.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.`default` = try? content.value(Bool.PartiallyGenerated?.self, forProperty: "default")
              self.width = try? content.value(Int.PartiallyGenerated?.self, forProperty: "width")
              self.height = try? content.value(Int.PartiallyGenerated?.self, forProperty: "height")
              self.tagged = try? content.value(String.PartiallyGenerated?.self, forProperty: "tagged")
            }
          }
        }

        extension Shape: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "default", type: Bool.self),
                GenerationSchema.Property(name: "width", type: Int.self),
                GenerationSchema.Property(name: "height", type: Int.self),
                GenerationSchema.Property(name: "tagged", type: String.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.`default` = try content.value(Bool.self, forProperty: "default")
            self.width = try content.value(Int.self, forProperty: "width")
            self.height = try content.value(Int.self, forProperty: "height")
            self.tagged = try content.value(String.self, forProperty: "tagged")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["default": `default`, "width": width, "height": height, "tagged": tagged])
          }
        }
        """)
  }

  @Test func declaredConformanceIsNotRepeated() {
    // The compiler passes no protocols when the type already declares the conformance.
    assertMacroExpansionWithoutConformance(
      """
      @Generable
      struct Marker: Generable {
        var on: Bool
      }
      """,
      expandedSource: """
        struct Marker: Generable {
          var on: Bool

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var on: Bool.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.on = try? content.value(Bool.PartiallyGenerated?.self, forProperty: "on")
            }
          }
        }

        extension Marker {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "on", type: Bool.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.on = try content.value(Bool.self, forProperty: "on")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["on": on])
          }
        }
        """)
  }
}
