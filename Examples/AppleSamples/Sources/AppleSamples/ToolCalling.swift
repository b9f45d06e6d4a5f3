// swift-format-ignore-file
// "Expanding generation with tool calling" (FoundationModels 27 documentation), its samples as the page shows them
// (in its layout too, which swift-format leaves) with `import FoundationModels` changed to `import Toolhost`.
// Statements the page shows at the top level are the bodies of the functions here; the app's own code the page
// leaves as a comment ("Put your code here") is filled in from `BreadDatabase` (AppSupport.swift).

import Toolhost

struct BreadDatabaseTool: Tool {
    let name = "searchBreadDatabase"
    let description = "Searches a local database for bread recipes."

    @Generable
    struct Arguments {
        @Guide(description: "The type of bread to search for")
        var searchTerm: String
        @Guide(description: "The number of recipes to get", .range(1...6))
        var limit: Int
    }

    @Generable
    struct Recipe {
        var name: String
        var description: String
        var link: String
    }
    
    func call(arguments: Arguments) async throws -> [Recipe] {
        var recipes: [Recipe] = []
        
        // Put your code here to retrieve a list of recipes from your database.
        recipes = try BreadDatabase.search(arguments.searchTerm, limit: arguments.limit)
        
        return recipes
    }
}

/// "Provide a session with the tool you create".
func findSourdoughRecipes() async throws -> LanguageModelSession {
    let session = LanguageModelSession(
        tools: [BreadDatabaseTool()]
    )

    let response = try await session.respond(
        to: "Find three sourdough bread recipes"
    )
    print("answer: \(response.content)")
    return session
}

/// "Configure the tool calling mode": `.required`, then `.disallowed`.
func requiredThenDisallowed() async throws -> LanguageModelSession {
    let session = LanguageModelSession(
        tools: [BreadDatabaseTool()]
    )

    let response = try await session.respond(
        to: "What's a good sourdough recipe?",
        options: GenerationOptions(toolCallingMode: .required)
    )
    print("required answer: \(response.content)")

    let summary = try await session.respond(
        to: "Summarize the recipes you found",
        options: GenerationOptions(toolCallingMode: .disallowed)
    )
    print("disallowed answer: \(summary.content)")
    return session
}

extension SessionPropertyValues {
    @SessionPropertyEntry
    var toolCallCount: Int = 0
}
    
struct RecipeDynamicProfile: LanguageModelSession.DynamicProfile {
    @SessionProperty(\.toolCallCount) 
    var toolCallCount

    var body: some LanguageModelSession.DynamicProfile {
        Profile {
            BreadDatabaseTool()
        }
        .toolCallingMode(toolCallCount < 1 ? .required : .allowed)
        .onToolCall {
            toolCallCount += 1
        }
    }
}

/// The dynamic profile of "Configure the tool calling mode", in a session.
func requiredUntilTheFirstCall() async throws -> LanguageModelSession {
    let session = LanguageModelSession(profile: RecipeDynamicProfile())
    let response = try await session.respond(to: "What's a good sourdough recipe?")
    print("profile answer: \(response.content)")
    print("toolCallCount: \(session.properties.toolCallCount)")
    return session
}

/// "Handle errors thrown by a tool".
func handleToolErrors(_ session: LanguageModelSession) async {
    do {
        let answer = try await session.respond(to: "Find a recipe for tomato soup.")
        print("answer: \(answer.content)")
    } catch let error as LanguageModelSession.ToolCallError {
            
        // Access the name of the tool, like BreadDatabaseTool.
        print(error.tool.name) 
            
        // Access an underlying error that your tool throws and check if the tool 
        // encounters a specific condition.
        if case .databaseIsEmpty = error.underlyingError as? SearchBreadDatabaseToolError {
            // Display an error in the UI.
            print("the bread database is empty")
        }

    } catch {
        print("Some other error: \(error)")
    }
}

struct PreservingProfile: LanguageModelSession.DynamicProfile {
    var body: some LanguageModelSession.DynamicProfile {
        // Configure a profile to preserve the transcript when an error occurs.
        Profile {
            // Your dynamic instructions and tools.
            BreadDatabaseTool()
        }
        .temperature(0.9)
        .transcriptErrorHandlingPolicy(.preserveTranscript)
    }
}

/// "Inspect the call graph": the page's SwiftUI list, as a loop over the same entries.
func printCallGraph(of session: LanguageModelSession) {
    for entry in session.transcript {
        switch entry {       
        case .instructions(let instructions):
            // Display the instructions the model uses.
            print("instructions: \(instructions.segments.count) segments")
        case .prompt(let prompt):
            // Display the prompt made to the model.
            print("prompt: \(prompt.segments.count) segments")
        case .toolCalls(let calls):
            // Display the call details for a tool, like the tool name and arguments.        
            print("toolCalls: \(calls.map(\.toolName).joined(separator: ", "))")
        case .toolOutput(let output):
            // Display the output that a tool provides back to the model.        
            print("toolOutput: \(output.toolName)")
        case .response(let response):
            // Display the response from the model.
            print("response: \(response.segments.count) segments")
        case .reasoning(let reasoning):
            // Display the reasoning from the model.
            print("reasoning: \(reasoning.segments.count) segments")
        @unknown default:
            // Handle an unknown entry.
            print("an unknown entry")
        }
    }
}
