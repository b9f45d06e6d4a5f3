import Foundation
import Testing
import Toolhost
import ToolhostJSON
import ToolhostMCP
import ToolhostMCPHTTP
import ToolhostTestSupport

/// `MCPHTTPServer` and its token files in this process: options it refuses, and the files it writes.
@Suite("MCP over HTTP: the server in process")
struct HTTPServerTests {
  /// Without a bearer token the server serves only a loopback address; a token folder needs a token.
  @Test func noTokenMeansLoopbackOnly() async throws {
    let server = MCPServer(registry: try ToolRegistry([]))
    await #expect(throws: MCPHTTPServer.ConfigurationError.self) {
      try await MCPHTTPServer(server: server, options: .init(host: "0.0.0.0", port: 0)).run()
    }
    await #expect(throws: MCPHTTPServer.ConfigurationError.self) {
      try await MCPHTTPServer(server: server, options: .init(port: 0, tokenFolder: NSTemporaryDirectory())).run()
    }
    for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"] {
      #expect(MCPHTTPToken.isLoopback(host), "\(host)")
    }
    for host in ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "example.com", "::2", "localhost.example.com"] {
      #expect(!MCPHTTPToken.isLoopback(host), "\(host)")
    }
  }

  /// A generated token is 32 random bytes in hex; its file is 0600 in a 0700 folder, and is removed only while it
  /// holds that token.
  @Test func tokenFiles() throws {
    let token = MCPHTTPToken.generate()
    #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
    #expect(MCPHTTPToken.generate() != token)
    let folder = TemporaryFolder(prefix: "toolhost-token-test")
    let tokens = folder.file("state/toolhost")
    #expect(MCPHTTPToken.defaultFolder(environment: ["XDG_STATE_HOME": folder.file("state")]) == tokens)
    #expect(
      MCPHTTPToken.defaultFolder(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"])
        == "/h/.local/state/toolhost")
    #expect(MCPHTTPToken.defaultFolder(environment: ["XDG_RUNTIME_DIR": folder.path]) == folder.path + "/toolhost")
    let path = try MCPHTTPToken.write(token, port: 8080, in: tokens)
    #expect(path == tokens + "/serve-8080.token")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == token + "\n")
    let mode = { (p: String) in (try? FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? Int) ?? -1
    }
    #expect(mode(path) == 0o600 && mode(tokens) == 0o700)
    MCPHTTPToken.remove(path, token: "another")
    #expect(FileManager.default.fileExists(atPath: path))
    MCPHTTPToken.remove(path, token: token)
    #expect(!FileManager.default.fileExists(atPath: path))
    // A folder that is a link is refused.
    let link = folder.file("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: tokens)
    #expect(throws: MCPHTTPToken.FileError.self) { try MCPHTTPToken.write(token, port: 1, in: link) }
  }
}
