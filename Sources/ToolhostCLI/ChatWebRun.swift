import ArgumentParser
import Foundation
import Synchronization
import ToolhostChat
import ToolhostCommandLine
import ToolhostHistory
import ToolhostMCPHTTP
import ToolhostPlugins
import ToolhostSession
import ToolhostSystem
import ToolhostWeb

/// `chat --web`'s own options.
struct WebOptions: ParsableArguments {
  @Flag(name: .customLong("web"), help: "Serve the chat as a page on 127.0.0.1 and print its address (until Ctrl-C).")
  var web = false

  @Option(
    name: .customLong("web-port"), help: ArgumentHelp("The page's port (default: any free one).", valueName: "port"))
  var port: Int = 0

  @Option(
    name: .customLong("web-host"),
    help: ArgumentHelp(
      "The address the page is served on (default 127.0.0.1); the page is reached at that address only.",
      valueName: "address"))
  var host: String = "127.0.0.1"

  @Flag(name: .customLong("no-open"), help: "Do not open the page in a browser.")
  var noOpen = false

  func validate() throws {
    if !web, port != 0 || host != "127.0.0.1" || noOpen {
      throw ValidationError("--web-port, --web-host and --no-open go with --web")
    }
    guard (0...65535).contains(port) else { throw ValidationError("--web-port \(port): give a port from 0 to 65535") }
    if host.isEmpty || MCPHTTPToken.isUnspecified(host) {
      throw ValidationError(
        "--web-host \(host): give one address of this machine (the page is reached at that address only), or leave "
          + "it out for 127.0.0.1")
    }
    if !host.isEmpty, !Loopback.isNumeric(host) {
      throw ValidationError(
        "--web-host \(host): give a numeric address (127.0.0.1, ::1 or another of this machine's): a name may bind one "
          + "of its addresses while the browser opens another, where another account could be listening")
    }
  }
}

/// `toolhost chat --web`: the chat page's server over the same tools, model, history and approvals as `chat`.
enum ChatWebRun {
  static func run(options: ChatOptions, web: WebOptions) async throws {
    let printer = options.output.printer
    let prepared = try await ChatPreparation(options: options, preferLocalModel: true)
    var setup = prepared.setup
    // Progress goes to the page's calls, not to a terminal status line.
    setup.onToolProgress = nil
    // Without a kept history (--no-history, or history off in config.json) the chats live in a private file that
    // goes when the page stops.
    var scratch: String?
    let history: ChatHistory
    if prepared.keep, let kept = prepared.history {
      history = kept
    } else {
      let why = prepared.keep ? "the history cannot be used (the warning above says why)" : "history is off"
      // ChatHistory.open makes the folder 0700 and checks it, as for the kept history.
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "toolhost-web-\(getpid())-\(UUID().uuidString.prefix(8))"
      ).path
      scratch = folder
      do { history = try ChatHistory.open(at: folder + "/history.sqlite") } catch {
        try? FileManager.default.removeItem(atPath: folder)
        printer.warn("Error: \(error.description)")
        throw ExitCode(ExitStatus.toolFailed)
      }
      printer.warn("toolhost: note: these chats are not kept (\(why)); they go when the page stops")
    }
    defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
    let console = prepared.console
    let engine = WebChatEngine(
      configuration: .init(
        model: prepared.chosen.model, tools: prepared.registry, rules: prepared.catalog.trust.configuration,
        setup: setup, history: history, newChat: prepared.newChat(command: "chat", options: options),
        describeError: { ChatConsole.describe($0).message }, keepsHistory: scratch == nil))
    let server = WebChatServer(engine: engine, options: .init(host: web.host, port: web.port))
    if !Loopback.isHost(web.host) {
      printer.warn(
        "toolhost: warning: \(web.host) is not a loopback address: the page's secret and everything the page "
          + "shows go over the network in plain HTTP")
    }
    // The fragment carries the link's token, and the chat to open after it.
    let opening = prepared.continued.map { "&chat=\($0.summary.id)" } ?? ""
    let open = !web.noOpen && Self.canOpenBrowser
    let opened = Mutex<URL?>(nil)
    defer { if let folder = opened.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) } }
    do {
      _ = try await InterruptHandler.cancellingOnSignals {
        try await server.run { listening in
          let url = listening.url + opening
          console.note(
            "toolhost chat with \(prepared.chosen.model.displayName), \(engine.toolsJSON.count) tools, on a page; "
              + "Ctrl-C stops it.")
          FileHandle.standardOutput.write(Data("toolhost: open \(url)\n".utf8))
          if open { opened.withLock { $0 = Self.openBrowser(url) } }
        }
      }
    } catch is CancellationError {
    } catch {
      printer.warn(
        "Error: the page cannot be served on \(web.host):\(web.port): \(error) (give another --web-port, or leave it "
          + "out for any free one)")
      await prepared.chosen.shutdown()
      await prepared.catalog.shutdown()
      throw ExitCode(ExitStatus.toolFailed)
    }
    await prepared.chosen.shutdown()
    await prepared.catalog.shutdown()
  }

  /// Whether there is a browser to open (and no CI run): the one `$BROWSER` names, or the desktop's.
  static var canOpenBrowser: Bool {
    let environment = ProcessInfo.processInfo.environment
    guard environment["CI"] == nil else { return false }
    if browserCommand(environment) != nil { return true }
    #if os(macOS)
      return true
    #else
      return (environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open")
    #endif
  }

  /// The browser `$BROWSER` names, as xdg-open and Python's webbrowser read it: the first of its `:`-separated
  /// commands, split at spaces, `%s` standing for the address (else the address goes last).
  static func browserCommand(_ environment: [String: String]) -> [String]? {
    guard let first = environment["BROWSER"]?.split(separator: ":").first else { return nil }
    let words = first.split(separator: " ").map(String.init)
    return words.isEmpty ? nil : words
  }

  /// Opens `url` in `$BROWSER` or the desktop's browser through a private file that redirects to it, so that the
  /// one-time link is never on a command line (which every user of the machine can read in /proc); the file is
  /// removed a minute later, or when the page stops. The page answers such a navigation from a local file (which
  /// browsers send as cross-site): it holds no secret, and its link's token is in the fragment, which the page reads.
  /// A failure only leaves the address to open by hand.
  @discardableResult
  static func openBrowser(_ url: String) -> URL? {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "toolhost-open-\(getpid())-\(UUID().uuidString.prefix(8))")
    let file = folder.appendingPathComponent("open.html")
    let attribute = url.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
    let page = """
      <!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=\(attribute)">
      <title>toolhost chat</title><a href="\(attribute)">toolhost chat</a>
      """
    do {
      try FileSafety.makePrivateFolder(folder.path)
      try FileSafety.writeSecretFile(file.path, Array(page.utf8))
    } catch {
      try? FileManager.default.removeItem(at: folder)
      return nil
    }
    let process = Process()
    if let command = browserCommand(ProcessInfo.processInfo.environment) {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      let address = file.absoluteString
      process.arguments =
        command.contains { $0.contains("%s") }
        ? command.map { $0.replacingOccurrences(of: "%s", with: address) } : command + [address]
    } else {
      #if os(macOS)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/open")
      #else
        process.executableURL = URL(fileURLWithPath: "/usr/bin/xdg-open")
      #endif
      process.arguments = [file.absoluteString]
    }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try? process.run()
    Task.detached {
      try? await Task.sleep(for: .seconds(60))
      try? FileManager.default.removeItem(at: folder)
    }
    return folder
  }
}
