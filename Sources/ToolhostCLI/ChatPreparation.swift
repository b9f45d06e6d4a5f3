import ArgumentParser
import Foundation
import ToolhostChat
import ToolhostCommandLine
import ToolhostHistory
import ToolhostJSON
import ToolhostOpenAI
import ToolhostPlugins
import ToolhostSession
import ToolhostSystem
import ToolhostTools

/// What `chat`, `ask` and `chat --web` set up alike from their options: the plugins and the tools offered, the
/// history and a chat to continue, the console for notes, and the model.
struct ChatPreparation {
  /// The plugins; their persistent processes and MCP servers are stopped when the conversation ends.
  let catalog: PluginCatalog
  /// The tools offered.
  let registry: ToolRegistry
  /// The setup, with the continued transcript and the progress display filled in.
  let setup: ChatSetup
  /// The history, when it is kept or a chat of it is continued.
  let history: ChatHistory?
  /// The chat of the history to continue.
  let continued: StoredChat?
  /// The file `--resume` continues.
  let resumeFile: String?
  /// Whether chats are kept (not --no-history, and history not off in config.json).
  let keep: Bool
  /// Where notes and tool progress go.
  let console: ChatConsole
  /// The model.
  let chosen: ChosenModel

  /// Prepares from `options`; with `preferLocalModel`, the local model when it is installed and nothing names a
  /// model (`chat --web`, which works offline first).
  init(options: ChatOptions, preferLocalModel: Bool = false) async throws {
    // A closed stdout then fails writes (ignored) instead of killing toolhost with its plugins still running.
    signal(SIGPIPE, SIG_IGN)
    let printer = options.output.printer
    var setup = options.setup
    let catalog = try await options.plugins.catalog(offering: setup.tools.discoveryNames, printer: printer)
    self.catalog = catalog
    do { registry = try setup.tools.registry(from: catalog) } catch { throw Self.usageError(error, printer: printer) }
    if !options.json {
      for tool in registry.tools {
        for note in catalog.shadowNotes(for: tool.name) { printer.warn("toolhost: note: \(note)") }
      }
    }
    keep = !options.noHistory && catalog.trust.configuration.history
    var history: ChatHistory?
    var continued: StoredChat?
    let resumeFile = options.resume.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
    self.resumeFile = resumeFile
    if let resume = options.resume, resumeFile == nil, Int64(resume) == nil {
      throw printer.usageError(
        "--resume \(resume): there is no such file, and it is not a chat id (`toolhost chats` lists them)")
    }
    let resumeID = resumeFile == nil ? options.resume.flatMap { Int64($0) } : nil
    if keep || options.continueLast || resumeID != nil {
      let continuation: ChatKeeper.Continuation =
        options.continueLast ? .last : resumeID.map { .chat($0) } ?? .none
      do {
        let opened = try ChatHistory.open()
        history = opened
        continued = try ChatKeeper.stored(continuation, in: opened)
      } catch let error as ChatKeeper.ContinuationError {
        switch error {
        case .noChatYet: throw printer.usageError("--continue: there is no chat to continue yet")
        case .history(let error):
          if error.unknownChat != nil { throw printer.usageError(error.description) }
          printer.warn("Error: \(error.description)")
          throw ExitCode(ExitStatus.toolFailed)
        }
      } catch let error as HistoryError {
        if continuation != .none {
          printer.warn("Error: \(error.description)")
          throw ExitCode(ExitStatus.toolFailed)
        }
        printer.warn(ChatRun.notKept(error))
      }
    }
    (self.history, self.continued) = (history, continued)
    if let continued { setup.resumedTranscript = continued.transcript }
    if let resumeFile {
      do { setup.resumedTranscript = try Transcript.load(from: resumeFile) } catch {
        throw printer.usageError("\(error.description) (start a conversation with --save FILE)")
      }
    }

    let console = ChatConsole(json: options.json, raw: options.output.raw)
    self.console = console
    if console.showsProgress { setup.onToolProgress = { tool, progress in console.progress(tool, progress) } }
    self.setup = setup
    let choice = preferLocalModel ? options.modelChoice.preferringLocal() : options.modelChoice
    do { chosen = try choice.makeModel { event in console.show(event) } } catch {
      throw Self.usageError(error, printer: printer)
    }
    if catalog.hasErrors && !options.json {
      let n = catalog.diagnostics.filter(\.isError).count
      printer.warn(
        "toolhost: \(n) broken plugin\(n == 1 ? "" : "s") left out (`toolhost doctor` shows why)")
    }
  }

  /// What the history keeps of a new chat: `command`, the model and the settings.
  func newChat(command: String, options: ChatOptions) -> ChatHistory.NewChat {
    var o: JSONObject = ["maxToolRounds": .integer(Int64(options.maxToolRounds))]
    if let mode = options.toolCalling { o["toolCalling"] = .string(mode.rawValue) }
    if let t = options.temperature { o["temperature"] = .real(t) }
    if options.noTools { o["tools"] = .array([]) }
    if !options.toolNames.isEmpty { o["tools"] = .array(options.toolNames.map(JSONValue.string)) }
    if options.requireTool { o["requireTool"] = true }
    if let instructions = options.instructions { o["instructions"] = .string(instructions) }
    return ChatHistory.NewChat(command: command, model: chosen.model.displayName, settings: .object(o))
  }

  /// Prints a setup error with the option that fixes it and returns the usage status to throw (a base URL given to
  /// a local model is a usage mistake ArgumentParser reports with the usage line, as before).
  static func usageError(_ error: ChatSetupError, printer: Printer) -> any Error {
    let message = CommandLineHints.describe(error)
    if case .baseURLForLocalModel = error { return ValidationError(message) }
    return printer.usageError(message)
  }
}
