// The Swift snippet of docs/local-model.md (In Swift), as the page shows it (DocSnippetTests checks that it does).
// Compiled by the build, never run.

import ToolhostCore
import ToolhostLocal
import ToolhostSession

func askTheLocalModel(catalog: PluginCatalog) async throws {
  try await LocalModel.withModel(.named("local")) { model in  // finds .toolhost/local-model, or throws
    let session = try LanguageModelSession(model: model, tools: catalog.tools)
    print(try await session.respond(to: "What's the weather in Boston?").content)
  }  // the server is stopped here
}
