import ArgumentParser
import Foundation
import ToolhostCommandLine
import ToolhostPlugins

/// `toolhost plugins add DIR [--link]`: a plugin folder into the user's own plugin folder.
struct PluginsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "plugins",
    abstract: "Add plugins to your own plugin folder ($XDG_CONFIG_HOME/toolhost/plugins).",
    subcommands: [Add.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Copy (or link) a plugin folder into your plugin folder, showing what it runs.",
      discussion: """
        The folder must hold a toolhost.json. It goes to $XDG_CONFIG_HOME/toolhost/plugins/NAME (default \
        ~/.config/toolhost/plugins/NAME), where every toolhost finds it without `trust`: a name already there is \
        refused, and so is a folder another user could change (and, for a copy, one holding a FIFO, device or \
        socket). A link to a folder in a git work tree runs what a later `git pull` brings, unseen. Example: \
        toolhost plugins add plugins/weather
        """)
    @Flag(help: "Make a symbolic link to the folder instead of a copy (it follows the folder's changes).")
    var link = false
    @OptionGroup var output: OutputOptions
    @Argument(help: "The plugin folder (with its toolhost.json).") var folder: String

    func run() async throws {
      let printer = output.printer
      do {
        let addition = try PluginAddition.prepare(source: folder, configuration: try UserConfiguration.load())
        printer.say(addition.source + "/toolhost.json")
        for line in addition.summary { printer.say("  " + line) }
        try addition.perform(link: link)
        printer.say("\(link ? "linked" : "copied") to \(addition.destination); `toolhost list` shows its tools")
        if link, let note = addition.linkNote { printer.warn("toolhost: " + note) }
      } catch let error as PluginAddition.Failure {
        printer.warn("toolhost: \(error.description)")
        throw ExitCode(ExitStatus.usage)
      } catch let error as ConfigurationError {
        printer.warn("toolhost: \(error.description)")
        throw ExitCode(ExitStatus.usage)
      }
    }
  }
}
