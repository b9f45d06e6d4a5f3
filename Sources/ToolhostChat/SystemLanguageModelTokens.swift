public import ToolhostGeneration
import ToolhostJSON
public import ToolhostSession
public import ToolhostTools

// How much of the default model's context a prompt, instructions, tools, a schema or a transcript take
// (FoundationModels' `tokenCount(for:)` and `contextSize`).
//
// toolhost has no tokenizer of the chosen model in process, so the counts are its context-fitting estimate
// (``Transcript/estimatedTokens(_:)``: about one token per three characters, plus a few per message). It errs high
// for English, which is the safe side for the question these answer: does this fit?

extension SystemLanguageModel {
  /// The most tokens the model's context holds: the local model's window (`n_ctx`, 4,096 unless set), or 4,096 for
  /// an HTTP model, whose window the OpenAI-compatible API does not tell (FoundationModels' own figure before 27).
  public var contextSize: Int { localContextSize ?? 4096 }

  /// About how many tokens `prompt` takes, by toolhost's estimate (see the file's note).
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when no model is set up, as a request would.
  public func tokenCount(for prompt: some PromptRepresentable) async throws -> Int {
    try requireAvailable()
    return Transcript.estimatedTokens(.prompt(Transcript.Prompt(text: prompt.promptRepresentation.text)))
  }

  /// About how many tokens `instructions` take.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when no model is set up.
  public func tokenCount(for instructions: Instructions) async throws -> Int {
    try requireAvailable()
    return Transcript.estimatedTokens(.instructions(Transcript.Instructions(text: instructions.text)))
  }

  /// About how many tokens the descriptions of `tools` take (their names, descriptions and parameter schemas).
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when no model is set up.
  public func tokenCount(for tools: [any Tool]) async throws -> Int {
    try requireAvailable()
    return tools.map { tool in
      Transcript.estimatedTokens(
        characters: tool.name.count + tool.description.count + tool.parameters.serialized().count)
    }.reduce(0, +)
  }

  /// About how many tokens `schema` takes when it is described to the model.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when no model is set up.
  public func tokenCount(for schema: GenerationSchema) async throws -> Int {
    try requireAvailable()
    return Transcript.estimatedTokens(characters: schema.jsonSchema.serialized().count)
  }

  /// About how many tokens `transcriptEntries` take as they are sent (reasoning is not sent, so it takes none).
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` when no model is set up.
  public func tokenCount(for transcriptEntries: some Collection<Transcript.Entry>) async throws -> Int {
    try requireAvailable()
    return transcriptEntries.map(Transcript.estimatedTokens(_:)).reduce(0, +)
  }

  /// Throws what a request would when no model is set up.
  private func requireAvailable() throws(LanguageModelError) {
    if case .unavailable(let reason) = availability {
      throw LanguageModelError(kind: .configuration, message: reason.description)
    }
  }
}
