import Foundation
import Testing
import ToolhostCore
import ToolhostGeneration
import ToolhostLocal
import ToolhostSession
import ToolhostTestSupport

@Generable(description: "A flight")
struct Flight {
  @Guide(description: "Where the flight leaves from, as a three-letter airport code", /[A-Z]{3}/)
  var from: String
  @Guide(description: "Where it lands, as a three-letter airport code", /[A-Z]{3}/)
  var to: String
  @Guide(description: "The flight's legs", .count(1...2))
  var legs: [Leg]
}

@Generable
struct Leg {
  @Guide(description: "The leg's duration in minutes", .range(20...900))
  var minutes: Int
  var aircraft: Aircraft
}

@Generable
enum Aircraft {
  case narrowBody, wideBody, turboprop
}

/// Guided generation of a nested type with the local model: its decoding constrained to the derived schema (a regex
/// guide anchored as llama.cpp's grammars require, a range, a count, a nested struct and an enum).
@Suite(
  "Guided generation with the local model",
  .enabled(if: LocalTestEnvironment.runsLocalModel, LocalTestEnvironment.skipReason))
struct LocalGenerationTests {
  @Test func aNestedTypeFollowsItsSchema() async throws {
    try await LocalModel.withModel(try LocalModelConfiguration.named(LocalTestEnvironment.model)) { model in
      let session = LanguageModelSession(model: model, deferringErrorsOf: [])
      let response = try await session.respond(
        to: "A direct flight from Lisbon (LIS) to Oslo (OSL) of about four hours.", generating: Flight.self,
        options: GenerationOptions(temperature: 0))
      let flight = response.content
      #expect(flight.from.count == 3 && flight.from.allSatisfy(\.isUppercase), "\(response.rawContent)")
      #expect(flight.to.count == 3 && flight.to.allSatisfy(\.isUppercase), "\(response.rawContent)")
      #expect((1...2).contains(flight.legs.count), "\(response.rawContent)")
      #expect(flight.legs.allSatisfy { (20...900).contains($0.minutes) }, "\(response.rawContent)")
      #expect(Flight.generationSchema.validate(response.rawContent).isEmpty)
    }
  }
}
