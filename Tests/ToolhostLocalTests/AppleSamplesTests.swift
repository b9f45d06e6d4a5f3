import Foundation
import Testing
import ToolhostTestSupport

/// FoundationModels 27's documentation samples (Examples/AppleSamples, built with the package) run against the
/// local model as an app runs them: the default model, `LanguageModelSession(tools:)`, the tool-calling mode of a
/// dynamic profile with a `@SessionPropertyEntry` counter, and the transcript read back.
@Suite(
  "Apple's samples with the local model", .serialized,
  .enabled(if: LocalTestEnvironment.runsLocalModel, LocalTestEnvironment.skipReason))
struct AppleSamplesTests {
  func run(_ sample: String) async throws -> (status: Int32, output: String) {
    try await LocalTestEnvironment.runExample("ToolhostAppleSamples", [sample])
  }

  /// "Find three sourdough bread recipes": the tool is called and the answer names the database's recipes.
  @Test func theToolCallingArticlesSession() async throws {
    let (status, output) = try await run("tool-calling")
    #expect(status == 0, "\(output)")
    #expect(output.contains("toolCalls: searchBreadDatabase"), "\(output)")
    #expect(output.contains("toolOutput: searchBreadDatabase"), "\(output)")
    let answer = output.split(separator: "\n").first { $0.hasPrefix("answer: ") } ?? ""
    #expect(answer.lowercased().contains("sourdough"), "the answer uses the tool's recipes: \(output)")
  }

  /// The dynamic profile of the tool-calling modes: required until the first call, counted by a session property,
  /// then allowed, so the model answers.
  @Test func theRequiredUntilCalledProfile() async throws {
    let (status, output) = try await run("profile")
    #expect(status == 0, "\(output)")
    #expect(output.contains("toolCallCount: 1"), "\(output)")
    #expect(output.contains("toolCalls: searchBreadDatabase"), "\(output)")
    #expect(output.contains("profile answer: "), "\(output)")
    #expect(output.contains("response: "), "the request ended with a response: \(output)")
  }

  /// The prompt builder with `respond` and `streamResponse(generating:)`, its snapshots and `collect()`, for a type
  /// whose optional properties have `.anyOf` and `.range` guides: the grammar holds the values to them.
  @Test func aStreamedTypeWithGuidesOnOptionals() async throws {
    let (status, output) = try await run("guided")
    #expect(status == 0, "\(output)")
    #expect(output.contains("title: "), "\(output)")
    #expect(output.contains("so far: "), "snapshots were streamed: \(output)")
    let listing = output.split(separator: "\n").first { $0.hasPrefix("listing: Listing(") }.map(String.init) ?? ""
    #expect(!listing.isEmpty, "\(output)")
    let area = listing.firstMatch(of: /area: Optional\("([a-z]+)"\)/)?.1
    #expect(area.map { ["central", "suburban", "rural"].contains($0) } ?? true, "\(listing)")
    let bedrooms = listing.firstMatch(of: /bedrooms: Optional\((-?[0-9]+)\)/).flatMap { Int($0.1) }
    #expect(bedrooms.map { (1...6).contains($0) } ?? true, "\(listing)")
    // The optional fields are not all left out: the guides had something to hold.
    #expect(area != nil || bedrooms != nil, "no guided field was generated: \(listing)")
  }
}
