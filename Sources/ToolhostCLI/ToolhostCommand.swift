import ArgumentParser
import Foundation
import Toolhost
import ToolhostJSON
import ToolhostMCP

/// Exit statuses of `toolhost` (the library's ``ExitStatus``; `doctor` uses `toolFailed` for broken plugins).
typealias Status = ExitStatus

/// Prints to stderr.
func warn(_ text: String) {
  try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
}

/// Prints to stdout without buffering surprises.
func say(_ text: String) {
  try? FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
}

struct PluginOptions: ParsableArguments {
  @Option(
    name: .customLong("plugins"),
    help: ArgumentHelp("A plugin folder to search first (repeatable).", valueName: "dir"))
  var folders: [String] = []

  /// Discovers the plugins; MCP servers are started only when `loadMCP` is set (they take a second or two).
  func catalog(loadMCP: Bool = true) -> PluginCatalog {
    MCPPlugins.install()
    let folders = PluginCatalog.searchFolders(explicit: self.folders)
    let required = Set(PluginCatalog.searchFolders(explicit: self.folders, environment: [:]).prefix(self.folders.count))
    return PluginCatalog.discover(
      folders: folders, required: required, mcp: loadMCP ? PluginCatalog.mcpLoader : nil)
  }

  /// The catalog holding `tool`: plugins first, and MCP servers started only when no plugin provides it.
  func catalog(providing tool: String) -> PluginCatalog {
    let quick = catalog(loadMCP: false)
    if quick.entries.contains(where: { $0.tool.name == tool }) { return quick }
    return catalog()
  }
}

@main
struct ToolhostCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "toolhost",
    abstract: "Gives language models tools: plugins in any language, run as subprocesses.",
    discussion: """
      Plugins are found in: --plugins DIR, $TOOLHOST_PLUGIN_PATH, ./plugins, $XDG_CONFIG_HOME/toolhost/plugins.
      Exit status: 0 success, 1 tool failure (or broken plugins for doctor), 64 usage error, 124 timeout,
      126 plugin cannot start, 130 interrupted.
      """,
    subcommands: [List.self, Describe.self, Doctor.self, Call.self, Batch.self] + extraSubcommands)
}

struct List: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "List the tools, where they come from, and broken plugins.")
  @OptionGroup var plugins: PluginOptions
  @Flag(help: "Print machine-readable JSON.") var json = false

  func run() async throws {
    let catalog = plugins.catalog()
    if json {
      say(try Report.catalogJSON(catalog).serialized(.pretty))
      return
    }
    say(Report.catalogTable(catalog))
  }
}

struct Describe: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Show a tool's description and every argument.")
  @OptionGroup var plugins: PluginOptions
  @Flag(help: "Print the tool's definition as JSON.") var json = false
  @Argument(help: "The tool's name.") var name: String

  func run() async throws {
    let catalog = plugins.catalog(providing: name)
    guard let entry = catalog.entries.first(where: { $0.tool.name == name }) else {
      throw ValidationError(Report.unknownTool(name, in: catalog))
    }
    if json {
      say(try Report.toolJSON(entry).serialized(.pretty))
    } else {
      say(SchemaSummary.describe(entry.tool, origin: entry.tool.manifest.path))
      say("USAGE: " + ToolCommandLine(toolName: name, schema: entry.tool.parameters).usageLine())
    }
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

  func run() async throws {
    let catalog = plugins.catalog()
    say("searched: " + catalog.folders.joined(separator: ", "))
    say("\(catalog.entries.count) tools ok")
    say("containment: " + ProcessRunner.shared.containment.summary)
    say("default limits per call: \(ResourceLimits.pluginDefaults)")
    for d in catalog.diagnostics { say("\(d.isError ? "error" : "note "): \(d)") }
    if catalog.hasErrors {
      say("\(catalog.diagnostics.filter(\.isError).count) problems: fix them or remove the plugins")
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
  @Flag(name: .shortAndLong, help: "Show the plugin's stderr as it runs.") var verbose = false
  @Flag(help: "Print the full reply as JSON instead of the tool's text.") var json = false
  @OptionGroup(title: "Resource limits (over the manifest's)") var limits: LimitOptions
  @Argument(help: "The tool's name.") var tool: String
  @Argument(parsing: .captureForPassthrough, help: "The tool's flags (see toolhost call TOOL --help).")
  var toolArguments: [String] = []

  func validate() throws {
    if let timeout, timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds") }
    if let maxOutput, maxOutput <= 0 { throw ValidationError("--max-output must be more than 0 bytes") }
  }

  func run() async throws {
    let catalog = plugins.catalog(providing: tool)
    guard let entry = catalog.entries.first(where: { $0.tool.name == tool }) else {
      throw ValidationError(Report.unknownTool(tool, in: catalog))
    }
    let commandLine = ToolCommandLine(toolName: tool, schema: entry.tool.parameters)
    if toolArguments.contains("--help") || toolArguments.contains("-h") {
      say(commandLine.help(description: entry.tool.description))
      return
    }
    let arguments: JSONValue
    do { arguments = try commandLine.parse(toolArguments) } catch {
      warn("Error: \(error.message)\nUsage: \(commandLine.usageLine())")
      throw ExitCode(Status.usage)
    }
    let registry = catalog.registry()
    var context = ToolCallContext()
    context.timeout = timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    context.outputLimit = maxOutput
    context.limits = limits.limits
    if verbose {
      context.onStderr = { name, chunk in
        try? FileHandle.standardError.write(contentsOf: Data("[\(name)] ".utf8) + Data(chunk))
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
    switch result {
    case .success(let output):
      if json {
        var reply = JSONObject()
        reply["result"] = output.value ?? .null
        if let text = output.text { reply["text"] = .string(text) }
        say(try JSONValue.object(reply).serialized(.pretty))
      } else {
        say(output.displayText)
      }
    case .failure(let error):
      if json { say(try Report.errorJSON(error).serialized(.pretty)) }
      warn("toolhost: \(error.description)")
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
    let registry = plugins.catalog().registry()
    var context = ToolCallContext()
    context.timeout = timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }
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
          out["error"] = Report.errorJSON(error)["error"]
        }
      }
      say(JSONValue.object(out).serialized())
    }
    if signal != nil { throw ExitCode(Status.interrupted) }
    if failed { throw ExitCode(Status.toolFailed) }
  }
}
