// Written as FoundationModels 27 code is, with only its import line changed: this file compiling is half of the test;
// the other half runs it against fakellm. Nothing here names a toolhost-only API except the test's own model set-up
// (`SystemLanguageModel(environment:)` pointing the default model at fakellm) and the test support.
import Foundation
import Testing
import Toolhost
import ToolhostTestSupport

struct FindRecipes: Tool {
  let name = "findRecipes"
  let description = "Finds recipes that use an ingredient."

  @Generable
  struct Arguments {
    @Guide(description: "The main ingredient")
    var ingredient: String
    @Guide(description: "How many recipes", .range(1...5))
    var limit: Int
  }

  func call(arguments: Arguments) async throws -> [String] {
    Array(
      ["\(arguments.ingredient) soup", "\(arguments.ingredient) pie", "roast \(arguments.ingredient)"]
        .prefix(arguments.limit))
  }
}

struct Nutrition: Tool {
  let name = "nutrition"
  let description = "Calories per 100 g of a food."

  @Generable
  struct Arguments {
    @Guide(description: "The food")
    var food: String
  }

  func call(arguments: Arguments) async throws -> GeneratedContent {
    GeneratedContent(properties: ["food": arguments.food, "kcalPer100g": 26])
  }
}

struct Pantry: Tool {
  let name = "pantry"
  let description = "Whether an ingredient is in the pantry."

  @Generable
  struct Arguments {
    var ingredient: String
  }

  struct Empty: Error {}

  func call(arguments: Arguments) async throws -> String {
    throw Empty()
  }
}

@Generable(description: "A food's energy")
struct NutritionFacts {
  @Guide(description: "The food")
  var food: String
  @Guide(description: "Kilocalories in 100 g", .minimum(0))
  var kcalPer100g: Int
}

struct NutritionFactsTool: Tool {
  let name = "nutritionFacts"
  let description = "The energy in 100 g of a food."

  @Generable
  struct Arguments {
    @Guide(description: "The food")
    var food: String
  }

  func call(arguments: Arguments) async throws -> NutritionFacts {
    NutritionFacts(food: arguments.food, kcalPer100g: arguments.food == "pumpkin" ? 26 : 61)
  }
}

@Generable(description: "A meal suggestion")
struct Meal {
  @Guide(description: "The dish")
  var dish: String
  @Guide(description: "Calories", .range(0...3000))
  var calories: Int
  var tags: [String]
}

@Suite(
  "FoundationModels code, import changed",
  .enabled(
    if: TestEnvironment.hasFakeLLM,
    "fakellm 0.3.5 is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"))
struct FoundationModelsSourceTests {
  static let rules = """
    rules:
      - name: meal
        when: {messages_contain: "follows this JSON Schema"}
        respond: {content: '{"dish": "pumpkin soup", "calories": 180, "tags": ["warm"]}'}
      - name: pantry
        when: {messages_contain: "in the pantry"}
        respond:
          tool_calls:
            - {name: pantry, arguments: {ingredient: pumpkin}}
      - name: answer
        when: {tool_result_contains: "kcalPer100g"}
        respond: {content: "Pumpkin soup or pumpkin pie; pumpkin has 26 kcal per 100 g."}
      - name: facts
        when: {messages_contain: "calories has each"}
        respond:
          tool_calls:
            - {name: nutritionFacts, arguments: {food: pumpkin}}
      - name: calls
        when: {messages_contain: "pumpkin"}
        respond:
          tool_calls:
            - {name: findRecipes, arguments: {ingredient: pumpkin, limit: 2}}
            - {name: nutrition, arguments: {food: pumpkin}}
    """

  /// The default model, pointed at fakellm through the environment as a deployment would.
  func model(_ server: FakeLLM) -> SystemLanguageModel {
    SystemLanguageModel(environment: [
      "TOOLHOST_BASE_URL": server.baseURL, "TOOLHOST_MODEL": "test-model", "TOOLHOST_API_KEY": "test-key",
    ])
  }

  @Test func toolsSessionGenerationErrorsAndTranscript() async throws {
    try await FakeLLM.with(rules: Self.rules) { server in
      let model = model(server)
      #expect(model.isAvailable)
      #expect(model.availability == .available)
      let session = LanguageModelSession(
        model: model, tools: [FindRecipes(), Nutrition(), Pantry()],
        instructions: "Suggest meals. Use the tools for facts.")

      // Tools with @Generable arguments returning [String] and GeneratedContent.
      let response = try await session.respond(
        to: "What can I cook with pumpkin?", options: GenerationOptions(toolCallingMode: .allowed))
      #expect(response.content.contains("26 kcal"), "server log:\n\(server.log)")

      // Guided generation of a Swift type.
      let meal = try await session.respond(to: "Suggest one pumpkin meal", generating: Meal.self).content
      #expect(meal.dish == "pumpkin soup")
      #expect(meal.calories == 180)

      // A required tool call whose tool throws: the error names the tool and carries the tool's own error.
      do {
        _ = try await session.respond(
          to: "Is pumpkin in the pantry?", options: GenerationOptions(toolCallingMode: .required))
        Issue.record("the pantry tool's error was not thrown")
      } catch let error as LanguageModelSession.ToolCallError {
        #expect(error.tool.name == "pantry")
        #expect(error.underlyingError is Pantry.Empty)
      }

      // The transcript, walked the FoundationModels way.
      var kinds: [String] = []
      var toolNames: [String] = []
      for entry in session.transcript {
        switch entry {
        case .instructions(let instructions):
          kinds.append("instructions")
          #expect(instructions.segments.count == 1)
        case .prompt(let prompt):
          kinds.append("prompt")
          #expect(!prompt.segments.isEmpty)
        case .toolCalls(let calls):
          kinds.append("toolCalls")
          for call in calls { toolNames.append(call.toolName) }
        case .toolOutput(let output):
          kinds.append("toolOutput")
          for segment in output.segments {
            switch segment {
            case .text(let text): #expect(!text.content.isEmpty)
            case .structure(let structure): #expect(structure.schemaName == output.toolName)
            }
          }
        case .response(let response):
          kinds.append("response")
          #expect(!response.segments.isEmpty)
        case .reasoning:
          kinds.append("reasoning")
        }
      }
      #expect(kinds.first == "instructions")
      #expect(toolNames == ["findRecipes", "nutrition"])
      #expect(kinds.filter { $0 == "response" }.count == 2, "the failed request left nothing: \(kinds)")

      // After a shutdown, the next request makes the model again.
      await model.shutdown()
      let again = LanguageModelSession(model: model, instructions: "Suggest meals.")
      #expect(try await again.respond(to: "Suggest one pumpkin meal", generating: Meal.self).content.calories == 180)
      await model.shutdown()
    }
  }

  @Test func builtInstructionsAndPromptsAndAGenerableToolOutput() async throws {
    try await FakeLLM.with(rules: Self.rules) { server in
      let model = model(server)
      let brief = true
      let foods = ["leek", "pumpkin"]
      let session = LanguageModelSession(model: model, tools: [NutritionFactsTool()]) {
        "Suggest meals. Use the tools for facts."
        if brief {
          "Answer in one sentence."
        }
      }
      session.prewarm()

      // A prompt written with the builder, answered with a tool whose output is a @Generable value.
      let response = try await session.respond(options: GenerationOptions(toolCallingMode: .allowed)) {
        "How many calories has each of these?"
        foods
      }
      #expect(response.content.contains("26 kcal"), "server log:\n\(server.log)")

      // Guided generation from a built prompt.
      let meal = try await session.respond(generating: Meal.self) {
        "Suggest one"
        Prompt("pumpkin meal")
      }.content
      #expect(meal.dish == "pumpkin soup")

      var instructionsText = ""
      var prompts: [String] = []
      var outputs: [GeneratedContent] = []
      for entry in session.transcript {
        switch entry {
        case .instructions(let instructions):
          for case .text(let text) in instructions.segments { instructionsText += text.content }
        case .prompt(let prompt):
          for case .text(let text) in prompt.segments { prompts.append(text.content) }
        case .toolOutput(let output):
          for case .structure(let structure) in output.segments { outputs.append(structure.content) }
        case .toolCalls, .response, .reasoning:
          break
        }
      }
      #expect(instructionsText == "Suggest meals. Use the tools for facts.\nAnswer in one sentence.")
      #expect(prompts.first == "How many calories has each of these?\nleek\npumpkin")
      let facts = try NutritionFacts(try #require(outputs.first))
      #expect(facts.food == "pumpkin" && facts.kcalPer100g == 26)
      await model.shutdown()
    }
  }

  @Test func theDefaultSessionNeedsNoModelArgument() async throws {
    // `LanguageModelSession(tools:instructions:)` compiles and does not throw; with no model set up, the first request
    // says what to do.
    let unset = SystemLanguageModel(environment: ["HOME": "/nonexistent", "TOOLHOST_LOCAL_DIR": "/nonexistent"])
    #expect(!unset.isAvailable)
    #expect("\(unset.availability)".contains("toolhost model install"), "availability says what to do")
    let session = LanguageModelSession(model: unset, tools: [FindRecipes()], instructions: "Be brief.")
    await #expect {
      _ = try await session.respond(to: "hi")
    } throws: { error in
      (error as? LanguageModelError)?.message.contains("toolhost model install") == true
    }
    let defaulted = LanguageModelSession(tools: [FindRecipes()], instructions: "Be brief.")
    #expect(defaulted.transcript.count == 1)
  }
}
