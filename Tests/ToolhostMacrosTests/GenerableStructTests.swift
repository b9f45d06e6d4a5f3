import Testing

/// `@Generable` on structs: the schema, the conversions and the partial type.
@Suite struct GenerableStructTests {
  @Test func describesStoredPropertiesWithTheirGuides() {
    assertGeneration(
      """
      @Generable(description: "A forecast request")
      struct Forecast {
        @Guide(description: "The city") var city: String
        @Guide(description: "Days ahead", .range(1...7)) var days: Int
        var note: String?
        @Guide(.count(3)) var tags: [String]
        @Guide(description: "Airport code", /[A-Z]{3}/) var code: String
        let kind = "forecast"
        var computed: Int { 1 }
        static var shared = 0
      }
      """,
      expandedSource: """
        struct Forecast {
          var city: String
          var days: Int
          var note: String?
          var tags: [String]
          var code: String
          let kind = "forecast"
          var computed: Int { 1 }
          static var shared = 0

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var city: String.PartiallyGenerated?
            var days: Int.PartiallyGenerated?
            var note: String.PartiallyGenerated?
            var tags: [String].PartiallyGenerated?
            var code: String.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.city = try? content.value(String.PartiallyGenerated?.self, forProperty: "city")
              self.days = try? content.value(Int.PartiallyGenerated?.self, forProperty: "days")
              self.note = try? content.value(String.PartiallyGenerated?.self, forProperty: "note")
              self.tags = try? content.value([String].PartiallyGenerated?.self, forProperty: "tags")
              self.code = try? content.value(String.PartiallyGenerated?.self, forProperty: "code")
            }
          }
        }

        extension Forecast: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              description: "A forecast request",
              properties: [
                GenerationSchema.Property(name: "city", description: "The city", type: String.self),
                GenerationSchema.Property(name: "days", description: "Days ahead", type: Int.self, guides: [.range(1 ... 7)]),
                GenerationSchema.Property(name: "note", type: String?.self),
                GenerationSchema.Property(name: "tags", type: [String].self, guides: [.count(3)]),
                GenerationSchema.Property(name: "code", description: "Airport code", type: String.self, guides: [.pattern(source: "[A-Z]{3}")]),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.city = try content.value(String.self, forProperty: "city")
            self.days = try content.value(Int.self, forProperty: "days")
            self.note = try content.value(String?.self, forProperty: "note")
            self.tags = try content.value([String].self, forProperty: "tags")
            self.code = try content.value(String.self, forProperty: "code")
          }
          nonisolated var generatedContent: GeneratedContent {
            var properties: [(String, any ConvertibleToGeneratedContent)] = [("city", self.city), ("days", self.days), ("tags", self.tags), ("code", self.code)]
            if let value = self.note {
              properties.append(("note", value))
            }
            return GeneratedContent(properties: properties, uniquingKeysWith: { first, _ in
                first
              })
          }
        }
        """)
  }

  @Test func publicStructGetsPublicMembers() {
    assertGeneration(
      """
      @Generable
      public struct Point {
        public var x: Double
        public var y: Double
      }
      """,
      expandedSource: """
        public struct Point {
          public var x: Double
          public var y: Double

          public nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            public var x: Double.PartiallyGenerated?
            public var y: Double.PartiallyGenerated?
            public nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.x = try? content.value(Double.PartiallyGenerated?.self, forProperty: "x")
              self.y = try? content.value(Double.PartiallyGenerated?.self, forProperty: "y")
            }
          }
        }

        extension Point: Generable {
          public nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "x", type: Double.self),
                GenerationSchema.Property(name: "y", type: Double.self),
              ]
            )
          }
          public nonisolated init(_ content: GeneratedContent) throws {
            self.x = try content.value(Double.self, forProperty: "x")
            self.y = try content.value(Double.self, forProperty: "y")
          }
          public nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["x": x, "y": y])
          }
        }
        """)
  }

  @Test func nestedGenerableTypesAndArraysOfThem() {
    assertGeneration(
      """
      @Generable
      struct Trip {
        var origin: Place
        var stops: [Place]
        var legs: Array<Travel.Leg>
      }
      """,
      expandedSource: """
        struct Trip {
          var origin: Place
          var stops: [Place]
          var legs: Array<Travel.Leg>

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var origin: Place.PartiallyGenerated?
            var stops: [Place].PartiallyGenerated?
            var legs: Array<Travel.Leg>.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.origin = try? content.value(Place.PartiallyGenerated?.self, forProperty: "origin")
              self.stops = try? content.value([Place].PartiallyGenerated?.self, forProperty: "stops")
              self.legs = try? content.value(Array<Travel.Leg>.PartiallyGenerated?.self, forProperty: "legs")
            }
          }
        }

        extension Trip: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "origin", type: Place.self),
                GenerationSchema.Property(name: "stops", type: [Place].self),
                GenerationSchema.Property(name: "legs", type: Array<Travel.Leg>.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.origin = try content.value(Place.self, forProperty: "origin")
            self.stops = try content.value([Place].self, forProperty: "stops")
            self.legs = try content.value(Array<Travel.Leg>.self, forProperty: "legs")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["origin": origin, "stops": stops, "legs": legs])
          }
        }
        """)
  }

  @Test func optionalFormsAreOptionalProperties() {
    assertGeneration(
      """
      @Generable
      struct Profile {
        var nickname: String?
        var age: Optional<Int>
        var pets: [String]?
        var home: Swift.Optional<Place>
        @Guide(.range(0...10)) var score: Double?
        var rating: Float = 1
      }
      """,
      expandedSource: """
        struct Profile {
          var nickname: String?
          var age: Optional<Int>
          var pets: [String]?
          var home: Swift.Optional<Place>
          var score: Double?
          var rating: Float = 1

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var nickname: String.PartiallyGenerated?
            var age: Int.PartiallyGenerated?
            var pets: [String].PartiallyGenerated?
            var home: Place.PartiallyGenerated?
            var score: Double.PartiallyGenerated?
            var rating: Float.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.nickname = try? content.value(String.PartiallyGenerated?.self, forProperty: "nickname")
              self.age = try? content.value(Int.PartiallyGenerated?.self, forProperty: "age")
              self.pets = try? content.value([String].PartiallyGenerated?.self, forProperty: "pets")
              self.home = try? content.value(Place.PartiallyGenerated?.self, forProperty: "home")
              self.score = try? content.value(Double.PartiallyGenerated?.self, forProperty: "score")
              self.rating = try? content.value(Float.PartiallyGenerated?.self, forProperty: "rating")
            }
          }
        }

        extension Profile: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "nickname", type: String?.self),
                GenerationSchema.Property(name: "age", type: Int?.self),
                GenerationSchema.Property(name: "pets", type: [String]?.self),
                GenerationSchema.Property(name: "home", type: Place?.self),
                GenerationSchema.Property(name: "score", type: Double?.self, guides: [.range(0 ... 10)]),
                GenerationSchema.Property(name: "rating", type: Float.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.nickname = try content.value(String?.self, forProperty: "nickname")
            self.age = try content.value(Int?.self, forProperty: "age")
            self.pets = try content.value([String]?.self, forProperty: "pets")
            self.home = try content.value(Place?.self, forProperty: "home")
            self.score = try content.value(Double?.self, forProperty: "score")
            self.rating = try content.value(Float.self, forProperty: "rating")
          }
          nonisolated var generatedContent: GeneratedContent {
            var properties: [(String, any ConvertibleToGeneratedContent)] = [("rating", self.rating)]
            if let value = self.nickname {
              properties.append(("nickname", value))
            }
            if let value = self.age {
              properties.append(("age", value))
            }
            if let value = self.pets {
              properties.append(("pets", value))
            }
            if let value = self.home {
              properties.append(("home", value))
            }
            if let value = self.score {
              properties.append(("score", value))
            }
            return GeneratedContent(properties: properties, uniquingKeysWith: { first, _ in
                first
              })
          }
        }
        """)
  }

  @Test func nilOptionalsAreLeftOutOfTheContent() {
    // Written as null, a nil optional would not validate against the schema, where the property is only not
    // required: the content has a pair for an optional only when it has a value.
    assertGeneration(
      """
      @Generable
      struct Reminder {
        var title: String?
        var minutes: Optional<Int>
      }
      """,
      expandedSource: """
        struct Reminder {
          var title: String?
          var minutes: Optional<Int>

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var title: String.PartiallyGenerated?
            var minutes: Int.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.title = try? content.value(String.PartiallyGenerated?.self, forProperty: "title")
              self.minutes = try? content.value(Int.PartiallyGenerated?.self, forProperty: "minutes")
            }
          }
        }

        extension Reminder: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "title", type: String?.self),
                GenerationSchema.Property(name: "minutes", type: Int?.self),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.title = try content.value(String?.self, forProperty: "title")
            self.minutes = try content.value(Int?.self, forProperty: "minutes")
          }
          nonisolated var generatedContent: GeneratedContent {
            var properties: [(String, any ConvertibleToGeneratedContent)] = []
            if let value = self.title {
              properties.append(("title", value))
            }
            if let value = self.minutes {
              properties.append(("minutes", value))
            }
            return GeneratedContent(properties: properties, uniquingKeysWith: { first, _ in
                first
              })
          }
        }
        """)
  }

  @Test func emptyStruct() {
    assertGeneration(
      """
      @Generable
      struct Nothing {
      }
      """,
      expandedSource: """
        struct Nothing {

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
            }
          }
        }

        extension Nothing: Generable {
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
        """)
  }

  @Test func regexLiteralsBecomePatternSources() {
    assertGeneration(
      #"""
      @Generable
      struct Codes {
        @Guide(/\d+"x/) var digits: String
        @Guide(#/a/b/#) var slash: String
        @Guide(.pattern(/[a-z]+/)) var lower: String
        @Guide(.element(.pattern(/[A-Z]/)), .count(1...3)) var letters: [String]
        @Guide(.pattern(source: "^x$")) var written: String
      }
      """#,
      expandedSource: #"""
        struct Codes {
          var digits: String
          var slash: String
          var lower: String
          var letters: [String]
          var written: String

          nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
            var digits: String.PartiallyGenerated?
            var slash: String.PartiallyGenerated?
            var lower: String.PartiallyGenerated?
            var letters: [String].PartiallyGenerated?
            var written: String.PartiallyGenerated?
            nonisolated init(_ content: GeneratedContent) throws {
              _ = try content.properties()
              self.digits = try? content.value(String.PartiallyGenerated?.self, forProperty: "digits")
              self.slash = try? content.value(String.PartiallyGenerated?.self, forProperty: "slash")
              self.lower = try? content.value(String.PartiallyGenerated?.self, forProperty: "lower")
              self.letters = try? content.value([String].PartiallyGenerated?.self, forProperty: "letters")
              self.written = try? content.value(String.PartiallyGenerated?.self, forProperty: "written")
            }
          }
        }

        extension Codes: Generable {
          nonisolated static var generationSchema: GenerationSchema {
            GenerationSchema(
              type: Self.self,
              properties: [
                GenerationSchema.Property(name: "digits", type: String.self, guides: [.pattern(source: "\\d+\"x")]),
                GenerationSchema.Property(name: "slash", type: String.self, guides: [.pattern(source: "a/b")]),
                GenerationSchema.Property(name: "lower", type: String.self, guides: [.pattern(source: "[a-z]+")]),
                GenerationSchema.Property(name: "letters", type: [String].self, guides: [.element(.pattern(source: "[A-Z]")), .count(1 ... 3)]),
                GenerationSchema.Property(name: "written", type: String.self, guides: [.pattern(source: "^x$")]),
              ]
            )
          }
          nonisolated init(_ content: GeneratedContent) throws {
            self.digits = try content.value(String.self, forProperty: "digits")
            self.slash = try content.value(String.self, forProperty: "slash")
            self.lower = try content.value(String.self, forProperty: "lower")
            self.letters = try content.value([String].self, forProperty: "letters")
            self.written = try content.value(String.self, forProperty: "written")
          }
          nonisolated var generatedContent: GeneratedContent {
            GeneratedContent(properties: ["digits": digits, "slash": slash, "lower": lower, "letters": letters, "written": written])
          }
        }
        """#)
  }
}
