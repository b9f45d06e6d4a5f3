/// Trust (issue 11), through the real binary: an untrusted `./plugins` runs nothing until `toolhost trust`, a changed
/// or added manifest is held back, the user's folder beats the project's, one value per `TOOLHOST_ARG_*` variable,
/// control characters made visible on a terminal, StrictModes-like ownership checks, manifests that are not small
/// regular files, requested secret environment variables, and an invalid config.json.
///
/// Every test builds its own tree in a temporary folder (a project folder, `$XDG_CONFIG_HOME`, a folder of marker
/// files the plugins touch when they run), with explicit modes whatever the umask, and removes it at the end.
import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - The tests

// The tests block while the binary runs; on the main actor they keep Swift's two pool threads free for the async tests
// running beside them.
@MainActor
@Suite("trust", .serialized)
struct TrustTests {
  // MARK: 1. Folders and trust

  /// The project's plugins: a text plugin (projectEcho) and an MCP server (clock, tool projectClock).
  private func makeProject(_ tree: TrustTree) throws {
    try tree.textPlugin(at: "project/plugins/echo", tool: "projectEcho", marker: "echo", output: "project echo ran")
    try tree.clockServer(at: "project/plugins/clock")
  }

  @Test func anUntrustedProjectFolderRunsNothingUntilTrusted() throws {
    let tree = try TrustTree()
    try makeProject(tree)
    let plugins = tree.path("project/plugins")

    // Untrusted: every command says so in one line, and nothing of the folder runs.
    let commands: [(arguments: [String], input: String, status: Int32?)] = [
      (["list"], "", 0),
      (["list", "--json"], "", 0),
      (["describe", "projectEcho"], "", 64),
      (["doctor"], "", nil),
      (["call", "noSuchTool"], "", 64),
      (["call", "projectEcho"], "", 64),
      (["call", "projectClock"], "", 64),
      (["batch"], #"{"id": "a", "tool": "projectEcho", "arguments": {}}"# + "\n", nil),
      (["serve", "--mcp"], "", nil),
    ]
    for (arguments, input, status) in commands {
      let label = arguments.joined(separator: " ")
      let out = try tree.run(arguments, input: input)
      #expect(!out.timedOut, "\(label) did not finish")
      if let status {
        #expect(out.status == status, "\(label): status \(out.status), stderr: \(out.stderrText)")
      }
      #expect(
        out.stderrText.contains("not trusted") && out.stderrText.contains("toolhost trust"),
        "\(label) does not say ./plugins is not trusted: \(out.stderrText)")
      #expect(!out.stdoutText.contains("project echo ran"), "\(label): \(out.stdoutText)")
      #expect(tree.markers.isEmpty, "\(label) ran a plugin of the untrusted folder: \(tree.markers)")
    }
    let untrustedList = try tree.run(["list"])
    #expect(!untrustedList.stdoutText.contains("projectEcho"), "\(untrustedList.stdoutText)")
    let untrusted = try tree.list()
    #expect(!untrusted.toolNames.contains("projectEcho"))
    #expect(untrusted.untrusted.count == 1, "\(untrusted.summary)")
    #expect(untrusted.untrusted.first?["manifests"]?.integerValue == 2, "\(untrusted.summary)")
    let folder = untrusted.untrusted.first?["folder"]?.stringValue ?? ""
    #expect(tree.resolved(folder) == tree.resolved(plugins), "untrusted folder \(folder), expected \(plugins)")

    // toolhost trust shows the manifests, starts nothing and records the folder in a 0600 trust.json.
    let trust = try tree.run(["trust"])
    #expect(trust.status == 0, "\(trust.stdoutText)\(trust.stderrText)")
    #expect(trust.stdoutText.contains("echo/toolhost.json"), "\(trust.stdoutText)")
    #expect(trust.stdoutText.contains("clock/toolhost.json"), "\(trust.stdoutText)")
    #expect(trust.stdoutText.contains("projectEcho"), "\(trust.stdoutText)")
    #expect(tree.markers.isEmpty, "toolhost trust ran something: \(tree.markers)")
    #expect(
      tree.mode("config/toolhost/trust.json") == 0o600,
      "trust.json: mode \(String(describing: tree.mode("config/toolhost/trust.json")))")

    // Trusted: the tools load; list, describe and doctor start no server.
    let trusted = try tree.list()
    #expect(trusted.toolNames.contains("projectEcho"), "\(trusted.summary)")
    #expect(!trusted.stderr.contains("not trusted"), "\(trusted.stderr)")
    #expect(trusted.untrusted.isEmpty, "\(trusted.summary)")
    #expect(trusted.allDiagnostics.filter(TrustListing.isError).isEmpty, "\(trusted.summary)")
    #expect(!trusted.diagnostics("not_started").isEmpty, "no not_started note for the MCP server: \(trusted.summary)")
    let describe = try tree.run(["describe", "projectEcho"])
    #expect(describe.status == 0, "\(describe.stderrText)")
    #expect(describe.stdoutText.contains("A tool of the trust tests."), "\(describe.stdoutText)")
    #expect(try tree.run(["doctor"]).status == 0)
    #expect(tree.markers.isEmpty, "list, describe or doctor ran something: \(tree.markers)")

    // --start-servers starts the server and lists its tool.
    let started = try tree.list(["--start-servers"])
    #expect(tree.hasMarker("clock"), "list --start-servers did not start the server")
    #expect(started.toolNames.contains("projectClock"), "\(started.summary)")
    tree.removeMarkers()

    // Calls: a plain plugin's tool starts no server; a name no plain plugin has starts the servers to find it.
    let echo = try tree.run(["call", "projectEcho"])
    #expect(echo.status == 0, "\(echo.stderrText)")
    #expect(echo.stdoutText.contains("project echo ran"), "\(echo.stdoutText)")
    #expect(tree.hasMarker("echo"))
    #expect(!tree.hasMarker("clock"), "calling a plain plugin's tool started the MCP server")
    let clock = try tree.run(["call", "projectClock"])
    #expect(clock.status == 0, "\(clock.stderrText)")
    #expect(clock.stdoutText.contains("tick"), "\(clock.stdoutText)")
    #expect(tree.hasMarker("clock"))
    tree.removeMarkers()

    // trust --list: the folder, its two manifests, ok.
    let listed = try tree.run(["trust", "--list"])
    #expect(listed.status == 0, "\(listed.stderrText)")
    let line = listed.stdoutText.split(separator: "\n").map(String.init).first { tree.mentions($0, plugins) }
    let rest = line.map { tree.removing(plugins, from: $0) } ?? ""
    #expect(line != nil, "trust --list does not show \(plugins): \(listed.stdoutText)")
    #expect(rest.contains("ok") && rest.contains("2"), "trust --list: \(listed.stdoutText)")

    // A manifest changed since trusting is held back; the others still load.
    try tree.file(
      "project/plugins/echo/toolhost.json", TrustManifest.text("projectEcho", description: "Changed after trusting."))
    let changed = try tree.list()
    #expect(!changed.toolNames.contains("projectEcho"), "\(changed.summary)")
    let changedNotes = changed.diagnostics("untrusted")
    #expect(changedNotes.count == 1, "\(changed.summary)")
    if let note = changedNotes.first {
      let text = TrustListing.text(note)
      #expect(TrustListing.isError(note), "\(note.serialized())")
      #expect(text.contains("echo/toolhost.json"), "\(text)")
      #expect(text.contains("changed since"), "\(text)")
      #expect(text.contains("toolhost trust"), "\(text)")
    }
    #expect(
      !changed.diagnostics("not_started").isEmpty, "the MCP server's manifest should still load: \(changed.summary)")
    #expect(try tree.run(["doctor"]).status == 1)
    let changedCall = try tree.run(["call", "projectEcho"])
    #expect(changedCall.status != 0)
    #expect(!tree.hasMarker("echo"), "the changed manifest's plugin ran")
    let changedList = try tree.run(["trust", "--list"])
    #expect(changedList.stdoutText.contains("changed"), "\(changedList.stdoutText)")

    // A manifest added since trusting is held back too.
    try tree.file("project/plugins/added.toolhost.json", TrustManifest.text("projectAdded", command: "./added.sh"))
    try tree.script("project/plugins/added.sh", "\(tree.touch("added"))\necho added")
    let added = try tree.list()
    #expect(!added.toolNames.contains("projectAdded"), "\(added.summary)")
    let addedNotes = added.diagnostics("untrusted").filter { TrustListing.text($0).contains("added.toolhost.json") }
    #expect(addedNotes.count == 1, "\(added.summary)")
    if let note = addedNotes.first {
      #expect(TrustListing.isError(note))
      #expect(TrustListing.text(note).contains("added since"), "\(TrustListing.text(note))")
    }
    #expect(try tree.run(["call", "projectAdded"]).status != 0)
    // (The call looked for the name in the trusted MCP server too, so "clock" may have run: that is trusted.)
    #expect(!tree.hasMarker("added"), "a manifest added since trusting ran: \(tree.markers)")

    // Trusting again takes the changes; trust.json stays 0600.
    let again = try tree.run(["trust"])
    #expect(again.status == 0, "\(again.stdoutText)\(again.stderrText)")
    #expect(tree.mode("config/toolhost/trust.json") == 0o600)
    let retrusted = try tree.list()
    #expect(retrusted.toolNames.contains("projectEcho") && retrusted.toolNames.contains("projectAdded"))
    #expect(retrusted.diagnostics("untrusted").isEmpty, "\(retrusted.summary)")

    // Revoking makes the folder untrusted again; revoking twice is a usage error.
    let revoke = try tree.run(["trust", "--revoke"])
    #expect(revoke.status == 0, "\(revoke.stdoutText)\(revoke.stderrText)")
    let revoked = try tree.run(["list"])
    #expect(revoked.stderrText.contains("not trusted"), "\(revoked.stderrText)")
    #expect(!revoked.stdoutText.contains("projectEcho"), "\(revoked.stdoutText)")
    let revokedCall = try tree.run(["call", "projectEcho"])
    #expect(revokedCall.status == 64)
    #expect(!tree.hasMarker("echo"))
    let afterList = try tree.run(["trust", "--list"])
    #expect(!tree.mentions(afterList.stdoutText, plugins), "\(afterList.stdoutText)")
    let twice = try tree.run(["trust", "--revoke"])
    #expect(twice.status == 64, "\(twice.stdoutText)\(twice.stderrText)")
    #expect(twice.stderrText.contains("not trusted"), "\(twice.stderrText)")
  }

  /// What a plugin may reach is shown where trust is decided, and a manifest that widens it is held back until
  /// the folder is trusted again (the sandbox is pinned with the rest of the manifest).
  @Test func aWidenedSandboxNeedsTrustAgain() throws {
    let tree = try TrustTree()
    try makeProject(tree)
    let trust = try tree.run(["trust"])
    #expect(trust.status == 0, "\(trust.allText)")
    #expect(
      trust.stdoutText.contains("reaches: confined: no network; reads its folder, the system"), "\(trust.stdoutText)")
    #expect(trust.stdoutText.contains("writes its temporary folder, ~/markers"), "\(trust.stdoutText)")
    #expect(try tree.list().toolNames.contains("projectEcho"))

    var manifest = try JSONValue.parse(TrustManifest.text("projectEcho")).objectValue!
    manifest["sandbox"] = ["network": true, "read": ["~"], "write": ["~/markers"]]
    _ = try tree.file("project/plugins/echo/toolhost.json", JSONValue.object(manifest).serialized())
    let widened = try tree.list()
    #expect(!widened.toolNames.contains("projectEcho"), "\(widened.summary)")
    #expect(!widened.diagnostics("untrusted").isEmpty, "\(widened.summary)")
    let again = try tree.run(["trust"])
    #expect(
      again.stdoutText.contains(
        "reaches: confined: network: any host and port, and local services (D-Bus, a container engine's socket); reads its folder, the system"
      ),
      "\(again.stdoutText)")
    #expect(try tree.list().toolNames.contains("projectEcho"))
    let echo = try tree.run(["call", "projectEcho"])
    #expect(echo.stdoutText.contains("project echo ran"), "\(echo.allText)")
  }

  @Test func trustNeedsManifestsAndSafeFolders() throws {
    let tree = try TrustTree()
    let empty = try tree.folder("project/empty")
    let none = try tree.run(["trust", empty])
    #expect(none.status == 64, "\(none.stdoutText)\(none.stderrText)")
    #expect(none.stderrText.contains("no plugins"), "\(none.stderrText)")

    try tree.textPlugin(at: "project/plugins/echo", tool: "projectEcho", marker: "echo", output: "project echo ran")
    chmod(tree.path("project/plugins"), 0o777)
    let unsafe = try tree.run(["trust"])
    #expect(unsafe.status == 1, "\(unsafe.stdoutText)\(unsafe.stderrText)")
    #expect((unsafe.stdoutText + unsafe.stderrText).contains("chmod"), "\(unsafe.stdoutText)\(unsafe.stderrText)")
    let listed = try tree.run(["trust", "--list"])
    #expect(!tree.mentions(listed.stdoutText, tree.path("project/plugins")), "\(listed.stdoutText)")
    #expect(tree.markers.isEmpty)

    let revoke = try tree.run(["trust", "--revoke", tree.path("project/plugins")])
    #expect(revoke.status == 64, "\(revoke.stdoutText)\(revoke.stderrText)")
    #expect(revoke.stderrText.contains("not trusted"), "\(revoke.stderrText)")
  }

  @Test func listDescribeAndDoctorStartNoServersWithoutStartServers() throws {
    let tree = try TrustTree()
    try tree.clockServer(at: "servers/clock")
    let servers = tree.path("servers")
    for arguments in [["list"], ["list", "--json"], ["describe", "projectClock"], ["doctor"]] {
      let out = try tree.run(arguments + ["--plugins", servers])
      let label = arguments.joined(separator: " ")
      #expect(!out.timedOut, "\(label) did not finish")
      #expect(!tree.hasMarker("clock"), "\(label) started the MCP server")
    }
    let listing = try tree.list(["--plugins", servers])
    #expect(!tree.hasMarker("clock"))
    let notes = listing.diagnostics("not_started")
    #expect(notes.count == 1, "\(listing.summary)")
    if let note = notes.first {
      #expect(!TrustListing.isError(note), "\(note.serialized())")
      #expect(TrustListing.text(note).contains("--start-servers"), "\(TrustListing.text(note))")
    }
    let started = try tree.list(["--plugins", servers, "--start-servers"])
    #expect(tree.hasMarker("clock"), "list --start-servers did not start the server")
    #expect(started.toolNames.contains("projectClock"), "\(started.summary)")
    #expect(started.diagnostics("not_started").isEmpty, "\(started.summary)")
  }

  @Test func theUserFolderBeatsTheProjectFolder() throws {
    let tree = try TrustTree()
    try tree.textPlugin(
      at: "project/plugins/dup", tool: "dupTool", marker: "project", output: "from the project folder")
    try tree.textPlugin(
      at: "config/toolhost/plugins/dup", tool: "dupTool", marker: "user", output: "from the user folder")
    let trust = try tree.run(["trust"])
    #expect(trust.status == 0, "\(trust.stdoutText)\(trust.stderrText)")

    let call = try tree.run(["call", "dupTool"])
    #expect(call.status == 0, "\(call.stderrText)")
    #expect(call.stdoutText.contains("from the user folder"), "\(call.stdoutText)")
    #expect(!call.stdoutText.contains("from the project folder"), "\(call.stdoutText)")
    #expect(call.stderrText.contains("shadows"), "no note that the tool shadows another: \(call.stderrText)")
    #expect(tree.hasMarker("user") && !tree.hasMarker("project"), "\(tree.markers)")

    let listing = try tree.list()
    let manifest = listing.tool("dupTool")?["manifest"]?.stringValue ?? ""
    #expect(tree.mentions(manifest, tree.path("config/toolhost/plugins")), "dupTool comes from \(manifest)")
    #expect(!listing.diagnostics("shadowed").isEmpty, "\(listing.summary)")
  }

  // MARK: 2. One value per variable

  @Test func twoArgumentsForOneVariableAreInvalid() throws {
    let tree = try TrustTree()
    let properties: JSONValue = ["path": ["type": "string"]]
    try tree.file(
      "plugins/dump/toolhost.json",
      TrustManifest.text("envDump", properties: properties, annotations: ["readOnlyHint": true]))
    try tree.script("plugins/dump/run", "\(tree.touch("dump"))\nenv | grep '^TOOLHOST_ARG_' | sort\necho ---\ncat")
    let plugins = tree.path("plugins")

    let clash = try tree.run(["call", "--plugins", plugins, "envDump", "--json", #"{"path": "safe", "Path": "x"}"#])
    #expect(clash.status == 64, "\(clash.stdoutText)\(clash.stderrText)")
    #expect(clash.stderrText.contains("TOOLHOST_ARG_PATH"), "\(clash.stderrText)")
    #expect(clash.stderrText.contains("Path"), "\(clash.stderrText)")
    #expect(!tree.hasMarker("dump"), "the plugin ran with two values for TOOLHOST_ARG_PATH")

    let clashJSON = try tree.run([
      "call", "--json", "--plugins", plugins, "envDump", "--json", #"{"path": "safe", "Path": "x"}"#,
    ])
    #expect(clashJSON.status == 64)
    let error = try? JSONValue.parse(clashJSON.stdoutText)
    #expect(error?["error"]?["code"]?.stringValue == "invalid_arguments", "\(clashJSON.stdoutText)")
    #expect(!tree.hasMarker("dump"))

    // An undeclared property reaches the plugin on stdin only.
    let extra = try tree.run(["call", "--plugins", plugins, "envDump", "--json", #"{"path": "a", "extra": "b"}"#])
    #expect(extra.status == 0, "\(extra.stderrText)")
    #expect(extra.stdoutText.contains("TOOLHOST_ARG_PATH=a"), "\(extra.stdoutText)")
    #expect(!extra.stdoutText.contains("TOOLHOST_ARG_EXTRA"), "\(extra.stdoutText)")
    #expect(extra.stdoutText.contains(#""extra":"b""#), "stdin lost the undeclared argument: \(extra.stdoutText)")
    tree.removeMarkers()

    // batch: the clashing line fails with invalid_arguments, the other runs.
    let batch = try tree.run(
      ["batch", "--plugins", plugins],
      input: #"""
        {"id": "clash", "tool": "envDump", "arguments": {"path": "safe", "Path": "x"}}
        {"id": "fine", "tool": "envDump", "arguments": {"path": "b"}}

        """#)
    #expect(batch.status == 1, "\(batch.stderrText)")
    let lines = batch.stdoutText.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    #expect(lines.count == 2, "\(batch.stdoutText)")
    let clashLine = lines.first { $0["id"]?.stringValue == "clash" }
    #expect(clashLine?["ok"] == false, "\(batch.stdoutText)")
    #expect(clashLine?["error"]?["code"]?.stringValue == "invalid_arguments", "\(batch.stdoutText)")
    #expect(clashLine?["error"]?["message"]?.stringValue?.contains("TOOLHOST_ARG_PATH") == true)
    let fineLine = lines.first { $0["id"]?.stringValue == "fine" }
    #expect(fineLine?["ok"] == true, "\(batch.stdoutText)")
    #expect(fineLine?.serialized().contains("TOOLHOST_ARG_PATH=b") == true, "\(batch.stdoutText)")

    // serve --mcp: an error result, and the plugin does not run.
    tree.removeMarkers()
    let fixture = try Hostile.Fixture()
    let server = try Hostile.serve(plugins: plugins, fixture: fixture)
    defer { server.blockingStop() }
    try server.blockingInitialize()
    try server.sendCall(id: 1, "envDump", ["path": "safe", "Path": "x"])
    let response = server.blockingResponse(to: 1, within: 30)
    #expect(response?["result"]?["isError"] == true, "\(response?.serialized() ?? "no answer; \(server.log)")")
    let text = response?["result"]?["content"]?[0]?["text"]?.stringValue ?? ""
    #expect(text.contains("TOOLHOST_ARG_PATH"), "\(text)")
    #expect(!tree.hasMarker("dump"), "serve --mcp ran the plugin with two values for TOOLHOST_ARG_PATH")
  }

  // MARK: 4. Terminal-safe output

  @Test func controlCharactersAreVisibleOnATerminal() throws {
    let tree = try TrustTree()
    try tree.file(
      "plugins/shout/toolhost.json",
      TrustManifest.text("shout", description: "Prints \u{1B}[31mred\u{1B}[0m text."))
    try tree.script("plugins/shout/run", #"printf '\033]0;pwned\007 hi \033[2J \342\200\256\n'"#)
    let plugins = tree.path("plugins")
    let exact = "\u{1B}]0;pwned\u{07} hi \u{1B}[2J \u{202E}"
    let visible = "^[]0;pwned^G hi ^[[2J <U+202E>"

    let terminal = try tree.runInTerminal(["call", "--plugins", plugins, "shout"])
    #expect(!terminal.timedOut)
    #expect(terminal.status == 0, "\(terminal.stdoutText)")
    #expect(terminal.stdoutText.contains(visible), "\(terminal.stdoutText.debugDescription)")
    #expect(!terminal.stdoutText.contains("\u{1B}]0;pwned"), "\(terminal.stdoutText.debugDescription)")
    #expect(!terminal.stdoutText.contains("\u{1B}[2J"), "\(terminal.stdoutText.debugDescription)")
    #expect(!terminal.stdoutText.contains("\u{202E}"), "\(terminal.stdoutText.debugDescription)")

    let raw = try tree.runInTerminal(["call", "--raw", "--plugins", plugins, "shout"])
    #expect(raw.status == 0, "\(raw.stdoutText)")
    #expect(raw.stdoutText.contains(exact), "--raw: \(raw.stdoutText.debugDescription)")

    let piped = try tree.run(["call", "--plugins", plugins, "shout"])
    #expect(piped.status == 0, "\(piped.stderrText)")
    #expect(piped.stdoutText.contains(exact), "a pipe: \(piped.stdoutText.debugDescription)")

    let describe = try tree.runInTerminal(["describe", "--plugins", plugins, "shout"])
    #expect(describe.status == 0, "\(describe.stdoutText)")
    #expect(describe.stdoutText.contains("^[[31mred^[[0m"), "\(describe.stdoutText.debugDescription)")
    #expect(!describe.stdoutText.contains("\u{1B}[31m"), "\(describe.stdoutText.debugDescription)")
    let list = try tree.runInTerminal(["list", "--plugins", plugins])
    #expect(list.stdoutText.contains("^[[31m"), "\(list.stdoutText.debugDescription)")
    #expect(!list.stdoutText.contains("\u{1B}[31m"), "\(list.stdoutText.debugDescription)")
    let rawDescribe = try tree.runInTerminal(["describe", "--raw", "--plugins", plugins, "shout"])
    #expect(rawDescribe.stdoutText.contains("\u{1B}[31mred"), "\(rawDescribe.stdoutText.debugDescription)")
    let pipedDescribe = try tree.run(["describe", "--plugins", plugins, "shout"])
    #expect(pipedDescribe.stdoutText.contains("\u{1B}[31mred"), "\(pipedDescribe.stdoutText.debugDescription)")
  }

  // MARK: 7. Requested environment

  @Test func requestedSecretsAreNotedUntilApproved() throws {
    let tree = try TrustTree()
    let requested = ["SSH_AUTH_SOCK", "MY_API_KEY", "LANGUAGE_HINT"]
    try tree.file("plugs/envplug/toolhost.json", TrustManifest.text("envTool", env: requested))
    try tree.script("plugs/envplug/run", "echo env")
    let plugins = tree.path("plugs")

    let describe = try tree.run(["describe", "--plugins", plugins, "envTool"])
    #expect(describe.status == 0, "\(describe.stderrText)")
    let environmentLine = describe.stdoutText.split(separator: "\n").first { $0.contains("environment:") }
    #expect(environmentLine != nil, "describe shows no environment line: \(describe.stdoutText)")
    for name in requested {
      #expect(environmentLine?.contains(name) == true, "\(name) is missing: \(describe.stdoutText)")
    }

    let listing = try tree.list(["--plugins", plugins])
    let environment = listing.tool("envTool")?["environment"]?.arrayValue?.compactMap(\.stringValue) ?? []
    #expect(environment.sorted() == requested.sorted(), "\(listing.summary)")
    let secrets = listing.diagnostics("secret_environment")
    #expect(secrets.count == 2, "\(listing.summary)")
    #expect(secrets.allSatisfy { !TrustListing.isError($0) }, "\(listing.summary)")
    for name in ["SSH_AUTH_SOCK", "MY_API_KEY"] {
      #expect(secrets.contains { TrustListing.text($0).contains(name) }, "no note for \(name): \(listing.summary)")
    }
    #expect(!secrets.contains { TrustListing.text($0).contains("LANGUAGE_HINT") }, "\(listing.summary)")
    let doctor = try tree.run(["doctor", "--plugins", plugins])
    #expect(doctor.status == 0, "notes must not fail doctor: \(doctor.stdoutText)\(doctor.stderrText)")
    #expect((doctor.stdoutText + doctor.stderrText).contains("MY_API_KEY"), "\(doctor.stdoutText)")

    try tree.writeConfig(#"{"environment": {"envplug": ["MY_API_KEY"]}}"#)
    let approved = try tree.list(["--plugins", plugins])
    let remaining = approved.diagnostics("secret_environment")
    #expect(remaining.count == 1, "\(approved.summary)")
    #expect(remaining.first.map { TrustListing.text($0).contains("SSH_AUTH_SOCK") } == true, "\(approved.summary)")
  }

  // MARK: Config

  @Test func anInvalidConfigFileIsAUsageError() throws {
    let tree = try TrustTree()
    try tree.textPlugin(at: "plugs/safe", tool: "safeTool", marker: "safe", output: "safe ran")
    let plugins = tree.path("plugs")
    let configs = [
      #"{"strictModes": tru"#,
      #"{"strictModes": "yes"}"#,
      #"{"approvals": {"tools": {"safeTool": "sometimes"}}}"#,
      #"["not", "an", "object"]"#,
    ]
    for config in configs {
      try tree.writeConfig(config)
      for arguments in [["list"], ["doctor"], ["call", "safeTool"]] {
        let out = try tree.run(arguments + ["--plugins", plugins])
        let label = "\(arguments.joined(separator: " ")) with \(config)"
        #expect(out.status == 64, "\(label): status \(out.status)")
        #expect(out.stderrText.contains("config.json"), "\(label): \(out.stderrText)")
      }
    }
    #expect(!tree.hasMarker("safe"), "a plugin ran despite an invalid config.json")
  }
}
