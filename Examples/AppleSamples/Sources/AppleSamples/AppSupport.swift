// What the documentation's samples assume an app has: its own data and tools, and stand-ins for what only Apple's
// platforms have (the Private Cloud Compute model). Written for these samples; nothing here is from the pages.

import Toolhost

/// The app's bread recipes, which `BreadDatabaseTool` searches.
enum BreadDatabase {
  static let recipes: [BreadDatabaseTool.Recipe] = [
    .init(
      name: "Country sourdough", description: "A crusty loaf from a levain, 24 hours.",
      link: "https://bread.example/country"),
    .init(
      name: "Sourdough focaccia", description: "Olive oil, rosemary, an overnight rise.",
      link: "https://bread.example/focaccia"),
    .init(name: "Rye sourdough", description: "Dense, with caraway, 30% rye.", link: "https://bread.example/rye"),
    .init(name: "Milk bread", description: "Soft and sweet, a tangzhong loaf.", link: "https://bread.example/milk"),
    .init(name: "Baguette", description: "A poolish, four hours.", link: "https://bread.example/baguette"),
  ]

  /// The recipes whose name or description mentions `term` (every one, when none does and the term is "bread").
  static func search(_ term: String, limit: Int) throws -> [BreadDatabaseTool.Recipe] {
    guard !recipes.isEmpty else { throw SearchBreadDatabaseToolError.databaseIsEmpty }
    let words = term.lowercased().split(separator: " ").map(String.init).filter { $0 != "bread" && $0 != "recipe" }
    let found = recipes.filter { recipe in
      let text = (recipe.name + " " + recipe.description).lowercased()
      return words.isEmpty || words.contains { text.contains($0) }
    }
    return Array(found.prefix(max(1, limit)))
  }
}

/// Why `BreadDatabaseTool` failed.
enum SearchBreadDatabaseToolError: Error {
  case databaseIsEmpty
}

/// A stand-in for Apple's server model: the default model here.
struct PrivateCloudComputeLanguageModel: LanguageModel {
  var displayName: String { "Private Cloud Compute (stand-in: \(SystemLanguageModel.default.displayName))" }
  func turn(for request: ModelRequest) async throws -> ModelTurn {
    try await SystemLanguageModel.default.turn(for: request)
  }
  func streamTurn(for request: ModelRequest) -> ModelStream { SystemLanguageModel.default.streamTurn(for: request) }
  func prewarm(for request: ModelRequest) async { await SystemLanguageModel.default.prewarm(for: request) }
}

/// A tool the samples name, answering with a line that says what it was asked.
protocol StandInTool: Tool where Arguments == StandInArguments, Output == String {}

@Generable
struct StandInArguments {
  @Guide(description: "What to do")
  var request: String
}

extension StandInTool {
  func call(arguments: StandInArguments) async throws -> String { "\(name) did: \(arguments.request)" }
}

struct ListPhotosTool: StandInTool { let description = "Lists the photos in the presentation." }
struct AddPhotoTool: StandInTool { let description = "Adds a photo to the presentation." }
struct MyCustomReadFileTool: StandInTool { let description = "Reads one of the user's files." }
struct TodoWriteTool: StandInTool { let description = "Writes an item on the to-do list." }
struct MyCustomBookTool: StandInTool { let description = "Looks up a book's genre and themes." }
struct SomeTool: StandInTool { let description = "Does something the assistant needs." }

/// Instructions the samples name, each a line of text.
struct ImageEditingInstructions: DynamicInstructions {
  var body: some DynamicInstructions { Instructions("Suggest edits to the selected image.") }
}
struct AnimationEditingInstructions: DynamicInstructions {
  var body: some DynamicInstructions { Instructions("Suggest timings for the slide's animations.") }
}
struct PresentationDynamicInstructions: DynamicInstructions {
  var body: some DynamicInstructions { Instructions("Help with the presentation as a whole.") }
}
struct CreativeWritingInstructions: DynamicInstructions {
  var body: some DynamicInstructions { Instructions("Write freely and vividly.") }
}
struct TechnicalWritingInstructions: DynamicInstructions {
  var body: some DynamicInstructions { Instructions("Write precisely and plainly.") }
}
struct MyCustomFileAccessInstructions: DynamicInstructions {
  var body: some DynamicInstructions { Instructions("Read files only when asked to.") }
}

/// The writing modes of `WritingContent`.
enum MyCustomWritingMode {
  case creative
  case technical
}

/// Which tools the app lets run now.
struct AccessPolicy {
  var readable: Set<String> = ["MyCustomReadFileTool"]
  func permits(_ call: Transcript.ToolCall) -> Bool { readable.contains(call.toolName) }
}

let myAccessPolicy = AccessPolicy()

/// Why a tool call was refused.
enum MyAccessPolicyError: Error {
  case denied(String)
}
