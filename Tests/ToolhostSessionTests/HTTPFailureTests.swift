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

/// A listening TCP socket that never accepts: connections sit in the backlog with no reply.
final class SilentListener: Sendable {
  let fd: Int32
  let port: Int

  init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    self.fd = fd
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 8) == 0 else { throw TestFailure("cannot listen: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  func close() { _ = Glibc.close(fd) }
}
