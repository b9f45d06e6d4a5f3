import ArgumentParser

/// Subcommands defined in other files of the CLI (chat, ask, chats, serve, model, plugins), registered with the
/// root command.
let extraSubcommands: [any ParsableCommand.Type] = [
  Chat.self, Ask.self, ChatsCommand.self, Serve.self, ModelCommand.self, PluginsCommand.self,
]
