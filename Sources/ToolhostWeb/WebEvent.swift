public import ToolhostJSON

/// The chat page's events, one case a type: what the event stream (`GET /api/events`) sends and the page's script
/// reads. Every event the engine and the server send is one of these; ``schema`` is their JSON Schema, which the
/// tests hold both the events sent and the page's script (`Resources/app.js`, one branch a type) to.
public enum WebEvent: Sendable, Equatable {
  /// The first event of a stream.
  case hello
  /// Sent on an idle stream, so that a proxy or the browser does not close it; the page ignores it.
  case ping
  /// A turn began in chat `chat`: the prompt, the one tool offered (`@NAME`), the sender's nonce.
  case turn(chat: Int64, prompt: String, tool: String?, nonce: String?)
  /// The model's round `round` of a turn began.
  case round(chat: Int64, round: Int)
  /// Streamed text of the answer.
  case text(chat: Int64, text: String)
  /// A tool call started (``WebJSON/call(_:status:durationMs:output:)``, status `running`).
  case call(chat: Int64, call: JSONValue)
  /// A tool call finished (``WebJSON/call(_:)``).
  case result(chat: Int64, call: JSONValue)
  /// A turn ended: the answer, or the error (`stopped` for a stopped turn).
  case done(chat: Int64, response: String?, error: String?, stopped: Bool)
  /// A call waits for the user's approval.
  case approval(chat: Int64, approval: JSONValue)
  /// The approval `id` is answered or no longer waits.
  case approvalDone(chat: Int64, id: String)
  /// A note for the user, about chat `chat` or none.
  case note(chat: Int64?, text: String)
  /// The list of chats changed.
  case chats

  /// The event's `type`.
  public var type: String {
    switch self {
    case .hello: "hello"
    case .ping: "ping"
    case .turn: "turn"
    case .round: "round"
    case .text: "text"
    case .call: "call"
    case .result: "result"
    case .done: "done"
    case .approval: "approval"
    case .approvalDone: "approval-done"
    case .note: "note"
    case .chats: "chats"
    }
  }

  /// The event as the stream sends it.
  public var json: JSONValue {
    var object: JSONObject = ["type": .string(type)]
    switch self {
    case .hello, .ping, .chats:
      break
    case .turn(let chat, let prompt, let tool, let nonce):
      object["chat"] = .integer(chat)
      object["prompt"] = .string(prompt)
      object["tool"] = tool.map(JSONValue.string) ?? .null
      if let nonce { object["nonce"] = .string(nonce) }
    case .round(let chat, let round):
      object["chat"] = .integer(chat)
      object["round"] = .integer(Int64(round))
    case .text(let chat, let text):
      object["chat"] = .integer(chat)
      object["text"] = .string(text)
    case .call(let chat, let call), .result(let chat, let call):
      object["chat"] = .integer(chat)
      object["call"] = call
    case .done(let chat, let response, let error, let stopped):
      object["chat"] = .integer(chat)
      object["response"] = response.map(JSONValue.string) ?? .null
      object["error"] = error.map(JSONValue.string) ?? .null
      object["stopped"] = .bool(stopped)
    case .approval(let chat, let approval):
      object["chat"] = .integer(chat)
      object["approval"] = approval
    case .approvalDone(let chat, let id):
      object["chat"] = .integer(chat)
      object["id"] = .string(id)
    case .note(let chat, let text):
      object["chat"] = chat.map(JSONValue.integer) ?? .null
      object["text"] = .string(text)
    }
    return .object(object)
  }

  /// Every event type, in the order of the cases.
  public static let types = [
    "hello", "ping", "turn", "round", "text", "call", "result", "done", "approval", "approval-done", "note", "chats",
  ]

  /// The types the page's script does nothing with.
  public static let ignoredByThePage: Set<String> = ["hello", "ping"]

  /// The JSON Schema (2020-12) of every event: one branch a type, with the members it always has.
  public static var schema: JSONValue {
    let chat: JSONValue = ["type": "integer"]
    let call: JSONValue = [
      "type": "object", "required": ["id", "tool", "arguments", "status", "durationMs", "output"],
      "properties": [
        "id": ["type": "string"], "tool": ["type": "string"],
        "status": ["enum": ["running", "ok", "error", "refused"]],
      ],
    ]
    func branch(_ type: String, _ properties: JSONObject = [:], optional: [String] = []) -> JSONValue {
      var all = properties
      all["type"] = ["const": .string(type)]
      let required = ["type"] + properties.keys.filter { !optional.contains($0) }.sorted()
      return [
        "type": "object", "required": .array(required.map(JSONValue.string)), "properties": .object(all),
        "additionalProperties": false,
      ]
    }
    let nullableString: JSONValue = ["type": ["string", "null"]]
    return [
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "oneOf": [
        branch("hello"), branch("ping"), branch("chats"),
        branch(
          "turn", ["chat": chat, "prompt": ["type": "string"], "tool": nullableString, "nonce": ["type": "string"]],
          optional: ["nonce"]),
        branch("round", ["chat": chat, "round": ["type": "integer", "minimum": 1]]),
        branch("text", ["chat": chat, "text": ["type": "string"]]),
        branch("call", ["chat": chat, "call": call]),
        branch("result", ["chat": chat, "call": call]),
        branch(
          "done",
          ["chat": chat, "response": nullableString, "error": nullableString, "stopped": ["type": "boolean"]]),
        branch(
          "approval",
          [
            "chat": chat,
            "approval": [
              "type": "object", "required": ["id", "call", "tool", "arguments", "shown", "reason", "origin", "reach"],
            ],
          ]),
        branch("approval-done", ["chat": chat, "id": ["type": "string"]]),
        branch("note", ["chat": ["type": ["integer", "null"]], "text": ["type": "string"]]),
      ],
    ]
  }
}
