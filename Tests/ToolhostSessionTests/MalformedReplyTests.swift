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

/// Replies no well-behaved server sends, from a canned server.
@Suite("Malformed replies")
struct MalformedReplyTests {
  func failure(_ response: String, streaming: Bool) async throws -> LanguageModelError? {
    let server = try ScriptedHTTPServer(replies: [.init(response)])
    defer { server.stop() }
    let configuration = OpenAIConfiguration(baseURL: server.baseURL, model: "m", maximumRetries: 0)
    return try await OpenAIModel.withModel(configuration) { model in
      let session = try LanguageModelSession(model: model, tools: [AddTool()])
      let error = await #expect(throws: LanguageModelError.self) {
        if streaming {
          _ = try await session.streamResponse(to: "hi").collect()
        } else {
          _ = try await session.respond(to: "hi")
        }
      }
      #expect(session.transcript.isEmpty)
      #expect(
        error?.description.contains(server.baseURL + "/chat/completions") == true,
        "\(String(describing: error))")
      return error
    }
  }

  @Test func notJSON() async throws {
    let error = try await failure(
      ScriptedHTTPServer.ok("text/html", "<html>Bad gateway</html>"), streaming: false)
    #expect(error?.kind == .malformedReply)
    #expect(
      error?.description.contains("«<html>Bad gateway</html>»") == true,
      "\(String(describing: error))")
  }

  @Test func jsonWithoutChoices() async throws {
    let error = try await failure(
      ScriptedHTTPServer.ok("application/json", #"{"id":"x","object":"chat.completion"}"#),
      streaming: false)
    #expect(error?.kind == .malformedReply)
    #expect(
      error?.description.contains("no \"choices\" array") == true, "\(String(describing: error))")
  }

  @Test func errorObjectInA200Reply() async throws {
    let error = try await failure(
      ScriptedHTTPServer.ok("application/json", #"{"error":{"message":"context length exceeded"}}"#),
      streaming: false)
    #expect(error?.kind == .serverReported)
    #expect(error?.description.contains("context length exceeded") == true)
  }

  @Test func streamCutShort() async throws {
    let chunk = #"data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}"# + "\n\n"
    let error = try await failure(ScriptedHTTPServer.ok("text/event-stream", chunk), streaming: true)
    #expect(error?.kind == .malformedReply)
    #expect(error?.description.contains("ended its stream before the turn was finished") == true)
  }

  @Test func errorEventInAStream() async throws {
    let body = #"data: {"error":{"message":"model crashed mid-stream"}}"# + "\n\n"
    let error = try await failure(ScriptedHTTPServer.ok("text/event-stream", body), streaming: true)
    #expect(error?.kind == .serverReported)
    #expect(error?.description.contains("model crashed mid-stream") == true)
  }

  @Test func chunkThatIsNotJSON() async throws {
    let error = try await failure(
      ScriptedHTTPServer.ok("text/event-stream", "data: {oops\n\n"), streaming: true)
    #expect(error?.kind == .malformedReply)
  }

  @Test func requestsSayWhichToolhostSendsThem() async throws {
    let body = #"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#
    let server = try ScriptedHTTPServer(replies: [.init(ScriptedHTTPServer.ok("application/json", body))])
    defer { server.stop() }
    try await OpenAIModel.withModel(OpenAIConfiguration(baseURL: server.baseURL, model: "m")) { model in
      let session = LanguageModelSession(model: model, tools: try ToolRegistry([]))
      _ = try await session.respond(to: "hi")
    }
    #expect(server.requestHeads.first?.contains("\r\nuser-agent: toolhost/\(ToolhostVersion.version)") == true)
  }

  @Test func serverThatIgnoresStreamTrue() async throws {
    let body =
      #"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#
    let server = try ScriptedHTTPServer(replies: [.init(ScriptedHTTPServer.ok("application/json", body))])
    defer { server.stop() }
    let configuration = OpenAIConfiguration(baseURL: server.baseURL, model: "m")
    try await OpenAIModel.withModel(configuration) { model in
      let session = LanguageModelSession(model: model, tools: try ToolRegistry([]))
      #expect(try await session.streamResponse(to: "hi").collect().content == "whole")
    }
  }
}
