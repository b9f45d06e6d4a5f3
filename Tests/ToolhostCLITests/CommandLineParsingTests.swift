import ArgumentParser
import Testing
import ToolhostCommandLine
import ToolhostOpenAI
import ToolhostSystem

@testable import ToolhostCLI

/// The command line parsed in process (`ToolhostCommand.parseAsRoot`, which also runs every `validate()`): which
/// subcommand a command line names, what its flags and options become, and which combinations are refused with which
/// message. Nothing is run; the binary's own behaviour is tested in CLITests.
@Suite("toolhost command line, parsed in process")
struct CommandLineParsingTests {
  /// Parses `arguments` as toolhost's command line and returns the subcommand, failing the test when parsing throws.
  func parse(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> any ParsableCommand {
    do {
      return try ToolhostCommand.parseAsRoot(arguments)
    } catch {
      Issue.record(
        "\(arguments) did not parse: \(ToolhostCommand.message(for: error))", sourceLocation: sourceLocation)
      throw error
    }
  }

  /// Parses `arguments` as subcommand `T`, failing the test when it parses as something else.
  func parse<T: ParsableCommand>(
    _ type: T.Type, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> T {
    let command = try parse(arguments, sourceLocation: sourceLocation)
    return try #require(
      command as? T, "\(arguments) parsed as \(Swift.type(of: command))", sourceLocation: sourceLocation)
  }

  /// The message toolhost prints when `arguments` are refused, and the exit status it ends with; nil (and a recorded
  /// issue) when they parse.
  func refusal(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> (
    message: String, status: Int32
  )? {
    do {
      let command = try ToolhostCommand.parseAsRoot(arguments)
      Issue.record("\(arguments) parsed as \(type(of: command))", sourceLocation: sourceLocation)
      return nil
    } catch {
      return (ToolhostCommand.message(for: error), ToolhostCommand.exitCode(for: error).rawValue)
    }
  }

  // MARK: Subcommands

  @Test(arguments: [
    (["list"], "List"), (["describe", "getWeather"], "Describe"), (["doctor"], "Doctor"),
    (["call", "getWeather"], "Call"), (["batch"], "Batch"), (["trust"], "Trust"), (["chat"], "Chat"),
    (["ask", "hello"], "Ask"), (["serve", "--mcp"], "Serve"), (["model"], "Status"), (["model", "status"], "Status"),
    (["model", "start"], "Start"), (["model", "stop"], "Stop"), (["chats"], "ChatsList"),
    (["chats", "--json"], "ChatsList"), (["chats", "show", "3"], "ChatsShow"),
    (["chats", "rm", "3", "4"], "ChatsRemove"),
    (["chats", "search", "rye bread"], "ChatsSearch"), (["chats", "export", "3", "--jsonl"], "ChatsExport"),
  ])
  func subcommandsResolve(arguments: [String], expected: String) throws {
    let command = try parse(arguments)
    #expect(String(describing: type(of: command)) == expected, "\(arguments)")
  }

  @Test func theRootOffersEverySubcommand() {
    let names = ToolhostCommand.configuration.subcommands.map { $0._commandName }
    #expect(
      names == [
        "list", "describe", "doctor", "call", "batch", "trust", "chat", "ask", "chats", "serve", "model", "plugins",
      ])
  }

  @Test func anUnknownSubcommandIsRefused() throws {
    let refused = try #require(refusal(["frobnicate"]))
    #expect(refused.message.contains("frobnicate"), "\(refused.message)")
    #expect(refused.status == ExitCode.validationFailure.rawValue)
  }

  // MARK: Options and flags

  @Test func callTakesItsOptionsAndPassesTheToolsFlagsThrough() throws {
    let call = try parse(
      Call.self,
      [
        "call", "--plugins", "one", "--plugins", "two", "--timeout", "2.5", "--max-output", "100", "-v", "--json",
        "--raw", "--memory-limit", "64", "--cpu-limit", "3", "--process-limit", "5", "--file-size-limit", "7",
        "--open-files-limit", "9", "getWeather", "--city", "Boston", "--json", "x",
      ])
    #expect(call.plugins.folders == ["one", "two"])
    #expect(call.timeout == 2.5)
    #expect(call.maxOutput == 100)
    #expect(call.verbose)
    #expect(call.json)
    #expect(call.output.raw)
    #expect(call.tool == "getWeather")
    // Everything after the tool's name is the tool's, even flags toolhost also has.
    #expect(call.toolArguments == ["--city", "Boston", "--json", "x"])
    let limits = call.limits.limits
    #expect(limits.memoryBytes == 64 << 20)
    #expect(limits.cpuSeconds == 3)
    #expect(limits.processes == 5)
    #expect(limits.fileSizeBytes == 7 << 20)
    #expect(limits.openFiles == 9)
  }

  @Test func callDefaultsToNoOverrides() throws {
    let call = try parse(Call.self, ["call", "todoList"])
    #expect(call.plugins.folders.isEmpty)
    #expect(call.timeout == nil)
    #expect(call.maxOutput == nil)
    #expect(!call.verbose && !call.json && !call.output.raw)
    #expect(call.toolArguments.isEmpty)
    let limits = call.limits.limits
    #expect(limits.memoryBytes == nil && limits.cpuSeconds == nil && limits.processes == nil)
    #expect(limits.fileSizeBytes == nil && limits.openFiles == nil)
  }

  @Test func chatAndAskShareTheirOptions() throws {
    let options = [
      "--plugins", "p", "--model", "local:1.5b", "--tool-calling", "guided", "--base-url", "http://127.0.0.1:9/v1",
      "--tool", "getWeather", "--tool", "todoAdd", "--require-tool", "--instructions", "Be brief.", "--save",
      "out.jsonl", "--resume", "in.jsonl", "--json", "--yes", "--no-stream", "--max-tool-rounds", "3",
      "--temperature", "0.25", "--keep-alive", "5m", "--timeout", "4",
    ]
    let chat = try parse(Chat.self, ["chat"] + options + ["-p", "Hello?"])
    let ask = try parse(Ask.self, ["ask"] + options + ["Hello?"])
    // A keep-alive of 0 (none: the server ends with toolhost) is one ask and chat take.
    #expect(try parse(Ask.self, ["ask", "--keep-alive", "0", "Hello?"]).options.keepAlive == "0")
    #expect(chat.prompt == "Hello?")
    #expect(ask.prompt == "Hello?")
    for parsed in [chat.options, ask.options] {
      #expect(parsed.plugins.folders == ["p"])
      #expect(parsed.model == "local:1.5b")
      #expect(parsed.toolCalling == .guided)
      #expect(parsed.baseURL == "http://127.0.0.1:9/v1")
      #expect(parsed.toolNames == ["getWeather", "todoAdd"])
      #expect(parsed.requireTool)
      #expect(!parsed.noTools)
      #expect(parsed.instructions == "Be brief.")
      #expect(parsed.save == "out.jsonl")
      #expect(parsed.resume == "in.jsonl")
      #expect(parsed.json && parsed.yes && parsed.noStream)
      #expect(parsed.maxToolRounds == 3)
      #expect(parsed.temperature == 0.25)
      #expect(parsed.keepAlive == "5m")
      #expect(parsed.timeout == 4)
    }
  }

  @Test func chatDefaults() throws {
    let chat = try parse(Chat.self, ["chat"])
    #expect(chat.prompt == nil)
    #expect(chat.options.model == nil)
    #expect(chat.options.toolCalling == nil)
    #expect(chat.options.toolNames.isEmpty)
    #expect(!chat.options.noTools && !chat.options.requireTool && !chat.options.yes && !chat.options.json)
    #expect(chat.options.maxToolRounds == 8)
    #expect(chat.options.keepAlive == nil)
    let ask = try parse(Ask.self, ["ask", "--no-tools"])
    #expect(ask.prompt == nil)
    #expect(ask.options.noTools)
  }

  @Test func serveBatchTrustListAndModelOptions() throws {
    let serve = try parse(
      Serve.self, ["serve", "--mcp", "--yes", "--plugins", "p", "--timeout", "3", "--max-output", "10"])
    #expect(serve.mcp && serve.yes)
    #expect(serve.plugins.folders == ["p"])
    #expect(serve.timeout == 3)
    #expect(serve.maxOutput == 10)

    #expect(try parse(Batch.self, ["batch"]).concurrency == 8)
    let batch = try parse(Batch.self, ["batch", "--concurrency", "3", "--timeout", "1.5", "--process-limit", "4"])
    #expect(batch.concurrency == 3)
    #expect(batch.timeout == 1.5)
    #expect(batch.limits.limits.processes == 4)

    let list = try parse(List.self, ["list", "--json", "--start-servers", "--raw", "--plugins", "p"])
    #expect(list.json && list.servers.startServers && list.output.raw)
    #expect(list.plugins.folders == ["p"])
    let describe = try parse(Describe.self, ["describe", "--json", "getWeather"])
    #expect(describe.json)
    #expect(describe.name == "getWeather")

    let trust = try parse(Trust.self, ["trust", "--revoke", "project/plugins"])
    #expect(trust.revoke && !trust.list)
    #expect(trust.folder == "project/plugins")
    let listing = try parse(Trust.self, ["trust", "--list"])
    #expect(listing.list && listing.folder == nil)

    let start = try parse(ModelCommand.Start.self, ["model", "start", "--model", "local:1.5b", "--keep-alive", "90s"])
    #expect(start.common.model == "local:1.5b")
    #expect(start.keepAlive == "90s")
    #expect(try parse(ModelCommand.Status.self, ["model"]).common.model == nil)
  }

  // MARK: Refused combinations and values

  @Test(arguments: [
    (["chat", "--no-tools", "--tool", "getWeather"], "--no-tools cannot be combined with --tool or --require-tool"),
    (["ask", "--no-tools", "--require-tool", "hi"], "--no-tools cannot be combined with --tool or --require-tool"),
    (["chat", "--max-tool-rounds", "0"], "--max-tool-rounds must be at least 1"),
    (["ask", "--timeout", "0", "hi"], "--timeout must be more than 0 seconds"),
    (["chat", "--keep-alive", "soon"], "--keep-alive takes a time such as 90s, 5m or 1h (or 0 for none), not soon"),
    (["model", "start", "--keep-alive", "0"], "--keep-alive takes a time such as 90s, 5m or 1h, not 0"),
    (
      ["model", "start", "--keep-alive", "10 minutes"],
      "--keep-alive takes a time such as 90s, 5m or 1h, not 10 minutes"
    ),
    (["serve"], "say which protocol to serve: --mcp (the only one so far)"),
    (["serve", "--mcp", "--timeout", "0"], "--timeout must be more than 0 seconds"),
    (["serve", "--mcp", "--max-output", "0"], "--max-output must be more than 0 bytes"),
    (["call", "--timeout", "0", "getWeather"], "--timeout must be more than 0 seconds"),
    (["call", "--max-output", "0", "getWeather"], "--max-output must be more than 0 bytes"),
    (["call", "--memory-limit", "0", "getWeather"], "--memory-limit must be at least 1"),
    (["call", "--open-files-limit", "0", "getWeather"], "--open-files-limit must be at least 1"),
    (["batch", "--cpu-limit", "0"], "--cpu-limit must be at least 1"),
    (["batch", "--file-size-limit", "0"], "--file-size-limit must be at least 1"),
    (["batch", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["trust", "--list", "plugins"], "--list takes no folder and no --revoke"),
    (["trust", "--list", "--revoke"], "--list takes no folder and no --revoke"),
    (["chat", "--continue", "--resume", "3"], "--continue and --resume cannot be combined"),
    (["chats", "show", "3", "--graph", "--html"], "--json, --graph and --html cannot be combined: choose one"),
    (["chats", "export", "3", "--jsonl", "--html"], "--jsonl and --html cannot be combined: choose one format"),
    (["chats", "rm"], "Missing expected argument '<ids> ...'"),
  ])
  func invalidCombinationsAreRefusedWithTheirMessage(arguments: [String], message: String) throws {
    let refused = try #require(refusal(arguments))
    #expect(refused.message == message, "\(arguments)")
    #expect(refused.status == ExitCode.validationFailure.rawValue, "\(arguments)")
  }

  @Test func valuesOfTheWrongTypeAreRefused() throws {
    let strategy = try #require(refusal(["chat", "--tool-calling", "sometimes"]))
    #expect(strategy.message.contains("--tool-calling"), "\(strategy.message)")
    #expect(strategy.message.contains("sometimes"), "\(strategy.message)")
    let number = try #require(refusal(["batch", "--concurrency", "many"]))
    #expect(number.message.contains("--concurrency"), "\(number.message)")
    let missing = try #require(refusal(["call"]))
    #expect(missing.message.contains("<tool>"), "\(missing.message)")
    let unknownFlag = try #require(refusal(["list", "--colour"]))
    #expect(unknownFlag.message.contains("--colour"), "\(unknownFlag.message)")
  }

  /// The page is never bound to every address, however that is spelled (`0` is 0.0.0.0 to the resolver).
  @Test(arguments: ["0", "0.0.0.0", "0x0", "0.0", "::", "[::]", "::0", "::ffff:0.0.0.0", ""])
  func chatWebRefusesEveryAddress(host: String) throws {
    let refused = try #require(refusal(["chat", "--web", "--web-host", host]))
    #expect(refused.message.contains("give one address of this machine"), "\(host): \(refused.message)")
  }

  /// A name may bind one address of several while the browser tries another, where another account could listen.
  @Test(arguments: ["localhost", "my-host.example"])
  func chatWebTakesOnlyANumericAddress(host: String) throws {
    let refused = try #require(refusal(["chat", "--web", "--web-host", host]))
    #expect(refused.message.contains("give a numeric address"), "\(host): \(refused.message)")
    _ = try parse(["chat", "--web", "--web-host", "::1"])
  }

  /// `call`'s own options after the tool's name are read as the tool's flags; when that leaves no such tool, the
  /// error says which and gives the command line with them first.
  @Test func callsOwnOptionsAfterTheToolsNameAreNamedWithTheFix() {
    let hint = CommandLineHints.misplacedCallOptions(
      tool: "getWeather", arguments: ["--city", "New York", "--plugins", "my plugins", "-v", "--timeout=3"])
    #expect(
      hint
        == "--plugins, -v, --timeout came after the tool's name, where they are read as flags of getWeather; "
        + "toolhost's own options go before the name: "
        + "toolhost call --plugins 'my plugins' -v --timeout=3 getWeather --city 'New York'")
    #expect(CommandLineHints.misplacedCallOptions(tool: "getWeather", arguments: ["--city", "Boston"]) == nil)
    #expect(CommandLineHints.shellWord("it's") == #"'it'\''s'"#)
  }

  @Test func validationFailuresEndWithTheUsageStatus() {
    // ArgumentParser's validation status is the one toolhost documents for usage errors.
    #expect(ExitCode.validationFailure.rawValue == Status.usage)
  }
}
