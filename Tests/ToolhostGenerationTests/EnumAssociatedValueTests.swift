import Testing
import ToolhostGeneration
import ToolhostJSON
import ToolhostSchema

@Generable(description: "How to get there")
enum Travel: Equatable {
  case walk
  case flight(number: String, seat: Int?)
  case train(String)
  case bus(_ line: Int, stops: Int)
  case ferry(Sight)
}

@Generable
struct Journey: Equatable {
  var legs: [Travel]
  var fallback: Travel?
}

/// `@Generable` enums whose cases have associated values: a case without is its name, a case with is an object of
/// one property, the case's name, holding the values.
struct EnumAssociatedValueTests {
  @Test func theSchemaIsOneChoicePerCaseWithValues() {
    let sight: JSONValue = Sight.generationSchema.jsonSchema
    func single(_ name: String, _ schema: JSONValue) -> JSONValue {
      ["type": "object", "properties": [name: schema], "required": [.string(name)], "additionalProperties": false]
    }
    let handWritten: JSONValue = [
      "title": "Travel", "description": "How to get there",
      "anyOf": [
        ["type": "string", "enum": ["walk"]],
        single(
          "flight",
          [
            "type": "object", "properties": ["number": ["type": "string"], "seat": ["type": "integer"]],
            "required": ["number"], "additionalProperties": false,
          ]),
        single("train", ["type": "string"]),
        single(
          "bus",
          [
            "type": "object", "properties": ["line": ["type": "integer"], "stops": ["type": "integer"]],
            "required": ["line", "stops"], "additionalProperties": false,
          ]),
        single("ferry", sight),
      ],
    ]
    #expect(Travel.generationSchema.jsonSchema == handWritten)
  }

  @Test func theValidatorAcceptsEachCaseAndRefusesOthers() throws {
    let schema = try JSONSchema(Travel.generationSchema.jsonSchema)
    let accepted: [JSONValue] = [
      "walk", ["flight": ["number": "TP123"]], ["flight": ["number": "TP123", "seat": 4]], ["train": "IC 5"],
      ["bus": ["line": 7, "stops": 3]], ["ferry": ["name": "Cacilhas", "hours": 1]],
    ]
    for value in accepted { #expect(try schema.validate(value).isEmpty, "\(value.serialized())") }
    let refused: [JSONValue] = [
      "run", ["flight": [:]], ["flight": ["number": "TP1", "gate": 3]], ["ship": "x"], ["train": 5],
      ["train": "IC 5", "bus": ["line": 1, "stops": 1]], ["walk": true],
    ]
    for value in refused { #expect(try !schema.validate(value).isEmpty, "\(value.serialized())") }
  }

  @Test func valuesRoundTripAndFitTheSchema() throws {
    let values: [Travel] = [
      .walk, .flight(number: "TP123", seat: nil), .flight(number: "TP123", seat: 4), .train("IC 5"),
      .bus(7, stops: 3), .ferry(Sight(name: "Cacilhas", hours: 1)),
    ]
    for value in values {
      let content = value.generatedContent
      #expect(try Travel(content) == value)
      #expect(Travel.generationSchema.validate(content).isEmpty, "\(content.jsonString)")
    }
    #expect(Travel.flight(number: "TP123", seat: nil).generatedContent.jsonString == #"{"flight":{"number":"TP123"}}"#)
    #expect(Travel.train("IC 5").generatedContent.jsonString == #"{"train":"IC 5"}"#)
    #expect(Travel.bus(7, stops: 3).generatedContent.jsonString == #"{"bus":{"line":7,"stops":3}}"#)

    let journey = Journey(legs: [.walk, .train("IC 5")], fallback: .bus(1, stops: 2))
    #expect(try Journey(journey.generatedContent) == journey)
    #expect(Journey.generationSchema.validate(journey.generatedContent).isEmpty)
  }

  @Test func contentThatIsNoCaseSaysWhere() throws {
    #expect {
      _ = try Travel(GeneratedContent(json: #"{"flight": {"number": "TP1", "seat": "window"}}"#))
    } throws: { error in
      (error as? GeneratedContentError)?.path == "/flight/seat"
    }
    #expect {
      _ = try Travel(GeneratedContent(json: #"{"ship": "x"}"#))
    } throws: { error in
      let message = (error as? GeneratedContentError)?.message ?? ""
      return message.contains(#""walk", {"flight": …}"#) && message.contains("ship")
    }
    #expect {
      _ = try Travel(GeneratedContent(json: "4"))
    } throws: { error in
      (error as? GeneratedContentError)?.message.contains("found a number") == true
    }
  }
}
