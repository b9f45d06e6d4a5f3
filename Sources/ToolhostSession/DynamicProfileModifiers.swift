import ToolhostTools

// The modifiers and hooks of dynamic profiles (FoundationModels 27): each one a ``ProfileSetting`` that changes the
// worked-out profile, applied before what it modifies so that the one nearest the `Profile` wins.

extension ContextOptions.ReasoningLevel {
  /// The effort an OpenAI-compatible server understands (`reasoning_effort`).
  var effort: String {
    switch self {
    case .light: "low"
    case .moderate: "medium"
    case .deep: "high"
    case .custom(let value): value
    }
  }
}

extension LanguageModelSession.DynamicProfile {
  /// Sets a value of the worked-out profile (the one nearest the `Profile` wins).
  private func setting(_ change: @escaping @Sendable (inout LanguageModelSession.ResolvedProfile) -> Void)
    -> LanguageModelSession.ModifiedDynamicProfile<Self, ProfileSetting>
  {
    LanguageModelSession.ModifiedDynamicProfile(
      content: self, modifier: ProfileSetting { profile, _ in change(&profile) })
  }

  /// Adds an action to the worked-out profile (`path` says where this part is, for its activation); actions run in
  /// the order they are written.
  private func adding(_ add: @escaping @Sendable (inout LanguageModelSession.ResolvedProfile, _ path: String) -> Void)
    -> LanguageModelSession.ModifiedDynamicProfile<Self, ProfileSetting>
  {
    LanguageModelSession.ModifiedDynamicProfile(content: self, modifier: ProfileSetting(addsAction: true, change: add))
  }

  /// Applies a modifier of your own.
  public func modifier<Modifier: LanguageModelSession.DynamicProfileModifier>(_ modifier: Modifier)
    -> some LanguageModelSession.DynamicProfile
  {
    LanguageModelSession.ModifiedDynamicProfile(content: self, modifier: modifier)
  }

  /// Sets the model that answers the turns this profile is worked out for.
  public func model(_ model: any LanguageModel) -> some LanguageModelSession.DynamicProfile {
    setting { $0.model = model }
  }

  /// Sets the tool-calling mode of the turns this profile answers.
  public func toolCallingMode(_ mode: GenerationOptions.ToolCallingMode?) -> some LanguageModelSession.DynamicProfile {
    setting { if let mode { $0.toolCallingMode = mode } }
  }

  /// Sets the tool-calling mode (FoundationModels' first name for ``toolCallingMode(_:)``).
  @available(*, deprecated, renamed: "toolCallingMode(_:)")
  public func toolCalling(_ mode: GenerationOptions.ToolCallingMode?) -> some LanguageModelSession.DynamicProfile {
    toolCallingMode(mode)
  }

  /// Sets the temperature (a request's own temperature wins).
  public func temperature(_ temperature: Double?) -> some LanguageModelSession.DynamicProfile {
    setting { if let temperature { $0.temperature = temperature } }
  }

  /// Sets the sampling mode (a request's own wins).
  public func samplingMode(_ mode: GenerationOptions.SamplingMode?) -> some LanguageModelSession.DynamicProfile {
    setting { if let mode { $0.samplingMode = mode } }
  }

  /// Sets the most tokens a turn may generate (a request's own limit wins).
  public func maximumResponseTokens(_ limit: Int?) -> some LanguageModelSession.DynamicProfile {
    setting { if let limit { $0.maximumResponseTokens = limit } }
  }

  /// Sets how much the model reasons: sent as `reasoning_effort` (`low`, `medium`, `high` or the custom value) to a
  /// model that takes it, unless the request sets its own.
  public func reasoningLevel(_ level: ContextOptions.ReasoningLevel?) -> some LanguageModelSession.DynamicProfile {
    setting { if let level { $0.reasoningLevel = level } }
  }

  /// Sets what a request whose tool fails leaves in the transcript (the session's own policy otherwise).
  public func transcriptErrorHandlingPolicy(_ policy: TranscriptErrorHandlingPolicy?)
    -> some LanguageModelSession.DynamicProfile
  {
    setting { if let policy { $0.transcriptErrorHandlingPolicy = policy } }
  }

  /// Changes the history the model sees on each turn (the entries after the leading instructions, which stay; the
  /// transcript itself keeps every entry): for example, only the latest entries. Transforms apply in the order the
  /// modifiers are written.
  public func historyTransform(
    _ transform: @escaping @Sendable ([Transcript.Entry]) -> [Transcript.Entry]
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, _ in profile.historyTransforms.append(transform) }
  }

  /// Changes the history the model sees (FoundationModels' first name for ``historyTransform(_:)``).
  @available(*, deprecated, renamed: "historyTransform(_:)")
  public func inputFilter(
    _ filter: @escaping @Sendable ([Transcript.Entry]) -> [Transcript.Entry]
  ) -> some LanguageModelSession.DynamicProfile {
    historyTransform(filter)
  }

  /// Runs `action` when a request starts, with its prompt; throwing ends the request with the error.
  public func onPrompt(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.Prompt) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, _ in profile.onPrompt.append(action) }
  }

  /// Runs `action` when a request starts; throwing ends the request with the error.
  public func onPrompt(
    @_inheritActorContext perform action: @escaping @Sendable () async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    onPrompt { _ in try await action() }
  }

  /// Runs `action` for every tool call the model asks for, before it runs; throwing ends the request.
  public func onToolCall(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.ToolCall) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, _ in profile.onToolCall.append(action) }
  }

  /// Runs `action` for every tool call the model asks for, before it runs; throwing ends the request.
  public func onToolCall(
    @_inheritActorContext perform action: @escaping @Sendable () async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    onToolCall { _ in try await action() }
  }

  /// Runs `action` for every tool output, with its call; throwing ends the request.
  public func onToolOutput(
    @_inheritActorContext perform action:
      @escaping @Sendable (Transcript.ToolCall, Transcript.ToolOutput) async throws
      -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, _ in profile.onToolOutput.append(action) }
  }

  /// Runs `action` for every tool output; throwing ends the request.
  public func onToolOutput(
    @_inheritActorContext perform action: @escaping @Sendable () async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    onToolOutput { _, _ in try await action() }
  }

  /// Runs `action` with the model's response, before the request returns it; throwing ends the request.
  public func onResponse(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.Response) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, _ in profile.onResponse.append(action) }
  }

  /// Runs `action` when the model has responded, before the request returns; throwing ends the request.
  public func onResponse(
    @_inheritActorContext perform action: @escaping @Sendable () async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    onResponse { _ in try await action() }
  }

  /// Runs `action` with the model's reasoning, when a turn of a reasoning model has some, before the turn's calls
  /// or answer are used; throwing ends the request.
  public func onReasoning(
    @_inheritActorContext perform action: @escaping @Sendable (Transcript.Reasoning) async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, _ in profile.onReasoning.append(action) }
  }

  /// Runs `action` whenever the model reasons; throwing ends the request.
  public func onReasoning(
    @_inheritActorContext perform action: @escaping @Sendable () async throws -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    onReasoning { _ in try await action() }
  }

  /// Runs `action` when this profile becomes part of what the session works out: on the first turn, or when an
  /// `if` turns to it.
  public func onActivate(
    @_inheritActorContext perform action: @escaping @Sendable () async -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, path in profile.lifecycles[path, default: .init()].activate.append(action) }
  }

  /// Runs `action` when this profile stops being part of what the session works out (an `if` turned away from it).
  public func onDeactivate(
    @_inheritActorContext perform action: @escaping @Sendable () async -> Void
  ) -> some LanguageModelSession.DynamicProfile {
    adding { profile, path in profile.lifecycles[path, default: .init()].deactivate.append(action) }
  }
}
