import Testing
import ToolhostGeneration
import ToolhostJSON
import ToolhostSchema

@Generable(description: "A trip to plan")
struct Trip: Equatable {
  @Guide(description: "The city, as the user wrote it")
  var city: String
  @Guide(description: "Days away", .range(1...14))
  var days: Int
  @Guide(description: "What to see", .count(1...3))
  var sights: [Sight]
  var budget: Double?
  @Guide(description: "The airport's code", /[A-Z]{3}/)
  var airport: String
  var season: Season
}

@Generable
struct Sight: Equatable {
  @Guide(description: "The sight's name")
  var name: String
  @Guide(.minimum(0))
  var hours: Int
}

@Generable(description: "When")
enum Season: Equatable {
  case spring, summer, autumn, winter
}

@Generable
struct Tags: Equatable {
  @Guide(.element(.anyOf(["a", "b"])), .maximumCount(2))
  var tags: [String]
  @Guide(.constant("v1"))
  var version: String
}

/// The schemas `@Generable` derives: what toolhost's validator accepts and refuses, against hand-written JSON Schema.
struct DerivedSchemaTests {
  @Test func derivedSchemaEqualsTheHandWrittenOne() throws {
    let handWritten: JSONValue = [
      "type": "object", "title": "Trip", "description": "A trip to plan",
      "properties": [
        "city": ["type": "string", "description": "The city, as the user wrote it"],
        "days": ["type": "integer", "minimum": 1, "maximum": 14, "description": "Days away"],
        "sights": [
          "type": "array", "minItems": 1, "maxItems": 3, "description": "What to see",
          "items": [
            "type": "object", "title": "Sight",
            "properties": [
              "name": ["type": "string", "description": "The sight's name"],
              "hours": ["type": "integer", "minimum": 0],
            ],
            "required": ["name", "hours"], "additionalProperties": false,
          ],
        ],
        "budget": ["type": "number"],
        "airport": ["type": "string", "pattern": "^([A-Z]{3})$", "description": "The airport's code"],
        "season": [
          "type": "string", "title": "Season", "description": "When",
          "enum": ["spring", "summer", "autumn", "winter"],
        ],
      ],
      "required": ["city", "days", "sights", "airport", "season"],
      "additionalProperties": false,
    ]
    #expect(Trip.generationSchema.jsonSchema.jsonEquals(handWritten), "\(Trip.generationSchema.debugDescription)")
  }

  @Test func validatorAcceptsAValueOfTheTypeAndNamesWhatIsWrongOtherwise() throws {
    let trip = Trip(
      city: "Porto", days: 3, sights: [Sight(name: "Ribeira", hours: 2)], budget: nil, airport: "OPO",
      season: .spring)
    #expect(Trip.generationSchema.validate(trip.generatedContent).isEmpty)

    let wrong = try GeneratedContent(
      json: #"{"city": "Porto", "days": 30, "sights": [], "airport": "opo", "season": "monsoon", "extra": 1}"#)
    let issues = Trip.generationSchema.validate(wrong)
    let places = Set(issues.map(\.instanceLocation))
    #expect(places.isSuperset(of: ["/days", "/sights", "/airport", "/season"]), "\(issues)")
    #expect(issues.contains { $0.keyword == "additionalProperties" }, "\(issues)")

    // A regex guide matches the whole string, as FoundationModels' do.
    var inside = trip
    inside.airport = "xOPOx"
    #expect(Trip.generationSchema.validate(inside.generatedContent).map(\.instanceLocation) == ["/airport"])
  }

  @Test func guidesOnElementsAndConstants() throws {
    let schema = Tags.generationSchema.jsonSchema
    #expect(schema["properties"]?["tags"]?["items"]?["enum"] == ["a", "b"])
    #expect(schema["properties"]?["tags"]?["maxItems"] == 2)
    #expect(schema["properties"]?["version"]?["const"] == "v1")
    #expect(Tags.generationSchema.validate(try GeneratedContent(json: #"{"tags": ["c"], "version": "v1"}"#)).count == 1)
  }

  @Test func contentRoundTripsThroughTheType() throws {
    let trip = Trip(
      city: "Oslo", days: 2, sights: [Sight(name: "Opera", hours: 1), Sight(name: "Fram", hours: 3)], budget: 250.5,
      airport: "OSL", season: .winter)
    let back = try Trip(GeneratedContent(json: trip.generatedContent.jsonString))
    #expect(back == trip)
    #expect(trip.generatedContent.jsonString.hasPrefix(#"{"city":"Oslo","days":2,"#))
  }

  @Test func decodingFailuresNameThePathAndTheExpectedType() throws {
    let missing = try GeneratedContent(json: #"{"city": "Oslo", "days": 2, "sights": [{"name": "Opera"}]}"#)
    #expect {
      try Trip(missing)
    } throws: { error in
      let e = error as? GeneratedContentError
      return e?.path == "/sights/0/hours" && e?.message.contains("Int") == true
    }
    let badEnum = try GeneratedContent(
      json: #"{"city": "Oslo", "days": 2, "sights": [], "airport": "OSL", "season": "monsoon"}"#)
    #expect {
      try Trip(badEnum)
    } throws: { error in
      let e = error as? GeneratedContentError
      return e?.path == "/season" && e?.message.contains("monsoon") == true
    }
    let notAnInteger = try GeneratedContent(json: #"{"name": "x", "hours": 1.5}"#)
    #expect(throws: GeneratedContentError.self) { try Sight(notAnInteger) }
  }

  @Test func partialValuesWhileStreaming() throws {
    let cut = #"{"city": "Lis"#
    let content = try GeneratedContent(json: cut)
    #expect(!content.isComplete)
    let partial = try Trip.PartiallyGenerated(content)
    #expect(partial.city == "Lis")
    #expect(partial.days == nil)

    let further = try Trip.PartiallyGenerated(
      GeneratedContent(json: #"{"city": "Lisbon", "days": 4, "sights": [{"name": "Belém", "hou"#))
    #expect(further.city == "Lisbon")
    #expect(further.days == 4)
    #expect(further.sights?.first?.name == "Belém")
    #expect(further.sights?.first?.hours == nil)
    #expect(try GeneratedContent(json: #"{"a": [1, 2"#).jsonString == #"{"a":[1]}"#)
    #expect(try GeneratedContent(json: #"{"a": tr"#).jsonString == "{}")
    #expect(throws: GeneratedContentError.self) { try GeneratedContent(json: "hello") }
  }
}

/// Schemas built at run time.
struct DynamicSchemaTests {
  let dish = DynamicGenerationSchema(
    name: "Dish", description: "One dish",
    properties: [
      .init(name: "name", schema: .init(type: String.self)),
      .init(name: "spice", schema: .init(name: "Spice", anyOf: ["mild", "hot"]), isOptional: true),
      .init(name: "grams", description: "Weight", schema: .init(type: Int.self, guides: [.range(50...900)])),
    ])

  @Test func referencesResolveAndTheValidatorChecksValues() throws {
    let menu = DynamicGenerationSchema(
      name: "Menu",
      properties: [.init(name: "dishes", schema: .init(arrayOf: .init(referenceTo: "Dish"), minimumElements: 1))])
    let schema = try GenerationSchema(root: menu, dependencies: [dish])
    #expect(schema.jsonSchema["$defs"]?["Dish"]?["properties"]?["grams"]?["maximum"] == 900)
    let good = try GeneratedContent(json: #"{"dishes": [{"name": "dal", "grams": 300, "spice": "hot"}]}"#)
    #expect(schema.validate(good).isEmpty, "\(schema.validate(good))")
    let bad = try GeneratedContent(json: #"{"dishes": [{"name": "dal", "grams": 30, "spice": "medium"}]}"#)
    #expect(Set(schema.validate(bad).map(\.instanceLocation)) == ["/dishes/0/grams", "/dishes/0/spice"])
    #expect(schema.validate(try GeneratedContent(json: #"{"dishes": []}"#)).count == 1)
  }

  @Test func badDynamicSchemasAreErrorsThatSayWhy() throws {
    let dangling = DynamicGenerationSchema(
      name: "Menu", properties: [.init(name: "x", schema: .init(referenceTo: "Nope"))])
    #expect(throws: GenerationSchema.SchemaError.undefinedReferences(schema: "Menu", references: ["Nope"])) {
      try GenerationSchema(root: dangling, dependencies: [])
    }
    let twice = DynamicGenerationSchema(
      name: "T", properties: [.init(name: "a", schema: .init(type: Int.self)), .init(name: "a", schema: .null)])
    #expect(throws: GenerationSchema.SchemaError.duplicateProperty(schema: "T", property: "a")) {
      try GenerationSchema(root: twice, dependencies: [])
    }
    #expect(throws: GenerationSchema.SchemaError.duplicateType(schema: "T", type: "Dish")) {
      try GenerationSchema(root: DynamicGenerationSchema(name: "T", properties: []), dependencies: [dish, dish])
    }
    #expect(throws: GenerationSchema.SchemaError.emptyTypeChoices(schema: "E")) {
      try GenerationSchema(root: DynamicGenerationSchema(name: "E", anyOf: [String]()), dependencies: [])
    }
  }
}
