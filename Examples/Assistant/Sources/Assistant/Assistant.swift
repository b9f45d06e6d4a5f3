// A small command-line assistant written the FoundationModels way: tools with @Generable arguments and outputs, a
// session with the default model and built instructions, guided generation of a Swift type, and the transcript read
// back. With toolhost, the same code
// also offers the plugins of the folders given with --plugins (each one the user chose, so trusted by naming it).
//
//   swift run Assistant --plugins ../../plugins "What is the weather like in Lisbon in April?"
//   swift run Assistant --plan "Three rainy days in Porto"

import Foundation
import Toolhost

/// What the cityFacts tool answers: a @Generable value, which reaches the model as JSON.
@Generable(description: "Facts about a city")
struct CityFact {
  var city: String
  var country: String
  var population: Int
}

/// Facts about a few cities, from a table in the program: an in-process tool returning a @Generable value.
struct CityFacts: Tool {
  let name = "cityFacts"
  let description = "The country and the number of inhabitants (population) of a city."

  @Generable
  struct Arguments {
    @Guide(description: "The city's name, for example Lisbon")
    var city: String
  }

  static let table: [String: (country: String, population: Int)] = [
    "lisbon": ("Portugal", 545_000), "porto": ("Portugal", 232_000), "oslo": ("Norway", 709_000),
    "nairobi": ("Kenya", 4_397_000), "lima": ("Peru", 10_004_000), "osaka": ("Japan", 2_752_000),
  ]

  func call(arguments: Arguments) async throws -> CityFact {
    guard let fact = Self.table[arguments.city.lowercased()] else {
      throw UnknownCity(city: arguments.city)
    }
    return CityFact(city: arguments.city, country: fact.country, population: fact.population)
  }
}

/// The error a tool throws for a city it does not know; the session hands it back as a ToolCallError.
struct UnknownCity: Error, CustomStringConvertible {
  let city: String
  var description: String { "no facts about \(city); known: \(CityFacts.table.keys.sorted().joined(separator: ", "))" }
}

/// The weather a trip expects.
@Generable(description: "The weather expected on the trip")
enum TripWeather {
  case sunny, rainy, cold
}

/// What to pack: an in-process tool returning a list of strings.
struct PackingList: Tool {
  let name = "packingList"
  let description = "What to pack for a trip of some days in some weather."

  @Generable
  struct Arguments {
    @Guide(description: "How many days the trip lasts", .range(1...30))
    var days: Int
    var weather: TripWeather
  }

  func call(arguments: Arguments) async throws -> [String] {
    var items = ["\(arguments.days) shirts", "toothbrush"]
    switch arguments.weather {
    case .sunny: items += ["sunscreen", "hat"]
    case .rainy: items += ["umbrella", "raincoat"]
    case .cold: items += ["coat", "gloves"]
    }
    return items
  }
}

/// A trip plan, generated as a Swift value.
@Generable(description: "A short trip plan")
struct TripPlan {
  @Guide(description: "The city of the trip")
  var city: String
  @Guide(description: "How many days", .range(1...30))
  var days: Int
  var weather: TripWeather
  @Guide(description: "Things to do, one short phrase each", .count(1...3))
  var activities: [String]
}

@main
struct Assistant {
  static func main() async {
    var folders: [String] = []
    var plan = false
    var words: [String] = []
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
      switch argument {
      case "--plugins":
        guard let folder = arguments.popFirst() else { fail("--plugins needs a folder") }
        folders.append(folder)
      case "--plan": plan = true
      default: words.append(argument)
      }
    }
    guard !words.isEmpty else { fail("usage: Assistant [--plugins FOLDER]... [--plan] QUESTION") }

    let model = SystemLanguageModel.default
    guard model.isAvailable else { fail("no model: \(model.availability)") }
    let status = await answer(words.joined(separator: " "), plan: plan, folders: folders)
    await model.shutdown()
    exit(status)
  }

  /// Answers the question (or plans the trip) and prints what the tools said; the exit status.
  static func answer(_ question: String, plan: Bool, folders: [String]) async -> Int32 {
    // The plugins of the folders named on the command line, as `toolhost` discovers them.
    var tools: [any Tool] = [CityFacts(), PackingList()]
    do {
      let catalog = try await PluginCatalog.forUser(explicit: folders)
      for problem in catalog.diagnostics { print("plugins: \(TerminalText.visible(problem.description))") }
      tools += catalog.tools
    } catch {
      return report("\(error)")
    }
    let session = LanguageModelSession(tools: tools) {
      "You are a travel assistant. Use the tools for facts and answer in one sentence."
      if plan { "Plan from what the user asks for." }
    }

    do {
      if plan {
        let trip = try await session.respond(to: question, generating: TripPlan.self).content
        print("city: \(trip.city)")
        print("days: \(trip.days)")
        print("weather: \(trip.weather)")
        print("activities: \(trip.activities.joined(separator: "; "))")
      } else {
        let options = GenerationOptions(temperature: 0, toolCallingMode: .requiredUntilFirstCall)
        let response = try await session.respond(to: question, options: options)
        print(TerminalText.visible(response.content))
      }
    } catch let error as LanguageModelSession.ToolCallError {
      return report("the tool \(error.tool.name) failed: \(error.underlyingError)")
    } catch {
      return report("\(error)")
    }

    for entry in session.transcript {
      switch entry {
      case .instructions, .prompt, .response, .reasoning:
        continue
      case .toolCalls(let calls):
        for call in calls { print("called \(call.toolName) \(call.arguments)") }
      case .toolOutput(let output):
        print("\(output.toolName) answered \(TerminalText.visible(output.text))")
      }
    }
    return 0
  }

  /// Prints the problem; exit status 1.
  static func report(_ message: String) -> Int32 {
    print("Assistant: \(TerminalText.visible(message))")
    return 1
  }

  /// Prints the problem and exits with status 1.
  static func fail(_ message: String) -> Never {
    exit(report(message))
  }
}
