/// How a guided request asks the server to constrain its reply to a schema.
public enum GuidedResponseFormat: String, Sendable, Equatable, Codable, CaseIterable {
  /// `{"type": "json_object", "schema": S}`: llama-cpp-python's server and llama.cpp's `llama-server`.
  case jsonObjectWithSchema
  /// `{"type": "json_schema", "json_schema": {"name", "schema": S}}`: OpenAI, vLLM and `llama-server`.
  case jsonSchema
}

/// What a guided reply may be right after the tools' results for the current prompt came back.
public enum GuidedFollowUp: String, Sendable, Equatable, Codable, CaseIterable {
  /// An answer, or another tool call (a model that chains calls: list the to-dos, then mark one done).
  case answerOrCall
  /// An answer only, when every result of the last round succeeded; after a failed call the model may still fix it.
  /// For small models, which given a result mostly call the same tool again (the default local model did in 5 of 6
  /// captured asks, BENCHMARKS.md) or call an unrelated one, and so spend a request or a needless call before
  /// answering.
  case answer
  /// The results themselves, when they answer the request alone (``GuidedToolCalls/answerFromResults(_:tools:)``:
  /// every call succeeded with a rendering for people, nothing the request names is left undone, and any
  /// comparison it asks for is settled by the figures); no request is sent for it. Otherwise as ``answer``.
  ///
  /// For small models on slow hardware: writing an answer from a result costs the default local model about 3 s on
  /// two cores (reading the result, then about 30 ms a word), most of its answers copied the tool's rendering
  /// anyway, and the rest are where it misstated figures (a mean for a median, November's figures for March).
  case results

  /// Whether a reply right after successful results is an answer only (``answer`` and ``results``).
  public var answersOnly: Bool { self != .answerOrCall }
}
