import Foundation
import Testing
import ToolhostCommandLine
import ToolhostCore
import ToolhostJSON

@Suite("What toolhost trust and the approval prompt show")
struct TrustSummaryTests {
  func lines(_ manifest: String, config: String = "{}", path: String = "/p/runner/toolhost.json") throws -> [String] {
    let configuration = try UserConfiguration.parse(JSONValue.parse(config), path: "/c/config.json")
    return TrustSummary.lines(
      of: Array(manifest.utf8), path: path, configuration: configuration, searchPath: "/usr/bin")
  }

  @Test func eachToolShowsItsWholeCommandLineAndWhetherItAsks() throws {
    let manifest = #"""
      {"manifestVersion": 1, "command": "/usr/bin/env", "output": "text",
       "tools": [
         {"name": "whoami", "description": "d", "args": ["sh", "-c", "id > /tmp/it's here"],
          "inputSchema": {"type": "object"}},
         {"name": "peek", "description": "d", "annotations": {"readOnlyHint": true},
          "inputSchema": {"type": "object"}}]}
      """#
    let shown = try lines(manifest).joined(separator: "\n")
    #expect(shown.contains("runs: /usr/bin/env\n"), "\(shown)")
    #expect(
      shown.contains(#"tool whoami: runs /usr/bin/env sh -c 'id > /tmp/it'\''s here'; asks before it runs"#),
      "\(shown)")
    #expect(shown.contains("tool peek: runs without asking when a model calls it (marked read-only)"), "\(shown)")
    let ruled = try lines(manifest, config: #"{"approvals": {"tools": {"whoami": "auto"}}}"#).joined(separator: "\n")
    #expect(ruled.contains("tool whoami: runs /usr/bin/env sh -c"), "\(ruled)")
    #expect(ruled.contains("; runs without asking when a model calls it (set by approvals.tools"), "\(ruled)")
  }

  @Test func aRemoteServersTokenIsShownAndWarnedAbout() throws {
    let manifest = #"{"manifestVersion": 1, "mcp": {"url": "https://tools.example/mcp", "bearerTokenEnv": "MY_VAR"}}"#
    let shown = try lines(manifest, path: "/p/remote/toolhost.json").joined(separator: "\n")
    #expect(shown.contains("sends the value of MY_VAR to https://tools.example/mcp as its bearer token"), "\(shown)")
    #expect(shown.contains("environment: MY_VAR"), "\(shown)")
    #expect(shown.contains("warning: it asks for MY_VAR"), "\(shown)")
    #expect(shown.contains("its tools: ask before they run"), "\(shown)")
    let approved = try lines(
      manifest, config: #"{"environment": {"remote": ["MY_VAR"]}}"#, path: "/p/remote/toolhost.json")
    #expect(!approved.joined().contains("warning"), "\(approved)")
  }

  @Test func anMCPManifestsDeclaredApprovalsShowWhereTheyComeFrom() throws {
    let manifest = #"""
      {"manifestVersion": 1,
       "mcp": {"name": "time", "command": "/bin/cat", "approvals": {"get_current_time": "auto", "convert_time": "auto"}}}
      """#
    let path = "/p/time-mcp/toolhost.json"
    let shown = try lines(manifest, path: path).joined(separator: "\n")
    #expect(
      shown.contains(
        "tool get_current_time (when the server lists it): runs without asking when a model calls it (declared by "
          + #"the trusted manifest /p/time-mcp/toolhost.json, mcp.approvals "get_current_time")"#), "\(shown)")
    #expect(shown.contains("tool convert_time (when the server lists it): runs without asking"), "\(shown)")
    #expect(shown.contains("its other tools: ask before they run"), "\(shown)")
    // The user's rule over the declaration, shown as the user's.
    let ruled = try lines(manifest, config: #"{"approvals": {"tools": {"convert_time": "deny"}}}"#, path: path)
      .joined(separator: "\n")
    #expect(
      ruled.contains(
        #"tool convert_time (when the server lists it): never runs (set by approvals.tools "convert_time""#),
      "\(ruled)")
    #expect(ruled.contains("tool get_current_time (when the server lists it): runs without asking"), "\(ruled)")
    // "*" covers the tools the manifest does not name.
    let star = try lines(
      #"{"manifestVersion": 1, "mcp": {"command": "/bin/cat", "approvals": {"*": "deny"}}}"#, path: path
    ).joined(separator: "\n")
    #expect(
      star.contains(
        #"its tools: never runs (declared by the trusted manifest /p/time-mcp/toolhost.json, mcp.approvals "*")"#),
      "\(star)")
  }

  /// Every argument by name, each value cut on its own: a padded first argument can hide neither the next one nor
  /// the tool's name (the whole JSON text was cut at 300 characters, in the model's key order).
  @Test func theApprovalPromptShowsEveryArgumentByName() {
    let padded =
      #"{"text": ""# + String(repeating: " ", count: 10_000) + #"x", "note": ""# + String(repeating: "a", count: 500)
      + #"", "path": "~/.bashrc"}"#
    let text = ApprovalPrompt.text(
      tool: "cleanup", origin: "/p/cleaner", reason: "marked destructive", argumentsJSON: padded)
    #expect(text.hasPrefix("cleanup from /p/cleaner asks before it runs (marked destructive).\n"), "\(text)")
    #expect(text.contains("\n  text: \"⟨10000 spaces⟩x\"\n"), "\(text)")
    #expect(text.contains("\n  note: \"" + String(repeating: "a", count: 119) + "… (382 more characters)\n"), "\(text)")
    #expect(text.contains("\n  path: \"~/.bashrc\"\n"), "\(text)")
    #expect(text.count < 800, "\(text.count) characters")
    #expect(
      text.hasSuffix("Run cleanup? [y]es, [n]o, always (run it from now on), or [v]iew the arguments whole: "),
      "\(text)")
    // A long name is never cut; nothing shortened means nothing to view.
    let name = String(repeating: "n", count: 300)
    let plain = ApprovalPrompt.text(tool: "t", origin: nil, reason: "r", argumentsJSON: "{\"\(name)\": 1}")
    #expect(plain.contains("  \(name): 1\n") && plain.hasSuffix("Run t? [y]es, [n]o, always (run it from now on): "))
    #expect(ApprovalPrompt.text(tool: "t", origin: nil, reason: "r", argumentsJSON: "{}").contains("  no arguments\n"))
    #expect(ApprovalPrompt.text(tool: "t", origin: nil, reason: "r", argumentsJSON: "[1").contains("  arguments: [1\n"))
    // Control and bidi characters in names and values are shown, never obeyed: raw (not JSON, shown whole) or
    // escaped in JSON text (a name decoded, a value as JSON writes it).
    let raw = ApprovalPrompt.text(
      tool: "cleanup", origin: nil, reason: "r", argumentsJSON: "{\"a\u{1B}\": \"\u{1B}[2J\u{202E}\"}")
    #expect(raw.contains("a^[\": \"^[[2J<U+202E>\"") && !raw.contains("\u{1B}"), "\(raw)")
    let escaped = ApprovalPrompt.text(
      tool: "cleanup", origin: nil, reason: "r", argumentsJSON: #"{"a\u001b\u202e": "x\u202ey"}"#)
    #expect(escaped.contains("  a^[<U+202E>: \"x<U+202E>y\"\n"), "\(escaped)")
    #expect(!escaped.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "\(escaped)")
    // "v" shows them whole, made visible, then asks again.
    let whole = ApprovalPrompt.wholeArguments(tool: "cleanup", argumentsJSON: padded)
    #expect(whole.contains("  note (502 characters):\n    \"" + String(repeating: "a", count: 500) + "\""), "\(whole)")
    #expect(whole.contains("  text (10003 characters):") && whole.hasSuffix("(run it from now on): "), "\(whole)")
    #expect(ApprovalPrompt.asksToView("v") && ApprovalPrompt.asksToView("view") && !ApprovalPrompt.asksToView("y"))
  }
}
