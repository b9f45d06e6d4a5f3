import ArgumentParser
import Foundation
import Synchronization
import ToolhostCommandLine
import ToolhostJSON
import ToolhostMCP
import ToolhostMCPHTTP
import ToolhostPlugins
import ToolhostSystem
import ToolhostTools

/// Exit statuses of `toolhost` (the library's ``ExitStatus``; `doctor` uses `toolFailed` for broken plugins).
typealias Status = ExitStatus

struct PluginOptions: ParsableArguments {
  @Option(
    name: .customLong("plugins"),
    help: ArgumentHelp("A plugin folder to search first (repeatable).", valueName: "dir"))
  var folders: [String] = []

  /// Discovers the user's plugins (``PluginCatalog/forUser(explicit:environment:currentDirectory:startServers:mcp:)``);
  /// MCP servers are started only when `startServers` is set (they take a second or two, and run code). Says on
  /// stderr which project folders were left out untrusted, unless `quiet` (a second discovery of the same folders).
  ///
  /// - Throws: `ExitCode(64)` after printing why, when `config.json` or `trust.json` cannot be used.
  /// MCP servers' tool lists kept from earlier runs are used while fresh (``MCPToolListCache``), unless `refresh`.
  func catalog(startServers: Bool, printer: Printer, quiet: Bool = false, refresh: Bool = false) async throws
    -> PluginCatalog
  {
    try await catalog(printer: printer, quiet: quiet, refresh: refresh) { loader throws(ConfigurationError) in
      try await PluginCatalog.forUser(explicit: folders, startServers: startServers, mcp: loader)
    }
  }

  /// The catalog offering the tools `names` (`nil`: every tool), which starts MCP servers only when their tools may
  /// be offered (``PluginCatalog/forUser(explicit:offering:environment:currentDirectory:mcp:)``).
  ///
  /// - Throws: `ExitCode(64)` after printing why, when `config.json` or `trust.json` cannot be used.
  func catalog(offering names: [String]?, printer: Printer) async throws -> PluginCatalog {
    try await catalog(printer: printer) { loader throws(ConfigurationError) in
      try await PluginCatalog.forUser(explicit: folders, offering: names, mcp: loader)
    }
  }

  private func catalog(
    printer: Printer, quiet: Bool = false, refresh: Bool = false,
    discover: (MCPPlugins.Loader) async throws(ConfigurationError) -> PluginCatalog
  ) async throws -> PluginCatalog {
    var catalog: PluginCatalog
    let loader = MCPPlugins.Loader(
      cache: MCPToolListCache.standard(environment: ProcessInfo.processInfo.environment), refresh: refresh,
      remote: MCPHTTPClientTransport.remote)
    do {
      catalog = try await discover(loader)
    } catch {
      printer.warn("toolhost: \(error.description)")
      throw ExitCode(Status.usage)
    }
    catalog.diagnostics = catalog.diagnostics.map(CommandLineHints.hinted)
    if !quiet {
      for line in Report.untrustedNotices(catalog) { printer.warn("toolhost: \(line)") }
    }
    return catalog
  }
}

/// `--start-servers`, for the commands that otherwise start nothing.
struct ServerOptions: ParsableArguments {
  @Flag(
    name: .customLong("start-servers"),
    help: ArgumentHelp(
      "Start the MCP servers of the plugin folders to list their tools, and keep the lists (otherwise nothing is "
        + "started, and a server's tools are those of a list kept from an earlier run while it is fresh)."))
  var startServers = false
}

@main
struct ToolhostCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "toolhost",
    abstract: "Gives language models tools: plugins in any language, run as subprocesses.",
    discussion: """
      Plugins are found in: --plugins DIR, $TOOLHOST_PLUGIN_PATH, $XDG_CONFIG_HOME/toolhost/plugins, then ./plugins \
      once trusted (toolhost trust).
      Exit status: 0 success, 1 tool failure (or broken plugins for doctor), 64 usage error, 124 timeout,
      126 plugin cannot start, 130 interrupted.
      """,
    version: ToolhostVersion.summary,
    subcommands: [List.self, Describe.self, Doctor.self, Call.self, Batch.self, Trust.self] + extraSubcommands)

  /// Makes toolhost non-dumpable before anything else (``ProcessPrivacy/hideFromSameUser()``): the plugins it runs,
  /// processes of the same user, cannot read its environment (API keys) or memory through `/proc`.
  static func main() async {
    ProcessPrivacy.hideFromSameUser()
    await main(nil)
  }
}

struct List: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "List the tools, where they come from, and broken plugins.")
  @OptionGroup var plugins: PluginOptions
  @OptionGroup var servers: ServerOptions
  @OptionGroup var output: OutputOptions
  @Flag(help: "Print machine-readable JSON.") var json = false

  func run() async throws {
    let printer = output.printer
    let catalog = try await plugins.catalog(
      startServers: servers.startServers, printer: printer, refresh: servers.startServers)
    if json {
      printer.sayExactly(try Report.catalogJSON(catalog).serialized(.pretty))
    } else {
      printer.say(Report.catalogTable(catalog))
    }
    await catalog.shutdown()
  }
}

struct Describe: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Show a tool's description and every argument.")
  @OptionGroup var plugins: PluginOptions
  @OptionGroup var servers: ServerOptions
  @OptionGroup var output: OutputOptions
  @Flag(help: "Print the tool's definition as JSON.") var json = false
  @Argument(help: "The tool's name.") var name: String

  func run() async throws {
    let printer = output.printer
    let catalog = try await plugins.catalog(
      startServers: servers.startServers, printer: printer, refresh: servers.startServers)
    guard let entry = catalog.entries.first(where: { $0.tool.name == name }) else {
      await catalog.shutdown()
      var message = CommandLineHints.describe(catalog.missingTool(named: name))
      let idle = catalog.diagnostics.filter { $0.kind == .notStarted }.count
      if idle > 0 {
        message +=
          " (\(idle) MCP server\(idle == 1 ? " was" : "s were") not started: --start-servers lists their tools)"
      }
      throw printer.usageError(message)
    }
    if json {
      printer.sayExactly(try Report.toolJSON(entry, configuration: catalog.trust.configuration).serialized(.pretty))
    } else {
      printer.say(
        SchemaSummary.describe(
          entry.tool, origin: entry.tool.manifest.path, configuration: catalog.trust.configuration))
      printer.say("USAGE: " + ToolCommandLine(toolName: name, schema: entry.tool.parameters).usageLine())
    }
    await catalog.shutdown()
  }
}

/// `--memory-limit`, `--cpu-limit`, `--process-limit`, `--file-size-limit`, `--open-files-limit`.
struct LimitOptions: ParsableArguments {
  @Option(name: .customLong("memory-limit"), help: ArgumentHelp("Memory per call in MiB.", valueName: "MiB"))
  var memory: Int?
  @Option(name: .customLong("cpu-limit"), help: ArgumentHelp("CPU time per call in seconds.", valueName: "s"))
  var cpu: Int?
  @Option(
    name: .customLong("process-limit"), help: ArgumentHelp("Processes per call (needs a cgroup).", valueName: "n"))
  var processes: Int?
  @Option(
    name: .customLong("file-size-limit"), help: ArgumentHelp("Largest file a call writes, in MiB.", valueName: "MiB"))
  var fileSize: Int?
  @Option(name: .customLong("open-files-limit"), help: ArgumentHelp("Open files per process.", valueName: "n"))
  var openFiles: Int?

  func validate() throws {
    for (name, value) in [
      ("--memory-limit", memory), ("--cpu-limit", cpu), ("--process-limit", processes),
      ("--file-size-limit", fileSize), ("--open-files-limit", openFiles),
    ] {
      if let value, value < 1 { throw ValidationError("\(name) must be at least 1") }
    }
  }

  /// The limits given, over the tools' own.
  var limits: ResourceLimits {
    ResourceLimits(
      memoryBytes: memory.map { $0 << 20 }, cpuSeconds: cpu, processes: processes,
      fileSizeBytes: fileSize.map { $0 << 20 }, openFiles: openFiles)
  }
}

struct Doctor: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Check every plugin; exit 1 when any is broken.")
  @OptionGroup var plugins: PluginOptions
  @OptionGroup var servers: ServerOptions
  @OptionGroup var output: OutputOptions

  func run() async throws {
    let printer = output.printer
    let catalog = try await plugins.catalog(
      startServers: servers.startServers, printer: printer, refresh: servers.startServers)
    await catalog.shutdown()
    printer.say("version: " + ToolhostVersion.summary)
    printer.say("searched: " + catalog.folders.joined(separator: ", "))
    printer.say("\(catalog.entries.count) tools ok")
    printer.say("containment: " + ProcessRunner.shared.containment.summary)
    printer.say("default limits per call: \(ResourceLimits.pluginDefaults)")
    printer.say("confinement: " + ConfinementSupport.current.description)
    // A plugin this machine cannot confine, and that may not run unconfined, is broken here.
    var refused: [String: String] = [:]
    for entry in catalog.entries where refused[entry.tool.manifest.path] == nil {
      if case .refused(let reason) = entry.tool.confinement { refused[entry.tool.manifest.path] = reason }
    }
    printer.say(
      "ownership checks (StrictModes): "
        + (catalog.trust.configuration.strictModes ? "on" : "off (\"strictModes\": false in config.json)"))
    for line in Report.untrustedNotices(catalog) { printer.say("note : \(line)") }
    for d in catalog.diagnostics { printer.say("\(d.isError ? "error" : "note "): \(d)") }
    for (path, reason) in refused.sorted(by: { $0.key < $1.key }) { printer.say("error: \(path): not run: \(reason)") }
    if catalog.hasErrors || !refused.isEmpty {
      let count = catalog.diagnostics.filter(\.isError).count + refused.count
      printer.say("\(count) problems: fix them or remove the plugins")
      throw ExitCode(Status.toolFailed)
    }
  }
}

struct Call: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Call a tool: toolhost call getWeather --city Boston",
    discussion: "Flags after the tool's name come from its schema; see toolhost call TOOL --help.")
  @OptionGroup var plugins: PluginOptions
  @Option(help: "Time limit in seconds (overrides the manifest).") var timeout: Double?
  @Option(name: .customLong("max-output"), help: "Most stdout bytes a plugin may print.") var maxOutput: Int?
  @Flag(
    name: .shortAndLong, help: "Show the plugin's stderr as it runs (an MCP server's stderr and log messages too).")
  var verbose = false
  @Flag(help: "Print the full reply as JSON instead of the tool's text.") var json = false
  @OptionGroup var output: OutputOptions
  @OptionGroup(title: "Resource limits (over the manifest's)") var limits: LimitOptions
  @Argument(help: "The tool's name.") var tool: String
  @Argument(parsing: .captureForPassthrough, help: "The tool's flags (see toolhost call TOOL --help).")
  var toolArguments: [String] = []

  func validate() throws {
    if let timeout, timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds") }
    if let maxOutput, maxOutput <= 0 { throw ValidationError("--max-output must be more than 0 bytes") }
  }

  func run() async throws {
    let printer = output.printer
    let catalog = try await plugins.catalog(offering: [tool], printer: printer)
    do {
      try await call(in: catalog, printer: printer)
    } catch {
      await catalog.shutdown()  // the servers and persistent plugins it started, whatever happened
      throw error
    }
    await catalog.shutdown()
  }

  private func call(in catalog: PluginCatalog, printer: Printer) async throws {
    guard let entry = catalog.entries.first(where: { $0.tool.name == tool }) else {
      var message = CommandLineHints.describe(catalog.missingTool(named: tool))
      if let misplaced = CommandLineHints.misplacedCallOptions(tool: tool, arguments: toolArguments) {
        message += "\n" + misplaced
      }
      throw printer.usageError(message)
    }
    for note in catalog.shadowNotes(for: tool) { printer.warn("toolhost: note: \(note)") }
    let commandLine = ToolCommandLine(toolName: tool, schema: entry.tool.parameters)
    if toolArguments.contains("--help") || toolArguments.contains("-h") {
      printer.say(commandLine.help(description: entry.tool.description))
      return
    }
    let arguments: JSONValue
    do { arguments = try commandLine.parse(toolArguments) } catch {
      throw printer.usageError("\(error.message)\nUsage: \(commandLine.usageLine())")
    }
    let registry = catalog.registry()
    var context = ToolCallContext()
    context.timeout = timeout.map { Duration(seconds: $0) }
    context.outputLimit = maxOutput
    context.limits = limits.limits
    if verbose {
      let visible = printer.safeStderr
      context.onStderr = { name, chunk in
        // Chunks may split a character; the bytes that are not text are shown as U+FFFD.
        let text = String(decoding: chunk, as: UTF8.self)
        let shown = visible ? Data(TerminalText.visible(text).utf8) : Data(chunk)
        try? FileHandle.standardError.write(contentsOf: Data("[\(name)] ".utf8) + shown)
      }
    }
    // On a terminal, a tool's progress reports take one line of stderr, rewritten as they come.
    let progressShown = Mutex(false)
    if isatty(2) != 0 {
      context.onProgress = { name, progress in
        let line = "[\(name)] \(progress.summary)".prefix(120)
        progressShown.withLock { $0 = true }
        try? FileHandle.standardError.write(contentsOf: Data(("\r\u{1B}[K" + TerminalText.visible(String(line))).utf8))
      }
    }
    let toolName = self.tool
    let callContext = context
    let (result, signal) = try await InterruptHandler.cancellingOnSignals { () -> Result<ToolOutput, ToolCallError> in
      do throws(ToolCallError) {
        return .success(try await registry.call(toolName, arguments: arguments, context: callContext))
      } catch {
        return .failure(error)
      }
    }
    if progressShown.withLock({ $0 }) { try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[K".utf8)) }
    switch result {
    case .success(let output):
      if json {
        var reply = JSONObject()
        reply["result"] = output.value ?? .null
        if let text = output.text { reply["text"] = .string(text) }
        printer.sayExactly(try JSONValue.object(reply).serialized(.pretty))
      } else {
        printer.say(output.displayText)
      }
    case .failure(let error):
      if json { printer.sayExactly(try error.json.serialized(.pretty)) }
      printer.warn("toolhost: \(CommandLineHints.describe(error))")
      if signal != nil { throw ExitCode(Status.interrupted) }
      throw ExitCode(Report.exitStatus(error))
    }
  }
}

struct Batch: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run many calls at once: NDJSON {\"tool\", \"arguments\", \"timeout\"?, \"id\"?} on stdin.",
    discussion: "Prints one NDJSON result per input line, in input order. Exit status 1 when any call failed.")
  @OptionGroup var plugins: PluginOptions
  @Option(help: "How many calls run at once.") var concurrency = 8
  @Option(help: "Default time limit in seconds for each call.") var timeout: Double?
  @OptionGroup(title: "Resource limits (over the manifest's)") var limits: LimitOptions

  func validate() throws {
    guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
  }

  func run() async throws {
    let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    let lines = input.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    let parsed = lines.map { BatchRequest.parse($0) }
    let requests = parsed.compactMap { try? $0.request.get() }
    let catalog = try await plugins.catalog(startServers: true, printer: Printer(raw: false))
    let registry = catalog.registry()
    var context = ToolCallContext()
    context.timeout = timeout.map { Duration(seconds: $0) }
    context.limits = limits.limits
    let concurrency = self.concurrency
    let callContext = context
    let (results, signal) = try await InterruptHandler.cancellingOnSignals {
      await registry.callAll(requests, concurrency: concurrency, context: callContext)
    }
    var next = results.makeIterator()
    var failed = false
    for (index, line) in parsed.enumerated() {
      var out = JSONObject()
      out["index"] = .integer(Int64(index))
      if let id = line.id { out["id"] = id }
      switch line.request {
      case .failure(let problem):
        failed = true
        out["ok"] = false
        out["error"] = ["code": "bad_request", "message": .string(problem.message)]
      case .success(let request):
        out["tool"] = .string(request.tool)
        switch next.next()! {
        case .success(let output):
          out["ok"] = true
          out["result"] = output.value ?? .null
          if let text = output.text { out["text"] = .string(text) }
        case .failure(let error):
          failed = true
          out["ok"] = false
          out["error"] = error.json["error"]
        }
      }
      Printer(raw: true).sayExactly(JSONValue.object(out).serialized())
    }
    await catalog.shutdown()
    if signal != nil { throw ExitCode(Status.interrupted) }
    if failed { throw ExitCode(Status.toolFailed) }
  }
}
