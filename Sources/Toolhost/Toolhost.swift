// The one import of an application: the tools and plugins (`ToolhostCore`), guided generation with `@Generable` and
// `@Guide` (`ToolhostGeneration`), `LanguageModelSession` and its transcript (`ToolhostSession`), the models (an HTTP
// model in `ToolhostOpenAI`, the local one in `ToolhostLocal`, the default `SystemLanguageModel` and the chat set-up
// in `ToolhostChat`), MCP servers as tools and toolhost as an MCP stdio server (`ToolhostMCP`, `ToolhostMCPHTTP`).
// Code written for FoundationModels changes `import FoundationModels` to `import Toolhost`. The chat history
// (`ToolhostHistory`, on GRDB), the chat page (`ToolhostWeb`) and the MCP HTTP server (`ToolhostMCPHTTPServer`), both
// on Hummingbird, are products of their own: an app that imports `Toolhost` links none of them and sees none of their
// names.
//
// ```swift
// import Toolhost
//
// struct GetWeather: Tool {
//   let description = "The current weather in a city."
//   @Generable struct Arguments {
//     @Guide(description: "The city's name") var city: String
//   }
//   func call(arguments: Arguments) async throws -> String { "Sunny in \(arguments.city)" }
// }
//
// let session = LanguageModelSession(tools: [GetWeather()], instructions: "Answer briefly.")
// print(try await session.respond(to: "Weather in Lisbon?").content)
// ```

@_exported import ToolhostChat
@_exported import ToolhostCore
@_exported import ToolhostGeneration
@_exported import ToolhostJSON
@_exported import ToolhostLocal
@_exported import ToolhostMCP
@_exported import ToolhostMCPHTTP
@_exported import ToolhostOpenAI
@_exported import ToolhostSchema
@_exported import ToolhostSession
