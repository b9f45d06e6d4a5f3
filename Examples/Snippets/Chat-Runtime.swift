// The Swift snippet of docs/chat.md, "One chat in Swift", as the page shows it (DocSnippetTests checks that it
// does). Compiled by the build, never run.

import Toolhost
import ToolhostHistory

func chatLikeTheTerminal() async throws {
  let catalog = try await PluginCatalog.forUser(explicit: [])
  let chosen = try ModelChoice(name: "local").makeModel()
  let runtime = ChatRuntime(
    configuration: .init(
      model: chosen.model, tools: catalog.registry(), rules: catalog.trust.configuration, setup: ChatSetup(),
      shutdown: {
        await chosen.shutdown()
        await catalog.shutdown()
      }))
  runtime.observe { event in
    if case .session(_, .textDelta(let text)) = event { print(text, terminator: "") }
  }
  let keeper = ChatKeeper(
    history: try ChatHistory.open(), newChat: .init(command: "chat", model: chosen.model.displayName),
    model: chosen.model, titlesByModel: true)
  try keeper.startNewChat()
  let conversation = runtime.startConversation(keeper: keeper)
  let turn = await runtime.send("What's the weather in Oslo in May?", in: conversation)
  if let error = turn.errorMessage { print("failed: \(error)") }
  await runtime.finish()
}
