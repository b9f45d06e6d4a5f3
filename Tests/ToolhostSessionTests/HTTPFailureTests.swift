import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Failures that need no server at all.
@Suite("HTTP failures")
struct HTTPFailureTests {
  @Test func connectionRefusedNamesTheURL() async throws {
    let port = try ProcessProbe.freePort()  // nobody listens there
    let url = "http://127.0.0.1:\(port)/v1"
    try await OpenAIModel.withModel(OpenAIConfiguration(baseURL: url, model: "m")) { model in
      let session = LanguageModelSession(model: model, tools: try ToolRegistry([]))
      let error = await #expect(throws: LanguageModelError.self) {
        try await session.respond(to: "hi")
      }
      #expect(error?.kind == .connectionFailed)
      #expect(
        error?.description.contains("\(url)/chat/completions") == true,
        "\(String(describing: error))")
      #expect(
        error?.description.contains("connection refused") == true, "\(String(describing: error))")
      let streamed = await #expect(throws: LanguageModelError.self) {
        _ = try await session.streamResponse(to: "hi").collect()
      }
      #expect(streamed?.kind == .connectionFailed)
    }
  }

  @Test func silentServerTimesOut() async throws {
    // A socket that accepts connections (the kernel does, into the backlog) but never answers.
    let listener = try SilentListener()
    defer { listener.close() }
    let url = "http://127.0.0.1:\(listener.port)/v1"
    let configuration = OpenAIConfiguration(
      baseURL: url, model: "m", readTimeout: .milliseconds(300))
    try await OpenAIModel.withModel(configuration) { model in
      let session = LanguageModelSession(model: model, tools: try ToolRegistry([]))
      let error = await #expect(throws: LanguageModelError.self) {
        try await session.respond(to: "hi")
      }
      #expect(error?.kind == .timedOut)
      #expect(error?.description.contains(url) == true, "\(String(describing: error))")
    }
  }

  @Test func missingAPIKeyForOpenAIIsAConfigurationError() {
    let error = #expect(throws: LanguageModelError.self) {
      _ = try OpenAIModel(configuration: OpenAIConfiguration.fromEnvironment([:]))
    }
    #expect(error?.kind == .configuration)
  }
}
