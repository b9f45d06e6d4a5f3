import Foundation
import Testing
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

/// The model's HTTP client does not follow redirects: a 3xx is an error that says where it points, and nothing is
/// sent there.
@Suite("Model server redirects")
struct RedirectTests {
  @Test func aRedirectIsReportedNotFollowed() async throws {
    let completion =
      #"{"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}"#
    let target = try CannedHTTPServer(
      status: "200 OK", headers: ["Content-Type": "application/json"], body: completion)
    let location = "http://127.0.0.1:\(target.port)/v1/chat/completions"
    let redirect = try CannedHTTPServer(status: "307 Temporary Redirect", headers: ["Location": location])
    defer {
      target.stop()
      redirect.stop()
    }
    let configuration = OpenAIConfiguration(
      baseURL: "http://127.0.0.1:\(redirect.port)/v1", model: "m", apiKey: "secret-key", maximumRetries: 0)
    try await OpenAIModel.withModel(configuration) { model in
      let session = try LanguageModelSession(model: model, tools: [], instructions: "i")
      let error = await #expect(throws: LanguageModelError.self) { try await session.respond(to: "hi") }
      #expect(error?.kind == .httpStatus(307))
      let message = error?.description ?? ""
      #expect(message.contains("HTTP 307") && message.contains(location) && message.contains("base URL"), "\(message)")
      #expect(!message.contains("secret-key"))
    }
    #expect(target.requests == 0, "the request was sent where the redirect pointed")
    #expect(redirect.requests == 1)
  }
}
