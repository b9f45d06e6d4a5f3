import Synchronization
import ToolhostGeneration
import ToolhostJSON
import ToolhostSchema
public import ToolhostTools

/// The loop of a request: the transcript taken and committed, the profile applied, the model asked, the tools run,
/// and asked again until it answers.
extension LanguageModelSession {
  func beginRequest() throws -> Transcript {
    if let setupError = state.withLock({ $0.setupError }) { throw setupError }
    return try state.withLock { s throws(LanguageModelSessionError) in
      if s.isResponding { throw LanguageModelSessionError.concurrentRequests }
      s.isResponding = true
      return s.transcript
    }
  }

  func endRequest() {
    state.withLock {
      $0.isResponding = false
      $0.transcriptReplaced = false
    }
  }

  /// Keeps a request's transcript, unless the session's was set while it ran.
  ///
  /// - Throws: ``LanguageModelSessionError/transcriptMutationWhileResponding`` when it was.
  func commit(_ transcript: Transcript) throws(LanguageModelSessionError) {
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

  /// The tools of `registry` as the session offers them to a model: name, description, parameters schema, examples
  /// and hints.
  public static func definitions(of registry: ToolRegistry) -> [Transcript.ToolDefinition] {
    registry.tools.map {
      Transcript.ToolDefinition(
        name: $0.name, description: $0.description, parameters: $0.parameters, examples: $0.examples,
        annotations: $0.annotations)
    }
  }

  /// Runs a request with the session's properties as the ones `@SessionProperty` reads (in its profile, hooks and
  /// tools, whichever sessions they are shared with).
  func run(
    prompt: String, format: ResponseFormatRequest?, options: GenerationOptions, streaming: Bool,
    from start: Transcript, sink: EventSink
  ) async throws -> RawResponse {
    try await SessionPropertyValues.$current.withValue(properties) {
      try await runRequest(
        prompt: prompt, format: format, options: options, streaming: streaming, from: start, sink: sink)
    }
  }

  func runRequest(
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
        let (request, offered) = modelRequest(
          working, options: profile?.applied(to: options) ?? options, profile: profile, format: format,
          answerNow: answerNow, calledTool: calledTool)
        let choice = request.toolChoice
        let constrained = request.responseFormat != nil
        emit(.modelTurnStarted(round: rounds + 1), "", sink)
        let model = profile?.model ?? self.model
        let turn = try await nextTurn(
          request, model: model, streaming: streaming, partial: constrained ? generation : nil, sink: sink)
        try Task.checkCancellation()
        if let reasoning = turn.reasoning {
          try await addReasoning(reasoning, to: &working, profile: profile)
        }

        if turn.toolCalls.isEmpty {
          var content = GeneratedContent(kind: .string(turn.text))
          var text = turn.text
          if let format {
            (text, content) = try await structured(
              format, answer: turn.text, constrained: constrained, request: request, model: model,
              streaming: streaming, generation: generation, round: rounds + 1, sink: sink)
            content.id = generation
          }
          return try await respond(
            text, content: content, usage: turn.usage, to: promptEntry, in: &working, profile: profile,
            structured: format != nil, sink: sink)
        }

        // A model going round in circles (the same call again, or a tool's third call for one prompt) is asked
        // for its answer instead.
        if !answerNow, CallHistory(working).loops(turn.toolCalls) {
          answerNow = true
          continue
        }
        let outcome = try await runToolRound(
          turn, rounds: &rounds, repairs: &repairs, choice: choice, offered: offered, policy: policy, in: &working,
          profile: profile, sink: sink)
        if outcome.ranAny { calledTool = true }
      }
    } catch {
      throw failedRequest(error)
    }
  }

  /// What a failed request throws, once the properties' history is back to what was kept: the transcript was not
  /// committed (except by ``SessionPolicy/ToolFailures/throwAndPreserve``), so it is as it was before the request. A
  /// cancelled request reports cancellation, whatever the model or the tools failed with on the way out.
  private func failedRequest(_ error: any Error) -> any Error {
    properties.setHistory(of: self.transcript)
    if Task.isCancelled, !(error is LanguageModelSessionError) { return CancellationError() }
    return error
  }

  /// The request for the model's next turn: the tools offered (those of `options.offeredTools` the session has, or
  /// all), whether it may, must or must not call one, and the transcript as the profile lets the model see it.
  /// With no tool to call, a generated type's turn is constrained to its schema from the start.
  private func modelRequest(
    _ working: Transcript, options: GenerationOptions, profile: ResolvedProfile?, format: ResponseFormatRequest?,
    answerNow: Bool, calledTool: Bool
  ) -> (request: ModelRequest, offered: [String]?) {
    let tools = self.tools
    let offered = options.offeredTools.map { names in names.filter { tools.tool(named: $0) != nil } }
    let definitions = Self.definitions(of: tools).filter { offered?.contains($0.name) ?? true }
    let choice: ToolChoice =
      definitions.isEmpty || answerNow
      ? .none : options.effectiveToolCallingMode.choice(afterToolCalls: calledTool)
    let constrained = format != nil && choice == .none
    let seen = profile?.transformed(working) ?? working
    let request = ModelRequest(
      transcript: offered.map { seen.steering(toward: $0) } ?? seen, tools: definitions, toolChoice: choice,
      options: options, responseFormat: constrained ? format?.request : nil)
    return (request, offered)
  }

  /// The model's reasoning, as an entry of `working` (after the `onReasoning` hooks have seen it).
  private func addReasoning(_ reasoning: String, to working: inout Transcript, profile: ResolvedProfile?) async throws {
    let reasoningEntry = Transcript.Reasoning(text: reasoning)
    working.append(.reasoning(reasoningEntry))
    try await runHooks(profile?.onReasoning, on: &working) { try await $0(reasoningEntry) }
  }

  /// The model's answer ends the request: the response entry (after the `onResponse` hooks) is committed with the
  /// rest of `working`, and emitted with the entries the request added.
  private func respond(
    _ text: String, content: GeneratedContent, usage: TokenUsage?, to promptEntry: Transcript.Prompt,
    in working: inout Transcript, profile: ResolvedProfile?, structured: Bool, sink: EventSink
  ) async throws -> RawResponse {
    let responseEntry = Transcript.Response(text: text, usage: usage)
    try await runHooks(profile?.onResponse, on: &working) { try await $0(responseEntry) }
    working.append(.response(responseEntry))
    try commit(working)
    // From the prompt on (a profile may have put instructions before it since the request began).
    let firstNew = working.entries.lastIndex { $0.id == promptEntry.id } ?? working.startIndex
    let entries = working.entries[firstNew...]
    emit(
      .response(Response(content: text, rawContent: content, transcriptEntries: entries)), text, sink,
      partial: structured ? content : nil)
    return RawResponse(text: text, content: content, entries: entries)
  }

  /// One round of tool calls, counted in `rounds` (and a call to repair in `repairs`), each within the policy's
  /// limit: the calls the model asked for (each with an id of its own) and their outputs go into `working`, with the
  /// `onToolCall` and `onToolOutput` hooks. A failure the policy does not report to the model is thrown (after
  /// `working` is committed, for ``SessionPolicy/ToolFailures/throwAndPreserve``).
  private func runToolRound(
    _ turn: ModelTurn, rounds: inout Int, repairs: inout Int, choice: ToolChoice, offered: [String]?,
    policy: SessionPolicy, in working: inout Transcript, profile: ResolvedProfile?, sink: EventSink
  ) async throws -> RoundOutcome {
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
    if let failure = outcome.failure {
      if policy.toolFailures == .throwAndPreserve { try commit(working) }
      throw failure
    }
    if let problem = outcome.repairProblem {
      repairs += 1
      if repairs > policy.maximumRepairs {
        throw LanguageModelSessionError.repairLimitReached(limit: policy.maximumRepairs, lastProblem: problem)
      }
    }
    return outcome
  }

  /// Works out the dynamic profile (if the session has one) for the next model turn: the session's properties see
  /// `working` as the history, the tools are registered again when they changed, and the instructions entry at the
  /// start of `working` is the profile's.
  ///
  /// - Throws: ``ToolCallError`` when a profile's tool has a parameters schema that does not compile.
  func applyProfile(to working: inout Transcript) throws -> ResolvedProfile? {
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
  func runHooks<Hook>(
    _ hooks: [Hook]?, on working: inout Transcript, _ run: (Hook) async throws -> Void
  ) async throws {
    guard let hooks, !hooks.isEmpty else { return }
    properties.setHistory(of: working)
    for hook in hooks { try await run(hook) }
    adoptWrittenHistory(into: &working)
  }

  /// Makes `working` the history a hook wrote (compacted, say), if one did.
  func adoptWrittenHistory(into working: inout Transcript) {
    if let written = properties.takeWrittenHistory() { working.history = written }
  }

  /// Runs the `onActivate` actions of the profile's parts that were not in the previous worked-out profile and the
  /// `onDeactivate` actions of those no longer in it.
  func activateParts(of profile: ResolvedProfile?) async {
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
  func structured(
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

  func nextTurn(
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
