import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

/// The built `toolhost` binary (a path that does not exist when none is built, so that running it fails saying so).
let toolhostBinary = URL(
  fileURLWithPath: TestPackage.toolhostBinary ?? TestPackage.root.appendingPathComponent(".build/debug/toolhost").path)

/// Runs `toolhost ARGS` in the package root with the example plugins only (through `$TOOLHOST_PLUGIN_PATH`: the
/// package's `./plugins` is a project folder, which toolhost uses only once trusted).
func toolhost(
  _ arguments: [String], input: String = "", environment extra: [String: String] = [:], timeout: TimeInterval = 60
) throws -> Subprocess.Output {
  try ExamplePlugins.build()
  var env = ProcessInfo.processInfo.environment
  env["TOOLHOST_PLUGIN_PATH"] = TestPackage.plugins.path
  env["XDG_CONFIG_HOME"] = NSTemporaryDirectory() + "toolhost-cli-test-empty-config"
  // MCP tool lists are kept in a folder of this test process, never in the user's cache.
  env["XDG_CACHE_HOME"] = testCache
  for (k, v) in extra { env[k] = v }
  return try ToolhostProcess.run(arguments, environment: env, in: TestPackage.root, input: input, timeout: timeout)
}

/// The cache folder of the `toolhost` runs of this test process (removed when it ends).
let testCache: String = {
  guard let folder = try? TemporaryFolder.make(prefix: "toolhost-cli-cache") else {
    return NSTemporaryDirectory() + "toolhost-cli-test-cache"
  }
  TemporaryFolder.removeAtExit(folder.path)
  return folder.path
}()

// The tests block while the binary runs; on the main actor they keep Swift's two pool threads free for the
// async tests running beside them.
@MainActor
@Suite("toolhost command line", .serialized)
struct CLITests {
  @Test func listShowsTheExamplePlugins() throws {
    let out = try toolhost(["list"])
    #expect(out.status == 0, "\(out.stderrText)")
    for name in ["getWeather", "searchBreadDatabase", "todoAdd", "describeData"] {
      #expect(out.stdoutText.contains(name))
    }
    let json = try JSONValue.parse(try toolhost(["list", "--json"]).stdoutText)
    let names = json["tools"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    #expect(names.contains("getWeather"))
    #expect(json["tools"]?[0]?["inputSchema"]?["type"] == "object")
    // Only the note that the time MCP server was not started: list starts no process.
    let kinds = json["diagnostics"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
    #expect(kinds == ["not_started"], "\(json["diagnostics"] ?? .null)")
  }

  @Test func brokenPluginsAreListedAndDoctorFails() throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    dir.write("broken/toolhost.json", "{\"manifestVersion\": 1,\n \"command\": }")
    let list = try toolhost(["list", "--plugins", dir.path])
    #expect(list.status == 0)
    #expect(list.stdoutText.contains("getWeather"))
    #expect(list.stdoutText.contains("not valid JSON: line 2"))
    let doctor = try toolhost(["doctor", "--plugins", dir.path])
    #expect(doctor.status == 1)
    #expect(try toolhost(["doctor"]).status == 0)
  }

  /// One output limit from the manifest (`limits.outputMiB`) or `--max-output`, over the 8 MiB default.
  @Test func theOutputLimitComesFromTheManifestOrTheFlag() throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    dir.shTool(
      "twoMiB", body: "head -c 2097152 /dev/zero | tr '\\0' a", extra: #""output": "text", "limits": {"outputMiB": 1}"#)
    let capped = try toolhost(["call", "--plugins", dir.path, "twoMiB"])
    #expect(capped.status == 1)
    #expect(capped.stderrText.contains("printed more than 1 MiB"), "\(capped.stderrText)")
    let raised = try toolhost(["call", "--plugins", dir.path, "--max-output", "3000000", "twoMiB"])
    #expect(raised.status == 0, "\(raised.stderrText)")
    let lowered = try toolhost(["call", "--plugins", dir.path, "--max-output", "1000", "twoMiB"])
    #expect(lowered.status == 1)
    #expect(lowered.stderrText.contains("printed more than 1000 bytes"), "\(lowered.stderrText)")
  }

  /// `--plugins` after the tool's name is one of the tool's flags: the error says so and how to write it.
  @Test func aFolderAfterTheToolsNameIsNamedInTheError() throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    dir.shTool("hello", body: "echo hi", extra: #""output": "text""#)
    let out = try toolhost(["call", "hello", "--plugins", dir.path])
    #expect(out.status == 64)
    #expect(out.stderrText.contains("no tool named hello"), "\(out.stderrText)")
    #expect(out.stderrText.contains("toolhost call --plugins \(dir.path) hello"), "\(out.stderrText)")
    #expect(try toolhost(["call", "--plugins", dir.path, "hello"]).stdoutText == "hi\n")
  }

  @Test func describeShowsEveryArgument() throws {
    let out = try toolhost(["describe", "searchBreadDatabase"])
    #expect(out.status == 0)
    #expect(out.stdoutText.contains("searchTerm: string (required)"))
    #expect(out.stdoutText.contains("1 ≤ value ≤ 6"))
    #expect(out.stdoutText.contains("default: 3"))
    let unknown = try toolhost(["describe", "getWether"])
    #expect(unknown.status == 64)
    #expect(unknown.stderrText.contains("did you mean getWeather"))
  }

  @Test func callGetWeatherForBoston() throws {
    let out = try toolhost(["call", "getWeather", "--city", "Boston"])
    #expect(out.status == 0, "\(out.stderrText)")
    #expect(out.stdoutText.contains("Boston"))
    let json = try toolhost(["call", "--json", "getWeather", "--city", "Boston", "--month", "7"])
    let reply = try JSONValue.parse(json.stdoutText)
    #expect(reply["result"]?["city"] == "Boston")
  }

  @Test func flagsFollowTheSchema() throws {
    let kebab = try toolhost(["call", "searchBreadDatabase", "--search-term", "rye", "--limit", "2"])
    #expect(kebab.status == 0, "\(kebab.stderrText)")
    let camel = try toolhost(["call", "--json", "searchBreadDatabase", "--searchTerm=rye", "--limit=1"])
    #expect(try JSONValue.parse(camel.stdoutText)["result"]?["count"] == 1)
    let notInt = try toolhost(["call", "searchBreadDatabase", "--search-term", "rye", "--limit", "many"])
    #expect(notInt.status == 64)
    #expect(notInt.stderrText.contains("--limit expects an integer"))
    let range = try toolhost(["call", "searchBreadDatabase", "--search-term", "rye", "--limit", "9"])
    #expect(range.status == 64)
    #expect(range.stderrText.contains("/limit: 9 is greater than the maximum 6"))
    let enumBad = try toolhost(["call", "getWeather", "--city", "Oslo", "--units", "kelvin"])
    #expect(enumBad.status == 64)
    #expect(enumBad.stderrText.contains("must be one of celsius, fahrenheit"))
    let missing = try toolhost(["call", "getWeather"])
    #expect(missing.status == 64)
    #expect(missing.stderrText.contains("missing required option --city"))
    let typo = try toolhost(["call", "getWeather", "--cty", "Oslo"])
    #expect(typo.stderrText.contains("did you mean --city?"))
    let help = try toolhost(["call", "getWeather", "--help"])
    #expect(help.status == 0)
    #expect(help.stdoutText.contains("--units <celsius|fahrenheit>"))
    let booleans = try toolhost(
      ["call", "todoList", "--include-done", "--no-include-done"],
      environment: ["HOME": TemporaryFolder(prefix: "toolhost-cli").path])
    #expect(booleans.status == 0, "\(booleans.stderrText)")
  }

  @Test func wholeArgumentObjectFromJSONFileAndStdin() throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    dir.write("args.json", #"{"city": "Tokyo", "month": 1}"#)
    let file = try toolhost(["call", "--json", "getWeather", "--json", "@\(dir.path)/args.json"])
    #expect(try JSONValue.parse(file.stdoutText)["result"]?["city"] == "Tokyo")
    let stdin = try toolhost(["call", "getWeather", "--json", "-"], input: #"{"city": "Lisbon"}"#)
    #expect(stdin.stdoutText.contains("Lisbon"))
    let bad = try toolhost(["call", "getWeather", "--json", "{city: 1}"])
    #expect(bad.status == 64)
    #expect(bad.stderrText.contains("not valid JSON"))
  }

  @Test func exitStatusesAreDistinct() throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    dir.write(
      "slow/toolhost.json",
      #"{"manifestVersion":1,"command":"run","tools":[{"name":"slowTool","description":"sleeps","inputSchema":{"type":"object"}}]}"#
    )
    dir.write("slow/run", "#!/bin/sh\nsleep 30\n", executable: true)
    let timeout = try toolhost(["call", "--plugins", dir.path, "--timeout", "0.3", "slowTool"])
    #expect(timeout.status == 124)
    #expect(timeout.stderrText.contains("timed out after 300 ms"))
    #expect(timeout.stderrText.contains("--timeout raises the limit for one call"))  // the CLI's hint
    let reported = try toolhost(["call", "getWeather", "--city", "Atlantis"])
    #expect(reported.status == 1)
    #expect(reported.stderrText.contains("[unknown_city]"))
    let unknown = try toolhost(["call", "noSuchTool"])
    #expect(unknown.status == 64)
  }

  @Test func schemasWithReferencesAndFilesBesideTheManifest() throws {
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    // A Pydantic-style schema: the fields behind `$ref`s, one of them in a file the plugin ships.
    dir.write(
      "people/toolhost.json",
      ##"""
      {"manifestVersion": 1, "command": "run", "tools": [{"name": "addPerson", "description": "adds a person",
        "inputSchema": {"type": "object", "required": ["person"],
          "properties": {"person": {"$ref": "#/$defs/Person"}, "address": {"$ref": "common.schema.json#/$defs/Address"}},
          "unevaluatedProperties": false,
          "$defs": {"Person": {"type": "object", "required": ["name"], "unevaluatedProperties": false,
            "properties": {"name": {"type": "string", "description": "Full name"}, "age": {"type": "integer", "minimum": 0}}}}}}]}
      """##)
    dir.write(
      "people/common.schema.json",
      #"{"$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}"#)
    dir.write("people/run", "#!/bin/sh\ncat >/dev/null\necho '{\"result\": {\"ok\": true}}'\n", executable: true)
    let describe = try toolhost(["describe", "--plugins", dir.path, "addPerson"])
    #expect(describe.status == 0, "\(describe.stderrText)")
    #expect(describe.stdoutText.contains("person: object (required)"))
    #expect(describe.stdoutText.contains("name: string (required)"))
    #expect(describe.stdoutText.contains("Full name"))
    #expect(describe.stdoutText.contains("age: integer [0 ≤ value]"))
    #expect(!describe.stdoutText.contains("see #/$defs"))
    let help = try toolhost(["call", "--plugins", dir.path, "addPerson", "--help"])
    #expect(help.stdoutText.contains("--person <object>"), "\(help.stdoutText)")
    let ok = try toolhost(
      ["call", "--plugins", dir.path, "addPerson", "--person", #"{"name": "Ada"}"#, "--address", #"{"city": "Oslo"}"#])
    #expect(ok.status == 0, "\(ok.stderrText)")
    let extra = try toolhost(["call", "--plugins", dir.path, "addPerson", "--person", #"{"name": "Ada", "x": 1}"#])
    #expect(extra.status == 64)
    #expect(extra.stderrText.contains("/person: property \"x\" is not allowed"), "\(extra.stderrText)")
    let noCity = try toolhost([
      "call", "--plugins", dir.path, "addPerson", "--person", #"{"name": "Ada"}"#, "--address", "{}",
    ])
    #expect(noCity.status == 64)
    #expect(noCity.stderrText.contains("missing required property \"city\""), "\(noCity.stderrText)")
    // A reference out of the plugin's folder, or to the network, is a clear diagnostic, and the tool is not offered.
    dir.write(
      "escape/toolhost.json",
      #"{"manifestVersion": 1, "command": "run", "tools": [{"name": "escapeTool", "description": "d", "inputSchema": {"type": "object", "$ref": "../people/common.schema.json"}}, {"name": "netTool", "description": "d", "inputSchema": {"type": "object", "$ref": "https://example.com/s.json"}}]}"#
    )
    dir.write("escape/run", "#!/bin/sh\n", executable: true)
    let doctor = try toolhost(["doctor", "--plugins", dir.path])
    #expect(doctor.stdoutText.contains("is outside the plugin's folder"), "\(doctor.stdoutText)\(doctor.stderrText)")
    #expect(doctor.stdoutText.contains("never fetched over the network"))
  }

  @Test func batchRunsNDJSONInInputOrder() throws {
    let input = """
      {"id": "a", "tool": "getWeather", "arguments": {"city": "Boston"}}
      {"id": "b", "tool": "getWeather", "arguments": {"city": "Atlantis"}}
      not json
      {"id": "d", "tool": "searchBreadDatabase", "arguments": {"searchTerm": "rye", "limit": 1}}
      """
    let out = try toolhost(["batch", "--concurrency", "4"], input: input)
    #expect(out.status == 1)
    let lines = try out.stdoutText.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    #expect(lines.count == 4)
    #expect(lines.map { $0["index"] } == [0, 1, 2, 3])
    #expect(lines[0]["id"] == "a" && lines[0]["ok"] == true)
    #expect(lines[1]["ok"] == false && lines[1]["error"]?["code"] == "tool_error")
    #expect(lines[2]["error"]?["code"] == "bad_request")
    #expect(lines[3]["result"]?["count"] == 1)
  }

  @Test func interruptEndsTheRunningPluginAndExits130() throws {
    try ExamplePlugins.build()
    let dir = TemporaryFolder(prefix: "toolhost-cli")
    dir.write(
      "hang/toolhost.json",
      #"{"manifestVersion":1,"command":"run","sandbox":{"write":["../out/"]},"tools":[{"name":"hangTool","description":"hangs","inputSchema":{"type":"object"}}]}"#
    )
    dir.write("hang/run", "#!/bin/sh\necho $$ > \(dir.path)/out/pid\nsleep 100 &\nsleep 100\n", executable: true)
    let process = Process()
    process.executableURL = toolhostBinary
    process.arguments = ["call", "--plugins", dir.path, "hangTool"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    var pid: Int32?
    for _ in 0..<100 where pid == nil {
      Thread.sleep(forTimeInterval: 0.05)
      pid = (try? String(contentsOfFile: dir.path + "/out/pid", encoding: .utf8))
        .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
    #expect(pid != nil)
    kill(process.processIdentifier, SIGINT)
    let deadline = Date().addingTimeInterval(5)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    #expect(process.terminationStatus == 130)
    if let pid {
      // Nothing of the plugin's process group is left: no live member, and within 3 s no zombie either
      // (orphans belong to PID 1, which reaps them in its own time).
      var gone = false
      for _ in 0..<60 where !gone {
        gone = kill(-pid, 0) != 0
        if !gone { Thread.sleep(forTimeInterval: 0.05) }
      }
      #expect(gone, "the plugin's process group \(pid) is still there")
    }
  }
}
