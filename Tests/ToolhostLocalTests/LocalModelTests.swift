import Foundation
import Synchronization
import Testing
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

@testable import ToolhostLocal

#if canImport(Glibc)
  import Glibc
#endif

/// The real local model (llama.cpp with the default Qwen 0.5B model), through the `toolhost` binary and the library.
/// Each test starts its own server and checks it is gone afterwards.
@Suite(
  "local model", .serialized,
  .enabled(if: LocalTestEnvironment.runsLocalModel, LocalTestEnvironment.skipReason))
struct LocalModelTests {
  /// Runs `toolhost ask --json --model local` with the weather, bread and todo plugins; returns the NDJSON events.
  func ask(_ prompt: String) async throws -> (status: Int32?, events: [JSONValue], stderr: String) {
    let plugins = try ExamplePlugins.weatherBreadTodo.get()
    let home = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: home) }
    let before = LocalTestEnvironment.serverPIDs()
    let host = try HostProcess(
      ["ask", "--json", "--model", LocalTestEnvironment.model, "--plugins", plugins.path, prompt],
      environment: LocalTestEnvironment.environment(home: home), workingDirectory: home)
    defer { host.cleanUp() }
    host.closeInput()
    let status = await host.waitForExit(seconds: 300)
    let events = host.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    // The server toolhost started is gone with it.
    let started = LocalTestEnvironment.serverPIDs().subtracting(before)
    #expect(started.isEmpty, "llama.cpp servers left running: \(started)")
    return (status, events, host.stderr)
  }

  @Test func weatherQuestionCallsGetWeatherAndAnswersWithItsFigures() async throws {
    let (status, events, stderr) = try await ask("What's the weather in Boston?")
    #expect(status == 0, "\(stderr)")
    let started = try #require(events.first { $0["type"] == "tool_call_started" }, "no tool call: \(events)")
    #expect(started["tool"] == "getWeather")
    #expect(started["arguments"]?["city"]?.stringValue?.lowercased().contains("boston") == true, "\(started)")
    let call = try #require(events.first { $0["type"] == "tool_call_finished" })
    #expect(call["ok"] == true, "\(call)")
    let result = try #require(call["result"])
    let answer = try #require(events.last { $0["type"] == "response" }?["text"]?.stringValue)
    // The answer uses the tool's figures: one of the numbers it states is a temperature or the precipitation the
    // tool returned (in either unit, rounded or not).
    let figures = ["averageHigh", "averageLow", "precipitation"].compactMap { result[$0]?.doubleValue }
    #expect(!figures.isEmpty, "no figures in the tool result \(result)")
    let numbers = answer.split { !($0.isNumber || $0 == "." || $0 == "-") }.compactMap { Double($0) }
    #expect(
      numbers.contains { n in figures.contains { abs($0 - n) <= 0.5 || abs($0 * 9 / 5 + 32 - n) <= 1 } },
      "answer \(answer) does not use the tool's figures \(figures)")
  }

  @Test func questionThatNeedsNoToolIsAnsweredWithoutACall() async throws {
    let (status, events, stderr) = try await ask("What is 2+2?")
    #expect(status == 0, "\(stderr)")
    #expect(!events.contains { $0["type"] == "tool_call_started" }, "\(events)")
    let answer = try #require(events.last { $0["type"] == "response" }?["text"]?.stringValue)
    #expect(answer.contains("4"), "\(answer)")
  }

  /// Several cities asked about at once: a call for each, in one round, and an answer whose figures are the
  /// results' (issue 30).
  @Test func aQuestionAboutSeveralCitiesGetsACallForEachInOneRound() async throws {
    let (status, events, stderr) = try await ask("Is it hotter in Boston, Chicago, or Miami in July?")
    #expect(status == 0, "\(stderr)")
    // The rounds: the calls between one model turn and the next.
    var rounds: [[JSONValue]] = []
    for event in events {
      if event["type"] == "model_turn_started" { rounds.append([]) }
      if event["type"] == "tool_call_started", !rounds.isEmpty { rounds[rounds.count - 1].append(event) }
    }
    let calling = rounds.filter { !$0.isEmpty }
    #expect(calling.count == 1, "calls in \(calling.count) rounds: \(events)")
    let cities = Set(
      (calling.first ?? []).compactMap { $0["arguments"]?["city"]?.stringValue?.lowercased() })
    #expect(cities == ["boston", "chicago", "miami"], "\(events)")
    let results = events.filter { $0["type"] == "tool_call_finished" }
    #expect(results.count == 3 && results.allSatisfy { $0["ok"] == true }, "\(results)")
    let figures = results.flatMap { result in
      ["averageHigh", "averageLow", "precipitation", "month"].compactMap { result["result"]?[$0]?.doubleValue }
    }
    let answer = try #require(events.last { $0["type"] == "response" }?["text"]?.stringValue)
    let numbers = answer.split { !($0.isNumber || $0 == ".") }.compactMap { Double($0) }.filter { $0 < 1900 }
    #expect(!answer.isEmpty)
    #expect(
      numbers.allSatisfy { n in figures.contains { abs(abs($0) - n) < 0.51 } },
      "answer \(answer) states figures that are in no result \(figures)")
  }

  /// A question no offered tool serves, though it sounds like one (a price, a city): no call (issue 30).
  @Test func aQuestionNoToolServesGetsNoCall() async throws {
    let (status, events, stderr) = try await ask("What's the stock price of Apple?")
    #expect(status == 0, "\(stderr)")
    #expect(!events.contains { $0["type"] == "tool_call_started" }, "\(events)")
    let answer = try #require(events.last { $0["type"] == "response" }?["text"]?.stringValue)
    #expect(!answer.isEmpty)
  }

  @Test func serverIsReusedRestartedWhenItDiesAndStopped() async throws {
    let configuration = try LocalModelConfiguration.named(LocalTestEnvironment.model)
    let events = EventLog()
    let model = LocalModel(configuration: configuration) { events.append($0) }
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Say hi."))]), tools: [], toolChoice: .none,
      options: GenerationOptions(maximumResponseTokens: 4))
    do {
      let first = try await model.start()
      #expect(ProcessProbe.isAlive(first.pid))
      _ = try await model.turn(for: request)
      let client = try #require(model.keptOpenAIModel)
      _ = try await model.turn(for: request)
      #expect(model.server.startCount == 1)
      #expect(model.server.pid == first.pid)
      #expect(model.keptOpenAIModel === client)  // one OpenAI client per server, not one per turn

      kill(first.pid, SIGKILL)
      #expect(await ProcessProbe.waitForEnd(first.pid, timeout: 5))
      let turn = try await model.turn(for: request)
      #expect(!turn.text.isEmpty)
      #expect(model.server.startCount == 2)
      let second = try #require(model.server.pid)
      #expect(second != first.pid)
      #expect(events.all.contains { if case .restarting = $0 { true } else { false } })
      #expect(model.keptOpenAIModel != nil && model.keptOpenAIModel !== client)  // the new server's own

      await model.shutdown()
      #expect(model.keptOpenAIModel == nil)
      #expect(await ProcessProbe.waitForEnd(second, timeout: 5))
      #expect(model.server.pid == nil)
      let log = try String(contentsOfFile: configuration.server.logPath, encoding: .utf8)
      #expect(log.contains("toolhost (pid \(getpid())) starts"))
    } catch {
      await model.shutdown()
      throw error
    }
  }

  /// Two requests at once (a chat's warm-up and its first prompt, or two programs sharing a server) both get their
  /// whole answer: the second waits instead of cutting the first short. With llama-cpp-python's default
  /// `interrupt_requests`, the first stream ended with `[DONE]` and no finish reason as soon as the second arrived.
  @Test func twoRequestsAtOnceBothFinish() async throws {
    let model = LocalModel(configuration: try LocalModelConfiguration.named(LocalTestEnvironment.model))
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Count from 1 to 30, separated by commas."))]),
      tools: [], toolChoice: .none, options: GenerationOptions(maximumResponseTokens: 40))
    do {
      try await model.start()
      async let first = Self.finishedTurn(model.streamTurn(for: request))
      try await Task.sleep(for: .milliseconds(400))
      async let second = Self.finishedTurn(model.streamTurn(for: request))
      let turns = try await [first, second]
      for turn in turns {
        #expect(turn.finishReason == "stop" || turn.finishReason == "length", "cut short: \(turn)")
        #expect(turn.text.contains("5"), "\(turn.text)")
      }
      await model.shutdown()
    } catch {
      await model.shutdown()
      throw error
    }
  }

  static func finishedTurn(_ stream: ModelStream) async throws -> ModelTurn {
    for try await event in stream {
      if case .finished(let turn) = event { return turn }
    }
    throw LanguageModelError(kind: .malformedReply, message: "the stream ended without a turn")
  }

  /// Starts `toolhost chat --model local` in `home` and waits for the server it starts while waiting for the first
  /// prompt; returns toolhost and the server's PID.
  func chatWithReadyServer(home: URL) async throws -> (HostProcess, Int32) {
    let host = try HostProcess(
      ["chat", "--model", LocalTestEnvironment.model, "--no-tools"],
      environment: LocalTestEnvironment.environment(home: home),
      workingDirectory: home)
    do {
      let match = try await host.waitForStderr(#"local model ready on 127\.0\.0\.1:\d+ \(pid (\d+)"#, seconds: 120)
      return (host, try #require(Int32(match[1])))
    } catch {
      host.cleanUp()
      throw error
    }
  }

  /// `toolhost model …` in a scratch home, with the shared server's state in the installation.
  func model(_ arguments: [String], home: URL) async throws -> (status: Int32?, stdout: String, stderr: String) {
    let host = try HostProcess(
      ["model"] + arguments, environment: LocalTestEnvironment.environment(home: home), workingDirectory: home)
    defer { host.cleanUp() }
    host.closeInput()
    let status = await host.waitForExit(seconds: 180)
    return (status, host.stdout, host.stderr)
  }

  /// `toolhost ask --model local --no-tools … "Say hi."` in a scratch home (`options` go before the question): how it
  /// exited and what it wrote to stderr.
  func sayHi(
    _ options: [String] = [], environment: [String: String], home: URL, seconds: Double = 120
  ) async throws -> (status: Int32?, stderr: String) {
    let host = try HostProcess(
      ["ask", "--model", LocalTestEnvironment.model, "--no-tools"] + options + ["Say hi."], environment: environment,
      workingDirectory: home)
    defer { host.cleanUp() }
    host.closeInput()
    let status = await host.waitForExit(seconds: seconds)
    return (status, host.stderr)
  }

  /// The first server saves the state after the system message; a server started later restores it instead of
  /// reading the message again, and a guided reply (grammar checked last) is still a valid call of the right tool.
  @Test func aLaterServerStartsFromTheSavedPromptPrefix() async throws {
    let dir = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    var configuration = try LocalModelConfiguration.named(LocalTestEnvironment.model)
    configuration.server.promptCacheDirectory = dir.appendingPathComponent("cache").path
    configuration.server.logPath = dir.appendingPathComponent("server.log").path
    let weather = Transcript.ToolDefinition(
      name: "getWeather",
      description: "Typical weather for a major world city in a given month: average high and low temperature.",
      parameters: [
        "type": "object", "properties": ["city": ["type": "string"], "month": ["type": "integer"]],
        "required": ["city"],
      ])
    let bread = Transcript.ToolDefinition(
      name: "searchBreadDatabase", description: "Searches a database of bread recipes by keyword.",
      parameters: ["type": "object", "properties": ["searchTerm": ["type": "string"]], "required": ["searchTerm"]])
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Find me a recipe for rye bread."))]),
      tools: [weather, bread], toolChoice: .auto)
    var calls: [String] = []
    for _ in 0..<2 {
      let turn = try await LocalModel.withModel(configuration) { try await $0.turn(for: request) }
      let call = try #require(turn.toolCalls.first, "no tool call: \(turn.text)")
      #expect(call.arguments["searchTerm"]?.stringValue?.lowercased().contains("rye") == true, "\(call.arguments)")
      calls.append(call.toolName)
    }
    #expect(calls == ["searchBreadDatabase", "searchBreadDatabase"])
    let log = try String(contentsOf: dir.appendingPathComponent("server.log"), encoding: .utf8)
    #expect(log.contains("toolhost: saved a prompt prefix of"), "\(log.suffix(2000))")
    #expect(log.contains("toolhost: restored a saved prompt prefix of"), "\(log.suffix(2000))")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("cache").path)
    #expect(files.count == 2, "\(files)")
    for file in files {
      let attributes = try FileManager.default.attributesOfItem(
        atPath: dir.appendingPathComponent("cache/\(file)").path)
      #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
    }
  }

  @Test func aSharedServerIsReusedRestartedStoppedAndEndsWhenIdle() async throws {
    let home = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: home) }
    _ = try await model(["stop"], home: home)
    let started = try await model(["start", "--keep-alive", "1m"], home: home)
    #expect(started.status == 0, "\(started.stderr)")
    let pid = try #require(started.stdout.firstMatch(of: /pid (\d+)/).flatMap { Int32($0.1) }, "\(started.stdout)")
    #expect(started.stdout.hasPrefix("started: "))
    #expect(ProcessProbe.isAlive(pid))

    // ask with a keep-alive reuses it and leaves it running.
    let withKeepAlive = try await sayHi(
      ["--keep-alive", "1m"], environment: LocalTestEnvironment.environment(home: home), home: home)
    #expect(withKeepAlive.status == 0, "\(withKeepAlive.stderr)")
    #expect(!withKeepAlive.stderr.contains("starting the local model"), "\(withKeepAlive.stderr)")
    #expect(ProcessProbe.isAlive(pid))
    let status = try await model(["status"], home: home)
    #expect(status.stdout.contains("running: pid \(pid)"), "\(status.stdout)")

    // ask without a keep-alive of its own uses it too (issue 49: the server `model start` started), and leaves it.
    let plain = try await sayHi(environment: LocalTestEnvironment.environment(home: home), home: home)
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(!plain.stderr.contains("starting the local model"), "\(plain.stderr)")
    #expect(ProcessProbe.isAlive(pid))

    // While it generates for one client it is still found alive by another, not restarted under the first.
    let adopted = try LocalModelConfiguration.named(
      LocalTestEnvironment.model, environment: LocalTestEnvironment.environment(home: home))
    #expect(adopted.shared?.keepAlive == .seconds(60), "the keep-alive it was started with")
    let long = ModelRequest(
      transcript: Transcript(entries: [.prompt(.init(text: "Count from 1 to 200, one number a line."))]), tools: [],
      toolChoice: .none, options: GenerationOptions(maximumResponseTokens: 300))
    let generating = Task { try await LocalModel.withModel(adopted) { try await $0.turn(for: long) } }
    try await Task.sleep(for: .seconds(2))
    let busy = try await model(["status"], home: home)
    #expect(busy.stdout.contains("running: pid \(pid)"), "\(busy.stdout)")
    let during = try await sayHi(
      environment: LocalTestEnvironment.environment(home: home), home: home, seconds: 180)
    #expect(during.status == 0, "\(during.stderr)")
    #expect(!during.stderr.contains("does not answer"), "\(during.stderr)")
    #expect(try await generating.value.text.isEmpty == false)
    #expect(ProcessProbe.isAlive(pid), "the busy server was restarted")

    // Killed: the next start makes a new one.
    kill(pid, SIGKILL)
    #expect(await ProcessProbe.waitForEnd(pid, timeout: 5))
    let again = try await model(["start", "--keep-alive", "2s"], home: home)
    let second = try #require(again.stdout.firstMatch(of: /pid (\d+)/).flatMap { Int32($0.1) }, "\(again.stdout)")
    #expect(second != pid)
    // With nothing to do it stops by itself after its keep-alive time, and forgets its state.
    #expect(await ProcessProbe.waitForEnd(second, timeout: 15), "server \(second) outlived its idle time")
    #expect(try await model(["status"], home: home).stdout.contains("no local model server is running"))

    // stop stops one at once.
    let third = try await model(["start"], home: home)
    let last = try #require(third.stdout.firstMatch(of: /pid (\d+)/).flatMap { Int32($0.1) }, "\(third.stdout)")
    let stopped = try await model(["stop"], home: home)
    #expect(stopped.stdout.contains("stopped the local model server (pid \(last))"), "\(stopped.stdout)")
    #expect(await ProcessProbe.waitForEnd(last, timeout: 5))

    // With no keep-alive given anywhere, ask leaves the model loaded for the default 5 minutes, as Ollama does.
    var plainEnvironment = LocalTestEnvironment.environment(home: home)
    plainEnvironment["TOOLHOST_MODEL_KEEP_ALIVE"] = nil
    let byDefault = try await sayHi(environment: plainEnvironment, home: home)
    #expect(byDefault.status == 0, "\(byDefault.stderr)")
    let left = try await model(["status"], home: home)
    #expect(left.stdout.contains("stops after 300 s without a request"), "\(left.stdout)")
    let kept = try #require(left.stdout.firstMatch(of: /running: pid (\d+)/).flatMap { Int32($0.1) }, "\(left.stdout)")
    _ = try await model(["stop"], home: home)
    #expect(await ProcessProbe.waitForEnd(kept, timeout: 5))
  }

  @Test func killingToolhostTakesTheServerWithIt() async throws {
    let home = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: home) }
    let (host, server) = try await chatWithReadyServer(home: home)
    defer { host.cleanUp() }
    #expect(ProcessProbe.isAlive(server))
    kill(host.pid, SIGKILL)
    _ = await host.waitForExit(seconds: 5)
    // No atexit handler ran: the server notices its stdin closing and exits by itself.
    #expect(await ProcessProbe.waitForEnd(server, timeout: 5), "server \(server) outlived toolhost")
  }

  @Test func interruptingChatStopsTheServer() async throws {
    let home = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: home) }
    let (host, server) = try await chatWithReadyServer(home: home)
    defer { host.cleanUp() }
    kill(host.pid, SIGINT)
    let status = await host.waitForExit(seconds: 10)
    #expect(status == 130, "\(host.stderr)")
    #expect(await ProcessProbe.waitForEnd(server, timeout: 5), "server \(server) outlived toolhost")
  }
}

/// Events a model reported, for checks.
final class EventLog: Sendable {
  private let events = Mutex<[LocalServerEvent]>([])
  func append(_ event: LocalServerEvent) { events.withLock { $0.append(event) } }
  var all: [LocalServerEvent] { events.withLock { $0 } }
}
