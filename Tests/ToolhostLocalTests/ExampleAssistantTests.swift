import Foundation
import Testing
import ToolhostTestSupport

/// The example assistant (Examples/Assistant), built with the package, run against the local model: FoundationModels
/// code (`@Generable` tools, `LanguageModelSession(tools:instructions:)`, `respond(to:generating:)`, the transcript)
/// with the example weather plugin beside its in-process tools.
@Suite(
  "The example assistant with the local model", .serialized,
  .enabled(if: LocalTestEnvironment.runsLocalModel, LocalTestEnvironment.skipReason))
struct ExampleAssistantTests {
  func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    try await LocalTestEnvironment.runExample("ToolhostExampleAssistant", arguments)
  }

  @Test func answersFromAPluginAndShowsTheCall() async throws {
    let folder = try TemporaryFolder.make(prefix: "toolhost-example-plugins")
    defer { try? FileManager.default.removeItem(at: folder) }
    try ExamplePlugins.link(["weather"], into: folder)
    let (status, output) = try await run([
      "--plugins", folder.path, "What is the weather like in Lisbon in April?",
    ])
    #expect(status == 0, "\(output)")
    #expect(output.contains("called getWeather"), "\(output)")
    #expect(output.contains("Lisbon"), "\(output)")
    #expect(output.contains("getWeather answered"), "\(output)")
  }

  @Test func anInProcessToolWithGenerableArguments() async throws {
    let (status, output) = try await run(["What is the population of Oslo?"])
    #expect(status == 0, "\(output)")
    #expect(output.contains("called cityFacts"), "\(output)")
    #expect(output.contains("709000"), "the tool's result is shown: \(output)")
  }

  @Test func plansATripAsATypedValue() async throws {
    let (status, output) = try await run(["--plan", "Plan three rainy days in Porto."])
    #expect(status == 0, "\(output)")
    #expect(output.contains("city: Porto"), "\(output)")
    let days = output.split(separator: "\n").first { $0.hasPrefix("days: ") }.flatMap { Int($0.dropFirst(6)) }
    #expect(days.map { (1...30).contains($0) } == true, "days within the @Guide range: \(output)")
    #expect(output.contains("activities: "), "\(output)")
  }
}
