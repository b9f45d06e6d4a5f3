import Foundation
import Testing
import ToolhostLocal
import ToolhostSession
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The server supervision with a stand-in server (Support/stub_server.py), so failures can be made on purpose.
@Suite(.serialized) struct LocalServerTests {
  let work: URL

  init() throws {
    work = try TemporaryFolder.make(prefix: "toolhost-local-tests")
  }

  func model(_ mode: String) throws -> LocalModel {
    let file = work.appendingPathComponent("\(mode).model")
    try Data(mode.utf8).write(to: file)
    let stub = TestPackage.root.appendingPathComponent(
      "Tests/ToolhostLocalTests/Support/stub_server.py")
    return LocalModel(
      configuration: LocalModelConfiguration(
        server: LocalServerConfiguration(
          python: stub.path, modelPath: file.path, startupTimeout: .seconds(30),
          logPath: work.appendingPathComponent("logs/server.log").path)))
  }

  let request = ModelRequest(
    transcript: Transcript(entries: [.prompt(.init(text: "hi"))]), tools: [], toolChoice: .none)

  @Test func aServerThatDiesOnEveryRequestIsRestartedOnceThenReportedWithItsLog() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let model = try model("die-on-chat")
    await #expect {
      _ = try await model.turn(for: request)
    } throws: { error in
      guard let e = error as? LanguageModelError else { return false }
      return e.message.contains("also after a restart")
        && e.message.contains("stub: dying on a chat request on purpose")
        && e.message.contains(work.appendingPathComponent("logs/server.log").path)
    }
    #expect(model.server.startCount == 2)
    await model.shutdown()
    #expect(LocalTestEnvironment.serverPIDs().isEmpty || model.server.pid == nil)
  }

  @Test func aServerThatAnswersIsReused() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let model = try model("answer")
    let first = try await model.turn(for: request)
    let second = try await model.turn(for: request)
    #expect(first.text == "stub answer" && second.text == "stub answer")
    #expect(model.server.startCount == 1)
    let pid = try #require(model.server.pid)
    await model.shutdown()
    #expect(await ProcessProbe.waitForEnd(pid, timeout: 5))
    await #expect(throws: LanguageModelError.self) { _ = try await model.turn(for: self.request) }
  }

  /// A server that exits while starting, and one whose first line on stdout is not the report of the port it bound
  /// (anything else is not trusted), are reported with what they printed.
  @Test(arguments: [
    ("die-at-start", ["exited with status 7 while starting", "stub: failing at start on purpose"]),
    ("chatty", ["printed \"stub: a line before the port\" instead of its port while starting"]),
  ])
  func aServerThatFailsToStartIsReportedWithItsLog(mode: String, expected: [String]) async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let model = try model(mode)
    await #expect {
      try await model.start()
    } throws: { error in
      guard let e = error as? LanguageModelError else { return false }
      return e.kind == .configuration && expected.allSatisfy { e.message.contains($0) }
    }
    #expect(model.server.pid == nil)
    await model.shutdown()
  }
}
