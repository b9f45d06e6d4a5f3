// Runs the samples against the default model: `tool-calling`, `modes`, `profile`, `errors` or `guided`, each
// printing the answers and, for the sessions with tools, the transcript's entries (the call graph). Exits 1 when a sample throws, 2 for an unknown sample.

import Foundation
import Toolhost

@main
struct AppleSamples {
  static func main() async {
    let sample = CommandLine.arguments.dropFirst().first ?? "tool-calling"
    var status: Int32 = 0
    do {
      switch sample {
      case "tool-calling": printCallGraph(of: try await findSourdoughRecipes())
      case "modes": printCallGraph(of: try await requiredThenDisallowed())
      case "profile": printCallGraph(of: try await requiredUntilTheFirstCall())
      case "errors": await handleToolErrors(LanguageModelSession(profile: PreservingProfile()))
      case "guided": print("listing: \(try await streamAListing())")
      default:
        print("unknown sample \(sample): tool-calling, modes, profile, errors or guided")
        status = 2
      }
    } catch {
      print("error: \(error)")
      status = 1
    }
    // The local model's server ends with the program.
    await SystemLanguageModel.default.shutdown()
    exit(status)
  }
}
