// The Swift snippet of docs/chat.md, "The chat in a browser", as the page shows it (DocSnippetTests checks that it
// does). Compiled by the build, never run.

import Toolhost
import ToolhostHistory
import ToolhostWeb

func serveTheChatPage(model: any LanguageModel, registry: ToolRegistry, catalog: PluginCatalog) async throws {
  let engine = WebChatEngine(
    configuration: .init(
      model: model, tools: registry, rules: catalog.trust.configuration, setup: ChatSetup(),
      history: try ChatHistory.open(), newChat: .init(command: "chat", model: model.displayName)))
  try await WebChatServer(engine: engine).run { print("open \($0.url)") }  // until the task is cancelled
}
