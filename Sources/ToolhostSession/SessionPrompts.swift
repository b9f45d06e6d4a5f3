public import ToolhostGeneration
public import ToolhostTools

// FoundationModels' other ways of writing a prompt or instructions: a `Prompt` or `Instructions` value, or a result
// builder closure. Each is the same request as the text form, with the prompt's text (`Prompt.text`). The async
// methods that take a builder closure run on the caller's actor (`nonisolated(nonsending)`, as FoundationModels
// declares them), so a closure written on the main actor need not be sent anywhere.

extension LanguageModelSession {
  /// Makes a session with tools and ``Instructions`` (FoundationModels' form).
  ///
  /// - Throws: ``ToolCallError`` when a tool's parameters schema does not compile.
  public convenience init(
    model: any LanguageModel, tools: [any Tool] = [], instructions: Instructions?,
    policy: SessionPolicy = SessionPolicy()
  ) throws(ToolCallError) {
    try self.init(model: model, tools: tools, instructions: instructions?.text, policy: policy)
  }

  /// Makes a session with tools and instructions written with ``InstructionsBuilder``:
  ///
  /// ```swift
  /// let session = try LanguageModelSession(model: model, tools: [GetWeather()]) {
  ///   "Answer from the tools' results."
  ///   if brief { "One sentence." }
  /// }
  /// ```
  /// - Throws: ``ToolCallError`` when a tool's parameters schema does not compile.
  public convenience init(
    model: any LanguageModel, tools: [any Tool] = [], policy: SessionPolicy = SessionPolicy(),
    @InstructionsBuilder instructions: () -> Instructions
  ) throws(ToolCallError) {
    try self.init(model: model, tools: tools, instructions: instructions().text, policy: policy)
  }

  /// Answers a ``Prompt``, calling tools as the model asks (see ``respond(to:options:)``).
  @discardableResult
  public func respond(to prompt: Prompt, options: GenerationOptions = GenerationOptions())
    async throws -> Response<String>
  {
    try await respond(to: prompt.text, options: options)
  }

  /// Answers a prompt written with ``PromptBuilder``, calling tools as the model asks:
  ///
  /// ```swift
  /// let answer = try await session.respond {
  ///   "Which of these cities is warmer in April?"
  ///   cities      // [String]
  /// }
  /// ```
  /// - Throws: what `prompt` throws, or what ``respond(to:options:)`` throws.
  @discardableResult
  nonisolated(nonsending) public func respond(
    options: GenerationOptions = GenerationOptions(), @PromptBuilder prompt: () throws -> Prompt
  ) async throws -> Response<String> {
    try await respond(to: try prompt().text, options: options)
  }

  /// Answers a ``Prompt`` with a value of a `@Generable` type (see
  /// ``respond(to:generating:includeSchemaInPrompt:options:)``).
  @discardableResult
  public func respond<Content: Generable>(
    to prompt: Prompt, generating type: Content.Type = Content.self, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) async throws -> Response<Content> {
    try await respond(
      to: prompt.text, generating: type, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a prompt written with ``PromptBuilder`` with a value of a `@Generable` type.
  @discardableResult
  nonisolated(nonsending) public func respond<Content: Generable>(
    generating type: Content.Type = Content.self, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions(), @PromptBuilder prompt: () throws -> Prompt
  ) async throws -> Response<Content> {
    try await respond(
      to: try prompt().text, generating: type, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a ``Prompt`` with generated content following a schema.
  @discardableResult
  public func respond(
    to prompt: Prompt, schema: GenerationSchema, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) async throws -> Response<GeneratedContent> {
    try await respond(to: prompt.text, schema: schema, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a prompt written with ``PromptBuilder`` with generated content following a schema.
  @discardableResult
  nonisolated(nonsending) public func respond(
    schema: GenerationSchema, includeSchemaInPrompt: Bool = true, options: GenerationOptions = GenerationOptions(),
    @PromptBuilder prompt: () throws -> Prompt
  ) async throws -> Response<GeneratedContent> {
    try await respond(
      to: try prompt().text, schema: schema, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a ``Prompt`` as a stream (see ``streamResponse(to:options:)``).
  public func streamResponse(to prompt: Prompt, options: GenerationOptions = GenerationOptions())
    -> ResponseStream<String>
  {
    streamResponse(to: prompt.text, options: options)
  }

  /// Answers a prompt written with ``PromptBuilder`` as a stream.
  ///
  /// - Throws: what `prompt` throws; the stream throws what ``respond(to:options:)`` throws.
  public func streamResponse(
    options: GenerationOptions = GenerationOptions(), @PromptBuilder prompt: () throws -> Prompt
  ) rethrows -> ResponseStream<String> {
    streamResponse(to: try prompt().text, options: options)
  }

  /// Answers a ``Prompt`` with a value of a `@Generable` type as a stream.
  public func streamResponse<Content: Generable>(
    to prompt: Prompt, generating type: Content.Type = Content.self, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) -> ResponseStream<Content> {
    streamResponse(to: prompt.text, generating: type, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a prompt written with ``PromptBuilder`` with a value of a `@Generable` type as a stream.
  public func streamResponse<Content: Generable>(
    generating type: Content.Type = Content.self, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions(), @PromptBuilder prompt: () throws -> Prompt
  ) rethrows -> ResponseStream<Content> {
    streamResponse(
      to: try prompt().text, generating: type, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a ``Prompt`` with generated content following a schema, as a stream.
  public func streamResponse(
    to prompt: Prompt, schema: GenerationSchema, includeSchemaInPrompt: Bool = true,
    options: GenerationOptions = GenerationOptions()
  ) -> ResponseStream<GeneratedContent> {
    streamResponse(to: prompt.text, schema: schema, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Answers a prompt written with ``PromptBuilder`` with generated content following a schema, as a stream.
  public func streamResponse(
    schema: GenerationSchema, includeSchemaInPrompt: Bool = true, options: GenerationOptions = GenerationOptions(),
    @PromptBuilder prompt: () throws -> Prompt
  ) rethrows -> ResponseStream<GeneratedContent> {
    streamResponse(
      to: try prompt().text, schema: schema, includeSchemaInPrompt: includeSchemaInPrompt, options: options)
  }

  /// Starts getting the model ready for this session's next request in the background and returns at once
  /// (FoundationModels' method; `chat` calls it while the user types the first prompt). ``warmUp()`` is the form to
  /// await. The prefix is not used: toolhost's models warm up with the session's instructions and tools.
  ///
  /// ```swift
  /// let session = try LanguageModelSession(model: model, tools: [weather], instructions: "Be brief.")
  /// session.prewarm()
  /// let answer = try await session.respond(to: readLine() ?? "")
  /// ```
  public func prewarm(promptPrefix: Prompt? = nil) {
    Task { await self.warmUp() }
  }
}
