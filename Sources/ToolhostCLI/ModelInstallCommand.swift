import ArgumentParser
import Foundation
import ToolhostCommandLine
import ToolhostLocal

extension ModelCommand {
  /// `toolhost model install [--with-0.5b]`: the steps of `scripts/install-local-model`, into the per-user folder.
  struct Install: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Install llama.cpp and the default local model for you (about 10 minutes the first time).",
      discussion: """
        Installs into $TOOLHOST_LOCAL_DIR when set, else $XDG_DATA_HOME/toolhost/local-model (default \
        ~/.local/share/toolhost/local-model), where any installed toolhost finds it. The same steps as the \
        checkout's scripts/install-local-model; running it again does nothing once everything is in place.
        """)
    @Flag(
      name: .customLong("with-0.5b"),
      help: "Also install the smaller model, Qwen2.5-Coder-0.5B (491 MB), that --model local:0.5b runs.")
    var withSmall = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
      let printer = output.printer
      do {
        let folder = try LocalModelInstaller.install(withSmall: withSmall)
        printer.say("toolhost: the local model is in \(folder); `toolhost model status` shows it")
      } catch {
        printer.warn("toolhost: \(error.description)")
        throw ExitCode(error.status == nil ? ExitStatus.usage : ExitStatus.toolFailed)
      }
    }
  }
}
