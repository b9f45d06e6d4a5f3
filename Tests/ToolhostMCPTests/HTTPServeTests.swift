import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The real `toolhost serve --mcp --http` on 127.0.0.1, spoken to by the official Python SDK's client and by plain
/// HTTP requests.
@Suite(
  "serve --mcp --http",
  .enabled(if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)")
)
struct HTTPServeTests {
  /// A `serve --mcp --http 0` over the weather and units examples (units is persistent) in a folder of its own.
  struct Served {
    let folder: TemporaryFolder
    let server: MCPServeProcess
    let endpoint: String

    /// With `slow`, also `slowAnswer`, which answers after 3 seconds; with `trace`, also `showTrace`, which
    /// answers with its TRACEPARENT; with `gate`, also `gated`, which answers once the file ``gate`` exists. It
    /// serves with `--no-auth` unless `extra` gives `--token-env` or `generatedToken` is set.
    static func start(
      extra: [String] = [], environment extraEnvironment: [String: String] = [:], slow: Bool = false,
      trace: Bool = false, gate: Bool = false, generatedToken: Bool = false
    ) async throws -> Served {
      let binary = try #require(TestPackage.toolhostBinary)
      let folder = TemporaryFolder(prefix: "toolhost-http-test")
      try ExamplePlugins.link(["weather", "units"], into: folder.url)
      /// A plugin of one read-only tool, `name`, that runs `script` (a shell script's body).
      func plugin(_ name: String, _ description: String, timeout: Int = 10, script: String) {
        folder.shTool(
          name, description: description, body: script, extra: "\"timeout\": \(timeout)",
          toolExtra: #""annotations": {"readOnlyHint": true}"#)
      }
      if slow {
        plugin("slowAnswer", "Answers after 3 seconds.", script: "sleep 3\necho '{\"result\": {\"done\": true}}'")
      }
      if trace {
        plugin(
          "showTrace", "Answers with its TRACEPARENT.",
          script: "printf '{\"result\": {\"traceparent\": \"%s\"}}\\n' \"${TRACEPARENT:-none}\"")
      }
      if gate {
        plugin(
          "gated", "Answers once its gate is open.", timeout: 120,
          script: "while [ ! -e '\(folder.file("gate"))' ]; do sleep 0.05; done\necho '{\"result\": {\"done\": true}}'")
      }
      var environment = folder.userEnvironment(hostEnvironment)
      environment.merge(extraEnvironment) { $1 }
      let auth = generatedToken || extra.contains("--token-env") ? [] : ["--no-auth"]
      let server = try MCPServeProcess(
        binary: binary, arguments: ["serve", "--mcp", "--http", "0", "--plugins", folder.path] + auth + extra,
        environment: environment, workingDirectory: folder.url, logPath: folder.file("serve.log"))
      guard let endpoint = await server.httpEndpoint() else {
        await server.stop(signal: SIGTERM)
        throw TestFailure("serve --mcp --http did not say where it listens; its log: \(server.log)")
      }
      return Served(folder: folder, server: server, endpoint: endpoint)
    }

    /// The file whose existence opens the `gated` tool's gate.
    var gate: String { folder.file("gate") }

    /// The port the server listens on.
    var port: Int { Int(endpoint.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0 }

    /// Stops the server with SIGTERM, expects a clean exit, and that none of its plugins' processes is left.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) async {
      await server.stop(signal: SIGTERM)
      #expect(server.process.terminationStatus == 0, "log: \(server.log)", sourceLocation: sourceLocation)
      try? await Task.sleep(for: .milliseconds(300))
      let left = ProcessProbe.processes { $0.contains(folder.path) }
      #expect(left.isEmpty, "processes left: \(left)", sourceLocation: sourceLocation)
    }
  }

  struct Reply {
    var status: Int
    var headers: [String: String]
    var text: String
    var json: JSONValue? { try? JSONValue.parse(text) }
  }

  static func send(
    _ url: String, method: String = "POST", headers: [String: String] = ["content-type": "application/json"],
    body: String? = nil
  ) async throws -> Reply {
    var request = HTTPClientRequest(url: url)
    request.method = .init(rawValue: method)
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body { request.body = .bytes(ByteBuffer(string: body)) }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let bytes = try await response.body.collect(upTo: 1 << 22)
    var fields: [String: String] = [:]
    for header in response.headers { fields[header.name.lowercased()] = header.value }
    return Reply(status: Int(response.status.code), headers: fields, text: String(buffer: bytes))
  }

  static func call(_ id: Int, _ tool: String, _ arguments: String) -> String {
    #"{"jsonrpc": "2.0", "id": \#(id), "method": "tools/call", "params": {"name": "\#(tool)", "arguments": \#(arguments)}}"#
  }

  /// The SDK's client pinned to 2026-07-28, pinned to the `initialize` era, and in auto mode.
  @Test(
    .enabled(if: Peers.pythonMCPClient, "\(Peers.missingMessage)"),
    arguments: ["2026-07-28", "legacy", "auto"])
  func theSDKClientOfEitherEra(mode: String) async throws {
    let python = try #require(Peers.python3)
    let served = try await Served.start()
    let output = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: python, arguments: [Paths.erasPeer, "client", mode, served.endpoint],
        environment: hostEnvironment, workingDirectory: served.folder.path, timeout: .seconds(120)))
    let stdout = String(decoding: output.stdout, as: UTF8.self)
    let report = try JSONValue.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(report["failure"] == nil, "\(report)\n\(output.stderrText)\nlog: \(served.server.log)")
    #expect(report["negotiated"]?.stringValue == (mode == "legacy" ? "2025-11-25" : "2026-07-28"))
    #expect(report["tools"] == ["convertUnits", "getWeather"])
    #expect(report[path: "structured", "city"] == "Boston")
    await served.stop()
  }

  /// GET and DELETE are 405, the health check counts the tools, browsers from elsewhere are refused, a broken body
  /// is 400, an unknown method 404, a notification 202, and two clients may use the same request id at once.
  @Test func theEndpointAnswersByTheRules() async throws {
    let served = try await Served.start()
    let url = served.endpoint
    let get = try await Self.send(url, method: "GET", headers: [:])
    #expect(get.status == 405 && get.headers["allow"] == "POST")
    #expect(try await Self.send(url, method: "DELETE", headers: [:]).status == 405)
    let health = try await Self.send(url.replacingOccurrences(of: "/mcp", with: "/health"), method: "GET", headers: [:])
    #expect(health.status == 200)
    #expect(health.json?["status"] == "ok" && health.json?["tools"] == 2, "\(health.text)")
    let evil = try await Self.send(
      url, headers: ["content-type": "application/json", "origin": "http://evil.example"],
      body: Self.call(1, "getWeather", #"{"city": "Oslo"}"#))
    #expect(evil.status == 403)
    #expect(try await Self.send(url, body: "{\"jsonrpc\": ").status == 400)
    let unknown = try await Self.send(url, body: #"{"jsonrpc": "2.0", "id": 4, "method": "resources/list"}"#)
    #expect(unknown.status == 404 && unknown.json?["id"] == 4)
    let note = try await Self.send(url, body: #"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#)
    #expect(note.status == 202 && note.text.isEmpty)
    // The same id from two clients at once: each gets its own answer under its own id.
    async let first = Self.send(url, body: Self.call(1, "convertUnits", #"{"value": 1, "from": "km", "to": "m"}"#))
    async let second = Self.send(url, body: Self.call(1, "convertUnits", #"{"value": 2, "from": "km", "to": "m"}"#))
    let (a, b) = try await (first, second)
    #expect(a.status == 200 && b.status == 200, "\(a.text) \(b.text)")
    #expect(a.json?["id"] == 1 && b.json?["id"] == 1)
    #expect(a.json?[path: "result", "structuredContent", "value"]?.doubleValue == 1000, "\(a.text)")
    #expect(b.json?[path: "result", "structuredContent", "value"]?.doubleValue == 2000, "\(b.text)")
    // A tool call that fails is a result with isError, as over stdio.
    let bad = try await Self.send(url, body: Self.call(5, "convertUnits", #"{"value": "x"}"#))
    #expect(bad.status == 200 && bad.json?[path: "result", "isError"] == true)
    await served.stop()
  }

  /// A client's `_meta.traceparent` reaches the plugin as TRACEPARENT; one that is not well-formed does not.
  @Test func theTraceContextReachesThePlugin() async throws {
    let served = try await Served.start(trace: true)
    func call(_ trace: String) async throws -> JSONValue? {
      let body =
        #"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "showTrace", "arguments": {}, "#
        + #""_meta": {"traceparent": "\#(trace)"}}}"#
      return try await Self.send(served.endpoint, body: body).json?[path: "result", "structuredContent", "traceparent"]
    }
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    #expect(try await call(trace) == .string(trace))
    #expect(try await call("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01; rm -rf /") == "none")
    #expect(try await call("00-00000000000000000000000000000000-00f067aa0ba902b7-01") == "none")
    await served.stop()
  }

  /// With --token-env, a request without the token, or with another, is 401; with it, it is served.
  @Test func aBearerTokenGuardsTheEndpoint() async throws {
    let served = try await Served.start(
      extra: ["--token-env", "TOOLHOST_TEST_TOKEN"], environment: ["TOOLHOST_TEST_TOKEN": "open-sesame"])
    let list = #"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#
    let without = try await Self.send(served.endpoint, body: list)
    #expect(without.status == 401 && without.headers["www-authenticate"] == "Bearer")
    let wrong = try await Self.send(
      served.endpoint, headers: ["content-type": "application/json", "authorization": "Bearer nope"], body: list)
    #expect(wrong.status == 401)
    let right = try await Self.send(
      served.endpoint, headers: ["content-type": "application/json", "authorization": "Bearer open-sesame"],
      body: list)
    #expect(right.status == 200 && right.json?[path: "result", "tools"]?.arrayValue?.count == 2, "\(right.text)")
    #expect(!served.server.log.contains("open-sesame"))
    await served.stop()
  }

  /// An address that cannot be bound is a clear error with exit status 126, and nothing is left running.
  @Test func anAddressInUseIsAClearError() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let served = try await Served.start()
    let port = try #require(served.endpoint.split(separator: ":").last?.split(separator: "/").first)
    let environment = served.folder.userEnvironment(hostEnvironment)
    let second = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: binary,
        arguments: ["serve", "--mcp", "--http", "127.0.0.1:\(port)", "--plugins", served.folder.path],
        environment: environment, workingDirectory: served.folder.path, timeout: .seconds(60)))
    #expect(second.termination == .exited(126))
    #expect(second.stderrText.contains("cannot listen on 127.0.0.1:\(port)"), "\(second.stderrText)")
    #expect(second.stderrText.contains("in use"), "\(second.stderrText)")
    await served.stop()
  }

  /// Without --token-env or --no-auth, a token is made and written 0600 to `serve-PORT.token` (under
  /// `~/.local/state/toolhost` here); the log says where it is and how to send it, never the token. Without it a
  /// request is 401 and `/health` says only "ok"; with it both are answered in full; the file is gone once serve
  /// stops.
  @Test func aGeneratedTokenGuardsTheEndpoint() async throws {
    let served = try await Served.start(
      environment: ["XDG_RUNTIME_DIR": "", "XDG_STATE_HOME": ""], generatedToken: true)
    let folder = served.folder.file(".local/state/toolhost")
    let file = folder + "/serve-\(served.port).token"
    let mode = { (path: String) in
      (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }
    #expect(mode(file) == 0o600 && mode(folder) == 0o700, "log: \(served.server.log)")
    let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(token.count == 64)
    let log = served.server.log
    #expect(log.contains(file) && log.contains("Authorization: Bearer $(cat '\(file)')"), "\(log)")
    #expect(!log.contains(token))

    let list = #"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#
    let without = try await Self.send(served.endpoint, body: list)
    #expect(without.status == 401 && without.headers["www-authenticate"] == "Bearer")
    let with = try await Self.send(
      served.endpoint, headers: ["content-type": "application/json", "authorization": "Bearer \(token)"], body: list)
    #expect(with.status == 200 && with.json?[path: "result", "tools"]?.arrayValue?.count == 2, "\(with.text)")

    let health = served.endpoint.replacingOccurrences(of: "/mcp", with: "/health")
    let bare = try await Self.send(health, method: "GET", headers: [:])
    #expect(bare.status == 200 && bare.json == ["status": "ok"], "\(bare.text)")
    let full = try await Self.send(health, method: "GET", headers: ["authorization": "Bearer \(token)"])
    #expect(full.json?["tools"] == 2, "\(full.text)")
    let evil = try await Self.send(
      health, method: "GET", headers: ["authorization": "Bearer \(token)", "origin": "http://evil.example"])
    #expect(evil.status == 403)

    await served.stop()
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  /// --no-auth is refused on an address other machines can reach, and beside --token-env (exit 64).
  @Test func noAuthOnlyOnLoopback() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let folder = TemporaryFolder(prefix: "toolhost-http-test")
    var environment = folder.userEnvironment(hostEnvironment)
    environment["SOME_TOKEN"] = "x"
    for (address, extra) in [("0.0.0.0:0", [String]()), ("[::]:0", []), ("0", ["--token-env", "SOME_TOKEN"])] {
      let outcome = try await ProcessRunner.shared.run(
        ProcessSpec(
          executable: binary,
          arguments: ["serve", "--mcp", "--http", address, "--no-auth", "--plugins", folder.path] + extra,
          environment: environment, workingDirectory: folder.path, timeout: .seconds(60)))
      #expect(outcome.termination == .exited(64), "\(address): \(outcome.stderrText)")
      #expect(outcome.stderrText.contains(extra.isEmpty ? "loopback" : "contradict"), "\(outcome.stderrText)")
    }
  }

  /// Requests whose head never ends (more of them than connections are allowed) do not keep a normal request from
  /// being answered, and are closed after the idle timeout.
  @Test func halfOpenRequestsAreClosed() async throws {
    let served = try await Served.start(extra: ["--idle-timeout", "1", "--max-connections", "4"])
    var stalled: [RawConnection] = []
    for _ in 0..<8 {
      let connection = try RawConnection(port: served.port)
      try connection.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica")
      stalled.append(connection)
    }
    let list = try await Self.send(served.endpoint, body: #"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#)
    #expect(list.status == 200, "\(list.text)")
    for connection in stalled {
      #expect(await connection.readToEnd(within: 60) != nil, "a request without its end was never closed")
    }
    await served.stop()
  }

  /// Over --max-connections, a new connection waits to be accepted until an open one closes.
  @Test func connectionsOverTheLimitWait() async throws {
    let served = try await Served.start(extra: ["--max-connections", "2", "--idle-timeout", "120"])
    let pid = served.server.process.processIdentifier
    func sockets() -> Int {
      let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
      return fds.filter {
        ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "")
          .hasPrefix("socket:")
      }.count
    }
    let listening = sockets()
    let first = try RawConnection(port: served.port)
    let second = try RawConnection(port: served.port)
    let deadline = ContinuousClock.now + .seconds(30)
    while sockets() < listening + 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    let third = try RawConnection(port: served.port)
    try third.post("/mcp", body: #"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#)
    #expect(await third.read(within: 1) == nil, "a third connection was served while two were open")
    first.hangUp()
    let answer = await third.read(until: "\r\n\r\n", within: 30)
    #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
    _ = second
    await served.stop()
  }

  /// Over --max-calls, a tools/call is answered 503 with a JSON-RPC error and Retry-After while the others run; once
  /// they end, calls are taken again.
  @Test func callsOverTheLimitAreRefused() async throws {
    let served = try await Served.start(extra: ["--max-calls", "2"], gate: true)
    let script = served.folder.file("gated/run")
    async let first = Self.send(served.endpoint, body: Self.call(1, "gated", "{}"))
    async let second = Self.send(served.endpoint, body: Self.call(2, "gated", "{}"))
    let deadline = ContinuousClock.now + .seconds(30)
    while ProcessProbe.processes(whoseCommandLine: { $0.contains(script) }).count < 2, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    let third = try await Self.send(served.endpoint, body: Self.call(3, "gated", "{}"))
    #expect(third.status == 503 && third.headers["retry-after"] == "1", "\(third.status) \(third.text)")
    #expect(third.json?["id"] == 3 && third.json?[path: "error", "code"] == -32010, "\(third.text)")
    #expect(ProcessProbe.processes(whoseCommandLine: { $0.contains(script) }).count == 2)
    #expect(FileManager.default.createFile(atPath: served.gate, contents: nil))
    let (a, b) = try await (first, second)
    for reply in [a, b] {
      #expect(reply.status == 200 && reply.json?[path: "result", "structuredContent", "done"] == true, "\(reply.text)")
    }
    let fourth = try await Self.send(served.endpoint, body: Self.call(4, "gated", "{}"))
    #expect(fourth.status == 200 && fourth.json?[path: "result", "isError"] == false, "\(fourth.text)")
    await served.stop()
  }
}
