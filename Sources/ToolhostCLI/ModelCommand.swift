import ArgumentParser
import AsyncHTTPClient
import Foundation
import ToolhostChat
import ToolhostCommandLine
import ToolhostLocal
import ToolhostSession
import ToolhostSystem

/// `toolhost model status|install|start|stop`: the local model's installation, and the shared local-model server that
/// `ask` and `chat` reuse.
struct ModelCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "model",
    abstract: "Install the local model; show, start or stop the server that ask and chat share.",
    discussion: """
      `ask --model local` and `chat --model local` leave llama.cpp's server running, so the next one finds the \
      model loaded and the tool list read; it stops by itself after 5 minutes without a request, or as long as \
      --keep-alive (or $TOOLHOST_MODEL_KEEP_ALIVE) says. With --keep-alive 0 the server ends with the program \
      that started it, unless one is running already (`model start`), which is used whatever the keep-alive.
      """,
    subcommands: [Status.self, Install.self, Start.self, Stop.self], defaultSubcommand: Status.self)

  struct Common: ParsableArguments {
    @Option(
      help: ArgumentHelp(
        "The local model: `local` (the 1.5B model), `local:0.5b` or `local:/path/model.gguf` (default: "
          + "$TOOLHOST_MODEL when it names a local model, as for ask and chat, else `local`).", valueName: "name"))
    var model: String?

    /// The model `--model` names, else `$TOOLHOST_MODEL` when that is a local model, else `local`: the one `ask`
    /// and `chat` would run, so that `model start` starts the server they use.
    var localModel: String {
      if let model { return model }
      let named = ProcessInfo.processInfo.environment["TOOLHOST_MODEL"] ?? ""
      return LocalModelSpecifier.isLocal(named) ? named : "local"
    }

    @OptionGroup var output: OutputOptions

    /// The shared server of `--model`, with the keep-alive a start would use (`--keep-alive`, else
    /// `$TOOLHOST_MODEL_KEEP_ALIVE`, else 5 minutes).
    func server(keepAlive: String? = nil, printer: Printer) throws -> SharedModelServer {
      let environment = ProcessInfo.processInfo.environment
      let configuration: LocalModelConfiguration
      do {
        configuration = try LocalModelConfiguration.named(
          localModel, environment: environment,
          keepAlive: try ModelChoice.keepAlive(keepAlive, environment: environment) ?? ModelChoice.defaultKeepAlive)
      } catch {
        throw printer.usageError(CommandLineHints.describe(error))
      }
      // `named` makes the configuration shared whenever it is given a keep-alive, as it is here.
      guard let shared = configuration.shared else { throw ExitCode.failure }
      return SharedModelServer(server: configuration.server, shared: shared, httpClient: .shared)
    }
  }

  /// Checks a `--keep-alive` value.
  ///
  /// - Throws: `ValidationError` naming the forms it takes.
  /// `0` (no keep-alive) only `allowingNone` (`ask` and `chat`; a server `model start` starts must stay a while).
  static func validate(keepAlive: String?, allowingNone: Bool = false) throws {
    guard let keepAlive, !(allowingNone && keepAlive == "0") else { return }
    if SharedServerConfiguration.parseKeepAlive(keepAlive) == nil {
      throw ValidationError(
        "--keep-alive takes a time such as 90s, 5m or 1h\(allowingNone ? " (or 0 for none)" : ""), not \(keepAlive)")
    }
  }

  static func describe(_ record: SharedServerRecord) -> String {
    let up = Int(Date().timeIntervalSince1970 - record.started)
    return "pid \(record.pid), 127.0.0.1:\(record.port), \(record.model), up \(up) s, stops after "
      + "\(record.keepAliveSeconds) s without a request"
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show where the local model is installed, how big it is, and the running shared servers.")
    @OptionGroup var common: Common

    func run() async throws {
      let printer = Printer(raw: common.output.raw)
      let installation: LocalModelInstallation
      do {
        installation = try LocalModelInstallation.locate()
      } catch {
        printer.say("no local model is installed: \(error.message)")
        throw ExitCode(ExitStatus.toolFailed)
      }
      for line in installation.summaryLines { printer.say(line) }
      let running = SharedModelServer.running(in: try common.server(printer: printer).shared.runDirectory)
      if running.isEmpty {
        printer.say("no local model server is running")
        return
      }
      for record in running { printer.say("running: " + ModelCommand.describe(record)) }
    }
  }

  struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Start the shared server now (loading the model), or report the one running.")
    @OptionGroup var common: Common
    @Option(
      name: .customLong("keep-alive"),
      help: ArgumentHelp("How long it stays up without a request (default 5m).", valueName: "time"))
    var keepAlive: String?

    func validate() throws { try ModelCommand.validate(keepAlive: keepAlive) }

    func run() async throws {
      let printer = Printer(raw: common.output.raw)
      let server = try common.server(keepAlive: keepAlive, printer: printer)
      do {
        let endpoint = try await server.ensureRunning()
        let how = endpoint.startup == .zero ? "already running" : "started"
        if let record = await server.status() { printer.say("\(how): " + ModelCommand.describe(record)) }
      } catch {
        printer.warn("toolhost: \(error)")
        throw ExitCode(ExitStatus.toolFailed)
      }
    }
  }

  struct Stop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop the shared server of the model.")
    @OptionGroup var common: Common

    func run() async throws {
      let printer = Printer(raw: common.output.raw)
      let server = try common.server(printer: printer)
      if let record = await server.stop() {
        printer.say("stopped the local model server (pid \(record.pid))")
      } else {
        printer.say("no local model server was running")
      }
    }
  }
}
