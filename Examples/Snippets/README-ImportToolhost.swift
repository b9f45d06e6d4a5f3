// The Swift snippet of README.md, "`import Toolhost`", as the page shows it (DocSnippetTests checks that it does).
// Compiled by the build, never run.

import Toolhost

struct Greet: Tool {
  let description = "Greets someone by name."
  @Generable struct Arguments {
    @Guide(description: "Who to greet") var name: String
  }
  func call(arguments: Arguments) async throws -> String { "Hello, \(arguments.name)!" }
}

func greetAndForecast() async throws {
  let plugins = try await PluginCatalog.forUser(explicit: [])  // your plugin folders, ./plugins once trusted
  let session = LanguageModelSession(tools: [Greet()] + plugins.tools, instructions: "Answer from the tools.")
  print(try await session.respond(to: "Greet Ada, then tell me the weather in Boston.").content)
}
