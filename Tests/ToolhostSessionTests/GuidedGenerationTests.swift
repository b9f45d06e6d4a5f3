import Foundation
import Testing
import ToolhostCore
import ToolhostGeneration
import ToolhostGuided
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

@Generable(description: "A city's weather, as the tool reported it")
struct CityWeather: Equatable {
  @Guide(description: "The city")
  var city: String
  @Guide(description: "The temperature in °C", .range(-60...60))
  var temperatureC: Int
  @Guide(description: "Up to three words for the sky", .maximumCount(3))
  var sky: [String]
  var station: Station?
}

@Generable
struct Station: Equatable {
  @Guide(description: "The station's code", /[A-Z]{4}/)
  var code: String
}

/// A tool FoundationModels' way: `@Generable` arguments, no hand-written schema, `[String]` output.
struct SkyWords: Tool {
  let name = "skyWords"
  let description = "Words for the sky over a city."
  @Generable
  struct Arguments {
    @Guide(description: "The city")
    var city: String
    @Guide(description: "How many words", .range(1...3))
    var count: Int
  }
  func call(arguments: Arguments) async throws -> [String] {
    Array(["grey", "low", "drizzle"].prefix(arguments.count))
  }
}

/// Guided generation of a nested Swift type (`respond(to:generating:)`) against fakellm 0.3.5: the reply constrained
/// with a `json_schema` response format after the tool calls, checked by toolhost's validator, retried once with what
/// was wrong, and a clear error naming the path when it misses twice.
@Suite(
  "Guided generation with fakellm",
  .enabled(
    if: TestEnvironment.hasFakeLLM,
    "fakellm 0.3.5 is not installed for \(TestEnvironment.python): \(TestEnvironment.pipCommand)"))
struct GuidedGenerationTests {
  func configuration(_ server: FakeLLM) -> OpenAIConfiguration {
    OpenAIConfiguration(
      baseURL: server.baseURL, model: "test-model", apiKey: "test-key", readTimeout: .seconds(30),
      requestTimeout: .seconds(60), maximumRetries: 0, retryBaseDelay: .milliseconds(10))
  }

  static let weatherJSON = #"{"city": "Oslo", "temperatureC": 3, "sky": ["grey", "low"], "station": {"code": "ENGM"}}"#

  @Test func aToolCallThenTheTypedAnswer() async throws {
    let rules = """
      rules:
        - name: typed-answer
          when: {messages_contain: "follows this JSON Schema"}
          respond: {content: '\(Self.weatherJSON)'}
        - name: free-answer
          when: {tool_result_contains: "drizzle"}
          respond: {content: "Oslo is grey and 3 degrees."}
        - name: call
          when: {messages_contain: "Oslo"}
          respond:
            tool_calls:
              - {name: skyWords, arguments: {city: Oslo, count: 3}}
      """
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(model: model, deferringErrorsOf: [SkyWords()], instructions: "Use tools.")
        let response = try await session.respond(to: "Weather in Oslo?", generating: CityWeather.self)
        #expect(
          response.content
            == CityWeather(city: "Oslo", temperatureC: 3, sky: ["grey", "low"], station: Station(code: "ENGM")),
          "server log:\n\(server.log)")
        #expect(response.rawContent.jsonString.contains(#""code":"ENGM""#))
        // The tool's [String] output went to the model as a JSON array.
        let output = response.transcriptEntries.compactMap { e -> Transcript.ToolOutput? in
          if case .toolOutput(let o) = e { o } else { nil }
        }
        #expect(output.first?.value == ["grey", "low", "drizzle"])

        let requests = try server.requests()
        #expect(requests.count == 3)
        // The tool's parameters were derived from its @Generable arguments.
        let tools = requests[0]["tools"] as? [[String: Any]]
        let parameters = (tools?.first?["function"] as? [String: Any])?["parameters"] as? [String: Any]
        #expect((parameters?["required"] as? [String]) == ["city", "count"])
        // Only the last request is constrained: a json_schema response format, tools not callable.
        #expect(requests[0]["response_format"] == nil)
        let format = requests[2]["response_format"] as? [String: Any]
        #expect(format?["type"] as? String == "json_schema")
        let schema = (format?["json_schema"] as? [String: Any])?["schema"] as? [String: Any]
        #expect(schema?["title"] as? String == "CityWeather")
        #expect(requests[2]["tool_choice"] as? String == "none")
        // The committed transcript ends with the JSON answer.
        #expect(session.transcript.lastResponse.map { $0.contains("ENGM") } == true)
      }
    }
  }

  @Test func aReplyThatDoesNotFitIsSentBackOnceWithWhatIsWrong() async throws {
    let rules = """
      rules:
        - name: fixed
          when: {messages_contain: "does not fit"}
          respond: {content: '\(Self.weatherJSON)'}
        - name: out-of-range
          when: {messages_contain: "follows this JSON Schema"}
          respond: {content: '{"city": "Oslo", "temperatureC": 300, "sky": []}'}
      """
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(model: model, deferringErrorsOf: [])
        let weather = try await session.respond(to: "Weather in Oslo?", generating: CityWeather.self).content
        #expect(weather.temperatureC == 3)
        let requests = try server.requests()
        #expect(requests.count == 2)
        let retry = String(describing: requests[1]["messages"] ?? "")
        #expect(retry.contains("/temperatureC"), "\(retry)")
      }
    }
  }

  @Test func twoMissesEndInAnErrorNamingThePathAndType() async throws {
    let rules = """
      rules:
        - name: never-right
          when: {messages_contain: "Oslo"}
          respond: {content: '{"city": "Oslo", "temperatureC": "cold", "sky": []}'}
      """
    try await FakeLLM.with(rules: rules) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(model: model, deferringErrorsOf: [])
        await #expect {
          _ = try await session.respond(to: "Weather in Oslo?", generating: CityWeather.self)
        } throws: { error in
          guard let e = error as? GeneratedContent.ParsingError,
            let underlying = e.underlyingError as? LanguageModelError
          else { return false }
          return underlying.kind == .decodingFailure && e.debugDescription.contains("CityWeather")
            && e.debugDescription.contains("/temperatureC") && e.rawContent.contains("cold")
        }
        let sent = try server.requests().count
        #expect(sent == 2)
        #expect(session.transcript.isEmpty, "a failed request leaves the transcript as it was")
      }
    }
  }

  @Test func streamingGivesPartialValuesThenTheWholeOne() async throws {
    let rules = """
      rules:
        - name: typed
          when: {messages_contain: "Oslo"}
          respond: {content: '\(Self.weatherJSON)'}
      """
    try await FakeLLM.with(rules: rules, mangle: nil) { server in
      try await OpenAIModel.withModel(configuration(server)) { model in
        let session = LanguageModelSession(model: model, deferringErrorsOf: [])
        var partials: [CityWeather.PartiallyGenerated] = []
        let stream = session.streamResponse(to: "Weather in Oslo?", generating: CityWeather.self)
        for try await snapshot in stream { partials.append(snapshot.content) }
        #expect(!partials.isEmpty)
        #expect(partials.last?.city == "Oslo")
        #expect(partials.last?.station?.code == "ENGM")
        let whole = try await stream.collect().content
        #expect(whole.sky == ["grey", "low"])
      }
    }
  }

  @Test func aToolWithABrokenSchemaFailsTheFirstRequestNotTheInit() async throws {
    struct Broken: Tool {
      let name = "broken"
      let description = "Has a schema that does not compile."
      let parameters: JSONValue = ["type": "object", "properties": ["x": ["type": 5]]]
      func call(arguments: JSONValue) async throws -> String { "" }
    }
    let model = ScriptedModel(turns: [ModelTurn(text: "hello")])
    let session = LanguageModelSession(model: model, deferringErrorsOf: [Broken()])
    await #expect(throws: ToolCallError.self) { _ = try await session.respond(to: "hi") }
    let fine = LanguageModelSession(model: model, deferringErrorsOf: [SkyWords()])
    #expect(try await fine.respond(to: "hi").content == "hello")
  }
}

/// How a response format goes on the wire, for the two kinds of server.
struct ResponseFormatWireTests {
  func request(_ format: ResponseFormat) -> ModelRequest {
    var transcript = Transcript()
    transcript.append(.prompt(Transcript.Prompt(text: "Weather in Oslo?")))
    return ModelRequest(transcript: transcript, tools: [], toolChoice: .none, responseFormat: format)
  }

  @Test func openAIGetsAJSONSchemaStrictOnlyWhenEveryPropertyIsRequired() throws {
    let optional = ResponseFormat(CityWeather.generationSchema)
    let body = ChatCompletions.requestBody(for: request(optional), model: "m", stream: false)
    #expect(body["response_format"]?["type"] == "json_schema")
    #expect(body["response_format"]?["json_schema"]?["name"] == "CityWeather")
    #expect(body["response_format"]?["json_schema"]?["strict"] == false)
    let text = body["messages"]?[0]?["content"]?.stringValue ?? ""
    #expect(text.hasPrefix("Weather in Oslo?\n\nReply with only a JSON value"), "\(text)")

    let list = ResponseFormat([String].generationSchema)
    #expect(!list.isStrictCompatible, "OpenAI's strict outputs want an object at the top")
    let allRequired = ResponseFormat(Station.generationSchema, includeSchemaInPrompt: false)
    let strict = ChatCompletions.requestBody(for: request(allRequired), model: "m", stream: false)
    #expect(strict["response_format"]?["json_schema"]?["strict"] == true)
    #expect(strict["messages"]?[0]?["content"] == "Weather in Oslo?")
  }

  @Test func llamaCppGetsAJSONObjectWithTheSchemaWhenGuided() throws {
    let format = ResponseFormat(CityWeather.generationSchema)
    let body = GuidedToolCalls.requestBody(for: request(format), model: "m", stream: false)
    #expect(body["response_format"]?["type"] == "json_object")
    #expect(body["response_format"]?["schema"] == CityWeather.generationSchema.jsonSchema)
  }

  @Test func samplingModesOnTheWire() throws {
    var options = GenerationOptions(samplingMode: .random(top: 5, seed: 7))
    var body = ChatCompletions.requestBody(
      for: ModelRequest(transcript: Transcript(), tools: [], toolChoice: .none, options: options), model: "m",
      stream: false)
    #expect(body["top_k"] == 5)
    #expect(body["seed"] == 7)
    options = GenerationOptions(samplingMode: .greedy)
    body = ChatCompletions.requestBody(
      for: ModelRequest(transcript: Transcript(), tools: [], toolChoice: .none, options: options), model: "m",
      stream: false)
    #expect(body["temperature"] == 0)
  }
}

/// A tool FoundationModels' way that reports its failure to the model instead of throwing.
struct Lookup: Tool {
  let name = "lookup"
  let description = "Looks a word up."
  @Generable
  struct Arguments {
    var word: String
  }
  struct NotFound: Error, CustomStringConvertible {
    let word: String
    var description: String { "no entry for \(word)" }
  }
  func call(arguments: Arguments) async throws -> Result<String, NotFound> {
    arguments.word == "tool" ? .success("a thing used to do a job") : .failure(NotFound(word: arguments.word))
  }
}

/// Tool outputs and failures as FoundationModels 27 has them.
struct FoundationModelsOutputTests {
  @Test func aResultFailureGoesToTheModelInsteadOfBeingThrown() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("lookup", ["word": "zzz"], id: "c1")]), ModelTurn(text: "No entry for zzz."),
    ])
    let session = LanguageModelSession(model: model, deferringErrorsOf: [Lookup()])
    let answer = try await session.respond(to: "what is zzz?")
    #expect(answer.content == "No entry for zzz.")
    let sent = model.requests[1].transcript.entries.compactMap { e -> Transcript.ToolOutput? in
      if case .toolOutput(let o) = e { o } else { nil }
    }
    #expect(sent.first?.value == ["error": "no entry for zzz"])
  }

  @Test func argumentsThatNoCallConvertsIntoAreRefusedAtRegistration() throws {
    struct Opaque: Tool {
      struct Arguments { var x: Int }
      let name = "opaque"
      let description = "Takes arguments no call can be converted into."
      let parameters: JSONValue = ["type": "object"]
      func call(arguments: Arguments) async throws -> String { "\(arguments.x)" }
    }
    #expect {
      _ = try ToolRegistry([Opaque()])
    } throws: { error in
      guard let e = error as? ToolCallError,
        case .argumentsNotConvertible(let tool, _)? = e.underlyingError as? ToolDefinitionError
      else { return false }
      return tool == "opaque" && "\(e.underlyingError)".contains("@Generable")
    }
    #expect(throws: Never.self) { _ = try ToolRegistry([Lookup(), AddTool()]) }
  }

  @Test func theTranscriptErrorHandlingPolicyKeepsWhatTheRequestMade() async throws {
    let model = ScriptedModel(turns: [ModelTurn(toolCalls: [call("explode", [:], id: "c1")])])
    let session = LanguageModelSession(model: model, deferringErrorsOf: [FailingTool()])
    #expect(session.transcriptErrorHandlingPolicy == .revertTranscript)
    await #expect(throws: ToolCallError.self) { _ = try await session.respond(to: "go") }
    #expect(session.transcript.isEmpty)

    session.transcriptErrorHandlingPolicy = nil
    #expect(session.transcriptErrorHandlingPolicy == .revertTranscript)
    session.transcriptErrorHandlingPolicy = .preserveTranscript
    #expect(session.policy.toolFailures == .throwAndPreserve)
    await #expect(throws: LanguageModelSession.ToolCallError.self) { _ = try await session.respond(to: "go") }
    #expect(session.transcript.map(\.type) == ["prompt", "toolCalls", "toolOutput"])
  }
}
