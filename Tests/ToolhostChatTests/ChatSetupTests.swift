import Foundation
import Synchronization
import Testing
import ToolhostChat
import ToolhostCore
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// A plugin folder with one sh tool per name (never run here), removed at the end.
final class ToolFolder: Sendable {
  let folder = TemporaryFolder(prefix: "toolhost-chat")

  init(tools: [String]) {
    for tool in tools {
      folder.plugin(
        tool,
        manifest: """
          {"manifestVersion": 1, "command": "run",
           "tools": [{"name": "\(tool)", "description": "test tool \(tool)", "inputSchema": {"type": "object"}}]}
          """,
        script: "#!/bin/sh\necho {}\n")
    }
  }

  /// The catalog of the folder, with `denied` tools denied by the user's rules.
  func catalog(denying denied: [String] = []) async -> PluginCatalog {
    var catalog = await PluginCatalog.discover(folders: [folder.path])
    catalog.trust.configuration.toolRules = denied.map { .init(pattern: $0, value: .deny) }
    return catalog
  }
}

/// A model that answers every request with "ok" and is never started.
func answering() -> ScriptedModel { ScriptedModel(turns: [ModelTurn(text: "ok")]) }

@Suite("Tool selection")
struct ToolSelectionTests {
  let folder = ToolFolder(tools: ["readNote", "wipeNotes", "getWeather"])

  @Test func allowedLeavesOutTheToolsTheRulesDeny() async throws {
    let catalog = await folder.catalog(denying: ["wipeNotes"])
    let names = try ToolSelection.allowed.tools(from: catalog).map(\.name)
    #expect(names.sorted() == ["getWeather", "readNote"])
    #expect(try ToolSelection.none.tools(from: catalog).isEmpty)
    #expect(ToolSelection.allowed.discoveryNames == nil)
    #expect(ToolSelection.none.discoveryNames == [])
  }

  @Test func namedToolsComeInTheirOrderAndADeniedOneIsAnError() async throws {
    let catalog = await folder.catalog(denying: ["wipe*"])
    let selection = ToolSelection.named(["readNote", "getWeather"])
    #expect(try selection.tools(from: catalog).map(\.name) == ["readNote", "getWeather"])
    #expect(try selection.registry(from: catalog).tools.map(\.name) == ["readNote", "getWeather"])
    #expect(selection.discoveryNames == ["readNote", "getWeather"])
    #expect(selection.preferredNames == ["readNote", "getWeather"])
    do {
      _ = try ToolSelection.named(["readNote", "wipeNotes"]).tools(from: catalog)
      Issue.record("a denied tool was selected")
    } catch {
      guard case .deniedTool(let name, let reason) = error else { throw error }
      #expect(name == "wipeNotes")
      #expect(reason.contains("wipe*"), "\(reason)")
      #expect(error.description.hasPrefix("wipeNotes is denied by config.json ("), "\(error)")
    }
  }

  @Test func anUnknownNameSuggestsTheNearestWithoutNamingAnOption() async throws {
    let catalog = await folder.catalog()
    do {
      _ = try ToolSelection.named(["readNot"]).tools(from: catalog)
      Issue.record("an unknown tool was selected")
    } catch {
      guard case .missingTool(.unknown(let name, let suggestions)) = error else { throw error }
      #expect(name == "readNot" && suggestions == ["readNote"])
      #expect(error.description == "no tool named readNot (did you mean readNote?)")
    }
    do {
      _ = try ToolSelection.named(["zzz"]).tools(from: catalog)
      Issue.record("an unknown tool was selected")
    } catch {
      #expect(error.description == "no tool named zzz")
    }
  }

  @Test func aBrokenToolSaysWhy() async throws {
    var catalog = await folder.catalog()
    catalog.diagnostics.append(
      PluginDiagnostic(kind: .unsupportedSchema, path: "/p/toolhost.json", tool: "parse", message: "bad", isError: true)
    )
    do {
      _ = try ToolSelection.named(["parse"]).tools(from: catalog)
      Issue.record("a broken tool was selected")
    } catch {
      guard case .missingTool(.broken(let name, _)) = error else { throw error }
      #expect(name == "parse")
      #expect(error.description.hasPrefix("tool parse is broken: "), "\(error)")
    }
  }
}

@Suite("Chat setup")
struct ChatSetupTests {
  let folder = ToolFolder(tools: ["readNote", "wipeNotes"])

  @Test func resumingReplacesOrInsertsTheInstructions() {
    let saved = Transcript(entries: [
      .instructions(Transcript.Instructions(text: "old")), .prompt(Transcript.Prompt(text: "hi")),
      .response(Transcript.Response(text: "hello")),
    ])
    let replaced = saved.replacingInstructions(with: "new")
    #expect(replaced.count == 3)
    guard case .instructions(let first) = replaced.entries[0] else {
      Issue.record("no instructions first")
      return
    }
    #expect(first.text == "new")
    let bare = Transcript(entries: Array(saved.entries.dropFirst()))
    let inserted = bare.replacingInstructions(with: "new")
    #expect(inserted.count == 3)
    if case .instructions(let i) = inserted.entries[0] {
      #expect(i.text == "new")
    } else {
      Issue.record("not inserted")
    }
  }

  @Test func aResumedSessionContinuesTheTranscriptWithTheNewInstructions() async throws {
    let saved = Transcript(entries: [
      .instructions(Transcript.Instructions(text: "old")), .prompt(Transcript.Prompt(text: "hi")),
      .response(Transcript.Response(text: "hello")),
    ])
    var setup = ChatSetup(tools: .named(["readNote"]), resumedTranscript: saved)
    let session = try await setup.makeSession(model: answering(), catalog: folder.catalog())
    #expect(session.transcript.count == 3)
    guard case .instructions(let first) = session.transcript.entries[0] else {
      Issue.record("no instructions first")
      return
    }
    #expect(first.text.hasPrefix("Use the tool readNote to answer"), "\(first.text)")
    // Without instructions of its own (no named tools, none given), the saved ones are kept.
    setup.tools = .allowed
    let kept = try await setup.makeSession(model: answering(), catalog: folder.catalog())
    #expect(kept.transcript == saved)
  }

  @Test func theSessionGetsThePolicyAndOptions() async throws {
    let setup = ChatSetup(
      tools: .allowed, instructions: "Be brief.", maximumToolRounds: 3, toolTimeout: .seconds(2), requireTool: true,
      temperature: 0.5)
    let session = try await setup.makeSession(model: answering(), catalog: folder.catalog(denying: ["wipeNotes"]))
    #expect(session.tools.tools.map(\.name) == ["readNote"])
    #expect(session.policy.maximumToolRounds == 3)
    #expect(session.policy.toolFailures == .reportToModel)
    #expect(session.policy.toolContext.timeout == .seconds(2))
    #expect(setup.generationOptions.toolCallingMode == .requiredUntilFirstCall)
    #expect(setup.generationOptions.temperature == 0.5)
    #expect(ChatSetup().generationOptions.toolCallingMode == .allowed)
    if case .instructions(let first) = session.transcript.entries.first {
      #expect(first.text == "Be brief.")
    } else {
      Issue.record("no instructions")
    }
    // `ask` tools are refused when there is no one to ask, with the program's hint; allowed with assumeYes.
    let readNote = try #require(session.tools.tool(named: "readNote"))
    let call = Transcript.ToolCall(id: "c1", toolName: "readNote", arguments: [:])
    let refusal = await session.policy.approveCall?(call, readNote)
    guard case .refuse(let reason)? = refusal else {
      Issue.record("an unannotated tool ran without asking: \(String(describing: refusal))")
      return
    }
    // The model is told only that the user did not approve; the program's hint goes to the user, through onNote.
    #expect(reason == "the user has not approved running readNote", "\(reason)")
    let notes = Mutex<[String]>([])
    let hinted = setup.makeSession(
      model: answering(), tools: session.tools, rules: UserConfiguration(path: ""),
      approval: ChatApproval(onNote: { note in notes.withLock { $0.append(note) } }, unattendedHint: "say yes"))
    if case .refuse(let reason)? = await hinted.policy.approveCall?(call, readNote) {
      #expect(!reason.contains("say yes"), "\(reason)")
    }
    let told = notes.withLock { $0 }
    #expect(told.count == 1 && told[0].contains("no terminal to ask on (say yes, or "), "\(told)")
    var yes = setup
    yes.assumeYes = true
    let unattended = try await yes.makeSession(model: answering(), catalog: folder.catalog())
    #expect(await unattended.policy.approveCall?(call, readNote) == .allow)
  }
}
