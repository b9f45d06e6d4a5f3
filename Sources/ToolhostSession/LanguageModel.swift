import ToolhostJSON

/// A language model backend: given the transcript so far, the tools and the options, it produces the model's next
/// turn (text, tool calls, or both), whole or streamed.
///
/// The session owns the loop (running tools, repairs, limits); a backend only produces one turn per call. How it
/// gets tool calls out of its model is its own business: an HTTP backend sends `tools` and `tool_choice`, a local
/// backend may constrain decoding to a JSON schema ("guided" tool calling) and return the parsed calls. Either way it
/// returns ``Transcript/ToolCall`` values and honours ``ModelRequest/toolChoice``.
///
/// Conformers are `Sendable`; a session calls one method at a time, but a model may be shared by several sessions.
public protocol LanguageModel: Sendable {
  /// A short name for people and logs, e.g. `gpt-4o-mini at https://api.openai.com/v1`.
  var displayName: String { get }

  /// Produces the next turn.
  ///
  /// - Throws: ``LanguageModelError`` for backend failures (connection, HTTP status, malformed reply),
  ///   `CancellationError` when the calling task is cancelled. Never throws for what the model said: invalid tool
  ///   arguments come back in the turn for the session to repair.
  func turn(for request: ModelRequest) async throws -> ModelTurn

  /// Streams the next turn: ``ModelStreamEvent/textDelta(_:)`` as text arrives, then exactly one
  /// ``ModelStreamEvent/finished(_:)`` with the whole turn (tool calls fully assembled).
  ///
  /// The default implementation calls ``turn(for:)`` and yields its text as one delta. Cancelling the consuming task
  /// (or dropping the stream) cancels the request. The stream throws what ``turn(for:)`` throws.
  func streamTurn(for request: ModelRequest) -> ModelStream

  /// Gets ready for requests that start as `request` does (the same instructions and tools), before the first one:
  /// a local model starts its server and reads that prefix, as FoundationModels' `prewarm` loads its model.
  ///
  /// The default does nothing, which suits a model behind an HTTP API. Does not throw: a model that cannot get ready
  /// reports why on the request that needs it.
  func prewarm(for request: ModelRequest) async
}

extension LanguageModel {
  /// Does nothing: there is nothing to load ahead of a request.
  public func prewarm(for request: ModelRequest) async {}

  /// Calls ``turn(for:)`` and yields its text as one delta, then the turn.
  public func streamTurn(for request: ModelRequest) -> ModelStream {
    AsyncThrowingStream { continuation in
      let task = Task {
        do {
          let turn = try await self.turn(for: request)
          if !turn.text.isEmpty { continuation.yield(.textDelta(turn.text)) }
          continuation.yield(.finished(turn))
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}

/// Whether the model must, may or must not call a tool in one turn (the request's resolved
/// ``GenerationOptions/ToolCallingMode``).
public enum ToolChoice: String, Sendable, Equatable, Codable {
  /// The model decides (`tool_choice: "auto"`).
  case auto
  /// The model must call at least one tool (`tool_choice: "required"`).
  case required
  /// The model must not call tools (`tool_choice: "none"`).
  case none
}

/// What a backend is asked for: the next turn of this conversation.
public struct ModelRequest: Sendable {
  /// Everything so far: instructions, prompts, earlier tool calls and outputs, and the current prompt.
  public var transcript: Transcript
  /// The tools the model may call this turn; empty when tools are off.
  public var tools: [Transcript.ToolDefinition]
  /// Whether the model must, may or must not call a tool this turn.
  public var toolChoice: ToolChoice
  /// Sampling and limits.
  public var options: GenerationOptions
  /// The shape the turn's text must take (guided generation of a type), or `nil` for free text. Backends constrain
  /// the reply to it where they can, and write it into the last prompt when it asks; the session checks the reply.
  public var responseFormat: ResponseFormat?

  /// Makes a request.
  public init(
    transcript: Transcript, tools: [Transcript.ToolDefinition], toolChoice: ToolChoice,
    options: GenerationOptions = GenerationOptions(), responseFormat: ResponseFormat? = nil
  ) {
    self.transcript = transcript
    self.tools = tools
    self.toolChoice = toolChoice
    self.options = options
    self.responseFormat = responseFormat
  }
}

/// One turn of the model: text, tool calls, or both.
public struct ModelTurn: Sendable, Equatable {
  /// The text the model wrote (empty when it only called tools).
  public var text: String
  /// The calls, in the model's order; arguments assembled but not validated.
  public var toolCalls: [Transcript.ToolCall]
  /// Why the model stopped, as the backend reports it (`stop`, `tool_calls`, `length`...).
  public var finishReason: String?
  /// Token counts, when the backend reports them.
  public var usage: TokenUsage?
  /// What a reasoning model thought before the turn, when the backend reports it.
  public var reasoning: String?

  /// Makes a turn.
  public init(
    text: String = "", toolCalls: [Transcript.ToolCall] = [], finishReason: String? = nil,
    usage: TokenUsage? = nil, reasoning: String? = nil
  ) {
    self.text = text
    self.toolCalls = toolCalls
    self.finishReason = finishReason
    self.usage = usage
    self.reasoning = reasoning
  }
}

/// Token counts of one turn.
public struct TokenUsage: Sendable, Equatable, Codable {
  /// Tokens in the request.
  public var promptTokens: Int
  /// Tokens generated.
  public var completionTokens: Int

  /// Makes counts.
  public init(promptTokens: Int, completionTokens: Int) {
    self.promptTokens = promptTokens
    self.completionTokens = completionTokens
  }
}

/// A streamed model turn: text deltas, then the finished turn.
public typealias ModelStream = AsyncThrowingStream<ModelStreamEvent, any Error>

/// What a streaming backend yields.
public enum ModelStreamEvent: Sendable, Equatable {
  /// More text of the answer.
  case textDelta(String)
  /// The whole turn, last.
  case finished(ModelTurn)
}

/// A backend failed: could not connect, timed out, got an error status or a reply it cannot read.
///
/// ``description`` says what went wrong, where (the URL for HTTP backends) and what to do.
public struct LanguageModelError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kind of failure.
  public enum Kind: Sendable, Equatable {
    /// The server answered with this HTTP status (after any retries).
    case httpStatus(Int)
    /// No connection could be made (refused, unknown host, TLS failure).
    case connectionFailed
    /// The server did not answer in time.
    case timedOut
    /// The reply could not be understood.
    case malformedReply
    /// The server reported an error inside a reply (for example an error event in a stream).
    case serverReported
    /// The configuration is unusable (missing API key, bad URL).
    case configuration
    /// The model's answer did not fit the type or schema asked for, even after being told what was wrong once
    /// (FoundationModels' decoding failure).
    case decodingFailure
  }

  /// The kind of failure.
  public var kind: Kind
  /// The whole message: what went wrong, where, and what to do.
  public var message: String
  /// The URL involved, if any.
  public var url: String?
  /// How many attempts were made.
  public var attempts: Int
  /// The setting that fixes the error, when one does; a program names its own way to change it (the command line
  /// names an option), since the message does not.
  public var setting: Setting?

  /// A setting of a model that an error points at.
  public enum Setting: Sendable, Equatable {
    /// The server's URL (``url`` holds the one used).
    case baseURL
    /// The model's name, or for a local model its file.
    case model
  }

  /// Makes an error.
  public init(kind: Kind, message: String, url: String? = nil, attempts: Int = 1, setting: Setting? = nil) {
    self.kind = kind
    self.message = message
    self.url = url
    self.attempts = attempts
    self.setting = setting
  }

  /// The message.
  public var description: String { message }
}
