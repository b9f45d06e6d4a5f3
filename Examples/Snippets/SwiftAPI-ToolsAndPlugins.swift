// The Swift snippet of docs/swift-api.md, "The Swift API", as the page shows it (DocSnippetTests checks that it does).
// Compiled by the build, never run.

import Toolhost

// A tool written in Swift, served by the same registry as the plugins; its schema is derived from its arguments.
struct Dice: Tool {
  @Generable struct Arguments {
    @Guide(description: "How many sides the die has", .range(2...100)) var sides: Int
  }
  let name = "rollDice"
  let description = "Rolls a die with the given number of sides."
  func call(arguments: Arguments) async throws -> String { "\(Int.random(in: 1...arguments.sides))" }
}

func callTools() async throws {
  // Discover plugins as the command line does (the user's folders, ./plugins only if trusted, config.json's
  // StrictModes) and call one. PluginCatalog.discover(folders:) takes folders the program itself trusts.
  let catalog = try await PluginCatalog.forUser(explicit: ["plugins"])
  for problem in catalog.diagnostics { print(problem) }
  let tools = catalog.registry()
  do {
    let output = try await tools.call("getWeather", arguments: ["city": "Boston"])
    print(output.displayText)
  } catch {
    print(error)  // ToolCallError: "getWeather: timed out after 10 s; ..."
    // ToolFailure.timedOut(limit: .seconds(10)), .invalidArguments([...]), ...; nil for a Swift tool's own error
    if let failure = error.failure { print(failure) }
  }

  // The Swift tool and the plugins in one registry.
  let registry = try ToolRegistry([Dice()] + catalog.tools)

  // Many calls at once: bounded concurrency, each with its own time limit, results in input order.
  let results = await registry.callAll(
    [
      ToolCallRequest(tool: "rollDice", arguments: ["sides": 6]),
      ToolCallRequest(tool: "searchBreadDatabase", arguments: ["searchTerm": "rye"], timeout: .seconds(2)),
    ], concurrency: 8)
  for result in results { print(result) }
}
