import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension ApprovalCLITests {
  /// A padded first argument hides neither the path after it nor the tool's name: every argument is shown by name,
  /// each value cut on its own; "v" shows them whole, then the question comes again and is answered.
  @Test func aTerminalShowsEveryArgumentAndTheWholeOnView() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    try fixture.write(
      "tools/writer/toolhost.json",
      JSONValue.object([
        "manifestVersion": 1, "command": "./run", "output": "text",
        "tools": [
          [
            "name": "writeFile", "description": "Writes a file.",
            "inputSchema": [
              "type": "object", "properties": ["text": ["type": "string"], "path": ["type": "string"]],
            ],
          ]
        ],
      ]).serialized())
    try fixture.write("tools/writer/run", "#!/bin/sh\necho written >> '\(fixture.notes)'\necho written\n", mode: 0o755)
    let padding = String(repeating: " ", count: 3000) + String(repeating: "x", count: 400)
    let rules = """
      rules:
        - name: write
          when: {turn: 1}
          respond:
            tool_calls:
              - {name: writeFile, arguments: {text: "\(padding)", path: "~/.bashrc"}}
        - name: done
          when: {turn: 2}
          respond: {content: "Done."}
      """
    try await FakeLLM.with(rules: rules) { server in
      let command = [
        try TestPackage.requireToolhostBinary(), "ask", "--plugins", fixture.path("tools"), "--base-url",
        server.baseURL, "--model", "cli-model", "Write it",
      ]
      let out = try await Subprocess.runWithoutBlocking(
        executable: URL(fileURLWithPath: "/usr/bin/env"),
        arguments: Terminal.command(
          command,
          typing: [("or [v]iew the arguments whole: ", "v\n"), ("characters):", ""), ("(run it from now on): ", "n\n")]),
        environment: fixture.environment, workingDirectory: fixture.work, timeout: 120
      ).finished()
      let shown = out.stdoutText
      #expect(shown.contains("  path: \"~/.bashrc\""), "\(shown)")
      #expect(shown.contains("  text: \"⟨3000 spaces⟩" + String(repeating: "x", count: 10)), "\(shown)")
      #expect(shown.contains("more characters)"), "\(shown)")
      // Viewed whole: the value's every character, then the question again, answered "n".
      #expect(shown.contains("  text (3402 characters):"), "\(shown)")
      #expect(shown.contains(String(repeating: "x", count: 400) + "\""), "\(shown)")
      #expect(shown.components(separatedBy: "Run writeFile? [y]es, [n]o, always").count == 3, "\(shown)")
      #expect(fixture.notesText == nil, "the tool ran although the user said no")
    }
  }

  @Test func theModelIsToldOnlyThatTheUserDidNotApprove() async throws {
    let fixture = try ApprovalFixture()
    defer { fixture.remove() }
    let rules = ApprovalFixture.appendNoteRules(text: "hello")
    try await FakeLLM.with(rules: rules) { server in
      let refused = try await fixture.toolhost(["ask", "--plugins", fixture.tools, "Note it"], server: server)
      #expect(refused.status == 0, "\(refused.allText)\nserver:\n\(server.log)")
      // The user is told how to allow it ...
      #expect(
        refused.stderrText.contains("--yes") && refused.stderrText.contains("config.json"), "\(refused.stderrText)")
      // ... the model only that the user did not approve.
      let requests = try server.requests()
      let toolMessages = requests.last.flatMap { $0["messages"] as? [[String: Any]] }?.filter {
        $0["role"] as? String == "tool"
      }
      let told = toolMessages?.compactMap { $0["content"] as? String }.joined() ?? ""
      #expect(told.contains("the user has not approved running appendNote"), "\(told)")
      #expect(!told.contains("config.json") && !told.contains("\"auto\"") && !told.contains("--yes"), "\(told)")
    }
  }
}
