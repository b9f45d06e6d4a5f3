import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

@Suite("Manifests and discovery")
struct DiscoveryTests {
  @Test func embeddedSchemasMatchTheSchemasFolder() throws {
    for (name, embedded) in [
      ("manifest", EmbeddedSchemas.manifest), ("request", EmbeddedSchemas.request), ("reply", EmbeddedSchemas.reply),
    ] {
      let file = try String(contentsOfFile: "\(TestPackage.root.path)/schemas/\(name).schema.json", encoding: .utf8)
      #expect(
        try JSONValue.parse(file) == JSONValue.parse(embedded),
        "schemas/\(name).schema.json changed: run scripts/embed-schemas")
      _ = try JSONSchema(JSONValue.parse(embedded))
    }
  }

  @Test func exampleManifestsAreValid() async throws {
    let catalog = await PluginCatalog.discover(folders: [TestPackage.plugins.path])
    let manifestKinds: Set<PluginDiagnostic.Kind> = [.invalidJSON, .schemaViolation, .badToolName, .unsupportedSchema]
    let schemaProblems = catalog.diagnostics.filter { manifestKinds.contains($0.kind) }
    #expect(schemaProblems.isEmpty, "\(schemaProblems)")
    #expect(catalog.entries.contains { $0.tool.name == "getWeather" })
  }

  @Test func aBrokenPluginNeverHidesTheGoodOnes() async throws {
    let folder = TemporaryFolder()
    folder.shTool("good", body: #"echo '{"result": 1}'"#)
    folder.plugin(
      "badjson", manifest: "{\n  \"manifestVersion\": 1,\n  \"command\": \"run\",,\n}", script: "#!/bin/sh\n")
    folder.plugin(
      "violation",
      manifest:
        #"{"manifestVersion": 1, "command": "run", "tools": [{"name": "v", "inputSchema": {"type": "object"}}]}"#,
      script: "#!/bin/sh\n")
    folder.plugin("missing", manifest: TemporaryFolder.manifest(tool: "missingTool"))
    let noexec = folder.plugin("noexec", manifest: TemporaryFolder.manifest(tool: "noexecTool"))
    _ = FileManager.default.createFile(atPath: noexec + "/run", contents: Data("#!/bin/sh\n".utf8))
    folder.plugin("badname", manifest: TemporaryFolder.manifest(tool: "bad name!"), script: "#!/bin/sh\n")
    folder.shTool(
      "unsupported", body: "true", schema: #"{"type":"object","$ref":"https://example.com/s.json"}"#)

    let catalog = await folder.catalog()
    #expect(catalog.tools.map(\.name) == ["good"])
    let kinds = Dictionary(grouping: catalog.diagnostics, by: { ($0.path as NSString).pathComponents.suffix(2).first! })
    #expect(kinds["badjson"]?.first?.kind == .invalidJSON)
    #expect(kinds["badjson"]?.first?.message.contains("line 3") == true)
    #expect(kinds["violation"]?.first?.kind == .schemaViolation)
    #expect(kinds["violation"]?.first?.message.contains("/tools/0") == true)
    #expect(kinds["violation"]?.first?.message.contains("description") == true)
    #expect(kinds["missing"]?.first?.kind == .commandMissing)
    #expect(kinds["noexec"]?.first?.kind == .commandNotExecutable)
    #expect(kinds["noexec"]?.first?.message.contains("chmod +x") == true)
    #expect(kinds["badname"]?.first?.kind == .badToolName)
    #expect(kinds["unsupported"]?.first?.kind == .unsupportedSchema)
    #expect(kinds["unsupported"]?.first?.message.contains("never fetched over the network") == true)
    #expect(catalog.hasErrors)
  }

  @Test func theFirstFolderWinsAndTheOtherIsReportedAsShadowed() async throws {
    let first = TemporaryFolder()
    let second = TemporaryFolder()
    first.shTool("same", body: #"echo '{"result": "first"}'"#)
    second.shTool("same", body: #"echo '{"result": "second"}'"#)
    let catalog = await PluginCatalog.discover(folders: [first.path, second.path])
    #expect(catalog.entries.count == 1)
    #expect(catalog.entries[0].folder == first.path)
    #expect(catalog.diagnostics.count == 1)
    #expect(catalog.diagnostics[0].kind == .shadowed)
    #expect(!catalog.diagnostics[0].isError)
    #expect(!catalog.hasErrors)
  }

  @Test func oneExecutableMayProvideSeveralTools() async throws {
    let folder = TemporaryFolder()
    folder.plugin(
      "multi",
      manifest: """
        {"manifestVersion": 1, "command": "./run", "tools": [
          {"name": "alpha", "description": "a", "inputSchema": {"type": "object"}},
          {"name": "beta", "description": "b", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}}]}
        """,
      script: "#!/bin/sh\necho \"{\\\"result\\\": \\\"$TOOLHOST_TOOL\\\"}\"\n")
    folder.plugin("single", manifest: "")
    let catalog = await folder.catalog()
    #expect(catalog.tools.map(\.name) == ["alpha", "beta"])
    #expect(catalog.tools[1].annotations.isDestructive)
  }

  /// A tool's `examples` (issue 49): read from the manifest, joined by its input schema's own `examples` keyword
  /// (the form an MCP server gives), and checked against the input schema at discovery.
  @Test func aToolsExamplesComeFromItsManifestAndItsSchema() async throws {
    let folder = TemporaryFolder()
    let schema =
      #"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"examples":[{"city":"Oslo"}]}"#
    folder.shTool(
      "forecast", body: #"echo '{"result": 1}'"#, schema: schema,
      toolExtra: #""examples": [{"prompt": "Weather in Lima?", "arguments": {"city": "Lima"}}]"#)
    folder.shTool(
      "broken", body: #"echo '{"result": 1}'"#, schema: schema,
      toolExtra: #""examples": [{"prompt": "Weather?", "arguments": {"town": "Lima"}}]"#)
    folder.shTool(
      "shapeless", body: #"echo '{"result": 1}'"#, toolExtra: #""examples": [{"prompt": "Weather?"}]"#)
    let catalog = await folder.catalog()
    #expect(catalog.tools.map(\.name) == ["forecast"])
    let forecast = try #require(catalog.tools.first)
    #expect(
      forecast.examples == [
        ToolExample(prompt: "Weather in Lima?", arguments: ["city": "Lima"]),
        ToolExample(prompt: nil, arguments: ["city": "Oslo"]),
      ])
    let broken = try #require(catalog.diagnostics.first { $0.tool == "broken" })
    #expect(broken.isError)
    #expect(broken.kind == .schemaViolation)
    #expect(broken.message.contains(#"example 1 ("examples"[0]) does not match the inputSchema"#))
    #expect(broken.message.contains(#"missing required property "city"; fix its "arguments" or remove it"#))
    let shapeless = try #require(catalog.diagnostics.first { $0.path.contains("shapeless") })
    #expect(shapeless.kind == .schemaViolation, "an example without arguments breaks the manifest schema")
  }

  @Test func searchFoldersComeInTheDocumentedOrder() {
    let folders = PluginCatalog.searchFolders(
      explicit: ["/a", "rel"], environment: ["TOOLHOST_PLUGIN_PATH": "/b:/c", "HOME": "/home/u"],
      currentDirectory: "/work")
    #expect(folders == ["/a", "/work/rel", "/b", "/c", "/home/u/.config/toolhost/plugins", "/work/plugins"])
    let xdg = PluginCatalog.pluginFolders(
      explicit: [], environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/home/u"], currentDirectory: "/w")
    #expect(xdg.map(\.path) == ["/x/toolhost/plugins", "/w/plugins"])
    #expect(xdg.map(\.origin) == [.user, .project])
    // A project folder named on the command line is the user's explicit choice.
    let named = PluginCatalog.pluginFolders(explicit: ["plugins"], environment: ["HOME": "/h"], currentDirectory: "/w")
    #expect(named[0] == ToolhostPlugins.PluginFolder(path: "/w/plugins", origin: .explicit))
    #expect(named.count == 2)
    // A relative $TOOLHOST_PLUGIN_PATH entry depends on where toolhost runs: a project folder, used once trusted.
    let relative = PluginCatalog.pluginFolders(
      explicit: [], environment: ["TOOLHOST_PLUGIN_PATH": "tools:/abs", "HOME": "/h"], currentDirectory: "/w")
    #expect(relative.prefix(2).map(\.origin) == [.project, .environment])
  }

  @Test func aNamedFolderThatDoesNotExistIsADiagnostic() async {
    let catalog = await PluginCatalog.discover(folders: ["/nonexistent/plugins"], required: ["/nonexistent/plugins"])
    #expect(catalog.diagnostics.first?.kind == .missingFolder)
  }

  @Test func variableNamesOfArguments() {
    #expect(PluginTool.variableName("searchTerm") == "SEARCH_TERM")
    #expect(PluginTool.variableName("city") == "CITY")
    #expect(PluginTool.variableName("max-items") == "MAX_ITEMS")
    #expect(PluginTool.variableName("limit2Go") == "LIMIT2_GO")
  }
}
