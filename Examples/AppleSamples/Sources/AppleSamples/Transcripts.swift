// swift-format-ignore-file
// The Transcript page and "Inspecting session transcripts and reporting model feedback" (FoundationModels 27
// documentation), their samples as the pages show them with `import FoundationModels` changed to `import Toolhost`
// (the page's SwiftUI view as a function over the same entries).

import Foundation
import Toolhost

// Create a new session with the first and last entries from a previous session.
func newContextualSession(with originalSession: LanguageModelSession) -> LanguageModelSession {
    let allEntries = originalSession.transcript

    // Collect the entries to keep from the original session.
    let entries = [allEntries.first, allEntries.last].compactMap { $0 }
    let transcript = Transcript(entries: entries)

    // Create a new session with the result and preload the session resources.
    var session = LanguageModelSession(transcript: transcript)
    session.prewarm()
    return session
}

func describeEntries(of session: LanguageModelSession) {
    for entry in session.transcript {
        switch entry {
        case .instructions(let instructions):
            // The guidance you gave the language model.
            print("instructions: \(instructions)")
        case .prompt(let prompt):
            // A request from a person using your app.
            print("prompt: \(prompt)")
        case .response(let response):
            // A response the language model generated.
            print("response: \(response)")
        default:
            // Other entries, like reasoning, tool calls, and tool output.
            print("other: \(entry)")
        }
    }
}

func historyViews(of session: LanguageModelSession) {
    for entry in session.transcript {
        switch entry {
        case let .instructions(instructions):
            print("MyInstructionsView(\(instructions))")
        case let .prompt(prompt):
            print("MyPromptView(\(prompt))")
        case let .reasoning(reasoning):
            print("MyReasoningView(\(reasoning))")
        case let .toolCalls(toolCalls):
            print("MyToolCallsView(\(toolCalls))")
        case let .toolOutput(toolOutput):
            print("MyToolOutputView(\(toolOutput))")
        case let .response(response):
            print("MyResponseView(\(response))")
        }
    }
}

func trimTheTranscript(of session: LanguageModelSession) {
    let entries = session.transcript
    let kept = [entries.first, entries.last].compactMap { $0 }
    session.transcript = Transcript(entries: kept)
}

func recordATranscript() async throws -> Data {
    let session = LanguageModelSession()
    let response = try await session.respond(to: "Help me plan a trip to Tokyo")

    // Encode the transcript that now holds both the prompt and the response.
    let data = try JSONEncoder().encode(session.transcript)
    print("\(response.content.count) characters answered")
    return data
}

func conversationTurns(of session: LanguageModelSession) -> Int {
    session.transcript.history.count
}

/// FoundationModels 26 code reading a structured segment's schema name under its first name.
@available(*, deprecated, message: "uses StructuredSegment.source, as FoundationModels 26 code does")
func structuredSources(of session: LanguageModelSession) -> [String] {
    session.transcript.compactMap { entry -> [String]? in
        guard case .response(let response) = entry else { return nil }
        return response.segments.compactMap { segment in
            if case .structure(let structure) = segment { return structure.source }
            return nil
        }
    }.flatMap { $0 }
}
