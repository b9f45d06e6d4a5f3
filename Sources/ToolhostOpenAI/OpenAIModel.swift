public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ToolhostEventStream
import ToolhostGuided
import ToolhostJSON
public import ToolhostSession
import ToolhostSystem

/// A ``LanguageModel`` that speaks the OpenAI chat-completions API over HTTP (AsyncHTTPClient), whole or streamed
/// (Server-Sent Events).
///
/// 429 and 5xx replies are retried with exponential backoff, honouring `Retry-After` (up to
/// ``OpenAIConfiguration/maximumRetryDelay``); other error statuses fail at once with the server's message.
/// Redirects are not followed (they would send the API key, the prompt and tool results to another address): a 3xx
/// reply is an error naming the status and the `Location`, to set the base URL to the final address.
/// Connection failures, timeouts and malformed replies are ``LanguageModelError``s naming the URL.
///
/// The model owns an `HTTPClient` unless given one: call ``shutdown()`` when done, or use
/// ``withModel(_:_:)``, which always does.
///
/// ```swift
/// let configuration = OpenAIConfiguration(baseURL: "http://127.0.0.1:8080/v1", model: "llama3")
/// let answer = try await OpenAIModel.withModel(configuration) { model in
///   try await LanguageModelSession(model: model, tools: [WeatherTool()]).respond(to: "Weather in Oslo?").content
/// }
/// ```
public final class OpenAIModel: LanguageModel {
  /// The server and model.
  public let configuration: OpenAIConfiguration
  private let client: HTTPClient
  private let ownsClient: Bool

  /// Makes a model with its own HTTP client (on the shared event loop group); call ``shutdown()`` when done.
  ///
  /// - Throws: ``LanguageModelError`` when the configuration is unusable (see ``OpenAIConfiguration/validate()``).
  public init(configuration: OpenAIConfiguration) throws(LanguageModelError) {
    try configuration.validate()
    self.configuration = configuration
    var http = HTTPClient.Configuration()
    http.timeout = HTTPClient.Configuration.Timeout(
      connect: Self.timeAmount(configuration.connectTimeout),
      read: Self.timeAmount(configuration.readTimeout))
    http.connectionPool.retryConnectionEstablishment = configuration.retriesFailedConnections
    http.redirectConfiguration = .disallow
    self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
    self.ownsClient = true
  }

  /// Makes a model on an HTTP client the caller owns (and shuts down); its timeouts apply. The client should not
  /// follow redirects (`redirectConfiguration = .disallow`), so that a 3xx reply is reported, not followed.
  ///
  /// - Throws: ``LanguageModelError`` when the configuration is unusable.
  public init(configuration: OpenAIConfiguration, httpClient: HTTPClient) throws(LanguageModelError) {
    try configuration.validate()
    self.configuration = configuration
    self.client = httpClient
    self.ownsClient = false
  }

  /// Runs `body` with a model and shuts its HTTP client down afterwards, whether `body` throws or not.
  ///
  /// - Throws: ``LanguageModelError`` for an unusable configuration, or what `body` throws.
  public static func withModel<T: Sendable>(
    _ configuration: OpenAIConfiguration, _ body: (OpenAIModel) async throws -> T
  ) async throws -> T {
    let model = try OpenAIModel(configuration: configuration)
    let result: Result<T, any Error>
    do { result = .success(try await body(model)) } catch { result = .failure(error) }
    try? await model.shutdown()
    return try result.get()
  }

  /// Shuts down the HTTP client if the model made it; requests after this fail. Does nothing for a caller's client.
  ///
  /// - Throws: the client's shutdown error (already shut down, for instance).
  public func shutdown() async throws {
    if ownsClient { try await client.shutdown() }
  }

  /// `gpt-4o-mini at https://api.openai.com/v1`.
  public var displayName: String { "\(configuration.model) at \(configuration.baseURL)" }

  /// Sends the request without streaming and reads the whole reply.
  ///
  /// With guided tool calling the reply is read as a guided reply (see ``GuidedToolCalls/turn(fromReply:base:callID:)``);
  /// a reply that repeats a call already answered since the last prompt is asked for again, constrained to an answer,
  /// and one that copies its tool's description is asked for again without that tool (`GuidedTurn`, which also says
  /// how these re-asks stand among the other retries).
  /// - Throws: ``LanguageModelError``, or `CancellationError` when the task is cancelled.
  public func turn(for request: ModelRequest) async throws -> ModelTurn {
    guard isGuided(request) else {
      return try parseWhole(try await collect(try await send(body(for: request, stream: false))))
    }
    let offer = GuidedToolCalls.ToolOffer(for: request, today: GuidedToolCalls.today())
    return try await GuidedTurn.run(
      for: request, offer: offer, followUp: configuration.guidedFollowUp, callID: Self.guidedCallID
    ) { attempt in
      try parseWhole(
        try await collect(try await send(body(for: request, stream: false, attempt: attempt, offer: offer))))
    }
  }

  /// Sends the request with `stream: true` and yields text as it arrives, then the assembled turn.
  ///
  /// A server that ignores `stream` and answers with one JSON reply works too. With guided tool calling the reply
  /// is reviewed as in ``turn(for:)`` before anything is shown, so the answer's text comes whole once it stands,
  /// then the finished turn. The stream throws ``LanguageModelError`` or `CancellationError`.
  public func streamTurn(for request: ModelRequest) -> ModelStream {
    let guided = isGuided(request)
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          guard guided else {
            try await self.stream(self.body(for: request, stream: true)) { continuation.yield($0) }
            continuation.finish()
            return
          }
          let offer = GuidedToolCalls.ToolOffer(for: request, today: GuidedToolCalls.today())
          try await GuidedTurn.stream(
            for: request, offer: offer, followUp: self.configuration.guidedFollowUp,
            callID: Self.guidedCallID
          ) { attempt, shouldStop in
            var finished: ModelTurn?
            do {
              try await self.stream(self.body(for: request, stream: true, attempt: attempt, offer: offer)) { event in
                switch event {
                case .textDelta(let piece): if shouldStop(piece) { throw AbandonedReply() }
                case .finished(let raw): finished = raw
                }
              }
            } catch is AbandonedReply {
              return .abandoned
            }
            guard let finished else {
              throw LanguageModelError(
                kind: .malformedReply, message: "\(self.url) ended its reply without a turn", url: self.url)
            }
            return .finished(finished)
          } yield: {
            continuation.yield($0)
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// The body of one request; a guided turn's `offer` is worked out once and shared by its attempts.
  private func body(
    for request: ModelRequest, stream: Bool, attempt: GuidedToolCalls.Attempt = GuidedToolCalls.Attempt(),
    offer: GuidedToolCalls.ToolOffer? = nil
  ) -> JSONValue {
    switch configuration.toolCalling {
    case .native:
      ChatCompletions.requestBody(for: request, model: configuration.model, stream: stream)
    case .guided:
      GuidedToolCalls.requestBody(
        for: request, offer: offer ?? GuidedToolCalls.ToolOffer(for: request, today: GuidedToolCalls.today()),
        model: configuration.model, stream: stream, format: configuration.guidedResponseFormat,
        answerOnly: attempt.answerOnly, followUp: configuration.guidedFollowUp, excluding: attempt.excluded,
        strict: attempt.strict, callRequired: attempt.callRequired, continuing: attempt.continuation)
    }
  }

  private func isGuided(_ request: ModelRequest) -> Bool {
    configuration.toolCalling == .guided && GuidedToolCalls.isConstrained(request)
  }

  private static func guidedCallID() -> String {
    "call_" + UUID().uuidString.lowercased().prefix(12).replacingOccurrences(of: "-", with: "")
  }

  // MARK: - HTTP

  private var url: String { configuration.chatCompletionsURL }

  /// Sends `body` as a streamed request and hands each event to `yield`; an error `yield` throws stops reading
  /// (the response is dropped, which closes its connection, and the server stops generating) and is rethrown.
  private func stream(_ body: JSONValue, yield: (ModelStreamEvent) throws -> Void) async throws {
    let response = try await send(body)
    let contentType = response.headers.first(name: "content-type")?.lowercased() ?? ""
    if contentType.contains("application/json") {
      let turn = try parseWhole(try await collect(response))
      if !turn.text.isEmpty { try yield(.textDelta(turn.text)) }
      try yield(.finished(turn))
      return
    }
    var parser = ServerSentEventParser()
    var state = ChatCompletionStreamState()
    func handle(_ events: [ServerSentEventParser.Event]) throws {
      for event in events where !state.isDone {
        let applied: ChatCompletionStreamState.Update
        do {
          applied = try state.apply(data: event.data)
        } catch {
          throw LanguageModelError(
            kind: error.reportedByServer ? .serverReported : .malformedReply,
            message: error.reportedByServer
              ? "\(url) reported an error in its stream: \(error.message)"
              : "\(url) sent a malformed stream: \(error.message)", url: url)
        }
        if case .text(let piece) = applied { try yield(.textDelta(piece)) }
      }
    }
    do {
      for try await buffer in response.body {
        try handle(parser.feed(buffer.readableBytesView))
        if state.isDone { break }
      }
    } catch let error as LanguageModelError {
      throw error
    } catch let stop as AbandonedReply {
      throw stop
    } catch {
      throw mapTransportError(error, attempts: 1)
    }
    try handle(parser.finish())
    if !state.isDone && state.finishReason == nil {
      throw LanguageModelError(
        kind: .malformedReply,
        message:
          "\(url) ended its stream before the turn was finished (no finish_reason and no [DONE]); "
          + "the server may have crashed or dropped the connection", url: url)
    }
    try yield(.finished(state.turn))
  }

  private func parseWhole(_ bytes: [UInt8]) throws(LanguageModelError) -> ModelTurn {
    let json: JSONValue
    do { json = try JSONValue.parse(bytes) } catch {
      throw LanguageModelError(
        kind: .malformedReply,
        message:
          "\(url) answered with something that is not JSON (\(error.description)): «\(Self.excerpt(bytes))»; "
          + "check that the base URL points at an OpenAI-compatible API", url: url, setting: .baseURL)
    }
    if let error = json["error"], !error.isNull {
      let message = error["message"]?.stringValue ?? error.stringValue ?? error.serialized()
      throw LanguageModelError(
        kind: .serverReported, message: "\(url) reported an error: \(message)", url: url)
    }
    do { return try ChatCompletions.turn(fromReply: json) } catch {
      throw LanguageModelError(
        kind: .malformedReply,
        message:
          "\(url) answered with JSON that is not a chat completion (\(error.reason)): «\(Self.excerpt(bytes))»",
        url: url)
    }
  }

  private func collect(_ response: HTTPClientResponse) async throws -> [UInt8] {
    do {
      let buffer = try await response.body.collect(upTo: 64 << 20)
      return Array(buffer.readableBytesView)
    } catch {
      throw mapTransportError(error, attempts: 1)
    }
  }

  /// Posts `body`, retrying 429 and 5xx; returns a 2xx response whose body is not read yet.
  private func send(_ body: JSONValue) async throws -> HTTPClientResponse {
    let bytes = Array(body.serialized().utf8)
    var attempt = 0
    while true {
      attempt += 1
      try Task.checkCancellation()
      var request = HTTPClientRequest(url: url)
      request.method = .POST
      request.headers.add(name: "Content-Type", value: "application/json")
      request.headers.add(
        name: "Accept", value: body["stream"] == true ? "text/event-stream" : "application/json")
      request.headers.add(name: "User-Agent", value: ToolhostVersion.userAgent)
      if let key = configuration.apiKey {
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
      }
      for (name, value) in configuration.headers {
        request.headers.replaceOrAdd(name: name, value: value)
      }
      request.body = .bytes(bytes)

      let response: HTTPClientResponse
      do {
        response = try await client.execute(
          request, timeout: Self.timeAmount(configuration.requestTimeout))
      } catch {
        throw mapTransportError(error, attempts: attempt)
      }
      let status = Int(response.status.code)
      if (200..<300).contains(status) { return response }

      let errorBody =
        (try? await response.body.collect(upTo: 1 << 20)).map { Array($0.readableBytesView) } ?? []
      let retryable = status == 429 || (500..<600).contains(status)
      if retryable && attempt <= configuration.maximumRetries {
        try await Task.sleep(for: retryDelay(attempt: attempt, headers: response.headers))
        continue
      }
      throw statusError(
        status, reason: response.status.reasonPhrase, body: errorBody, attempts: attempt,
        location: response.headers.first(name: "location"))
    }
  }

  /// The delay before retry number `attempt` (from 1): the server's `retry-after-ms` or `Retry-After` (seconds or
  /// an HTTP date) when given, else exponential backoff with jitter; never more than the configured maximum.
  func retryDelay(attempt: Int, headers: HTTPHeaders) -> Duration {
    let cap = configuration.maximumRetryDelay
    if let ms = headers.first(name: "retry-after-ms").flatMap(Double.init), ms >= 0 {
      return min(.milliseconds(Int64(ms)), cap)
    }
    if let value = headers.first(name: "retry-after") {
      if let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 {
        return min(Duration(seconds: seconds), cap)
      }
      if let date = Self.httpDate(value) {
        return min(Duration(seconds: max(0, date.timeIntervalSinceNow)), cap)
      }
    }
    let base = configuration.retryBaseDelay * (1 << min(attempt - 1, 16))
    let jitter = base * Double.random(in: 0..<0.25)
    return min(base + jitter, cap)
  }

  static func httpDate(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: text)
  }

  private func statusError(_ status: Int, reason: String, body: [UInt8], attempts: Int, location: String? = nil)
    -> LanguageModelError
  {
    let serverMessage = ChatCompletions.errorMessage(fromBody: body) ?? "(no message)"
    var message = "POST \(url) failed with HTTP \(status) \(reason)"
    if attempts > 1 { message += " after \(attempts) attempts" }
    if (300..<400).contains(status) {
      message +=
        ": the server redirects\(location.map { " to \($0)" } ?? ""), and toolhost does not follow redirects (they "
        + "would send the API key, the prompt and tool results to another address); set the base URL to the final "
        + "address"
      return LanguageModelError(kind: .httpStatus(status), message: message, url: url, attempts: attempts)
    }
    message += ": \(serverMessage)"
    switch status {
    case 401, 403:
      message += "; check the API key (TOOLHOST_API_KEY or OPENAI_API_KEY)"
    case 404:
      message +=
        "; check the base URL (it usually ends in /v1) and the model name (\(configuration.model))"
    case 400, 422:
      message += "; the server rejected the request"
    case 429:
      message += "; the server is rate limiting: wait and try again"
    case 500..<600:
      message += "; the server failed: try again later"
    default:
      break
    }
    return LanguageModelError(
      kind: .httpStatus(status), message: message, url: url, attempts: attempts)
  }

  /// A transport failure in words, or `CancellationError` when the task was cancelled.
  private func mapTransportError(_ error: any Error, attempts: Int) -> any Error {
    if error is CancellationError || error is LanguageModelError { return error }
    if Task.isCancelled { return CancellationError() }
    if let e = error as? HTTPClientError {
      switch e {
      case .cancelled:
        return CancellationError()
      case .connectTimeout:
        return LanguageModelError(
          kind: .timedOut,
          message:
            "cannot connect to \(url): no answer within \(configuration.connectTimeout.messageText); "
            + "check the base URL and that the server is running", url: url, attempts: attempts, setting: .baseURL)
      case .readTimeout:
        return LanguageModelError(
          kind: .timedOut,
          message:
            "\(url) sent nothing for \(configuration.readTimeout.messageText); the server may be overloaded "
            + "(the read timeout is OpenAIConfiguration.readTimeout)", url: url, attempts: attempts)
      case .deadlineExceeded:
        return LanguageModelError(
          kind: .timedOut,
          message:
            "\(url) did not finish its reply within \(configuration.requestTimeout.messageText)",
          url: url,
          attempts: attempts)
      case .remoteConnectionClosed:
        return LanguageModelError(
          kind: .connectionFailed,
          message: "\(url) closed the connection before its reply was complete", url: url,
          attempts: attempts)
      case .invalidURL, .emptyHost, .emptyScheme:
        return LanguageModelError(
          kind: .configuration, message: "\(url) is not a usable URL (\(e)); check the base URL",
          url: url, setting: .baseURL)
      default:
        break
      }
    }
    let reason = String(describing: error)
    let refused = reason.localizedCaseInsensitiveContains("refused")
    return LanguageModelError(
      kind: .connectionFailed,
      message: "cannot connect to \(url): \(refused ? "connection refused" : reason); "
        + "check the base URL and that the server is running", url: url, attempts: attempts, setting: .baseURL)
  }

  static func timeAmount(_ d: Duration) -> TimeAmount {
    .nanoseconds(d.wholeNanoseconds)
  }

  static func excerpt(_ bytes: [UInt8]) -> String {
    let text = String(decoding: bytes.prefix(300), as: UTF8.self)
    let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
    return bytes.count > 300 ? flat + "…" : flat
  }
}

/// Thrown from a guided stream's handler to stop reading a reply that ``GuidedToolCalls/Attempt`` has given up on
/// (``GuidedToolCalls/Attempt/abandons(partialReply:for:)``); caught where the next try is sent.
private struct AbandonedReply: Error {}
