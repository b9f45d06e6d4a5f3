import AsyncHTTPClient
public import Foundation
import NIOCore
import Synchronization
import ToolhostGuided
public import ToolhostOpenAI
public import ToolhostSession

/// How to run a local model.
public struct LocalModelConfiguration: Sendable {
  /// The server: interpreter, model file, context, threads, log.
  public var server: LocalServerConfiguration
  /// How tool calls are obtained. Default ``ToolCallingStrategy/guided``: small models' native tool calls are
  /// unreliable.
  public var toolCalling: ToolCallingStrategy
  /// The sampling temperature used when a request sets none. Default 0 (greedy: the same question gets the same
  /// tool call).
  public var defaultTemperature: Double
  /// The reply length limit used when a request sets none. Default 512 tokens.
  public var defaultMaximumTokens: Int
  /// The longest wait for the next bytes of a reply. Default 120 s (a 2-core machine can take a while to read a
  /// long prompt).
  public var readTimeout: Duration
  /// A shared server (see ``SharedModelServer``) that stays up between programs for its keep-alive time, or `nil`
  /// (the default) for a server of this model's own, stopped by ``LocalModel/shutdown()`` and ended with the
  /// program.
  public var shared: SharedServerConfiguration?

  /// Makes a configuration.
  public init(
    server: LocalServerConfiguration, toolCalling: ToolCallingStrategy = .guided, defaultTemperature: Double = 0,
    defaultMaximumTokens: Int = 512, readTimeout: Duration = .seconds(120), shared: SharedServerConfiguration? = nil
  ) {
    self.shared = shared
    self.server = server
    self.toolCalling = toolCalling
    self.defaultTemperature = defaultTemperature
    self.defaultMaximumTokens = defaultMaximumTokens
    self.readTimeout = readTimeout
  }

  /// The configuration for a `--model` value: `local` (the installation's default model) or `local:PATH`, with the
  /// installation found by ``LocalModelInstallation/locate(environment:searchingFrom:)``. With `keepAlive`, the
  /// server is shared (recorded in the installation's ``LocalModelInstallation/runDirectory``) and stops after that
  /// long without requests. Without it, a shared server of that model that already runs (`toolhost model start`, or
  /// another program's keep-alive) is used, with the keep-alive it was started with; only when none runs does the
  /// model get a server of its own that ends with it.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when the set-up is missing (the message names
  ///   ``LocalModelInstallation/setupCommand``) or the model file is not usable.
  public static func named(
    _ name: String, environment: [String: String] = ProcessInfo.processInfo.environment, keepAlive: Duration? = nil
  ) throws(LanguageModelError) -> LocalModelConfiguration {
    guard LocalModelSpecifier.isLocal(name) else {
      throw LanguageModelError(
        kind: .configuration, message: "\(name) is not a local model (use `local` or `local:/path/model.gguf`)")
    }
    let installation = try LocalModelInstallation.locate(environment: environment)
    let path = try LocalModelSpecifier.modelPath(for: name, installation: installation)
    // The run folder is read only when no keep-alive is given.
    let keepAlive =
      keepAlive
      ?? SharedModelServer.running(in: installation.runDirectory).first { $0.model == path }.map {
        .seconds($0.keepAliveSeconds)
      }
    return LocalModelConfiguration(
      server: LocalServerConfiguration(
        python: installation.python, modelPath: path, logPath: installation.serverLog,
        promptCacheDirectory: installation.promptCacheDirectory),
      shared: keepAlive.map { SharedServerConfiguration(runDirectory: installation.runDirectory, keepAlive: $0) })
  }
}

/// A ``LanguageModel`` that runs a GGUF model on this machine with llama.cpp: the counterpart of FoundationModels'
/// on-device model.
///
/// The first request starts llama.cpp's server (see ``LocalModelServer``); later requests reuse it, and a server that
/// died is started again (a request that failed because it died is sent once more, unless part of its answer was
/// already streamed). Tool calls are guided by default (see ``GuidedToolCalls``). Call ``shutdown()`` when done, or
/// use ``withModel(_:_:)``; the server is also stopped when the process exits, and it ends by itself if toolhost
/// is killed.
///
/// ```swift
/// let configuration = try LocalModelConfiguration.named("local")  // after scripts/install-local-model
/// let answer = try await LocalModel.withModel(configuration) { model in
///   let session = try LanguageModelSession(model: model, tools: catalog.tools)
///   session.prewarm()  // start the server while the user types
///   return try await session.respond(to: "Find me a recipe for rye bread.").content
/// }
/// ```
public final class LocalModel: LanguageModel {
  /// The configuration.
  public let configuration: LocalModelConfiguration
  /// The server process manager (for a model without a shared server).
  public let server: LocalModelServer
  /// The shared server, when ``LocalModelConfiguration/shared`` is set.
  public let sharedServer: SharedModelServer?
  private let client: HTTPClient
  private let lastEndpoint = Mutex<LocalModelServer.Endpoint?>(nil)
  /// The OpenAI client of the server's endpoint, made on the first request to it and kept for the later ones; a
  /// restarted server (a new process, port or key) gets a new one, and ``shutdown()`` drops it.
  private let openAI = Mutex<EndpointClient?>(nil)

  /// An OpenAI client and the endpoint it talks to.
  private struct EndpointClient: Sendable {
    var endpoint: LocalModelServer.Endpoint
    var model: OpenAIModel

    /// Whether this client talks to `other`: the same process, port and key (the start-up time does not matter).
    func serves(_ other: LocalModelServer.Endpoint) -> Bool {
      endpoint.pid == other.pid && endpoint.port == other.port && endpoint.key == other.key
    }
  }

  /// Makes a model; the server starts on the first request (or ``start()``).
  ///
  /// `onEvent` hears when the server starts, is ready, restarts and stops.
  public init(
    configuration: LocalModelConfiguration, onEvent: @escaping @Sendable (LocalServerEvent) -> Void = { _ in }
  ) {
    self.configuration = configuration
    var http = HTTPClient.Configuration()
    http.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(600))
    // A refused connection (the server still loading) must fail at once, so readiness is polled every 100 ms.
    http.connectionPool.retryConnectionEstablishment = false
    // A redirect is reported, not followed: the chat goes nowhere but to the server toolhost runs.
    http.redirectConfiguration = .disallow
    self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
    let client = self.client
    self.server = LocalModelServer(configuration: configuration.server, httpClient: client, onEvent: onEvent)
    self.sharedServer = configuration.shared.map {
      SharedModelServer(server: configuration.server, shared: $0, httpClient: client, onEvent: onEvent)
    }
  }

  /// Runs `body` with a local model, then stops its server and HTTP client, whether `body` throws or not.
  ///
  /// - Throws: what `body` throws.
  public static func withModel<T: Sendable>(
    _ configuration: LocalModelConfiguration, _ body: (LocalModel) async throws -> T
  ) async throws -> T {
    let model = LocalModel(configuration: configuration)
    let result: Result<T, any Error>
    do { result = .success(try await body(model)) } catch { result = .failure(error) }
    await model.shutdown()
    return try result.get()
  }

  /// `qwen2.5-coder-0.5b-instruct-q4_k_m (local llama.cpp)`.
  public var displayName: String {
    let file = URL(fileURLWithPath: configuration.server.modelPath).deletingPathExtension().lastPathComponent
    return "\(file) (local llama.cpp)"
  }

  /// The name sent as `model` in requests: the model file's name.
  var modelName: String { URL(fileURLWithPath: configuration.server.modelPath).lastPathComponent }

  /// Starts the server now instead of on the first request.
  ///
  /// - Throws: what ``LocalModelServer/ensureRunning()`` throws.
  @discardableResult
  public func start() async throws -> LocalModelServer.Endpoint {
    try await ensureRunning()
  }

  private func ensureRunning() async throws -> LocalModelServer.Endpoint {
    let endpoint: LocalModelServer.Endpoint
    if let sharedServer {
      endpoint = try await sharedServer.ensureRunning()
    } else {
      endpoint = try await server.ensureRunning()
    }
    lastEndpoint.withLock { $0 = endpoint }
    return endpoint
  }

  /// Has the server read `request`'s prompt and generate one token, so that the next request that starts the same
  /// way (the same instructions and tools) skips reading that part: llama.cpp keeps the last prompt's state, and a
  /// 0.5B model on two cores reads about 80 tokens a second, so the tool descriptions alone take seconds. `chat` calls
  /// this while the user types the first prompt.
  ///
  /// - Throws: what ``turn(for:)`` throws.
  public func warmUp(for request: ModelRequest) async throws {
    var request = prepared(request)
    request.options.maximumResponseTokens = 1
    _ = try await turn(forPrepared: request)
  }

  /// Starts the server and has it read `request`'s prompt (``start()``, then ``warmUp(for:)``); a failure is left for
  /// the next request to report. Does not throw.
  public func prewarm(for request: ModelRequest) async {
    guard (try? await start()) != nil else { return }
    try? await warmUp(for: request)
  }

  /// Stops the server (not a shared one: it stops by itself when idle) and shuts down the HTTP client. Does not
  /// throw; requests afterwards fail.
  public func shutdown() async {
    await server.stop()
    let kept = openAI.withLock { cached in
      defer { cached = nil }
      return cached?.model
    }
    // The OpenAI client runs on this model's HTTP client, so its own shutdown has nothing to close; it is called so
    // that the client is done with before the HTTP client goes.
    try? await kept?.shutdown()
    try? await client.shutdown()
  }

  /// Produces the next turn with the local server, starting it first if needed.
  ///
  /// - Throws: ``LanguageModelError`` (set-up, start-up or server failures), `CancellationError`.
  public func turn(for request: ModelRequest) async throws -> ModelTurn {
    try await turn(forPrepared: prepared(request))
  }

  /// ``turn(for:)`` for a request ``prepared(_:)`` already (fitted once, not twice).
  private func turn(forPrepared request: ModelRequest) async throws -> ModelTurn {
    var restarted = false
    while true {
      let model = try await openAIModel()
      do {
        return try await model.turn(for: request)
      } catch let error as LanguageModelError {
        try await retryAfterRestart(error, restarted: restarted)
        restarted = true
      }
    }
  }

  /// Streams the next turn from the local server, starting it first if needed. The stream throws what
  /// ``turn(for:)`` throws.
  public func streamTurn(for request: ModelRequest) -> ModelStream {
    let request = prepared(request)
    return AsyncThrowingStream { continuation in
      let task = Task {
        var restarted = false
        var yieldedText = false
        do {
          while true {
            let model = try await self.openAIModel()
            do {
              for try await event in model.streamTurn(for: request) {
                if case .textDelta = event { yieldedText = true }
                continuation.yield(event)
              }
              break
            } catch let error as LanguageModelError {
              if yieldedText { throw error }
              try await self.retryAfterRestart(error, restarted: restarted)
              restarted = true
            }
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// The request with the local defaults for temperature and length, and its transcript fitted to the context
  /// window (``Transcript/fitted(toTokens:estimate:)``): what is left of the window once the reply's tokens and
  /// the tool instructions are set aside. A conversation that fits is sent as it is.
  public func prepared(_ request: ModelRequest) -> ModelRequest {
    var request = request
    if request.options.temperature == nil { request.options.temperature = configuration.defaultTemperature }
    if request.options.maximumResponseTokens == nil {
      request.options.maximumResponseTokens = configuration.defaultMaximumTokens
    }
    // The tool text the request will carry: that of the tools the guided offer lists (none when the reply is not
    // constrained), without the date line.
    let toolText = GuidedToolCalls.ToolOffer(for: request, today: nil).instructions ?? ""
    let reserved = (request.options.maximumResponseTokens ?? 0) + toolText.count / 3 + 64
    request.transcript = request.transcript.fitted(toTokens: max(256, configuration.server.contextSize - reserved))
    return request
  }

  /// The OpenAI client kept for the server's endpoint, if one was made and not dropped yet; tests check with it that
  /// one client serves all the requests to one server.
  var keptOpenAIModel: OpenAIModel? { openAI.withLock { $0?.model } }

  /// The OpenAI client for the running server: the one kept for its endpoint, or a new one (kept from then on) when
  /// the server was started or restarted since.
  private func openAIModel() async throws -> OpenAIModel {
    let endpoint = try await ensureRunning()
    return try openAI.withLock { cached throws(LanguageModelError) -> OpenAIModel in
      if let cached, cached.serves(endpoint) { return cached.model }
      let configuration = OpenAIConfiguration(
        baseURL: endpoint.baseURL, model: modelName, apiKey: endpoint.key, connectTimeout: .seconds(5),
        readTimeout: self.configuration.readTimeout, maximumRetries: 1, toolCalling: self.configuration.toolCalling,
        guidedResponseFormat: .jsonObjectWithSchema, guidedFollowUp: .results)
      let model = try OpenAIModel(configuration: configuration, httpClient: client)
      cached = EndpointClient(endpoint: endpoint, model: model)
      return model
    }
  }

  /// Returns when a request that failed with `error` should be sent again: the server died and has not been
  /// restarted for this request yet (the next ``LocalModelServer/ensureRunning()`` starts it). Otherwise throws
  /// `error`, or, when the server died again after a restart, an error with the end of its log (llama.cpp aborts,
  /// for instance, on a grammar it cannot parse).
  private func retryAfterRestart(_ error: LanguageModelError, restarted: Bool) async throws(LanguageModelError) {
    guard await serverDied(error) else { throw error }
    guard restarted else { return }
    let log = configuration.server.logPath
    throw LanguageModelError(
      kind: .serverReported,
      message:
        "the llama.cpp server stopped while answering this request, also after a restart (\(error.message)); "
        + "the end of its log (\(log)):\n\(LocalModelServer.logTail(log))", url: error.url, attempts: 2)
  }

  /// Whether `error` came from the server going away (it is then started again).
  private func serverDied(_ error: LanguageModelError) async -> Bool {
    guard error.kind == .connectionFailed || error.kind == .malformedReply else { return false }
    if sharedServer != nil {
      guard let pid = lastEndpoint.withLock({ $0?.pid }) else { return true }
      for _ in 0..<50 where SharedModelServer.isAlive(pid) { try? await Task.sleep(for: .milliseconds(10)) }
      return !SharedModelServer.isAlive(pid)
    }
    // The process's exit is noticed by its I/O thread; give it a moment.
    for _ in 0..<50 where server.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    return !server.isRunning
  }
}
