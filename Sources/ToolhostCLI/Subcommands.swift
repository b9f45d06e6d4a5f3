import ArgumentParser

/// Subcommands defined in other files of the CLI (chat, ask, serve), registered with the root command.
let extraSubcommands: [any ParsableCommand.Type] = [Chat.self, Ask.self, Serve.self]
