public import ToolhostGuided
public import ToolhostJSON
public import ToolhostSession

// A guided request as a chat-completions body: the wire form of ToolhostGuided's strategy for OpenAI-compatible
// servers (the `response_format` that constrains the reply, and the sampling options).

extension GuidedToolCalls {
  /// The request body: the transcript rendered for guided calling, and a `response_format` constraining the reply
  /// to ``replySchema(tools:choice:)``. With no tools, or `tool_choice` `none`, the reply is plain text and no
  /// format is sent. Sampling options and additional parameters as in ``ChatCompletions/requestBody(for:model:stream:)``.
  ///
  /// With `answerOnly`, the reply is constrained to ``answerSchema(for:)`` (an answer that chooses among several
  /// results first says by which figure): for a second try after the model repeated a
  /// call whose result it already has (see ``repeatsEarlierCall(_:in:)``); with `followUp` ``GuidedFollowUp/answer``
  /// it is too once the last round's results all succeeded (``answersResults(_:)``). The tools named in `excluding`
  /// stay in the system message but not in the reply's schema: for a second try after a call copied from its
  /// tool's description (``copiesDescription(_:of:in:)``). With more than ``shortlistThreshold`` tools, only the
  /// best ``shortlistSize`` for the last prompt are offered (see ``ToolOffer``, where the tools are narrowed).
  public static func requestBody(
    for request: ModelRequest, model: String, stream: Bool,
    format: GuidedResponseFormat = .jsonObjectWithSchema, answerOnly: Bool = false,
    followUp: GuidedFollowUp = .answerOrCall, excluding: Set<String> = [], strict: Bool = false,
    callRequired: Bool = false, continuing: Continuation? = nil, today: String? = nil
  ) -> JSONValue {
    requestBody(
      for: request, offer: ToolOffer(for: request, today: today), model: model, stream: stream, format: format,
      answerOnly: answerOnly, followUp: followUp, excluding: excluding, strict: strict, callRequired: callRequired,
      continuing: continuing)
  }

  /// As ``requestBody(for:model:stream:format:answerOnly:followUp:excluding:strict:callRequired:continuing:today:)``,
  /// with the turn's ``ToolOffer`` (the tools listed and their text, `today` in it) worked out once for all its
  /// requests.
  public static func requestBody(
    for request: ModelRequest, offer: ToolOffer, model: String, stream: Bool, format: GuidedResponseFormat,
    answerOnly: Bool, followUp: GuidedFollowUp, excluding: Set<String>, strict: Bool, callRequired: Bool,
    continuing: Continuation?
  ) -> JSONValue {
    let constrained = isConstrained(request)
    let tools = offer.tools
    let answerOnly = answerOnly || (followUp.answersOnly && answersResults(request.transcript, tools: tools))
    let callRequired = callRequired || (!answerOnly && failureSuggestsAFix(request.transcript))
    var body: JSONObject = [
      "model": .string(model),
      "messages": .array(
        messages(
          from: request.transcript, tools: tools, instructions: offer.instructions, followUp: followUp,
          strict: strict) + (continuing?.messages ?? [])),
    ]
    if constrained {
      let schema =
        answerOnly
        ? answerSchema(for: request.transcript)
        : replySchema(
          tools: offer.callable(excluding: excluding), choice: callRequired ? .required : request.toolChoice)
      switch format {
      case .jsonObjectWithSchema:
        body["response_format"] = ["type": "json_object", "schema": schema]
      case .jsonSchema:
        body["response_format"] = [
          "type": "json_schema", "json_schema": ["name": "tool_call_or_answer", "schema": schema],
        ]
      }
    }
    if !constrained, let responseFormat = request.responseFormat {
      ChatCompletions.addResponseFormat(responseFormat, jsonSchema: format == .jsonSchema, to: &body)
    }
    ChatCompletions.addOptions(request.options, stream: stream, to: &body)
    return .object(body)
  }
}
