// The Swift snippet of docs/chat.md, "Chat history" (In Swift), as the page shows it (DocSnippetTests checks that it
// does). Compiled by the build, never run.

import ToolhostCore
import ToolhostOpenAI
import ToolhostSession

func askAnHTTPModel(catalog: PluginCatalog) async throws {
  try await OpenAIModel.withModel(.fromEnvironment(model: "gpt-4o-mini")) { model in
    let session = try LanguageModelSession(
      model: model, tools: catalog.tools, instructions: "Answer briefly; use the tools for facts.")
    let response = try await session.respond(
      to: "What's the weather in Boston?", options: GenerationOptions(toolCallingMode: .allowed))
    print(response.content)
    try session.transcript.save(to: "chat.jsonl")  // JSONL; LanguageModelSession can resume from it
  }
}
