import Foundation
import Testing
import ToolhostCore
import ToolhostEval
import ToolhostJSON
import ToolhostTestSupport

/// The held-out set of the `answers` eval (issue 49): Benchmarks/heldout/questions.json and the plugins of
/// Benchmarks/heldout/plugins. What the issue asks of it, expectations the plugins' schemas can meet, manifests
/// toolhost loads, and plugins that answer.
@Suite("held-out questions and plugins")
struct HeldOutSetTests {
  static let folder = TestPackage.root.appendingPathComponent("Benchmarks/heldout")
  static var plugins: URL { folder.appendingPathComponent("plugins") }
  let questions = Result {
    try EvalQuestion.load(from: HeldOutSetTests.folder.appendingPathComponent("questions.json"))
  }

  /// A valid argument set of every held-out tool, for the run test.
  static let samples: [String: JSONValue] = [
    "trackParcel": ["trackingNumber": "1Z999AA10123456784"],
    "convertCurrency": ["amount": 20, "from": "EUR", "to": "USD", "date": "2026-06-01"],
    "currencyInfo": ["code": "JPY"],
    "listEvents": ["date": "2026-12-01", "days": 7],
    "addEvent": ["title": "Test event", "date": "2026-12-02", "start": "09:00", "durationMinutes": 30],
    "deleteEvent": ["eventId": "EV-1001"],
    "flightStatus": ["flightNumber": "LH400", "date": "2026-12-04"],
    "airportDelays": ["airport": "FRA"],
    "defineWord": ["word": "gregarious"],
    "findSynonyms": ["word": "brave", "limit": 3],
    "countryFacts": ["country": "KE", "fields": ["population", "area"]],
    "addNote": ["text": "Test note", "tags": ["test"]],
    "searchNotes": ["query": "code", "since": "2026-01-01T00:00:00Z"],
    "deleteNote": ["noteId": "N-101"],
    "findBook": ["isbn": "0441478123"],
    "searchCatalogue": ["query": "Le Guin", "availableOnly": true],
    "placeHold": ["isbn": "9780547928227", "branch": "harbour"],
  ]

  @Test func countsPerCategoryAndTool() throws {
    let questions = try questions.get()
    #expect(questions.count >= 64)
    let per = Dictionary(grouping: questions, by: \.category).mapValues(\.count)
    #expect(per[.single, default: 0] >= 16)
    #expect(per[.several, default: 0] >= 12)
    #expect(per[.none, default: 0] >= 12)
    #expect(per[.language, default: 0] >= 10)
    #expect(per[.terse, default: 0] >= 8)
    #expect(Set(questions.map(\.prompt)).count == questions.count, "a prompt is there twice")
    for q in questions where q.category == .several { #expect(q.calls.count >= 2, "\(q.prompt)") }
    #expect(questions.filter { $0.category == .several && $0.calls.count >= 3 }.count >= 2, "three things at once")
    // Every tool is asked for, at least twice, and only the held-out tools.
    let tools = manifestTools(try pluginManifests(in: Self.plugins))
    let calls = questions.flatMap(\.calls).map(\.tool)
    for tool in tools.keys { #expect(calls.filter { $0 == tool }.count >= 2, "\(tool)") }
    #expect(Set(calls).subtracting(tools.keys).isEmpty)
  }

  /// Every expected or allowed argument is a property of the tool's input schema, every expected value is one a
  /// valid argument can match, and a call needs approval exactly when its tool is destructive (as `ask` decides).
  @Test func expectedCallsFitTheSchemas() throws {
    let tools = manifestTools(try pluginManifests(in: Self.plugins))
    let schemas = tools.compactMapValues { $0["inputSchema"] }
    let questions = try questions.get()
    for problem in argumentNameProblems(questions, schemas: schemas) { Issue.record("\(problem)") }
    for problem in argumentValueProblems(questions, schemas: schemas) { Issue.record("\(problem)") }
    for q in questions {
      for call in q.calls {
        let destructive = tools[call.tool]?["annotations"]?["destructiveHint"]?.boolValue == true
        #expect(call.needsApproval == destructive, "\(q.prompt): \(call.tool)")
      }
    }
  }

  /// toolhost's own discovery loads every held-out plugin with no diagnostic: at least six plugins, the tools their
  /// manifests list, some that write and some that delete, annotated so.
  @Test func toolhostLoadsEveryManifest() async throws {
    let catalog = await PluginCatalog.discover(folders: [Self.plugins.path])
    #expect(catalog.diagnostics.isEmpty, "\(catalog.diagnostics)")
    let manifests = try pluginManifests(in: Self.plugins)
    #expect(manifests.count >= 6)
    #expect(Set(catalog.tools.map(\.manifest.folderName)) == Set(manifests.keys))
    let tools = manifestTools(manifests)
    #expect(Set(catalog.tools.map(\.name)) == Set(tools.keys))
    let writers = tools.values.filter { $0["annotations"]?["readOnlyHint"]?.boolValue == false }
    #expect(writers.count >= 2)
    #expect(writers.contains { $0["annotations"]?["destructiveHint"]?.boolValue == true })
  }

  /// Each held-out tool, run once through toolhost's runner with a valid argument set (in a HOME of its own, so the
  /// writers write there), answers a JSON result.
  @Test func everyToolAnswersJSON() async throws {
    let home = TemporaryFolder(prefix: "toolhost-heldout-home")
    let environment = Subprocess.cleanEnvironment(home: home.path)
    let catalog = await PluginCatalog.discover(folders: [Self.plugins.path], environment: environment)
    let registry = catalog.registry()
    #expect(Set(catalog.tools.map(\.name)) == Set(Self.samples.keys), "a tool without a sample, or a sample too many")
    for tool in catalog.tools {
      guard let arguments = Self.samples[tool.name] else { continue }
      do {
        let output = try await registry.call(tool.name, arguments: arguments)
        #expect(output.value?.objectValue != nil, "\(tool.name): \(output.modelText)")
        #expect(output.text?.isEmpty == false, "\(tool.name) has no text")
      } catch {
        Issue.record("\(tool.name) \(arguments.description): \(error)")
      }
    }
    // The writers kept what they wrote under the HOME given.
    let data = home.url.appendingPathComponent(".local/share/toolhost-heldout")
    for file in ["calendar.json", "notes.json", "library-holds.json"] {
      #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent(file).path), "\(file)")
    }
  }
}
