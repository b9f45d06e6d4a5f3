/// The chat page in a real browser: the real `toolhost chat --web` binary against fakellm (and the local model where
/// it is installed), driven by Selenium through Debian's chromium and chromedriver (Peers/web_browser.py), with the
/// weather example plugin and three plugins of the test's own (one that needs approval, one that never ends, one
/// whose results are hostile).
import Foundation
import Synchronization
import Testing
import ToolhostJSON
import ToolhostLocal
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the browser tests need: chromium, chromedriver and Selenium.
enum BrowserDriver {
  static let chromium = TestPackage.which("chromium") ?? TestPackage.which("chromium-browser")
  static let chromedriver = TestPackage.which("chromedriver")
  static let hasSelenium = TestEnvironment.pythonSucceeds(
    "import importlib.metadata as m, selenium; assert m.version('selenium') == '4.51.0'")
  static var ready: Bool { chromium != nil && chromedriver != nil && hasSelenium }
  /// Whether the local model is set up in this checkout (CI sets it up: there the test must run, not skip).
  static let hasLocalModel =
    (try? LocalModelInstallation.locate(searchingFrom: [TestPackage.root.path])) != nil
    || ProcessInfo.processInfo.environment["CI"] == "true"
  static let missing = "needs chromium, chromium-driver and selenium 4.51.0 (scripts/install-deps --test)"
}

/// A running `toolhost chat --web`, its stdout and stderr in files; stopped by its PID.
final class WebChatProcess: Sendable {
  let process: Process
  let folder: URL

  /// Starts `toolhost chat --web --no-open ARGUMENTS` (without `--no-open` when `opening`) in `workingDirectory`
  /// (default `folder`), its output in `folder`.
  init(
    arguments: [String], environment: [String: String], folder: URL, workingDirectory: URL? = nil,
    opening: Bool = false
  ) throws {
    _ = Subprocess.ignoreSIGPIPE
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try TestPackage.requireToolhostBinary())
    process.arguments = ["chat", "--web"] + (opening ? [] : ["--no-open"]) + arguments
    process.environment = environment
    process.currentDirectoryURL = workingDirectory ?? folder
    _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("web.out").path, contents: nil)
    _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("web.err").path, contents: nil)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle(forWritingAtPath: folder.appendingPathComponent("web.out").path)
    process.standardError = FileHandle(forWritingAtPath: folder.appendingPathComponent("web.err").path)
    try Subprocess.withUnblockedSignals { try process.run() }
    self.process = process
    self.folder = folder
  }

  var stdout: String { (try? String(contentsOf: folder.appendingPathComponent("web.out"), encoding: .utf8)) ?? "" }
  var stderr: String { (try? String(contentsOf: folder.appendingPathComponent("web.err"), encoding: .utf8)) ?? "" }

  /// The printed address, once it is printed.
  func address(within seconds: Double = 120) async -> String? {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline, process.isRunning {
      if let range = stdout.range(of: #"http://127\.0\.0\.1:[0-9]+/#token=[0-9a-f]{64}"#, options: .regularExpression) {
        return String(stdout[range])
      }
      try? await Task.sleep(for: .milliseconds(50))
    }
    return nil
  }

  /// Ctrl-C, then up to `grace` seconds for it to end (SIGKILL after); its exit status, or nil when it had to be
  /// killed.
  func interrupt(grace: Double = 15) async -> Int32? {
    kill(process.processIdentifier, SIGINT)
    let deadline = ContinuousClock.now + .seconds(grace)
    while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
      return nil
    }
    return process.terminationStatus
  }
}

@Suite(
  "chat page: in a browser",
  .serialized,
  .enabled(
    if: TestEnvironment.hasFakeLLM || ProcessInfo.processInfo.environment["CI"] != nil,
    "fakellm 0.3.5 is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"),
  .enabled(if: BrowserDriver.ready || ProcessInfo.processInfo.environment["CI"] != nil, "\(BrowserDriver.missing)"))
struct WebPageBrowserTests {
  /// The title of every chat; then turn 1 by the prompt's word, turn 2 by the tool's result. `PADDING` stands for a
  /// value that pads the first argument of a call with 2,000 spaces and 300 more characters.
  static var rules: String {
    rulesText.replacingOccurrences(
      of: "PADDING", with: String(repeating: " ", count: 2000) + String(repeating: "x", count: 300))
  }
  static let rulesText = #"""
    rules:
      - name: title-weather
        when: {previous_message_contains: "You write titles", messages_contain: "WEATHER"}
        respond: {content: "Oslo weather in May"}
      - name: title-picked
        when: {previous_message_contains: "You write titles", messages_contain: "PICKED"}
        respond: {content: "Oslo with a picked tool"}
      - name: title-append
        when: {previous_message_contains: "You write titles", messages_contain: "APPEND"}
        respond: {content: "A note to keep"}
      - name: title-hostile
        when: {previous_message_contains: "You write titles", messages_contain: "HOSTILE"}
        respond: {content: "Hostile tool output"}
      - name: title-show
        when: {previous_message_contains: "You write titles", messages_contain: "SHOW"}
        respond: {content: "An example tool's result"}
      - name: title
        when: {messages_contain: "You write titles"}
        respond: {content: "Made by the model"}
      - name: weather
        when: {turn: 1, messages_contain: "WEATHER"}
        respond:
          tool_calls:
            - {name: getWeather, arguments: {city: Oslo, month: 5}}
      - name: picked
        when: {turn: 1, messages_contain: "PICKED"}
        respond:
          tool_calls:
            - {name: getWeather, arguments: {city: Oslo, month: 5}}
      - name: append
        when: {turn: 1, messages_contain: "APPEND"}
        respond:
          tool_calls:
            - {name: appendNote, arguments: {text: hello}}
      - name: padded
        when: {turn: 1, messages_contain: "PADDED"}
        respond:
          tool_calls:
            - {name: appendNote, arguments: {text: "PADDING", path: "~/.bashrc"}}
      - name: hostile
        when: {turn: 1, messages_contain: "HOSTILE"}
        respond:
          tool_calls:
            - {name: hostileTool, arguments: {}}
      - name: slow
        when: {turn: 1, messages_contain: "SLOW"}
        respond:
          tool_calls:
            - {name: slowTool, arguments: {}}
      - name: bread
        when: {turn: 1, messages_contain: "SHOW BREAD"}
        respond:
          tool_calls:
            - {name: searchBreadDatabase, arguments: {searchTerm: rye, limit: 2}}
      - name: stats
        when: {turn: 1, messages_contain: "SHOW STATS"}
        respond:
          tool_calls:
            - {name: describeData, arguments: {datasets: [{name: March, values: [3, 5, 8, 13]}, {name: April, values: [2, 4, 6]}]}}
      - name: todo
        when: {turn: 1, messages_contain: "SHOW TODO"}
        respond:
          tool_calls:
            - {name: todoList, arguments: {}}
      - name: units
        when: {turn: 1, messages_contain: "SHOW UNITS"}
        respond:
          tool_calls:
            - {name: convertUnits, arguments: {value: 5, from: mi, to: km}}
      - name: time
        when: {turn: 1, messages_contain: "SHOW TIME"}
        respond:
          tool_calls:
            - {name: get_current_time, arguments: {timezone: Europe/Oslo}}
      - name: shown
        when: {turn: 2, messages_contain: "SHOW"}
        respond: {content: "Here is what the tool found."}
      - name: high
        when: {turn: 2, tool_result_contains: "averageHigh"}
        respond: {content: "In May, Oslo averages a high of 16 °C."}
      - name: saved
        when: {turn: 2, tool_result_contains: "appended"}
        respond: {content: "The note is saved."}
      - name: markup
        when: {turn: 2, tool_result_contains: "onerror"}
        respond: {content: "<b>bold</b> <img src=x onerror=\"window.pwned=3\"> \u202Egnp.exe \u001B[31mred"}
      - name: not-run
        when: {turn: 2}
        respond: {content: "It did not run."}
      - name: plain
        respond: {content: "Plain answer."}
    """#

  /// The plugins folder: weather, bread, stats, todo, units and time-mcp (linked from plugins/), appender (asks), slowTool (sleeps a minute, its pid in `out/slow.pid`) and
  /// hostileTool (markup, bidi and control characters).
  static func plugins(in scratch: TemporaryFolder) throws -> String {
    try ExamplePlugins.build()
    let tools = scratch.url.appendingPathComponent("tools")
    try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
    try ExamplePlugins.link(["weather", "bread", "stats", "todo", "units", "time-mcp"], into: tools)
    func manifest(_ tool: String, output: String, timeout: Int = 10, readOnly: Bool) -> String {
      var entry: JSONObject = [
        "name": .string(tool), "description": "A tool of the chat page's tests.",
        "inputSchema": ["type": "object", "properties": ["text": ["type": "string"]]],
      ]
      if readOnly { entry["annotations"] = ["readOnlyHint": true] }
      return JSONValue.object([
        "manifestVersion": 1, "command": "./run", "output": .string(output), "timeout": .integer(Int64(timeout)),
        "tools": .array([.object(entry)]),
        // They write their notes and pid in the scratch folder's `out`, beside the plugins' folder.
        "sandbox": ["write": ["../../out/"]],
      ]).serialized()
    }
    _ = scratch.write("tools/appender/toolhost.json", manifest("appendNote", output: "text", readOnly: false))
    _ = try scratch.write(
      "tools/appender/run",
      "#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' \"$TOOLHOST_ARG_TEXT\" >> '\(scratch.file("out/notes.txt"))'\necho appended\n",
      mode: 0o755)
    _ = scratch.write("tools/slow/toolhost.json", manifest("slowTool", output: "text", timeout: 120, readOnly: true))
    _ = try scratch.write(
      "tools/slow/run", "#!/bin/sh\ncat >/dev/null\necho $$ > '\(scratch.file("out/slow.pid"))'\nexec sleep 60\n",
      mode: 0o755)
    _ = scratch.write("tools/hostile/toolhost.json", manifest("hostileTool", output: "json", readOnly: true))
    let hostile = #"""
      {"result": {"name": "<img src=x onerror=\"window.pwned=1\">", "note": "<script>window.pwned=2</script> \u202Etxt.exe \u001B]52;c;x\u0007 end", "rows": [{"city": "<b>Bergen</b>", "value": 1}, {"city": "<iframe src=\"http://example.com\">", "value": 2}]}}
      """#
    _ = try scratch.write("tools/hostile/run", "#!/bin/sh\ncat >/dev/null\ncat <<'EOF'\n\(hostile)\nEOF\n", mode: 0o755)
    return tools.path
  }

  /// Runs web_browser.py's `steps` against `url`; each step's JSON line.
  static func browse(_ url: String, steps: [String], shots: String) async throws -> (
    lines: [JSONValue], output: Subprocess.Output
  ) {
    let output = try await Subprocess.runWithoutBlocking(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      arguments: [
        TestEnvironment.python, TestEnvironment.support.appendingPathComponent("web_browser.py").path, "--url", url,
        "--shots", shots, "--driver", BrowserDriver.chromedriver ?? "/usr/bin/chromedriver",
        "--browser", BrowserDriver.chromium ?? "/usr/bin/chromium",
      ] + steps,
      environment: Subprocess.cleanEnvironment(home: shots), timeout: 600
    ).finished()
    let lines = output.stdoutText.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    return (lines, output)
  }

  @Test func thePageAgainstFakeLLM() async throws {
    let scratch = TemporaryFolder(prefix: "toolhost-web-browser")
    let tools = try Self.plugins(in: scratch)
    try await FakeLLM.with(rules: Self.rules) { server in
      var environment = Subprocess.cleanEnvironment(home: scratch.path)
      environment["TOOLHOST_API_KEY"] = "test"
      let web = try WebChatProcess(
        arguments: ["--plugins", tools, "--model", "fake", "--base-url", server.baseURL], environment: environment,
        folder: scratch.url)
      guard let url = await web.address() else {
        Issue.record("no address printed:\n\(web.stdout)\n\(web.stderr)")
        _ = await web.interrupt()
        return
      }
      let steps = [
        "open", "weather", "picker", "button", "approve", "deny", "padded", "hostile", "stop", "tools", "chats",
        "narrow", "network", "neighbour",
      ]
      let shots = scratch.file("shots")
      let (lines, output) = try await Self.browse(url, steps: steps, shots: shots)
      let done = lines.filter { $0["ok"] == true }.compactMap { $0["step"]?.stringValue }
      #expect(done == steps, "\(output.stdoutText)\n\(output.stderrText.suffix(3000))\ntoolhost:\n\(web.stderr)")
      // The approved call ran once; the denied one did not.
      #expect((try? String(contentsOfFile: scratch.file("out/notes.txt"), encoding: .utf8)) == "hello\n")
      // The stopped tool's process is gone.
      if let pid = (try? String(contentsOfFile: scratch.file("out/slow.pid"), encoding: .utf8)).flatMap({
        Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }) {
        #expect(await ProcessProbe.waitForEnd(pid, timeout: 10), "the stopped tool (pid \(pid)) still runs")
      } else if done.contains("stop") {
        Issue.record("the slow tool never ran")
      }
      // A picked tool is the only one offered for its message.
      let requests = try server.requests()
      let picked = requests.first { request in
        ((request["messages"] as? [[String: Any]]) ?? []).contains {
          ($0["content"] as? String)?.contains("PICKED") ?? false
        }
      }
      let offered = (picked?["tools"] as? [[String: Any]])?.compactMap {
        ($0["function"] as? [String: Any])?["name"] as? String
      }
      #expect(offered == ["getWeather"], "\(offered ?? [])")
      // Ctrl-C ends the server and leaves nothing running.
      let status = await web.interrupt()
      #expect(status != nil, "toolhost chat --web did not end on Ctrl-C")
      let left = ProcessProbe.processes { $0.contains(scratch.path) }
      #expect(left.isEmpty, "processes left: \(left)")
      Self.keepScreenshots(from: shots)
    }
  }

  /// The page opened as a user starts it: toolhost opens the browser `$BROWSER` names with a private local file that
  /// redirects to the page (the link never on a command line). Chromium sends that navigation as cross-site; the page
  /// answers it, trades the link from the fragment and works.
  @Test func theBrowserToolhostOpensReachesThePage() async throws {
    let scratch = TemporaryFolder(prefix: "toolhost-web-open")
    let tools = try Self.plugins(in: scratch)
    let opened = scratch.file("opened.txt")
    let browser = try scratch.write(
      "browser", "#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(opened).tmp'\nmv '\(opened).tmp' '\(opened)'\n", mode: 0o755)
    try await FakeLLM.with(rules: Self.rules) { server in
      var environment = Subprocess.cleanEnvironment(home: scratch.path)
      environment["TOOLHOST_API_KEY"] = "test"
      environment["BROWSER"] = browser
      let web = try WebChatProcess(
        arguments: ["--plugins", tools, "--model", "fake", "--base-url", server.baseURL], environment: environment,
        folder: scratch.url, opening: true)
      guard await web.address() != nil else {
        Issue.record("no address printed:\n\(web.stdout)\n\(web.stderr)")
        _ = await web.interrupt()
        return
      }
      var file: String?
      for _ in 0..<200 where file == nil {
        file = (try? String(contentsOfFile: opened, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if file == nil { try? await Task.sleep(for: .milliseconds(50)) }
      }
      guard let file, file.hasPrefix("file://") else {
        Issue.record("the browser was not opened with a local file: \(file ?? "nothing")\n\(web.stderr)")
        _ = await web.interrupt()
        return
      }
      #expect(!file.contains("token="), "the link is on the browser's command line: \(file)")
      let (lines, output) = try await Self.browse(file, steps: ["open", "weather"], shots: scratch.file("shots"))
      let done = lines.filter { $0["ok"] == true }.compactMap { $0["step"]?.stringValue }
      #expect(
        done == ["open", "weather"], "\(output.stdoutText)\n\(output.stderrText.suffix(2000))\ntoolhost:\n\(web.stderr)"
      )
      #expect(await web.interrupt() != nil, "toolhost chat --web did not end on Ctrl-C")
    }
  }

  /// The page with the local model, the default when it is installed: the weather question is answered with
  /// getWeather's result drawn as fields with °C, offline.
  @Test(.enabled(if: BrowserDriver.hasLocalModel, "the local model is not set up: scripts/install-local-model"))
  func thePageWithTheLocalModel() async throws {
    let scratch = TemporaryFolder(prefix: "toolhost-web-local")
    let tools = try Self.plugins(in: scratch)
    var environment = Subprocess.cleanEnvironment(home: scratch.path)
    environment["TOOLHOST_MODEL_KEEP_ALIVE"] = "0"  // the server ends with the page's toolhost
    if let dir = ProcessInfo.processInfo.environment["TOOLHOST_LOCAL_DIR"] { environment["TOOLHOST_LOCAL_DIR"] = dir }
    let web = try WebChatProcess(
      arguments: ["--plugins", tools], environment: environment, folder: scratch.url,
      workingDirectory: TestPackage.root)
    guard let url = await web.address(within: 300) else {
      Issue.record("no address printed:\n\(web.stdout)\n\(web.stderr)")
      _ = await web.interrupt()
      return
    }
    let (lines, output) = try await Self.browse(url, steps: ["open", "local", "network"], shots: scratch.file("shots"))
    let done = lines.filter { $0["ok"] == true }.compactMap { $0["step"]?.stringValue }
    #expect(
      done == ["open", "local", "network"], "\(output.stdoutText)\n\(output.stderrText.suffix(2000))\n\(web.stderr)")
    #expect(
      lines.first?["model"]?.stringValue?.contains("local") ?? false, "not the local model: \(lines.first ?? nil)")
    Self.keepScreenshots(from: scratch.file("shots"))
    #expect(await web.interrupt() != nil, "toolhost chat --web did not end on Ctrl-C")
    let left = ProcessProbe.processes { $0.contains(scratch.path) }
    #expect(left.isEmpty, "processes left: \(left)")
  }

  /// Copies the screenshots to docs/screenshots when TOOLHOST_WEB_SCREENSHOTS names that folder (for a person to
  /// look at during development).
  static func keepScreenshots(from shots: String) {
    guard let target = ProcessInfo.processInfo.environment["TOOLHOST_WEB_SCREENSHOTS"] else { return }
    try? FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
    for name in (try? FileManager.default.contentsOfDirectory(atPath: shots)) ?? [] where name.hasSuffix(".png") {
      try? FileManager.default.removeItem(atPath: target + "/" + name)
      try? FileManager.default.copyItem(atPath: shots + "/" + name, toPath: target + "/" + name)
    }
  }
}
