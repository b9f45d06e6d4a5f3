import Foundation
import Synchronization
import Testing
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

@testable import ToolhostLocal

#if canImport(Glibc)
  import Glibc
#endif

/// What happens without the set-up: clear errors that name the command. Needs no model.
@Suite struct LocalModelSetupTests {
  @Test func missingSetUpNamesTheCommand() async throws {
    let home = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: home) }
    let env = LocalTestEnvironment.environment(
      home: home, extra: ["TOOLHOST_LOCAL_DIR": home.appendingPathComponent("nothing").path])
    let host = try HostProcess(
      ["ask", "--model", "local", "--no-tools", "hi"], environment: env, workingDirectory: home)
    defer { host.cleanUp() }
    host.closeInput()
    let status = await host.waitForExit(seconds: 30)
    #expect(status == 64, "\(host.stderr)")
    #expect(host.stderr.contains("toolhost model install"), "\(host.stderr)")
    #expect(host.stdout.isEmpty)
  }

  @Test func locatingWithoutAnInstallationNamesTheCommand() throws {
    let empty = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: empty) }
    #expect {
      try LocalModelInstallation.locate(environment: ["HOME": empty.path], searchingFrom: [empty.path])
    } throws: { error in
      let e = error as? LanguageModelError
      return e?.kind == .configuration && e?.message.contains("run `toolhost model install`") == true
    }
  }

  @Test func aFileThatIsNotGGUFIsRefused() throws {
    let dir = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    let installation = LocalModelInstallation(directory: dir.path)
    let text = dir.appendingPathComponent("notes.gguf")
    try Data("hello".utf8).write(to: text)
    #expect {
      try LocalModelSpecifier.modelPath(for: "local:\(text.path)", installation: installation)
    } throws: { error in
      (error as? LanguageModelError)?.message.contains("is not a GGUF model file") == true
    }
    #expect {
      try LocalModelSpecifier.modelPath(for: "local:\(dir.path)/missing.gguf", installation: installation)
    } throws: { error in
      (error as? LanguageModelError)?.message.contains("no model file at") == true
    }
    #expect(!LocalModelSpecifier.isLocal("gpt-4o-mini"))
    #expect(LocalModelSpecifier.isLocal("local:/m.gguf"))
  }

  @Test func theSmallModelNamesItsInstallOption() throws {
    let dir = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    let installation = LocalModelInstallation(directory: dir.path)
    #expect {
      try LocalModelSpecifier.modelPath(for: "local:0.5b", installation: installation)
    } throws: { error in
      (error as? LanguageModelError)?.message.contains("toolhost model install --with-0.5b") == true
    }
    try FileManager.default.createDirectory(
      at: dir.appendingPathComponent("models"), withIntermediateDirectories: true)
    try Data("GGUF....".utf8).write(to: URL(fileURLWithPath: installation.smallModel))
    #expect(
      try LocalModelSpecifier.modelPath(for: "local:0.5b", installation: installation) == installation.smallModel)
  }

  @Test func theDefaultModelIsTheLargerOneByEitherName() throws {
    let dir = try TemporaryFolder.make(prefix: "toolhost-local-tests")
    defer { try? FileManager.default.removeItem(at: dir) }
    let installation = LocalModelInstallation(directory: dir.path)
    #expect(installation.defaultModel.hasSuffix("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    try FileManager.default.createDirectory(
      at: dir.appendingPathComponent("models"), withIntermediateDirectories: true)
    try Data("GGUF....".utf8).write(to: URL(fileURLWithPath: installation.defaultModel))
    #expect(try LocalModelSpecifier.modelPath(for: "local", installation: installation) == installation.defaultModel)
    #expect(
      try LocalModelSpecifier.modelPath(for: "local:1.5b", installation: installation) == installation.defaultModel)
  }

  @Test func keepAliveTimesAreRead() {
    #expect(SharedServerConfiguration.parseKeepAlive("300") == .seconds(300))
    #expect(SharedServerConfiguration.parseKeepAlive("90s") == .seconds(90))
    #expect(SharedServerConfiguration.parseKeepAlive("5m") == .seconds(300))
    #expect(SharedServerConfiguration.parseKeepAlive("1h30m") == .seconds(5400))
    for bad in ["", "0", "-5", "5x", "m", "5m3", "1.5h"] {
      #expect(SharedServerConfiguration.parseKeepAlive(bad) == nil, "\(bad)")
    }
  }
}

/// What the local model sends, without a server: defaults, and a long conversation fitted to the context.
@Suite("local model requests")
struct LocalModelRequestTests {
  @Test func aLongConversationIsFittedToTheContextWindow() async {
    let server = LocalServerConfiguration(
      python: "/nonexistent/python", modelPath: "/nonexistent/model.gguf", contextSize: 4096, logPath: "/dev/null")
    let model = LocalModel(configuration: LocalModelConfiguration(server: server))
    var transcript = Transcript(entries: [.instructions(.init(text: "Be brief."))])
    for i in 0..<300 {
      transcript.append(.prompt(.init(text: "question \(i): " + String(repeating: "words ", count: 20))))
      transcript.append(.response(.init(text: "answer \(i): " + String(repeating: "more ", count: 30))))
    }
    transcript.append(.prompt(.init(text: "last question")))
    let tool = Transcript.ToolDefinition(
      name: "getWeather", description: "Weather.",
      parameters: ["type": "object", "properties": ["city": ["type": "string"]]])
    let sent = model.prepared(ModelRequest(transcript: transcript, tools: [tool], toolChoice: .auto))
    #expect(sent.options.maximumResponseTokens == 512)
    #expect(sent.options.temperature == 0)
    let tokens = sent.transcript.entries.map(Transcript.estimatedTokens).reduce(0, +)
    #expect(tokens <= 4096 - 512, "\(tokens)")
    #expect(sent.transcript.entries.count < transcript.entries.count)
    #expect(sent.transcript.lastPrompt == "last question")
    #expect(sent.transcript.entries.first?.type == "instructions")
    // A short one is sent whole, so llama.cpp's cache of its start still holds.
    let short = Transcript(entries: Array(transcript.entries.prefix(5)))
    #expect(model.prepared(ModelRequest(transcript: short, tools: [tool], toolChoice: .auto)).transcript == short)
    await model.shutdown()
  }
}
