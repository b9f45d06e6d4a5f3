import Foundation
import Testing
import ToolhostGuided
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession

/// Guided request bodies, byte for byte: the bodies of a few requests (few tools and a shortlist of many, a round of
/// results, exclusions, a required call, a continuation, no tools) against the ones recorded in
/// `Support/guided-request-bodies.jsonl`. Work moved out of the per-attempt path must not change a byte of what the
/// server is sent. After a deliberate change of the guided format, record them again with
/// `TOOLHOST_RECORD_GUIDED_BODIES=1 swift test --filter GuidedRequestBodyBytes`.
@Suite("guided request body bytes")
struct GuidedRequestBodyBytesTests {
  static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Support/guided-request-bodies.jsonl")
  static let today = "Friday, 27 November 2026"

  static func tool(_ name: String, _ description: String, _ properties: JSONValue, required: [String])
    -> Transcript.ToolDefinition
  {
    Transcript.ToolDefinition(
      name: name, description: description,
      parameters: ["type": "object", "properties": properties, "required": .array(required.map { .string($0) })])
  }

  /// A few tools, as the example plugins give them.
  static let few: [Transcript.ToolDefinition] = [
    tool(
      "getWeather", "Climate normals for a city. Figures are monthly averages.",
      [
        "city": ["type": "string", "minLength": 1], "month": ["type": "integer", "minimum": 1, "maximum": 12],
        "units": ["enum": ["c", "f"]],
      ], required: ["city"]),
    tool(
      "searchBreadDatabase", "Finds bread recipes by a search term.", ["searchTerm": ["type": "string"]],
      required: ["searchTerm"]),
    tool(
      "convertUnits", "Converts an amount between units of length, mass or volume.",
      ["amount": ["type": "number"], "from": ["type": "string"], "to": ["type": "string"]],
      required: ["amount", "from", "to"]),
  ]

  /// More tools than a request lists, so that a shortlist is ranked.
  static let many: [Transcript.ToolDefinition] =
    few
    + (1...22).map { i in
      tool(
        "tool\(i)", "Looks up fact number \(i) about \(["stocks", "trains", "movies", "rivers"][i % 4]).",
        ["query": ["type": "string"], "limit": ["type": "integer", "maximum": 10]], required: ["query"])
    }

  static func transcript(results: Bool) -> Transcript {
    var entries: [Transcript.Entry] = [
      .instructions(.init(id: "i", text: "Be brief.")),
      .prompt(.init(id: "p", text: "What's the weather in Boston in March, and convert 3 miles to km?")),
    ]
    if results {
      entries += [
        .toolCalls(
          .init(
            id: "t",
            calls: [
              .init(id: "c1", toolName: "getWeather", arguments: ["city": "Boston", "month": 3]),
              .init(id: "c2", toolName: "convertUnits", arguments: ["amount": 3, "from": "mi", "to": "km"]),
            ])),
        .toolOutput(
          .init(
            id: "o1", callID: "c1", toolName: "getWeather", text: #"{"high":7,"low":-2}"#,
            value: ["high": 7, "low": -2])),
        .toolOutput(
          .init(
            id: "o2", callID: "c2", toolName: "convertUnits", text: #"{"result":4.828}"#, value: ["result": 4.828])),
      ]
    }
    return Transcript(entries: entries)
  }

  /// The recorded cases: a name, and the body.
  static func bodies() -> [(String, JSONValue)] {
    let options = GenerationOptions(temperature: 0, maximumResponseTokens: 256)
    let first = ModelRequest(transcript: transcript(results: false), tools: few, toolChoice: .auto, options: options)
    let results = ModelRequest(transcript: transcript(results: true), tools: few, toolChoice: .auto, options: options)
    let shortlisted = ModelRequest(
      transcript: transcript(results: true), tools: many, toolChoice: .auto, options: options)
    let required = ModelRequest(
      transcript: transcript(results: false), tools: many, toolChoice: .required, options: options)
    let none = ModelRequest(transcript: transcript(results: true), tools: few, toolChoice: .none, options: options)
    let continuation = GuidedToolCalls.Continuation(
      calls: [.init(id: "c1", toolName: "getWeather", arguments: ["city": "Boston"])], parts: ["convert 3 miles to km"])
    return [
      ("first", GuidedToolCalls.requestBody(for: first, model: "m", stream: false, today: today)),
      (
        "first, streamed, json_schema, excluding, strict",
        GuidedToolCalls.requestBody(
          for: first, model: "m", stream: true, format: .jsonSchema, excluding: ["searchBreadDatabase"], strict: true,
          today: today)
      ),
      (
        "first, continuing, call required",
        GuidedToolCalls.requestBody(
          for: first, model: "m", stream: false, callRequired: true, continuing: continuation, today: today)
      ),
      ("results", GuidedToolCalls.requestBody(for: results, model: "m", stream: false, today: today)),
      (
        "results, follow-up answer",
        GuidedToolCalls.requestBody(for: results, model: "m", stream: true, followUp: .answer, today: today)
      ),
      (
        "results, answer only, no date",
        GuidedToolCalls.requestBody(for: results, model: "m", stream: false, answerOnly: true)
      ),
      ("shortlisted", GuidedToolCalls.requestBody(for: shortlisted, model: "m", stream: false, today: today)),
      ("required", GuidedToolCalls.requestBody(for: required, model: "m", stream: false, today: today)),
      ("tool choice none", GuidedToolCalls.requestBody(for: none, model: "m", stream: false, today: today)),
    ]
  }

  /// A turn works out its tools' offer once (`OpenAIModel` does); each attempt's body from it is the body that
  /// attempt gets on its own.
  @Test func oneOfferServesEveryAttemptOfATurn() {
    let request = ModelRequest(
      transcript: Self.transcript(results: true), tools: Self.many, toolChoice: .auto,
      options: GenerationOptions(temperature: 0))
    let offer = GuidedToolCalls.ToolOffer(for: request, today: Self.today)
    #expect(offer.tools.count == GuidedToolCalls.shortlistSize)
    let attempts: [(answerOnly: Bool, excluding: Set<String>, strict: Bool, callRequired: Bool)] = [
      (false, [], false, false), (true, [], false, false), (false, ["getWeather"], false, true),
      (true, [], true, false),
    ]
    for a in attempts {
      let shared = GuidedToolCalls.requestBody(
        for: request, offer: offer, model: "m", stream: true, format: .jsonObjectWithSchema, answerOnly: a.answerOnly,
        followUp: .results, excluding: a.excluding, strict: a.strict, callRequired: a.callRequired, continuing: nil)
      let alone = GuidedToolCalls.requestBody(
        for: request, model: "m", stream: true, answerOnly: a.answerOnly, followUp: .results, excluding: a.excluding,
        strict: a.strict, callRequired: a.callRequired, today: Self.today)
      #expect(shared.serialized() == alone.serialized(), "\(a)")
    }
  }

  @Test func bodiesAreTheRecordedBytes() throws {
    let made = Self.bodies().map { ($0.0, $0.1.serialized()) }
    if ProcessInfo.processInfo.environment["TOOLHOST_RECORD_GUIDED_BODIES"] != nil {
      try made.map { $0.1 + "\n" }.joined().write(to: Self.fixture, atomically: true, encoding: .utf8)
    }
    let recorded = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").map(String.init)
    #expect(recorded.count == made.count)
    for ((name, body), expected) in zip(made, recorded) {
      #expect(body == expected, "\(name)")
    }
  }
}
