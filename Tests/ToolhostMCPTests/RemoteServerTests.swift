import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostMCPHTTP
import ToolhostTestSupport

@testable import ToolhostMCP

#if canImport(Glibc)
  import Glibc
#endif

/// Remote MCP servers over Streamable HTTP as plugins (`"mcp": {"url": …, "bearerTokenEnv": …}`): the official SDK's
/// HTTP server, and another toolhost's `serve --mcp --http`.
@Suite("Remote MCP servers over HTTP")
struct RemoteServerTests {
  /// A port nobody listens on right now.
  static func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(fd, pointer, length)
        return getsockname(fd, pointer, &length)
      }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  func remoteManifest(_ url: String, token: String? = nil, startup: Double = 10) -> String {
    """
    {"manifestVersion": 1, "timeout": 5,
     "mcp": {"url": "\(url)", "name": "far", "startupTimeout": \(startup)\(token.map { ", \"bearerTokenEnv\": \"\($0)\"" } ?? "")}}
    """
  }

  func discover(_ folder: TemporaryFolder, environment: [String: String] = hostEnvironment) async -> PluginCatalog {
    await PluginCatalog.discover(
      folders: [folder.path], environment: environment, mcp: MCPPlugins.Loader(remote: MCPHTTPClientTransport.remote))
  }

  /// The SDK's own HTTP server (both eras, answers as event streams): toolhost finds it speaks 2026-07-28, lists its
  /// tool and calls it.
  @Test(.enabled(if: Peers.pythonMCPClient, "\(Peers.missingMessage)"))
  func theSDKsHTTPServer() async throws {
    let python = try #require(Peers.python3)
    let port = Self.freePort()
    let peer = Process()
    peer.executableURL = URL(fileURLWithPath: python)
    peer.arguments = [Paths.erasPeer, "server", "http", "\(port)"]
    try Subprocess.withUnblockedSignals { try peer.run() }
    defer {
      kill(peer.processIdentifier, SIGKILL)
      peer.waitUntilExit()
    }
    let connection = MCPServerConnection(
      MCPServerConfiguration(
        name: "sdk", executable: "http://127.0.0.1:\(port)/mcp", startupTimeout: .seconds(10),
        transport: MCPHTTPClientTransport.opener(.init(url: "http://127.0.0.1:\(port)/mcp"))))
    // The server takes a moment to listen; until then the handshake fails at once.
    var info: MCPServerInfo?
    for _ in 0..<100 where info == nil {
      info = try? await connection.start()
      if info == nil { try await Task.sleep(for: .milliseconds(100)) }
    }
    #expect(info?.protocolVersion == "2026-07-28")
    #expect(try await connection.listTools().map(\.name) == ["echo"])
    let output = try await connection.callTool("echo", arguments: ["text": "over http"], timeout: .seconds(10))
    #expect(output.value?["echoed"] == "over http")
    #expect(connection.processID == nil)
    await connection.shutdown()
  }

  /// Another toolhost serving over HTTP, reached as a plugin: its tools are listed and called; a wrong token and a
  /// server that is gone are clear errors at once; a call over its time limit times out.
  @Test(.enabled(if: TestPackage.toolhostBinary != nil, "needs the toolhost binary: swift build (or set TOOLHOST_BIN)"))
  func anotherToolhostAsAPlugin() async throws {
    let served = try await HTTPServeTests.Served.start(
      extra: ["--token-env", "SERVE_TOKEN"], environment: ["SERVE_TOKEN": "s3cret"], slow: true)
    let folder = TemporaryFolder(prefix: "toolhost-remote-test")
    folder.plugin("far", manifest: remoteManifest(served.endpoint, token: "FAR_TOKEN"))
    var environment = hostEnvironment
    environment["FAR_TOKEN"] = "s3cret"
    let catalog = await discover(folder, environment: environment)
    #expect(!catalog.hasErrors, "\(catalog.diagnostics)")
    #expect(Set(catalog.entries.map(\.tool.name)) == ["convertUnits", "getWeather", "slowAnswer"])
    let registry = catalog.registry()
    let converted = try await registry.call("convertUnits", arguments: ["value": 2, "from": "km", "to": "m"])
    #expect(converted.value?["value"]?.doubleValue == 2000)
    // The manifest's 5 s is the limit unless the call sets one; the slow tool takes 3 s.
    let started = ContinuousClock.now
    await #expect {
      _ = try await registry.call(
        "slowAnswer", arguments: [:], context: ToolCallContext(timeout: .milliseconds(500)))
    } throws: { error in
      (error as? ToolCallError)?.failure == .timedOut(limit: .milliseconds(500))
    }
    #expect(ContinuousClock.now - started < .seconds(2.5))
    await catalog.shutdown()

    environment["FAR_TOKEN"] = "wrong"
    let refused = await discover(folder, environment: environment)
    #expect(refused.entries.isEmpty)
    let why = refused.diagnostics.map(\.message).joined(separator: "\n")
    #expect(why.contains("HTTP 401") && why.contains("bearer token"), "\(why)")
    #expect(!why.contains("s3cret") && !why.contains("wrong"), "\(why)")

    environment["FAR_TOKEN"] = nil
    let unset = await discover(folder, environment: environment)
    #expect(unset.diagnostics.contains { $0.message.contains("FAR_TOKEN") && $0.isError }, "\(unset.diagnostics)")

    await served.stop()
    environment["FAR_TOKEN"] = "s3cret"
    let gone = ContinuousClock.now
    let unreachable = await discover(folder, environment: environment)
    #expect(ContinuousClock.now - gone < .seconds(5))
    #expect(
      unreachable.diagnostics.contains { $0.message.contains("cannot reach") }, "\(unreachable.diagnostics)")
  }

  /// A remote server that answers with a redirect is an error naming the status and where it points; nothing is
  /// sent there (the tool's arguments and token would go to another address).
  @Test func aRedirectIsNotFollowed() async throws {
    let target = try CannedHTTPServer(status: "200 OK", headers: ["Content-Type": "application/json"], body: "{}")
    let location = "http://127.0.0.1:\(target.port)/mcp"
    let redirect = try CannedHTTPServer(status: "308 Permanent Redirect", headers: ["Location": location])
    defer {
      target.stop()
      redirect.stop()
    }
    let folder = TemporaryFolder(prefix: "toolhost-remote-test")
    folder.plugin("far", manifest: remoteManifest("http://127.0.0.1:\(redirect.port)/mcp"))
    let catalog = await discover(folder)
    let why = catalog.diagnostics.map(\.message).joined(separator: "\n")
    #expect(catalog.entries.isEmpty)
    #expect(why.contains("HTTP 308") && why.contains(location) && why.contains("final address"), "\(why)")
    #expect(target.requests == 0, "the request was sent where the redirect pointed")
    #expect(redirect.requests > 0)
    await catalog.shutdown()
  }

  /// What a manifest may not say: a token over plain HTTP to another machine, a command beside a URL, a URL that
  /// is not HTTP.
  @Test func remoteManifestsAreChecked() async throws {
    let folder = TemporaryFolder(prefix: "toolhost-remote-test")
    folder.plugin("clear", manifest: remoteManifest("http://tools.example/mcp", token: "T"))
    folder.plugin(
      "both",
      manifest: #"{"manifestVersion": 1, "mcp": {"url": "https://tools.example/mcp", "command": "x"}}"#)
    folder.plugin("ftp", manifest: remoteManifest("ftp://tools.example/mcp"))
    let catalog = await discover(folder)
    let messages = catalog.diagnostics.filter(\.isError).map(\.message)
    #expect(messages.count == 3, "\(messages)")
    #expect(messages.contains { $0.contains("in the clear") }, "\(messages)")
    #expect(messages.contains { $0.contains("cannot also have \"command\"") }, "\(messages)")
  }
}
