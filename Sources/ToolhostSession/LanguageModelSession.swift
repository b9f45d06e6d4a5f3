import Synchronization
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
  /// The result of a request.
  public struct Response: Sendable {
    /// The model's answer.
    public var content: String
    /// The entries this request added to the transcript: the prompt, tool calls, tool outputs and the response.
    public var transcriptEntries: [Transcript.Entry]

    /// Makes a response.
    public init(content: String, transcriptEntries: [Transcript.Entry]) {
      self.content = content
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
  }

  /// The model.
  public let model: any LanguageModel
  /// The tools the model may call.
  public let tools: ToolRegistry
  private let state: Mutex<State>

  /// Makes a session with tools already in a registry.
  ///
  /// `instructions` become the transcript's first entry (the system message). Does not throw.
  public init(
    model: any LanguageModel, tools: ToolRegistry, instructions: String? = nil,
    policy: SessionPolicy = SessionPolicy()
  ) {
    self.model = model
    self.tools = tools
    var transcript = Transcript()
    if let instructions {
      transcript.append(
        .instructions(
          Transcript.Instructions(text: instructions, toolDefinitions: Self.definitions(of: tools)))
      )
    }
    state = Mutex(State(transcript: transcript, policy: policy))
  }

  /// Makes a session with tools.
  ///
  /// - Throws: ``ToolCallError`` when a tool's parameters schema does not compile.
  public convenience init(
    model: any LanguageModel, tools: [any Tool] = [], instructions: String? = nil,
    policy: SessionPolicy = SessionPolicy()
  ) throws(ToolCallError) {
    self.init(
      model: model, tools: try ToolRegistry(tools), instructions: instructions, policy: policy)
  }

  /// Makes a session that continues a transcript (for example one read with ``Transcript/load(from:)``).
  ///
  /// The transcript's instructions are kept; the tools offered from now on are `tools`. Does not throw.
  public init(
    model: any LanguageModel, tools: ToolRegistry, transcript: Transcript,
    policy: SessionPolicy = SessionPolicy()
  ) {
    self.model = model
    self.tools = tools
    state = Mutex(State(transcript: transcript, policy: policy))
  }

  /// Everything so far. While a request runs this is the transcript before it; the request's entries are added when
  /// it ends.
  public var transcript: Transcript { state.withLock { $0.transcript } }

  /// Whether a request is running.
  public var isResponding: Bool { state.withLock { $0.isResponding } }

  /// How tool calls are treated; a change applies from the next request.
  public var policy: SessionPolicy {
    get { state.withLock { $0.policy } }
    set { state.withLock { $0.policy = newValue } }
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
  public func respond(to prompt: String, options: GenerationOptions = GenerationOptions())
    async throws -> Response
  {
    let start = try beginRequest()
    defer { endRequest() }
    return try await run(prompt: prompt, options: options, streaming: false, from: start) { _, _ in
    }
  }

  /// Answers a prompt as a stream: a snapshot for every event, the model's text streamed as it arrives.
  ///
  /// The request starts at once; cancelling the consuming task or dropping the stream cancels it. The stream
  /// throws what ``respond(to:options:)`` throws (a concurrent request at the first iteration).
  public func streamResponse(to prompt: String, options: GenerationOptions = GenerationOptions())
    -> ResponseStream
  {
    let (stream, continuation) = AsyncThrowingStream<ResponseStream.Snapshot, any Error>
      .makeStream()
    let start: Transcript
    do { start = try beginRequest() } catch {
      continuation.finish(throwing: error)
      return ResponseStream(stream, task: Task { throw error })
    }
    let task = Task {
      defer { self.endRequest() }
      do {
        let response = try await self.run(
          prompt: prompt, options: options, streaming: true, from: start
        ) {
          event, content in
          continuation.yield(ResponseStream.Snapshot(content: content, event: event))
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
    return ResponseStream(stream, task: task)
  }

  // MARK: - The loop

  private func beginRequest() throws(LanguageModelSessionError) -> Transcript {
    try state.withLock { s throws(LanguageModelSessionError) in
      if s.isResponding { throw LanguageModelSessionError.concurrentRequests }
      s.isResponding = true
      return s.transcript
    }
  }

  private func endRequest() {
    state.withLock { $0.isResponding = false }
  }

  private func commit(_ transcript: Transcript) {
    state.withLock { $0.transcript = transcript }
  }

  /// Emits to observers and the stream sink; `content` is the current model turn's text so far.
  func emit(
    _ event: SessionEvent, _ content: String, _ sink: (SessionEvent, String) -> Void
  ) {
    let observers = state.withLock { Array($0.observers.values) }
    for o in observers { o(event) }
    sink(event, content)
  }

  /// Has the model get ready for this session's next request, in the background of whatever the caller does
  /// meanwhile (`chat` calls it while the user types the first prompt): a local model starts and reads the
  /// instructions and tool descriptions, so the first answer comes sooner.
  ///
  /// Does not throw and never changes the transcript; a model that cannot get ready reports why on the next request.
  ///
  /// ```swift
  /// let session = try LanguageModelSession(model: model, tools: [weather], instructions: "Be brief.")
  /// Task { await session.prewarm() }
  /// let answer = try await session.respond(to: readLine() ?? "")
  /// ```
  public func prewarm() async {
    var transcript = self.transcript
    transcript.append(.prompt(Transcript.Prompt(text: "")))
    let tools = Self.definitions(of: self.tools)
    await model.prewarm(
      for: ModelRequest(transcript: transcript, tools: tools, toolChoice: tools.isEmpty ? .none : .auto))
  }

  /// The tools of `registry` as the session offers them to a model: name, description and parameters schema.
  public static func definitions(of registry: ToolRegistry) -> [Transcript.ToolDefinition] {
    registry.tools.map {
      Transcript.ToolDefinition(
        name: $0.name, description: $0.description, parameters: $0.parameters)
    }
  }

  private func run(
    prompt: String, options: GenerationOptions, streaming: Bool, from start: Transcript,
    sink: (SessionEvent, String) -> Void
  ) async throws -> Response {
    let policy = self.policy
    let offered = options.offeredTools.map { names in names.filter { tools.tool(named: $0) != nil } }
    let definitions = Self.definitions(of: tools).filter { offered?.contains($0.name) ?? true }
    var working = start
    let firstNew = working.count
    let promptEntry = Transcript.Prompt(text: prompt)
    working.append(.prompt(promptEntry))
    emit(.requestStarted(promptEntry), "", sink)

    var rounds = 0
    var repairs = 0
    var calledTool = false
    var answerNow = false
    do {
      while true {
        try Task.checkCancellation()
        let choice: ToolChoice =
          definitions.isEmpty || answerNow ? .none : options.toolCalling.choice(afterToolCalls: calledTool)
        let request = ModelRequest(
          transcript: offered.map { working.steering(toward: $0) } ?? working, tools: definitions, toolChoice: choice,
          options: options)
        emit(.modelTurnStarted(round: rounds + 1), "", sink)
        let turn = try await nextTurn(request, streaming: streaming, sink: sink)
        try Task.checkCancellation()

        if turn.toolCalls.isEmpty {
          working.append(.response(Transcript.Response(text: turn.text, usage: turn.usage)))
          commit(working)
          let response = Response(
            content: turn.text, transcriptEntries: Array(working.entries[firstNew...]))
          emit(.response(response), turn.text, sink)
          return response
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

        let outcome = try await runCalls(
          calls, choice: choice, offered: offered, policy: policy, content: turn.text, sink: sink)
        for record in outcome.records { working.append(.toolOutput(record.output)) }
        if outcome.ranAny { calledTool = true }

        if let failure = outcome.failure {
          if policy.toolFailures == .throwAndPreserve { commit(working) }
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
      // The transcript was not committed (except by throwAndPreserve above): it is as it was before the request.
      // A cancelled request reports cancellation, whatever the model or the tools failed with on the way out.
      if Task.isCancelled, !(error is LanguageModelSessionError) { throw CancellationError() }
      throw error
    }
  }

  private func nextTurn(
    _ request: ModelRequest, streaming: Bool, sink: (SessionEvent, String) -> Void
  )
    async throws -> ModelTurn
  {
    guard streaming else { return try await model.turn(for: request) }
    var content = ""
    for try await event in model.streamTurn(for: request) {
      switch event {
      case .textDelta(let delta):
        content += delta
        emit(.textDelta(delta), content, sink)
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
