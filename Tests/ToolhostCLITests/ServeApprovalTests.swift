/// Approvals (issue 11) through `toolhost serve --mcp`: which tool calls an MCP client may make without a person
/// saying yes.
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("approvals: toolhost serve --mcp")
struct ServeApprovalTests {
  /// The text of an MCP tool result.
  static func text(_ result: JSONValue) -> String { result["content"]?[0]?["text"]?.stringValue ?? result.serialized() }

  @Test func askModeToolsAreWithheldWithoutYes() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await fixture.withServe(["serve", "--mcp", "--plugins", fixture.tools]) { server in
      let names = try await server.toolNames(id: 1)
      #expect(names.contains("readNote"), "\(names); log: \(server.log)")
      #expect(!names.contains("appendNote"), "an ask-mode tool is listed: \(names)")

      let refused = try await server.call(id: 2, "appendNote", ["text": "hello"])
      #expect(refused["isError"] == true, "\(refused.serialized())")
      // The client is told only that the user did not approve; the user is told how (on the server's stderr).
      #expect(Self.text(refused).contains("has not approved appendNote"), "\(Self.text(refused))")
      #expect(!Self.text(refused).contains("config.json") && !Self.text(refused).contains("--yes"))
      #expect(server.log.contains("serve --mcp --yes serves the ones that ask"), "\(server.log)")
      #expect(fixture.notesText == nil, "appendNote ran without approval")

      let read = try await server.call(id: 3, "readNote", [:])
      #expect(read["isError"] != true, "\(read.serialized()); log: \(server.log)")
      #expect(fixture.readerRan, "readNote did not run")
    }
  }

  @Test func yesServesAskModeTools() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try await fixture.withServe(["serve", "--mcp", "--yes", "--plugins", fixture.tools]) { server in
      let names = try await server.toolNames(id: 1)
      #expect(names.contains("appendNote") && names.contains("readNote"), "\(names); log: \(server.log)")
      let result = try await server.call(id: 2, "appendNote", ["text": "hello"])
      #expect(result["isError"] != true, "\(result.serialized()); log: \(server.log)")
      #expect(fixture.notesText == "hello\n", "notes: \(fixture.notesText ?? "none")")
    }
  }

  @Test func denyToolsAreNeverServed() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try fixture.writeConfig(#"{"approvals": {"tools": {"appendNote": "deny"}}}"#)
    try await fixture.withServe(["serve", "--mcp", "--yes", "--plugins", fixture.tools]) { server in
      let names = try await server.toolNames(id: 1)
      #expect(names.contains("readNote"), "\(names); log: \(server.log)")
      #expect(!names.contains("appendNote"), "a deny tool is listed: \(names)")
      let refused = try await server.call(id: 2, "appendNote", ["text": "hello"])
      #expect(refused["isError"] == true, "\(refused.serialized())")
      #expect(fixture.notesText == nil, "a deny tool ran")
    }
  }
}
