public import Foundation
import Synchronization
public import ToolhostGeneration
import ToolhostLocal
import ToolhostOpenAI
public import ToolhostSession
public import ToolhostTools

/// The model a program gets without naming one, as FoundationModels' `SystemLanguageModel.default` is the device's
/// model: the local model when it is installed, else the HTTP model the environment names.
///
/// It is chosen once, when first used, from the environment:
/// 1. `TOOLHOST_MODEL`, when set, names it (`local`, `local:0.5b`, or an HTTP model's name at `TOOLHOST_BASE_URL`).
/// 2. Else the local model, when `toolhost model install` has set it up (see ``LocalModelInstallation/locate(environment:searchingFrom:)``).
/// 3. Else an HTTP model, when `TOOLHOST_BASE_URL`, `OPENAI_BASE_URL`, `TOOLHOST_API_KEY` or `OPENAI_API_KEY` is set.
/// 4. Else it is unavailable: ``availability`` says why, and every request throws a ``LanguageModelError`` of kind
///    `.configuration` saying what to install or set.
///
/// ```swift
/// let model = SystemLanguageModel.default
/// guard model.isAvailable else { print(model.availability); return }
/// let session = LanguageModelSession(tools: [GetWeather()], instructions: "Answer briefly.")
/// ```
public final class SystemLanguageModel: LanguageModel {
  /// Whether the model can answer.
  public enum Availability: Sendable, Equatable, CustomStringConvertible {
    /// It can.
    case available
    /// It cannot, and why.
    case unavailable(UnavailableReason)

    /// Why the model cannot answer (FoundationModels' place for the type).
    public typealias UnavailableReason = SystemLanguageModel.UnavailableReason

    /// `available`, or why not and what to do.
    public var description: String {
      switch self {
      case .available: "available"
      case .unavailable(let reason): "unavailable: \(reason)"
      }
    }
  }

  /// Why the model cannot answer.
  public enum UnavailableReason: Sendable, Equatable, CustomStringConvertible {
    /// No model is set up here: neither the local model nor an HTTP model's settings.
    case modelNotReady
    /// The settings name a model that cannot be used (the message says what is wrong; toolhost's).
    case misconfigured(String)
    /// FoundationModels' reason for a device without Apple Intelligence. Never given here; a case so that code
    /// switching over FoundationModels' reasons compiles.
    case deviceNotEligible
    /// FoundationModels' reason for Apple Intelligence turned off. Never given here, as ``deviceNotEligible``.
    case appleIntelligenceNotEnabled

    /// What is wrong and what to do.
    public var description: String {
      switch self {
      case .modelNotReady: SystemLanguageModel.notSetUp
      case .misconfigured(let message): message
      case .deviceNotEligible, .appleIntelligenceNotEnabled: "this device cannot run FoundationModels' system model"
      }
    }
  }

  /// The model chosen from this process's environment.
  public static let `default` = SystemLanguageModel()

  static let notSetUp =
    "no model is set up: install the local model with `\(LocalModelInstallation.setupCommand)`, or name an HTTP "
    + "model with TOOLHOST_BASE_URL (and TOOLHOST_MODEL, TOOLHOST_API_KEY), or pass a model to the session"

  private let choice: ModelChoice?
  private let environment: [String: String]
  private let unavailable: UnavailableReason?
  /// The chosen model's name for people, from its settings (before the model is made).
  private let plannedName: String
  /// The local model's context window, when the local model is chosen.
  let localContextSize: Int?
  /// The model, made at its first request and again after ``shutdown()``.
  private let made = Mutex<ChosenModel?>(nil)

  /// The model chosen from `environment` (see the type's description). Starts nothing: the model (its HTTP client, a
  /// local model's server) is made at the first request.
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.environment = environment
    let choice: ModelChoice?
    if let named = environment["TOOLHOST_MODEL"], !named.isEmpty {
      choice = ModelChoice()
    } else if (try? LocalModelInstallation.locate(environment: environment)) != nil {
      choice = ModelChoice(name: "local")
    } else if ["TOOLHOST_BASE_URL", "OPENAI_BASE_URL", "TOOLHOST_API_KEY", "OPENAI_API_KEY"].contains(where: {
      !(environment[$0] ?? "").isEmpty
    }) {
      choice = ModelChoice()
    } else {
      choice = nil
    }
    self.choice = choice
    guard let choice else {
      unavailable = .modelNotReady
      plannedName = "no model"
      localContextSize = nil
      return
    }
    // The settings are checked now, so that `availability` tells; nothing is started.
    do {
      switch try choice.configuration(environment: environment) {
      case .local(let configuration):
        plannedName = "local model \(configuration.server.modelPath)"
        localContextSize = configuration.server.contextSize
      case .openAI(let configuration):
        try configuration.validate()
        plannedName = "\(configuration.model) at \(configuration.baseURL)"
        localContextSize = nil
      }
      unavailable = nil
    } catch {
      unavailable = .misconfigured("\(error)")
      plannedName = "no model"
      localContextSize = nil
    }
  }

  deinit {
    // A model that was made owns an HTTP client, which must be shut down before it goes.
    if let chosen = made.withLock({ $0.take() }) { Task { await chosen.shutdown() } }
  }

  /// Whether the model can answer, and if not why.
  public var availability: Availability { unavailable.map { .unavailable($0) } ?? .available }

  /// Whether the model can answer.
  public var isAvailable: Bool { unavailable == nil }

  /// The chosen model's name, or `no model` when none is set up.
  public var displayName: String { made.withLock { $0?.model.displayName } ?? plannedName }

  /// The model, made now if it was not yet.
  private func model() throws(LanguageModelError) -> any LanguageModel {
    guard let choice, unavailable == nil else {
      throw LanguageModelError(kind: .configuration, message: unavailable?.description ?? Self.notSetUp)
    }
    return try made.withLock { made throws(LanguageModelError) -> any LanguageModel in
      if let made { return made.model }
      do {
        let chosen = try choice.makeModel(environment: environment)
        made = chosen
        return chosen.model
      } catch {
        throw LanguageModelError(kind: .configuration, message: "\(error)")
      }
    }
  }

  /// The chosen model's next turn.
  ///
  /// - Throws: the chosen model's errors, or ``LanguageModelError`` of kind `.configuration` when none is set up.
  public func turn(for request: ModelRequest) async throws -> ModelTurn {
    try await model().turn(for: request)
  }

  /// The chosen model's next turn, streamed.
  public func streamTurn(for request: ModelRequest) -> ModelStream {
    do { return try model().streamTurn(for: request) } catch {
      return AsyncThrowingStream { $0.finish(throwing: error) }
    }
  }

  /// Gets the chosen model ready (a local model starts its server).
  public func prewarm(for request: ModelRequest) async {
    guard let model = try? model() else { return }
    await model.prewarm(for: request)
  }

  /// Stops the chosen model's HTTP client and, for a local model, its server. A later request makes the model again.
  public func shutdown() async {
    if let chosen = made.withLock({ $0.take() }) { await chosen.shutdown() }
  }
}

extension LanguageModelSession {
  /// A session with the default model (``SystemLanguageModel/default``), as FoundationModels makes one.
  ///
  /// Does not throw: a tool whose schema does not compile, or a default model that is not set up, makes the first
  /// request throw (a ``ToolCallError`` or a ``LanguageModelError`` saying what to do).
  @_disfavoredOverload  // as FoundationModels' is: `instructions: nil` means the `Instructions?` form
  public convenience init(
    model: SystemLanguageModel = .default, tools: [any Tool] = [], instructions: String? = nil
  ) {
    self.init(model: model as any LanguageModel, deferringErrorsOf: tools, instructions: instructions)
  }

  /// A session with the default model and ``Instructions`` (FoundationModels' form). Does not throw, as the form with
  /// a `String` does not.
  public convenience init(model: SystemLanguageModel = .default, tools: [any Tool] = [], instructions: Instructions?) {
    self.init(model: model as any LanguageModel, deferringErrorsOf: tools, instructions: instructions?.text)
  }

  /// A session with the default model and instructions written with ``InstructionsBuilder``:
  ///
  /// ```swift
  /// let session = LanguageModelSession(tools: [GetWeather()]) {
  ///   "Answer from the tools' results."
  /// }
  /// ```
  /// - Throws: what `instructions` throws.
  public convenience init(
    model: SystemLanguageModel = .default, tools: [any Tool] = [],
    @InstructionsBuilder instructions: () throws -> Instructions
  ) rethrows {
    self.init(model: model as any LanguageModel, deferringErrorsOf: tools, instructions: try instructions().text)
  }

  /// A session with the default model that continues a transcript.
  public convenience init(model: SystemLanguageModel = .default, tools: [any Tool] = [], transcript: Transcript) {
    self.init(model: model as any LanguageModel, deferringErrorsOf: tools, transcript: transcript)
  }

  /// A session whose model, instructions and tools come from a dynamic profile (FoundationModels' form): the model a
  /// `.model(_:)` modifier names, else the default model.
  ///
  /// ```swift
  /// let session = LanguageModelSession(profile: RecipeProfile())
  /// ```
  public convenience init(
    profile: sending some LanguageModelSession.DynamicProfile, history: some Collection<Transcript.Entry> = []
  ) {
    self.init(model: SystemLanguageModel.default as any LanguageModel, profile: profile, history: history)
  }

  /// A session whose instructions and tools are dynamic instructions, worked out again before every model turn
  /// (FoundationModels' form).
  public convenience init(
    model: some LanguageModel = SystemLanguageModel.default, dynamicInstructions: sending some DynamicInstructions,
    history: some Collection<Transcript.Entry> = []
  ) {
    self.init(model: model as any LanguageModel, profile: Profile { dynamicInstructions }, history: history)
  }
}
