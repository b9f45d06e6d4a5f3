public import Foundation
public import ToolhostLocal
public import ToolhostOpenAI
public import ToolhostSession

/// The model a name chooses, with the environment's defaults: a local GGUF model run with llama.cpp (`local`,
/// `local:0.5b`, `local:PATH`) or a model behind an OpenAI-compatible server (any other name).
///
/// ```swift
/// let chosen = try ModelChoice(name: "local").makeModel()
/// let session = try LanguageModelSession(model: chosen.model, instructions: "Be brief.")
/// print(try await session.respond(to: "Say hello.").content)
/// await chosen.shutdown()
/// ```
public struct ModelChoice: Sendable {
  /// The model's name; `nil` (or empty) for `$TOOLHOST_MODEL`, else ``OpenAIConfiguration/defaultModel``.
  public var name: String?
  /// An HTTP model's server, up to `/v1`; `nil` for `$TOOLHOST_BASE_URL`, `$OPENAI_BASE_URL`, else OpenAI's. A local
  /// model takes none.
  public var baseURL: String?
  /// How the model calls tools; `nil` for the model's default (native over HTTP, guided for a local model).
  public var toolCalling: ToolCallingStrategy?
  /// How long a local model's server stays up after its last request for the next program to reuse (`90s`, `5m`,
  /// `1h`); `nil` for `$TOOLHOST_MODEL_KEEP_ALIVE`, else a server that ends with this program.
  public var keepAlive: String?

  /// Makes a choice; every value left `nil` comes from the environment when the model is made.
  public init(
    name: String? = nil, baseURL: String? = nil, toolCalling: ToolCallingStrategy? = nil, keepAlive: String? = nil
  ) {
    self.name = name
    self.baseURL = baseURL
    self.toolCalling = toolCalling
    self.keepAlive = keepAlive
  }

  /// A chosen model's settings, before anything is started.
  public enum Configuration: Sendable {
    /// A local model.
    case local(LocalModelConfiguration)
    /// A model behind an OpenAI-compatible server.
    case openAI(OpenAIConfiguration)
  }

  /// This choice, or the local model in its place when nothing names a model (no name, no base URL, no
  /// `$TOOLHOST_MODEL`, `$TOOLHOST_BASE_URL` or `$OPENAI_BASE_URL`) and `toolhost model install` has set one up: what
  /// a program that works offline first (the chat page) runs by default.
  public func preferringLocal(environment: [String: String] = ProcessInfo.processInfo.environment) -> ModelChoice {
    let named = [
      name, baseURL, environment["TOOLHOST_MODEL"], environment["TOOLHOST_BASE_URL"],
      environment["OPENAI_BASE_URL"],
    ].contains { !($0 ?? "").isEmpty }
    guard !named, (try? LocalModelInstallation.locate(environment: environment)) != nil else { return self }
    var local = self
    local.name = "local"
    return local
  }

  /// The settings of the chosen model, read from `environment` where this choice leaves them open. Starts nothing.
  ///
  /// - Throws: ``ChatSetupError/baseURLForLocalModel`` for a local model given a base URL;
  ///   ``ChatSetupError/model(_:)`` when the local model's set-up or file is missing or the keep-alive time in the
  ///   environment is not a time. Does not check an HTTP model's settings (``makeModel(environment:onServerEvent:)``
  ///   does).
  public func configuration(environment: [String: String] = ProcessInfo.processInfo.environment)
    throws(ChatSetupError) -> Configuration
  {
    let name = self.name ?? environment["TOOLHOST_MODEL"].flatMap { $0.isEmpty ? nil : $0 }
    if let name, LocalModelSpecifier.isLocal(name) {
      if baseURL != nil { throw .baseURLForLocalModel }
      var configuration: LocalModelConfiguration
      do {
        let keepAlive = try Self.keepAlive(keepAlive, environment: environment, fallback: Self.defaultKeepAlive)
        configuration = try LocalModelConfiguration.named(name, environment: environment, keepAlive: keepAlive)
      } catch {
        throw .model(error)
      }
      if let toolCalling { configuration.toolCalling = toolCalling }
      return .local(configuration)
    }
    var configuration = OpenAIConfiguration.fromEnvironment(environment, model: self.name, baseURL: baseURL)
    if let toolCalling { configuration.toolCalling = toolCalling }
    return .openAI(configuration)
  }

  /// Makes the chosen model (a local model's server starts on its first request, not here).
  ///
  /// `onServerEvent` hears a local model's server start, get ready, restart and stop.
  ///
  /// - Throws: what ``configuration(environment:)`` throws, and ``ChatSetupError/model(_:)`` when an HTTP model's
  ///   base URL is not an http(s) URL or OpenAI gets no API key.
  public func makeModel(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    onServerEvent: @escaping @Sendable (LocalServerEvent) -> Void = { _ in }
  ) throws(ChatSetupError) -> ChosenModel {
    switch try configuration(environment: environment) {
    case .local(let configuration):
      let local = LocalModel(configuration: configuration, onEvent: onServerEvent)
      return ChosenModel(model: local, shutdown: { await local.shutdown() })
    case .openAI(let configuration):
      let remote: OpenAIModel
      do { remote = try OpenAIModel(configuration: configuration) } catch { throw .model(error) }
      return ChosenModel(model: remote, shutdown: { try? await remote.shutdown() })
    }
  }

  /// How long a local model's server stays loaded after `ask` or `chat` when neither `--keep-alive` nor
  /// `$TOOLHOST_MODEL_KEEP_ALIVE` says: 5 minutes, as Ollama keeps a model, so that the next question does not pay
  /// the model's load and the tool list's first reading again (issue 49).
  public static let defaultKeepAlive: Duration = .seconds(300)

  /// The keep-alive time of `text`, else of `$TOOLHOST_MODEL_KEEP_ALIVE`, else `fallback`; `nil` means no shared
  /// server (the model's server ends with the program, unless a shared one of that model already runs), which `0`
  /// asks for in either place. A `text` that is not a time counts as unset (check it first with
  /// ``SharedServerConfiguration/parseKeepAlive(_:)``).
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when the environment's value is not a time.
  public static func keepAlive(
    _ text: String?, environment: [String: String], fallback: Duration? = nil
  ) throws(LanguageModelError) -> Duration? {
    if text == "0" { return nil }
    if let text, let d = SharedServerConfiguration.parseKeepAlive(text) { return d }
    if let text = environment["TOOLHOST_MODEL_KEEP_ALIVE"], !text.isEmpty {
      if text == "0" { return nil }
      guard let d = SharedServerConfiguration.parseKeepAlive(text) else {
        throw LanguageModelError(
          kind: .configuration,
          message: "TOOLHOST_MODEL_KEEP_ALIVE is \(text), not a time such as 90s, 5m or 1h (or 0 for none)")
      }
      return d
    }
    return fallback
  }
}

/// A model that was made, and how to stop it.
public struct ChosenModel: Sendable {
  /// The model.
  public let model: any LanguageModel
  /// Stops the model's HTTP client and, for a local model, its server (a shared one stops by itself when idle).
  /// Does not throw.
  public let shutdown: @Sendable () async -> Void

  /// Pairs a model with its shutdown.
  public init(model: any LanguageModel, shutdown: @escaping @Sendable () async -> Void) {
    self.model = model
    self.shutdown = shutdown
  }
}
