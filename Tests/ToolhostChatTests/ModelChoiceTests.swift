import Foundation
import Testing
import ToolhostChat
import ToolhostLocal
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

/// A finished local-model installation whose Python is never run, and a GGUF file (only its magic), removed at the
/// end.
final class FakeInstallation: Sendable {
  let folder = TemporaryFolder(prefix: "toolhost-chat-local")
  var directory: String { folder.path }
  var model: String { directory + "/tiny.gguf" }

  init() {
    folder.write("venv/bin/python", "#!/bin/sh\nexit 1\n", executable: true)
    folder.write("ready", "")
    folder.write("tiny.gguf", "GGUF\u{3}\0\0\0")
  }
}

@Suite("Model choice")
struct ModelChoiceTests {
  @Test func anHTTPModelComesFromTheNameAndTheEnvironment() throws {
    let environment = ["TOOLHOST_BASE_URL": "http://127.0.0.1:9/v1", "TOOLHOST_MODEL": "from-env"]
    guard case .openAI(let named) = try ModelChoice(name: "gpt-test").configuration(environment: environment) else {
      Issue.record("not an HTTP model")
      return
    }
    #expect(named.model == "gpt-test" && named.baseURL == "http://127.0.0.1:9/v1")
    guard case .openAI(let fromEnvironment) = try ModelChoice().configuration(environment: environment) else {
      Issue.record("not an HTTP model")
      return
    }
    #expect(fromEnvironment.model == "from-env")
    guard
      case .openAI(let defaults) = try ModelChoice(baseURL: "http://h/v1", toolCalling: .guided).configuration(
        environment: ["TOOLHOST_MODEL": ""])
    else {
      Issue.record("not an HTTP model")
      return
    }
    #expect(defaults.model == OpenAIConfiguration.defaultModel && defaults.baseURL == "http://h/v1")
    #expect(defaults.toolCalling == .guided)
  }

  @Test func makingAnHTTPModelChecksItsSettings() async throws {
    let chosen = try ModelChoice(name: "gpt-test", baseURL: "http://127.0.0.1:9/v1").makeModel(environment: [:])
    #expect(chosen.model.displayName == "gpt-test at http://127.0.0.1:9/v1")
    await chosen.shutdown()
    #expect(throws: ChatSetupError.self) {
      try ModelChoice(name: "gpt-test", baseURL: "ftp://example.com").makeModel(environment: [:])
    }
  }

  @Test func aLocalNameChoosesALocalModel() async throws {
    let installation = FakeInstallation()
    let environment = ["TOOLHOST_LOCAL_DIR": installation.directory]
    let choice = ModelChoice(name: "local:" + installation.model, keepAlive: "5m")
    guard case .local(let configuration) = try choice.configuration(environment: environment) else {
      Issue.record("not a local model")
      return
    }
    #expect(configuration.server.modelPath == installation.model)
    #expect(configuration.toolCalling == .guided)
    #expect(configuration.shared?.keepAlive == .seconds(300))
    // `TOOLHOST_MODEL` names it too; without a keep-alive the server stays for the default time (issue 49), and
    // with a keep-alive of 0 it is the program's own.
    let fromEnvironment = environment.merging(["TOOLHOST_MODEL": "local:" + installation.model]) { $1 }
    guard case .local(let kept) = try ModelChoice().configuration(environment: fromEnvironment) else {
      Issue.record("not a local model")
      return
    }
    #expect(kept.shared?.keepAlive == ModelChoice.defaultKeepAlive)
    guard
      case .local(let own) = try ModelChoice(toolCalling: .native, keepAlive: "0").configuration(
        environment: fromEnvironment)
    else {
      Issue.record("not a local model")
      return
    }
    #expect(own.shared == nil && own.toolCalling == .native)
    // Made, not started: the server starts on the first request.
    let chosen = try choice.makeModel(environment: environment)
    #expect(chosen.model.displayName == "tiny (local llama.cpp)")
    await chosen.shutdown()
  }

  @Test func aLocalModelRefusesABaseURLAndReportsItsSetUp() throws {
    let installation = FakeInstallation()
    let environment = ["TOOLHOST_LOCAL_DIR": installation.directory, "TOOLHOST_MODEL": "local"]
    #expect {
      try ModelChoice(baseURL: "http://127.0.0.1:9/v1").configuration(environment: environment)
    } throws: { error in
      guard case ChatSetupError.baseURLForLocalModel = error else { return false }
      return !"\(error)".contains("--")
    }
    #expect {
      try ModelChoice().configuration(environment: environment.merging(["TOOLHOST_MODEL_KEEP_ALIVE": "soon"]) { $1 })
    } throws: { error in
      guard case ChatSetupError.model(let e) = error else { return false }
      return e.description.contains("TOOLHOST_MODEL_KEEP_ALIVE is soon, not a time")
    }
    #expect {
      try ModelChoice(name: "local").configuration(environment: ["TOOLHOST_LOCAL_DIR": installation.directory + "/no"])
    } throws: { error in
      guard case ChatSetupError.model(let e) = error else { return false }
      return e.kind == .configuration && e.description.contains("TOOLHOST_LOCAL_DIR")
    }
  }

  @Test func theKeepAliveTimeComesFromTheTextTheEnvironmentOrTheFallback() throws {
    #expect(try ModelChoice.keepAlive("90s", environment: ["TOOLHOST_MODEL_KEEP_ALIVE": "5m"]) == .seconds(90))
    #expect(try ModelChoice.keepAlive(nil, environment: ["TOOLHOST_MODEL_KEEP_ALIVE": "5m"]) == .seconds(300))
    #expect(try ModelChoice.keepAlive(nil, environment: [:]) == nil)
    #expect(try ModelChoice.keepAlive(nil, environment: [:], fallback: .seconds(1)) == .seconds(1))
    // 0 asks for none, over the environment and the fallback.
    #expect(
      try ModelChoice.keepAlive("0", environment: ["TOOLHOST_MODEL_KEEP_ALIVE": "5m"], fallback: .seconds(1)) == nil)
    #expect(
      try ModelChoice.keepAlive(nil, environment: ["TOOLHOST_MODEL_KEEP_ALIVE": "0"], fallback: .seconds(1)) == nil)
    #expect(ModelChoice.defaultKeepAlive == .seconds(300))
  }
}
