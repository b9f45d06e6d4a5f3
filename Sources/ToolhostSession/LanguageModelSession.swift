import Synchronization
public import ToolhostGeneration
import ToolhostJSON
import ToolhostSchema
public import ToolhostTools

/// A conversation with a language model that can call tools, named and shaped after FoundationModels'
/// `LanguageModelSession`.
///
/// Each request (``respond(to:options:)`` or ``streamResponse(to:options:)``) adds the prompt to the transcript,
/// asks the model for a turn, runs the tool calls it asks for (validated against their schemas, several at once,
/// outputs returned in the model's order) and asks again, until the model answers without calling tools.
///
/// - Invalid arguments and unknown tool names go back to the model as the tool's output, with the exact problem,
///   so it can correct itself (at most ``SessionPolicy/maximumRepairs`` times per request).
/// - Tool failures throw or are reported to the model, as ``SessionPolicy/toolFailures`` says.
/// - A request that throws leaves the transcript as it was before it (except with
///   ``SessionPolicy/ToolFailurePolicy/throwAndPreserve`` for tool failures).
///
/// A session answers one request at a time; a second concurrent request throws
/// ``LanguageModelSessionError/concurrentRequests``. It is safe to share between tasks.
///
/// ```swift
/// let session = try LanguageModelSession(
///   model: model, tools: catalog.tools, instructions: "Answer briefly; use the tools for facts.")
/// let response = try await session.respond(to: "What's the weather in Boston in July?")
/// print(response.content)
/// for entry in session.transcript.entries { print(entry) }  // prompt, tool calls, outputs, response
/// ```
public final class LanguageModelSession: Sendable {
  /// A tool call failed (FoundationModels' name for toolhost's ``ToolhostTools/ToolCallError``).
  public typealias ToolCallError = ToolhostTools.ToolCallError

  /// The result of a request: the answer as text (`Response<String>`) or as the type asked for
  /// (``respond(to:generating:includeSchemaInPrompt:options:)``), FoundationModels' `Response`.
  public struct Response<Content> {
    /// The model's answer.
    public var content: Content
    /// The answer as generated content (text as a string).
    public var rawContent: GeneratedContent
    /// The entries this request added to the transcript: the prompt, tool calls, tool outputs and the response.
    public var transcriptEntries: ArraySlice<Transcript.Entry>

    /// Makes a response.
    public init(content: Content, rawContent: GeneratedContent, transcriptEntries: ArraySlice<Transcript.Entry>) {
      self.content = content
      self.rawContent = rawContent
      self.transcriptEntries = transcriptEntries
    }
  }

  /// An observer's handle, for ``removeObserver(_:)``.
  public struct ObserverID: Sendable, Hashable {
    let value: Int
  }

  struct State {
    var transcript: Transcript
    var policy: SessionPolicy
    var isResponding = false
    var observers: [Int: @Sendable (SessionEvent) -> Void] = [:]
    var nextObserver = 0
    /// Why the tools could not be registered, for sessions made without throwing: every request throws it.
    var setupError: ToolCallError?
    /// The tools offered now (a dynamic profile's change before each model turn).
    var tools: ToolRegistry
    /// The session's dynamic profile, worked out before every model turn.
    var profile: (any DynamicProfile)?
    /// The names and schemas of the profile's tools that `tools` was made of, to make it again only on a change.
    var profileToolsKey: [String] = []
    /// Whether ``transcript`` was set while a request ran: that request must not commit over it.
    var transcriptReplaced = false
    /// The `onActivate`/`onDeactivate` actions of the profile's parts in the latest worked-out profile.
    var activeParts: [String: ResolvedProfile.Lifecycle] = [:]
  }

  /// The model.
  public let model: any LanguageModel
  /// The session's properties, which a dynamic profile reads (``SessionPropertyValues/history`` among them).
  public let properties = SessionPropertyValues()
  let state: Mutex<State>

  /// The tools the model may call (a dynamic profile's tools of the latest model turn).
  public var tools: ToolRegistry { state.withLock { $0.tools } }

  /// Makes a session with tools already in a registry.
  ///
  /// `instructions` become the transcript's first entry (the system message). Does not throw.
  public init(
    model: any LanguageModel, tools: ToolRegistry, instructions: String? = nil,
    policy: SessionPolicy = SessionPolicy()
  ) {
    self.model = model
    var transcript = Transcript()
    if let instructions {
      transcript.append(
        .instructions(
          Transcript.Instructions(text: instructions, toolDefinitions: Self.definitions(of: tools)))
      )
    }
    state = Mutex(State(transcript: transcript, policy: policy, tools: tools))
  }

  /// Makes a session whose instructions, tools and tool-calling mode come from a dynamic profile, worked out again
  /// before every model turn from the session's ``properties`` (FoundationModels' `init(profile:history:)`).
  ///
  /// Does not throw: a profile's tool whose schema does not compile makes the request throw its ``ToolCallError``.
  public init(
    model: any LanguageModel, profile: sending some DynamicProfile, history: some Collection<Transcript.Entry> = [],
    policy: SessionPolicy = SessionPolicy()
  ) {
    self.model = model
    var initial = State(transcript: Transcript(entries: Array(history)), policy: policy, tools: .empty)
    initial.profile = profile
    state = Mutex(initial)
  }

  /// Makes a session with tools.
  ///
  /// - Throws: ``ToolCallError`` when a tool's parameters schema does not compile.
  @_disfavoredOverload  // as FoundationModels' is: `instructions: nil` means the `Instructions?` form
  public convenience init(
    model: any LanguageModel, tools: [any Tool] = [], instructions: String? = nil,
    policy: SessionPolicy = SessionPolicy()
  ) throws(ToolCallError) {
    self.init(
      model: model, tools: try ToolRegistry(tools), instructions: instructions, policy: policy)
  }

  /// Makes a session with tools without throwing, as FoundationModels does: a tool whose parameters schema does not
  /// compile makes every request throw its ``ToolCallError`` instead.
  public convenience init(
    model: any LanguageModel, deferringErrorsOf tools: [any Tool], instructions: String? = nil,
    policy: SessionPolicy = SessionPolicy()
  ) {
    let (registry, error) = Self.registry(of: tools)
    self.init(model: model, tools: registry, instructions: instructions, policy: policy)
    state.withLock { $0.setupError = error }
  }

  /// Makes a session that continues a transcript without throwing; a tool whose parameters schema does not compile
  /// makes every request throw its ``ToolCallError``.
  public convenience init(
    model: any LanguageModel, deferringErrorsOf tools: [any Tool], transcript: Transcript,
    policy: SessionPolicy = SessionPolicy()
  ) {
    let (registry, error) = Self.registry(of: tools)
    self.init(model: model, tools: registry, transcript: transcript, policy: policy)
    state.withLock { $0.setupError = error }
  }

  /// The registry of `tools`, or an empty one and why, for the sessions that throw at their first request.
  private static func registry(of tools: [any Tool]) -> (ToolRegistry, ToolCallError?) {
    do { return (try ToolRegistry(tools), nil) } catch { return (.empty, error) }
  }

  /// Makes a session that continues a transcript (for example one read with ``Transcript/load(from:)``).
  ///
  /// The transcript's instructions are kept; the tools offered from now on are `tools`. Does not throw.
  public init(
    model: any LanguageModel, tools: ToolRegistry, transcript: Transcript,
    policy: SessionPolicy = SessionPolicy()
  ) {
    self.model = model
    state = Mutex(State(transcript: transcript, policy: policy, tools: tools))
  }

  /// Everything so far. While a request runs this is the transcript before it; the request's entries are added when
  /// it ends. Setting it (to trim a long chat, say) takes effect from the next request; a request that is running
  /// then ends with ``LanguageModelSessionError/transcriptMutationWhileResponding`` instead of keeping its entries.
  public var transcript: Transcript {
    get { state.withLock { $0.transcript } }
    set {
      state.withLock {
        $0.transcript = newValue
        if $0.isResponding { $0.transcriptReplaced = true }
      }
      properties.setHistory(of: newValue)
    }
  }

  /// Whether a request is running.
  public var isResponding: Bool { state.withLock { $0.isResponding } }

  /// How tool calls are treated; a change applies from the next request.
  public var policy: SessionPolicy {
    get { state.withLock { $0.policy } }
    set { state.withLock { $0.policy = newValue } }
  }

  /// What a request whose tool fails leaves in the transcript (FoundationModels' property): it sets
  /// ``SessionPolicy/toolFailures`` to ``SessionPolicy/ToolFailurePolicy/throwAndRevert`` or
  /// ``SessionPolicy/ToolFailurePolicy/throwAndPreserve``. It reads ``TranscriptErrorHandlingPolicy/revertTranscript``
  /// by default, and `nil` while failures are reported to the model instead of thrown; setting `nil` changes nothing.
  public var transcriptErrorHandlingPolicy: TranscriptErrorHandlingPolicy? {
    get {
      switch policy.toolFailures {
      case .throwAndRevert: .revertTranscript
      case .throwAndPreserve: .preserveTranscript
      case .reportToModel: nil
      }
    }
    set {
      guard let newValue else { return }
      state.withLock { $0.policy.toolFailures = SessionPolicy.ToolFailurePolicy(newValue) }
    }
  }

  /// Calls `handler` with every event of every request, on the requesting task, in order. Keep it quick.
  public func addObserver(_ handler: @escaping @Sendable (SessionEvent) -> Void) -> ObserverID {
    state.withLock {
      $0.nextObserver += 1
      $0.observers[$0.nextObserver] = handler
      return ObserverID(value: $0.nextObserver)
    }
  }

  /// Stops calling an observer.
  public func removeObserver(_ id: ObserverID) {
    _ = state.withLock { $0.observers.removeValue(forKey: id.value) }
  }

  /// Answers a prompt, calling tools as the model asks.
  ///
  /// - Throws: ``LanguageModelSessionError`` (a concurrent request, the round or repair limit),
  ///   ``LanguageModelError`` from the model, ``ToolCallError`` for a failed tool under a throwing
  ///   ``SessionPolicy/toolFailures``, `CancellationError` when the task is cancelled (running tools are stopped).
  ///   The transcript is then as it was before the request (see ``SessionPolicy/ToolFailurePolicy``).
  @discardableResult
  public func respond(to prompt: String, options: GenerationOptions = GenerationOptions())
    async throws -> Response<String>
  {
    try await respond(prompt: prompt, format: nil, options: options).textResponse
  }

  /// Answers a prompt with a value of a `@Generable` type (guided generation), calling tools as the model asks
  /// first.
  ///
  /// The answer is constrained to the type's schema: a local model's decoding follows it, an HTTP model is sent it
  /// as a `json_schema` response format. The answer is checked against the schema with toolhost's validator and
  /// converted; one that does not fit is sent back once with what is wrong, and a second miss throws.
  ///
  /// ```swift
  /// @Generable struct Trip { var city: String; @Guide(.range(1...14)) var days: Int }
  /// let trip = try await session.respond(to: "Plan 3 days in Porto", generating: Trip.self).content
  /// ```
  /// - Parameter includeSchemaInPrompt: also write the schema into the prompt (FoundationModels' flag); models
  ///   that are not constrained by it need it to know the shape.
  /// - Throws: what ``respond(to:options:)`` throws, and `GeneratedContent.ParsingError` naming the path and the
  ///   expected type when the answer does not fit twice.
  @discardableResult
  public func respond<Content: Generable>(
    to prompt: String, generating type: Content.Type = Content.self, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) async throws -> Response<Content> {
    let format = ResponseFormatRequest(Content.generationSchema, includeSchemaInPrompt: includeSchemaInPrompt) {
      _ = try Content($0)
    }
    return try await respond(prompt: prompt, format: format, options: options).response(as: Content.self)
  }

  /// Answers a prompt with generated content following a schema (for a shape known only at run time).
  ///
  /// - Throws: what ``respond(to:generating:includeSchemaInPrompt:options:)`` throws.
  @discardableResult
  public func respond(
    to prompt: String, schema: GenerationSchema, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) async throws -> Response<GeneratedContent> {
    let format = ResponseFormatRequest(schema, includeSchemaInPrompt: includeSchemaInPrompt) { _ in }
    return try await respond(prompt: prompt, format: format, options: options).response(as: GeneratedContent.self)
  }

  private func respond(prompt: String, format: ResponseFormatRequest?, options: GenerationOptions)
    async throws -> RawResponse
  {
    let start = try beginRequest()
    defer { endRequest() }
    return try await run(prompt: prompt, format: format, options: options, streaming: false, from: start) { _, _, _ in
    }
  }

  /// Answers a prompt as a stream: a snapshot for every event, the model's text streamed as it arrives.
  ///
  /// The request starts at once; cancelling the consuming task or dropping the stream cancels it. The stream
  /// throws what ``respond(to:options:)`` throws (a concurrent request at the first iteration).
  public func streamResponse(to prompt: String, options: GenerationOptions = GenerationOptions())
    -> ResponseStream<String>
  {
    stream(prompt: prompt, format: nil, options: options) { raw in
      ResponseStream<String>.Snapshot(
        content: raw.text, rawContent: GeneratedContent(kind: .string(raw.text)), event: raw.event)
    } response: {
      $0.textResponse
    }
  }

  /// Answers a prompt with a value of a `@Generable` type as a stream: a snapshot each time more of the value has
  /// arrived, with the value so far (every property optional until it is whole).
  ///
  /// Tool calls happen first, as in ``respond(to:generating:includeSchemaInPrompt:options:)``; observers see their
  /// events. The stream throws what that method throws.
  public func streamResponse<Content: Generable>(
    to prompt: String, generating type: Content.Type = Content.self, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) -> ResponseStream<Content> {
    let format = ResponseFormatRequest(Content.generationSchema, includeSchemaInPrompt: includeSchemaInPrompt) {
      _ = try Content($0)
    }
    return stream(prompt: prompt, format: format, options: options) { raw in
      guard let content = raw.content, let partial = try? Content.PartiallyGenerated(content) else { return nil }
      return ResponseStream<Content>.Snapshot(content: partial, rawContent: content, event: raw.event)
    } response: {
      try $0.response(as: Content.self)
    }
  }

  /// Answers a prompt with generated content following a schema, as a stream: a snapshot each time more of the
  /// content has arrived (for a shape known only at run time).
  ///
  /// The stream throws what ``respond(to:schema:includeSchemaInPrompt:options:)`` throws.
  public func streamResponse(
    to prompt: String, schema: GenerationSchema, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) -> ResponseStream<GeneratedContent> {
    let format = ResponseFormatRequest(schema, includeSchemaInPrompt: includeSchemaInPrompt) { _ in }
    return stream(prompt: prompt, format: format, options: options) { raw in
      guard let content = raw.content else { return nil }
      return ResponseStream<GeneratedContent>.Snapshot(content: content, rawContent: content, event: raw.event)
    } response: {
      try $0.response(as: GeneratedContent.self)
    }
  }

  private func stream<Content: Generable>(
    prompt: String, format: ResponseFormatRequest?, options: GenerationOptions,
    snapshot: @escaping @Sendable (RawSnapshot) -> ResponseStream<Content>.Snapshot?,
    response: @escaping @Sendable (RawResponse) throws -> Response<Content>
  ) -> ResponseStream<Content> {
    let (stream, continuation) = AsyncThrowingStream<RawSnapshot, any Error>.makeStream()
    let start: Transcript
    do { start = try beginRequest() } catch {
      continuation.finish(throwing: error)
      return ResponseStream(stream, task: Task { throw error }, snapshot: snapshot, response: response)
    }
    let task = Task {
      defer { self.endRequest() }
      do {
        let response = try await self.run(
          prompt: prompt, format: format, options: options, streaming: true, from: start
        ) { event, text, content in
          continuation.yield(RawSnapshot(text: text, content: content, event: event))
        }
        continuation.finish()
        return response
      } catch {
        continuation.finish(throwing: error)
        throw error
      }
    }
    continuation.onTermination = { termination in
      if case .cancelled = termination { task.cancel() }
    }
    return ResponseStream(stream, task: task, snapshot: snapshot, response: response)
  }
}

extension LanguageModelSession.Response: Sendable where Content: Sendable {}
