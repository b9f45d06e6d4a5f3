// The Swift snippet of docs/swift-api.md, "For FoundationModels developers", as the page shows it (DocSnippetTests
// checks that it does). Compiled by the build, never run.

import Toolhost

struct GetWeather: Tool {
  let description = "The climate of a city in a month."
  @Generable struct Arguments {
    @Guide(description: "The city, for example Lisbon") var city: String
    @Guide(description: "The month, 1 to 12", .range(1...12)) var month: Int
  }
  func call(arguments: Arguments) async throws -> String { "…" }
}

@Generable struct Trip {
  @Guide(description: "The city") var city: String
  @Guide(description: "Things to do", .count(1...3)) var activities: [String]
}

func planATrip() async throws {
  let session = LanguageModelSession(tools: [GetWeather()], instructions: "Answer from the tools.")
  do {
    let options = GenerationOptions(toolCallingMode: .allowed)
    let answer = try await session.respond(to: "Lisbon in April?", options: options)
    let trip = try await session.respond(to: "Plan a day in Lisbon", generating: Trip.self).content
    print(answer.content, trip.activities)
  } catch let error as LanguageModelSession.ToolCallError {
    print(error.tool.name, error.underlyingError)
  }
  for entry in session.transcript {
    switch entry {
    case .instructions, .prompt, .response, .reasoning: break
    case .toolCalls(let calls): for call in calls { print(call.toolName) }
    case .toolOutput(let output): print(output.segments)
    }
  }
}
