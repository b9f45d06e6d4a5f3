public import Foundation
public import ToolhostGuided
public import ToolhostSession

/// Where and how to reach an OpenAI-compatible chat-completions server (OpenAI, llama.cpp's server, vLLM, Ollama's
/// `/v1`, LM Studio...).
public struct OpenAIConfiguration: Sendable {
  /// `https://api.openai.com/v1`.
  public static let defaultBaseURL = "https://api.openai.com/v1"
  /// `gpt-4o-mini`.
  public static let defaultModel = "gpt-4o-mini"

  /// The API's base URL, up to and including `/v1`; requests go to `<baseURL>/chat/completions`.
  public var baseURL: String
  /// The model name sent in each request.
  public var model: String
  /// Sent as `Authorization: Bearer <key>` when set.
  public var apiKey: String?
  /// More headers sent with every request.
  public var headers: [String: String]
  /// The longest wait for a connection. Default 10 s.
  public var connectTimeout: Duration
  /// The longest wait for the next bytes of a reply (a model thinking before its first token included).
  /// Default 120 s.
  public var readTimeout: Duration
  /// The longest a whole request may take, streamed replies included. Default 600 s.
  public var requestTimeout: Duration
  /// How many times a 429 or 5xx reply is retried. Default 3.
  public var maximumRetries: Int
  /// The first retry's delay; each further retry doubles it (plus up to 25% jitter). Default 0.5 s.
  public var retryBaseDelay: Duration
  /// The longest delay before a retry, also when the server's `Retry-After` asks for more. Default 30 s.
  public var maximumRetryDelay: Duration
  /// Whether a refused or failed connection is retried (with backoff, until ``connectTimeout``) instead of failing
  /// at once. Default `false`: a server that is not running is reported right away.
  public var retriesFailedConnections: Bool
  /// How tool calls are obtained: the server's own (`tools` in the request) or guided (a reply constrained to a
  /// JSON Schema; see ``GuidedToolCalls``). Default ``ToolCallingStrategy/native``.
  public var toolCalling: ToolCallingStrategy
  /// How a guided request names its schema. Default ``GuidedResponseFormat/jsonObjectWithSchema``.
  public var guidedResponseFormat: GuidedResponseFormat
  /// What a guided reply may be once the tools' results are in. Default ``GuidedFollowUp/answerOrCall``.
  public var guidedFollowUp: GuidedFollowUp

  /// Makes a configuration.
  public init(
    baseURL: String = OpenAIConfiguration.defaultBaseURL,
    model: String = OpenAIConfiguration.defaultModel,
    apiKey: String? = nil, headers: [String: String] = [:], connectTimeout: Duration = .seconds(10),
    readTimeout: Duration = .seconds(120), requestTimeout: Duration = .seconds(600),
    maximumRetries: Int = 3,
    retryBaseDelay: Duration = .milliseconds(500), maximumRetryDelay: Duration = .seconds(30),
    retriesFailedConnections: Bool = false, toolCalling: ToolCallingStrategy = .native,
    guidedResponseFormat: GuidedResponseFormat = .jsonObjectWithSchema, guidedFollowUp: GuidedFollowUp = .answerOrCall
  ) {
    self.baseURL = baseURL
    self.model = model
    self.apiKey = apiKey
    self.headers = headers
    self.connectTimeout = connectTimeout
    self.readTimeout = readTimeout
    self.requestTimeout = requestTimeout
    self.maximumRetries = maximumRetries
    self.retryBaseDelay = retryBaseDelay
    self.maximumRetryDelay = maximumRetryDelay
    self.retriesFailedConnections = retriesFailedConnections
    self.toolCalling = toolCalling
    self.guidedResponseFormat = guidedResponseFormat
    self.guidedFollowUp = guidedFollowUp
  }

  /// A configuration from explicit values, else the environment, else the defaults.
  ///
  /// Base URL: `baseURL`, `TOOLHOST_BASE_URL`, `OPENAI_BASE_URL`, then ``defaultBaseURL``. Model: `model`,
  /// `TOOLHOST_MODEL`, then ``defaultModel``. API key: `TOOLHOST_API_KEY`, then `OPENAI_API_KEY`. Empty values
  /// count as unset.
  public static func fromEnvironment(
    _ environment: [String: String] = ProcessInfo.processInfo.environment, model: String? = nil,
    baseURL: String? = nil
  ) -> OpenAIConfiguration {
    func value(_ names: String...) -> String? {
      for n in names { if let v = environment[n], !v.isEmpty { return v } }
      return nil
    }
    return OpenAIConfiguration(
      baseURL: baseURL.flatMap { $0.isEmpty ? nil : $0 } ?? value(
        "TOOLHOST_BASE_URL", "OPENAI_BASE_URL")
        ?? defaultBaseURL,
      model: model.flatMap { $0.isEmpty ? nil : $0 } ?? value("TOOLHOST_MODEL") ?? defaultModel,
      apiKey: value("TOOLHOST_API_KEY", "OPENAI_API_KEY"))
  }

  /// `<baseURL>/chat/completions`.
  public var chatCompletionsURL: String {
    var base = baseURL
    while base.hasSuffix("/") { base.removeLast() }
    return base + "/chat/completions"
  }

  /// Checks the URL and that OpenAI itself gets an API key.
  ///
  /// - Throws: ``LanguageModelError`` of kind `.configuration` saying what to fix.
  public func validate() throws(LanguageModelError) {
    guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(),
      scheme == "http" || scheme == "https",
      let host = url.host, !host.isEmpty
    else {
      throw LanguageModelError(
        kind: .configuration,
        message:
          "the base URL \(baseURL) is not an http(s) URL; use one like http://127.0.0.1:8080/v1", url: baseURL,
        setting: .baseURL)
    }
    if host.lowercased() == "api.openai.com", apiKey == nil {
      throw LanguageModelError(
        kind: .configuration,
        message:
          "no API key for \(baseURL): set OPENAI_API_KEY (or TOOLHOST_API_KEY), or use another "
          + "OpenAI-compatible server", url: baseURL, setting: .baseURL)
    }
    if model.isEmpty {
      throw LanguageModelError(
        kind: .configuration, message: "no model name was given", url: baseURL, setting: .model)
    }
  }
}
