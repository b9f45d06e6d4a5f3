import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

@Suite("Tool calls")
struct ToolCallTests {
  func failure(_ registry: ToolRegistry, _ name: String, _ args: JSONValue = [:]) async -> ToolFailure? {
    do {
      _ = try await registry.call(name, arguments: args)
      return nil
    } catch {
      return error.failure
    }
  }

  @Test func failureMessagesNameNoCommandLineOptions() {
    // A Swift caller or a model has no flags to pass; the command line adds its own hints.
    let failures: [ToolFailure] = [
      .timedOut(limit: .seconds(5)), .outputTooLarge(limit: 1 << 20), .limitExceeded(.memory, limit: "64 MiB"),
      .unknownTool(suggestions: ["getWeather"]), .launchFailed(executable: "/x/run", reason: "no such file"),
    ]
    for failure in failures {
      #expect(!failure.description.contains("--"), "\(failure.description)")
      #expect(!failure.description.contains("`toolhost"), "\(failure.description)")
    }
  }

  @Test func jsonReplyWithResultAndText() async throws {
    let folder = TemporaryFolder()
    folder.shTool(
      "greet",
      body:
        #"cat >/dev/null; echo "{\"result\": {\"hello\": \"$TOOLHOST_ARG_NAME\"}, \"text\": \"Hello, $TOOLHOST_ARG_NAME\"}""#,
      schema: #"{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}"#)
    let registry = await folder.catalog().registry()
    let out = try await registry.call("greet", arguments: ["name": "Ada"])
    #expect(out.value == ["hello": "Ada"])
    #expect(out.text == "Hello, Ada")
  }

  @Test func theRequestOnStdinFollowsTheWireSchema() async throws {
    let folder = TemporaryFolder()
    folder.shTool("echoRequest", body: #"printf '{"result": %s}' "$(cat)""#)
    let out = try await folder.catalog().registry().call("echoRequest", arguments: ["x": 1.5, "y": [1, 2]])
    let request = try #require(out.value)
    #expect(request["toolhost"] == 1)
    #expect(request["tool"] == "echoRequest")
    #expect(request["arguments"] == ["x": 1.5, "y": [1, 2]])
    #expect(request["callId"]?.stringValue?.isEmpty == false)
    #expect(try JSONSchema(JSONValue.parse(EmbeddedSchemas.request)).validate(request).isEmpty)
  }

  @Test func textOutputMode() async throws {
    let folder = TemporaryFolder()
    folder.shTool("plain", body: "echo \"line one\"; echo \"line two\"", extra: #""output": "text""#)
    folder.shTool("plainFail", body: "echo 'no such item' >&2; exit 3", extra: #""output": "text""#)
    let registry = await folder.catalog().registry()
    #expect(try await registry.call("plain", arguments: [:]).text == "line one\nline two")
    #expect(await failure(registry, "plainFail") == .exited(status: 3, stderr: "no such item"))
  }

  @Test func invalidArgumentsAreRejectedBeforeAnythingRuns() async throws {
    let folder = TemporaryFolder()
    let marker = folder.path + "/ran"
    folder.shTool(
      "limited", body: "touch \(marker); echo '{\"result\":1}'",
      schema:
        #"{"type":"object","required":["searchTerm"],"properties":{"searchTerm":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":6}}}"#
    )
    let registry = await folder.catalog().registry()
    guard case .invalidArguments(let issues) = await failure(registry, "limited", ["limit": 9]) else {
      Issue.record("expected invalid arguments")
      return
    }
    let text = issues.map(\.description)
    #expect(text.contains("/limit: 9 is greater than the maximum 6"))
    #expect(text.contains { $0.contains("searchTerm") })
    #expect(!FileManager.default.fileExists(atPath: marker))
  }

  @Test func everyFailureIsAToolCallErrorThatSaysWhy() async throws {
    let folder = TemporaryFolder()
    folder.shTool(
      "reported", body: #"echo '{"error": {"message": "unknown city Atlantis", "code": "unknown_city"}}'; exit 1"#)
    folder.shTool("crash", body: "echo 'segfault coming' >&2; kill -SEGV $$")
    folder.shTool("exit2", body: "echo 'bad things' >&2; exit 2")
    folder.shTool("garbage", body: "echo 'this is not json'")
    folder.shTool("wrongShape", body: #"echo '{"answer": 42}'"#)
    folder.shTool("both", body: #"echo '{"result": 1, "error": {"message": "x"}}'"#)
    folder.shTool("silent", body: "true")
    folder.shTool(
      "badResult", body: #"echo '{"result": {"n": "x"}}'"#,
      toolExtra: #""outputSchema": {"type":"object","properties":{"n":{"type":"integer"}}}"#)
    folder.shTool("slow", body: "sleep 30", toolExtra: #""timeout": 0.3"#)
    folder.shTool("flood", body: "yes flood")
    let registry = await folder.catalog().registry()

    #expect(
      await failure(registry, "reported")
        == .toolReported(message: "unknown city Atlantis", code: "unknown_city", data: nil))
    #expect(await failure(registry, "crash") == .signaled(signal: SIGSEGV, stderr: "segfault coming"))
    #expect(await failure(registry, "exit2") == .exited(status: 2, stderr: "bad things"))
    guard case .invalidReply(let reason, let excerpt) = await failure(registry, "garbage") else {
      Issue.record("garbage accepted")
      return
    }
    #expect(reason.contains("not valid JSON"))
    #expect(excerpt.contains("this is not json"))
    guard case .invalidReply(let shape, _) = await failure(registry, "wrongShape") else { return }
    #expect(shape.contains("neither \"result\" nor \"error\""))
    guard case .invalidReply(let both, _) = await failure(registry, "both") else { return }
    #expect(both.contains("both"))
    guard case .invalidReply(let silent, _) = await failure(registry, "silent") else { return }
    #expect(silent.contains("no output"))
    guard case .invalidReply(let badResult, _) = await failure(registry, "badResult") else { return }
    #expect(badResult.contains("outputSchema") && badResult.contains("/n"))
    #expect(await failure(registry, "slow") == .timedOut(limit: .milliseconds(300)))
    var context = ToolCallContext()
    context.outputLimit = 64 << 10
    do {
      _ = try await registry.call("flood", arguments: [:], context: context)
      Issue.record("flood accepted")
    } catch {
      #expect(error.failure == .outputTooLarge(limit: 64 << 10))
      #expect(error.description.hasPrefix("flood: printed more than 64 KiB"))
    }
    do {
      _ = try await registry.call("getWether", arguments: [:])
    } catch {
      #expect(error.failure == .unknownTool(suggestions: []))
    }
  }

  @Test func unknownToolNamesSuggestTheNearest() async throws {
    let folder = TemporaryFolder()
    folder.shTool("getWeather", body: "true")
    #expect(await failure(await folder.catalog().registry(), "getWether") == .unknownTool(suggestions: ["getWeather"]))
  }

  @Test func aPerCallTimeoutOverridesTheManifest() async throws {
    let folder = TemporaryFolder()
    folder.shTool("sleepy", body: "sleep 5; echo '{\"result\":1}'", extra: #""timeout": 60"#)
    var context = ToolCallContext()
    context.timeout = .milliseconds(200)
    let t0 = ContinuousClock.now
    do {
      _ = try await folder.catalog().registry().call("sleepy", arguments: [:], context: context)
    } catch {
      #expect(error.failure == .timedOut(limit: .milliseconds(200)))
    }
    #expect(ContinuousClock.now - t0 < .milliseconds(700))
  }

  @Test func pluginsSeeAMinimalEnvironmentAndRunInTheirFolder() async throws {
    let folder = TemporaryFolder()
    let dir = folder.shTool(
      "envdump",
      body: #"printf '{"result": {"pwd": "%s", "env": "%s"}}' "$(pwd)" "$(env | cut -d= -f1 | sort | tr '\n' ' ')""#,
      schema: #"{"type": "object", "properties": {"q": {"type": "string"}}}"#, extra: #""env": ["ALLOWED_VAR"]"#)
    var env = ProcessInfo.processInfo.environment
    env["OPENAI_API_KEY"] = "sk-secret"
    env["ALLOWED_VAR"] = "yes"
    env["HOME"] = "/home/someone"
    let out = try await folder.catalog(environment: env).registry().call("envdump", arguments: ["q": "x"])
    let names = Set((out.value?["env"]?.stringValue ?? "").split(separator: " ").map(String.init))
    #expect(out.value?["pwd"]?.stringValue == dir)
    #expect(!names.contains("OPENAI_API_KEY"))
    #expect(names.contains("ALLOWED_VAR"))
    #expect(names.contains("HOME"))
    #expect(names.contains("TOOLHOST_ARG_Q"))
    #expect(names.contains("TOOLHOST_TOOL"))
    let allowed: Set<String> = [
      "PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "ALLOWED_VAR", "TOOLHOST_ARG_Q", "TOOLHOST_TOOL",
      "TOOLHOST_CALL_ID", "TOOLHOST_MARKER", "PWD", "SHLVL", "_",
    ]
    #expect(
      names.subtracting(allowed).filter { !$0.hasPrefix("LC_") }.isEmpty, "unexpected: \(names.subtracting(allowed))")
  }

  @Test func hugeArgumentsStillStartThePlugin() async throws {
    let folder = TemporaryFolder()
    folder.shTool("size", body: #"printf '{"result": %s}' "$(wc -c)""#)
    let big = JSONValue.string(String(repeating: "x", count: 300_000))
    let out = try await folder.catalog().registry().call("size", arguments: ["blob": big])
    #expect((out.value?.integerValue ?? 0) > 300_000)
  }

  @Test func swiftToolsAndPluginsShareOneRegistry() async throws {
    let folder = TemporaryFolder()
    folder.shTool("one", body: #"echo '{"result": 1}'"#)
    let registry = try ToolRegistry([AddTool()] + (await folder.catalog().tools))
    #expect(try await registry.call("add", arguments: ["a": 2, "b": 3]).value == ["sum": 5])
    guard case .invalidArguments(let issues) = await failure(registry, "add", ["a": "2", "b": 3]) else {
      Issue.record("string accepted for integer")
      return
    }
    #expect(issues.map(\.description) == ["/a: expected integer, got string"])
  }

  @Test func manyCallsRunInParallelInInputOrderAndOneFailureCancelsNothing() async throws {
    let folder = TemporaryFolder()
    folder.shTool(
      "sleepEcho", body: #"sleep "$TOOLHOST_ARG_S"; echo "{\"result\": $TOOLHOST_ARG_N}""#,
      schema: #"{"type":"object","properties":{"s":{"type":"number"},"n":{"type":"integer"}}}"#)
    folder.shTool("boom", body: "exit 9")
    let registry = await folder.catalog().registry()
    var calls: [ToolCallRequest] = []
    for n in 0..<16 {
      calls.append(
        ToolCallRequest(tool: "sleepEcho", arguments: ["s": .real(Double(16 - n) * 0.02), "n": .integer(Int64(n))]))
      if n == 3 { calls.append(ToolCallRequest(tool: "boom", arguments: [:])) }
    }
    let t0 = ContinuousClock.now
    let results = await registry.callAll(calls, concurrency: 8)
    let elapsed = ContinuousClock.now - t0
    #expect(results.count == 17)
    var expected: Int64 = 0
    for (i, r) in results.enumerated() {
      if i == 4 {
        #expect((try? r.get()) == nil)
        continue
      }
      #expect(try r.get().value == .integer(expected))
      expected += 1
    }
    // Serial would take the sum (2.72 s); 8 at a time takes well under half of it.
    #expect(elapsed < .seconds(1.5))
  }

  @Test func cancellingTheCallingTaskEndsThePlugin() async throws {
    let folder = TemporaryFolder()
    // It writes its pid in a folder of its own, which its sandbox declares.
    folder.shTool("hang", body: "echo $$ > out/pid; sleep 100", extra: #""sandbox": {"write": ["out/"]}"#)
    let registry = await folder.catalog().registry()
    let task = Task { try await registry.call("hang", arguments: [:]) }
    try await Task.sleep(for: .milliseconds(400))
    task.cancel()
    do {
      _ = try await task.value
      Issue.record("a cancelled call succeeded")
    } catch let error as ToolCallError {
      #expect(error.failure == .cancelled)
    }
    let pid = try String(contentsOfFile: folder.path + "/hang/out/pid", encoding: .utf8).trimmingCharacters(
      in: .whitespacesAndNewlines)
    #expect(await groupIsGone(Int32(pid) ?? -1))
  }
}
