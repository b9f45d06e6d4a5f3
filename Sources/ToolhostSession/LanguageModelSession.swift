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

  private struct State {
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
  private let state: Mutex<State>

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

  // MARK: - The loop

  private func beginRequest() throws -> Transcript {
    if let setupError = state.withLock({ $0.setupError }) { throw setupError }
    return try state.withLock { s throws(LanguageModelSessionError) in
      if s.isResponding { throw LanguageModelSessionError.concurrentRequests }
      s.isResponding = true
      return s.transcript
    }
  }

  private func endRequest() {
    state.withLock {
      $0.isResponding = false
      $0.transcriptReplaced = false
    }
  }

  /// Keeps a request's transcript, unless the session's was set while it ran.
  ///
  /// - Throws: ``LanguageModelSessionError/transcriptMutationWhileResponding`` when it was.
  private func commit(_ transcript: Transcript) throws(LanguageModelSessionError) {
    try state.withLock { s throws(LanguageModelSessionError) in
      if s.transcriptReplaced { throw .transcriptMutationWhileResponding }
      s.transcript = transcript
    }
    properties.setHistory(of: transcript)
  }

  /// Where a request's events go besides the observers: the event, the current model turn's text so far, and the
  /// generated value so far when a type is being generated.
  typealias EventSink = (SessionEvent, String, GeneratedContent?) -> Void

  /// Emits to observers and the stream sink; `content` is the current model turn's text so far, `partial` the value
  /// so far of a type being generated.
  func emit(_ event: SessionEvent, _ content: String, _ sink: EventSink, partial: GeneratedContent? = nil) {
    let observers = state.withLock { Array($0.observers.values) }
    for o in observers { o(event) }
    sink(event, content, partial)
  }

  /// Has the model get ready for this session's next request and returns when it is: a local model starts and
  /// reads the instructions and tool descriptions, so the first answer comes sooner. ``prewarm(promptPrefix:)`` does
  /// the same in the background and returns at once.
  ///
  /// Does not throw and never changes the transcript; a model that cannot get ready reports why on the next request.
  ///
  /// ```swift
  /// let session = try LanguageModelSession(model: model, tools: [weather], instructions: "Be brief.")
  /// await session.warmUp()
  /// let answer = try await session.respond(to: readLine() ?? "")
  /// ```
  public func warmUp() async {
    var transcript = self.transcript
    // A dynamic profile names the model, the tools and the instructions the first request will have.
    let profile = await SessionPropertyValues.$current.withValue(properties) { try? applyProfile(to: &transcript) }
    transcript.append(.prompt(Transcript.Prompt(text: "")))
    let tools = Self.definitions(of: self.tools)
    await (profile?.model ?? model).prewarm(
      for: ModelRequest(transcript: transcript, tools: tools, toolChoice: tools.isEmpty ? .none : .auto))
  }

  /// The tools of `registry` as the session offers them to a model: name, description and parameters schema.
  public static func definitions(of registry: ToolRegistry) -> [Transcript.ToolDefinition] {
    registry.tools.map {
      Transcript.ToolDefinition(
        name: $0.name, description: $0.description, parameters: $0.parameters, examples: $0.examples)
    }
  }

  /// Runs a request with the session's properties as the ones `@SessionProperty` reads (in its profile, hooks and
  /// tools, whichever sessions they are shared with).
  private func run(
    prompt: String, format: ResponseFormatRequest?, options: GenerationOptions, streaming: Bool,
    from start: Transcript, sink: EventSink
  ) async throws -> RawResponse {
    try await SessionPropertyValues.$current.withValue(properties) {
      try await runRequest(
        prompt: prompt, format: format, options: options, streaming: streaming, from: start, sink: sink)
    }
  }

  private func runRequest(
    prompt: String, format: ResponseFormatRequest?, options: GenerationOptions, streaming: Bool,
    from start: Transcript, sink: EventSink
  ) async throws -> RawResponse {
    let sessionPolicy = self.policy
    var working = start
    // A history written between requests (compacted by the app, say) is where this request starts.
    adoptWrittenHistory(into: &working)
    let promptEntry = Transcript.Prompt(text: prompt)
    working.append(.prompt(promptEntry))
    emit(.requestStarted(promptEntry), "", sink)

    var rounds = 0
    var repairs = 0
    var calledTool = false
    var answerNow = false
    // The identity of this request's generated content, in its snapshots and in its answer.
    let generation = GenerationID()
    var profile = try applyProfile(to: &working)
    do {
      await activateParts(of: profile)
      try await runHooks(profile?.onPrompt, on: &working) { try await $0(promptEntry) }
      while true {
        try Task.checkCancellation()
        // Again before every turn: a hook may have changed the properties the profile reads.
        if profile != nil {
          profile = try applyProfile(to: &working)
          await activateParts(of: profile)
        }
        let policy = sessionPolicy.with(profile)
        let options = profile?.applied(to: options) ?? options
        let tools = self.tools
        let offered = options.offeredTools.map { names in names.filter { tools.tool(named: $0) != nil } }
        let definitions = Self.definitions(of: tools).filter { offered?.contains($0.name) ?? true }
        let choice: ToolChoice =
          definitions.isEmpty || answerNow
          ? .none : options.effectiveToolCallingMode.choice(afterToolCalls: calledTool)
        // With no tool to call, a generated type's turn is constrained to its schema from the start.
        let constrained = format != nil && choice == .none
        let seen = profile?.transformed(working) ?? working
        let request = ModelRequest(
          transcript: offered.map { seen.steering(toward: $0) } ?? seen, tools: definitions, toolChoice: choice,
          options: options, responseFormat: constrained ? format?.request : nil)
        emit(.modelTurnStarted(round: rounds + 1), "", sink)
        let model = profile?.model ?? self.model
        let turn = try await nextTurn(
          request, model: model, streaming: streaming, partial: constrained ? generation : nil, sink: sink)
        try Task.checkCancellation()
        if let reasoning = turn.reasoning {
          let reasoningEntry = Transcript.Reasoning(text: reasoning)
          working.append(.reasoning(reasoningEntry))
          try await runHooks(profile?.onReasoning, on: &working) { try await $0(reasoningEntry) }
        }

        if turn.toolCalls.isEmpty {
          var text = turn.text
          var content = GeneratedContent(kind: .string(text))
          if let format {
            (text, content) = try await structured(
              format, answer: turn.text, constrained: constrained, request: request, model: model,
              streaming: streaming, generation: generation, round: rounds + 1, sink: sink)
            content.id = generation
          }
          let responseEntry = Transcript.Response(text: text, usage: turn.usage)
          try await runHooks(profile?.onResponse, on: &working) { try await $0(responseEntry) }
          working.append(.response(responseEntry))
          try commit(working)
          // From the prompt on (a profile may have put instructions before it since the request began).
          let firstNew = working.entries.lastIndex { $0.id == promptEntry.id } ?? working.startIndex
          let entries = working.entries[firstNew...]
          emit(
            .response(Response(content: text, rawContent: content, transcriptEntries: entries)), text, sink,
            partial: format != nil ? content : nil)
          return RawResponse(text: text, content: content, entries: entries)
        }

        // A model going round in circles (the same call again, or a tool's third call for one prompt) is asked
        // for its answer instead.
        if !answerNow, CallHistory(working).loops(turn.toolCalls) {
          answerNow = true
          continue
        }
        rounds += 1
        if rounds > policy.maximumToolRounds {
          throw LanguageModelSessionError.toolRoundLimitReached(limit: policy.maximumToolRounds)
        }
        let calls = Self.uniqueIDs(turn.toolCalls, round: rounds)
        working.append(
          .toolCalls(Transcript.ToolCalls(calls: calls, text: turn.text.isEmpty ? nil : turn.text, usage: turn.usage)))

        try await runHooks(profile?.onToolCall, on: &working) { hook in for call in calls { try await hook(call) } }
        // The tools read the history as it is now (they do not write it).
        properties.setHistory(of: working)
        let outcome = try await runCalls(
          calls, choice: choice, offered: offered, policy: policy, content: turn.text, sink: sink)
        for record in outcome.records { working.append(.toolOutput(record.output)) }
        try await runHooks(profile?.onToolOutput, on: &working) { hook in
          for record in outcome.records { try await hook(record.call, record.output) }
        }
        if outcome.ranAny { calledTool = true }

        if let failure = outcome.failure {
          if policy.toolFailures == .throwAndPreserve { try commit(working) }
          throw failure
        }
        if let problem = outcome.repairProblem {
          repairs += 1
          if repairs > policy.maximumRepairs {
            throw LanguageModelSessionError.repairLimitReached(
              limit: policy.maximumRepairs, lastProblem: problem)
          }
        }
      }
    } catch {
      // The properties' history goes back to what was kept.
      properties.setHistory(of: self.transcript)
      // The transcript was not committed (except by throwAndPreserve above): it is as it was before the request.
      // A cancelled request reports cancellation, whatever the model or the tools failed with on the way out.
      if Task.isCancelled, !(error is LanguageModelSessionError) { throw CancellationError() }
      throw error
    }
  }

  /// Works out the dynamic profile (if the session has one) for the next model turn: the session's properties see
  /// `working` as the history, the tools are registered again when they changed, and the instructions entry at the
  /// start of `working` is the profile's.
  ///
  /// - Throws: ``ToolCallError`` when a profile's tool has a parameters schema that does not compile.
  private func applyProfile(to working: inout Transcript) throws -> ResolvedProfile? {
    adoptWrittenHistory(into: &working)
    properties.setHistory(of: working)
    let resolved = try state.withLock { s throws(ToolCallError) -> ResolvedProfile? in
      guard let profile = s.profile else { return nil }
      let resolved = Self.resolve(profile)
      let key = resolved.tools.map { $0.name + " " + $0.parameters.serialized() }
      if key != s.profileToolsKey {
        s.tools = try ToolRegistry(resolved.tools)
        s.profileToolsKey = key
      }
      return resolved
    }
    guard let resolved else { return nil }
    let definitions = Self.definitions(of: tools)
    let entry = resolved.instructions.map {
      Transcript.Entry.instructions(Transcript.Instructions(text: $0, toolDefinitions: definitions))
    }
    if case .instructions(let old)? = working.entries.first {
      if let entry {
        if old.text != resolved.instructions || old.toolDefinitions != definitions { working.entries[0] = entry }
      } else {
        working.entries.removeFirst()
      }
    } else if let entry {
      working.entries.insert(entry, at: 0)
    }
    return resolved
  }

  /// Runs a group of hooks (`run` calls each one) with the properties' history showing `working`, then makes
  /// `working` the history a hook wrote, if one did.
  private func runHooks<Hook>(
    _ hooks: [Hook]?, on working: inout Transcript, _ run: (Hook) async throws -> Void
  ) async throws {
    guard let hooks, !hooks.isEmpty else { return }
    properties.setHistory(of: working)
    for hook in hooks { try await run(hook) }
    adoptWrittenHistory(into: &working)
  }

  /// Makes `working` the history a hook wrote (compacted, say), if one did.
  private func adoptWrittenHistory(into working: inout Transcript) {
    if let written = properties.takeWrittenHistory() { working.history = written }
  }

  /// Runs the `onActivate` actions of the profile's parts that were not in the previous worked-out profile and the
  /// `onDeactivate` actions of those no longer in it.
  private func activateParts(of profile: ResolvedProfile?) async {
    guard let profile else { return }
    let (ended, started) = state.withLock { s in
      let before = s.activeParts
      s.activeParts = profile.lifecycles
      return (
        before.filter { profile.lifecycles[$0.key] == nil }.sorted { $0.key < $1.key }.flatMap(\.value.deactivate),
        profile.lifecycles.filter { before[$0.key] == nil }.sorted { $0.key < $1.key }.flatMap(\.value.activate)
      )
    }
    for action in ended { await action() }
    for action in started { await action() }
  }

  /// The answer of a request for a generated type: `answer` when it already fits, else a turn constrained to the
  /// schema (with the tools described but not callable), and once more with what was wrong.
  ///
  /// - Throws: `GeneratedContent.ParsingError` naming the path and what was expected (its underlying error a
  ///   ``LanguageModelError`` of kind ``LanguageModelError/Kind/decodingFailure``), when the second constrained answer
  ///   does not fit either.
  private func structured(
    _ format: ResponseFormatRequest, answer: String, constrained: Bool, request: ModelRequest,
    model: any LanguageModel, streaming: Bool, generation: GenerationID, round: Int, sink: EventSink
  ) async throws -> (String, GeneratedContent) {
    var problem: String
    switch format.decode(answer) {
    case .success(let content): return (answer, content)
    case .failure(let why): problem = why.description
    }
    var retry = request
    retry.toolChoice = .none
    retry.responseFormat = format.request
    var text = answer
    for attempt in (constrained ? 1 : 0)...1 {
      if attempt == 1 {
        // The one retry: the reply that did not fit, and what was wrong with it.
        retry.transcript.append(.response(Transcript.Response(text: text)))
        retry.transcript.append(
          .prompt(
            Transcript.Prompt(
              text: "That reply does not fit the required JSON Schema: \(problem). Reply again with only the "
                + "corrected JSON value.")))
      }
      emit(.modelTurnStarted(round: round), "", sink)
      let turn = try await nextTurn(retry, model: model, streaming: streaming, partial: generation, sink: sink)
      try Task.checkCancellation()
      text = turn.text
      switch format.decode(text) {
      case .success(let content): return (text, content)
      case .failure(let why): problem = why.description
      }
    }
    let message =
      "\(model.displayName): the answer does not fit \(format.schema.typeName) even after one retry: \(problem); "
      + "try a larger model, or a simpler type"
    throw GeneratedContent.ParsingError(
      rawContent: text, underlyingError: LanguageModelError(kind: .decodingFailure, message: message),
      debugDescription: message)
  }

  private func nextTurn(
    _ request: ModelRequest, model: any LanguageModel, streaming: Bool, partial generation: GenerationID? = nil,
    sink: EventSink
  ) async throws -> ModelTurn {
    guard streaming else { return try await model.turn(for: request) }
    var content = ""
    for try await event in model.streamTurn(for: request) {
      switch event {
      case .textDelta(let delta):
        content += delta
        // A generated type's snapshot, with the request's identity.
        let snapshot = generation.flatMap { id in
          (try? GeneratedContent(json: content)).map { GeneratedContent($0, id: id) }
        }
        emit(.textDelta(delta), content, sink, partial: snapshot)
      case .finished(let turn):
        return turn
      }
    }
    try Task.checkCancellation()
    throw LanguageModelError(
      kind: .malformedReply,
      message: "\(model.displayName): the stream ended without a finished turn")
  }

  /// Gives every call a non-empty id unique within the turn.
  static func uniqueIDs(_ calls: [Transcript.ToolCall], round: Int) -> [Transcript.ToolCall] {
    var seen = Set<String>()
    return calls.enumerated().map { i, call in
      var call = call
      if call.id.isEmpty || seen.contains(call.id) { call.id = "call_\(round)_\(i + 1)" }
      seen.insert(call.id)
      return call
    }
  }
}

extension LanguageModelSession.Response: Sendable where Content: Sendable {}
