import Testing
import ToolhostCore
import ToolhostGeneration
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// A tool whose output is a `@Generable` value, as FoundationModels allows any `PromptRepresentable`.
struct WeatherReport: Tool {
  let name = "weatherReport"
  let description = "The weather in a city now."
  @Generable
  struct Arguments {
    var city: String
  }
  func call(arguments: Arguments) async throws -> CityWeather {
    CityWeather(city: arguments.city, temperatureC: 21, sky: ["clear"])
  }
}

/// A tool returning several structured values and one returning a prompt of text and a value.
struct Forecasts: Tool {
  let name = "forecasts"
  let description = "Tomorrow's weather in several cities."
  @Generable
  struct Arguments {
    var cities: [String]
  }
  func call(arguments: Arguments) async throws -> [CityWeather] {
    arguments.cities.map { CityWeather(city: $0, temperatureC: 18, sky: ["rain"]) }
  }
}

struct Briefing: Tool {
  let name = "briefing"
  let description = "A short weather briefing."
  @Generable
  struct Arguments {
    var city: String
  }
  func call(arguments: Arguments) async throws -> Prompt {
    Prompt {
      "Briefing for \(arguments.city):"
      CityWeather(city: arguments.city, temperatureC: 9, sky: ["fog"])
    }
  }
}

/// Prompts, instructions and tool outputs written FoundationModels' other ways: `Prompt`/`Instructions` values,
/// result builders, and outputs that are any `PromptRepresentable`.
struct PromptFormsTests {
  /// The tool outputs the model was sent in its second request.
  func sentOutputs(_ model: ScriptedModel) -> [Transcript.ToolOutput] {
    model.requests[1].transcript.entries.compactMap { e -> Transcript.ToolOutput? in
      if case .toolOutput(let o) = e { o } else { nil }
    }
  }

  @Test func aGenerableOutputReachesTheModelAsItsContent() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [call("weatherReport", ["city": "Oslo"], id: "c1")]), ModelTurn(text: "21 °C and clear."),
    ])
    let session = try LanguageModelSession(model: model, tools: [WeatherReport()])
    _ = try await session.respond(to: "Weather in Oslo?")
    let output = try #require(sentOutputs(model).first)
    #expect(output.value == ["city": "Oslo", "temperatureC": 21, "sky": ["clear"]])
  }

  @Test func anArrayOfValuesIsOneArrayAndTextWithAValueIsText() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [
        call("forecasts", ["cities": ["Oslo", "Bergen"]], id: "c1"), call("briefing", ["city": "Tromsø"], id: "c2"),
      ]),
      ModelTurn(text: "Rain in both; fog in Tromsø."),
    ])
    let session = try LanguageModelSession(model: model, tools: [Forecasts(), Briefing()])
    _ = try await session.respond(to: "Weather tomorrow?")
    let outputs = sentOutputs(model)
    #expect(outputs.count == 2)
    // However many values, an array of them is one array.
    #expect(
      try await Forecasts().invoke(["cities": ["Oslo"]]).value == [
        ["city": "Oslo", "temperatureC": 18, "sky": ["rain"]]
      ])
    #expect(try await Forecasts().invoke(["cities": []]).value == [])
    #expect(
      outputs.first?.value == [
        ["city": "Oslo", "temperatureC": 18, "sky": ["rain"]], ["city": "Bergen", "temperatureC": 18, "sky": ["rain"]],
      ])
    #expect(outputs.last?.value == nil)
    #expect(outputs.last?.text == #"Briefing for Tromsø:\#n{"city":"Tromsø","temperatureC":9,"sky":["fog"]}"#)
  }

  @Test func builtInstructionsAndPromptsAreSentAsText() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "Take an umbrella.")])
    let brief = true
    let cities = ["Oslo", "Bergen"]
    let session = try LanguageModelSession(model: model) {
      "You answer questions about the weather."
      if brief { "Answer in one sentence." } else { "Explain." }
    }
    guard case .instructions(let instructions)? = session.transcript.first else {
      Issue.record("no instructions entry: \(session.transcript.map(\.type))")
      return
    }
    #expect(instructions.text == "You answer questions about the weather.\nAnswer in one sentence.")

    let answer = try await session.respond {
      "Do I need an umbrella in these cities?"
      cities
      for city in cities where city == "Oslo" { "\(city) first." }
      CityWeather(city: "Oslo", temperatureC: 7, sky: ["rain"])
    }
    #expect(answer.content == "Take an umbrella.")
    let prompts = session.transcript.compactMap { e -> String? in if case .prompt(let p) = e { p.text } else { nil } }
    #expect(
      prompts == [
        "Do I need an umbrella in these cities?\nOslo\nBergen\nOslo first.\n"
          + #"{"city":"Oslo","temperatureC":7,"sky":["rain"]}"#
      ])
  }

  @Test func aBuiltPromptGeneratesATypeAndStreams() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: #"{"city":"Oslo","temperatureC":7,"sky":["rain"]}"#)])
    let session = try LanguageModelSession(model: model, tools: [], instructions: Instructions("Report weather."))
    let weather = try await session.respond(generating: CityWeather.self, includeSchemaInPrompt: false) {
      "Oslo now"
    }.content
    #expect(weather == CityWeather(city: "Oslo", temperatureC: 7, sky: ["rain"]))
    let streamed = try await session.streamResponse(to: Prompt("Oslo again"), generating: CityWeather.self)
      .collect().content
    #expect(streamed == weather)
    let schema = try await session.streamResponse(schema: CityWeather.generationSchema) { "Oslo, as content" }
      .collect().content
    #expect(schema.jsonValue == ["city": "Oslo", "temperatureC": 7, "sky": ["rain"]])
    #expect(model.requests.first?.transcript.entries.first?.type == "instructions")
  }

  @Test func anyToolRunsTheToolItWraps() async throws {
    let model = ScriptedModel(turns: [
      ModelTurn(toolCalls: [
        call("weatherReport", ["city": "Oslo"], id: "c1"), call("add", ["a": 1, "b": 2], id: "c2"),
      ]),
      ModelTurn(text: "done"),
    ])
    let tools = [AnyTool(WeatherReport()), AnyTool(AnyTool(AddTool()))]
    #expect(tools.map(\.name) == ["weatherReport", "add"])
    #expect(tools[1].base is AddTool, "an AnyTool is not wrapped twice")
    // A registry keeps the wrapped tool, so approvals and trust see the tool itself.
    #expect(try ToolRegistry(tools).tools.last is AddTool)
    let session = try LanguageModelSession(model: model, tools: tools)
    _ = try await session.respond(to: "go")
    #expect(sentOutputs(model).map(\.value) == [["city": "Oslo", "temperatureC": 21, "sky": ["clear"]], ["sum": 3]])

    struct Opaque: Tool {
      struct Arguments { var x: Int }
      let description = "Takes arguments no call can be converted into."
      let parameters: JSONValue = ["type": "object"]
      func call(arguments: Arguments) async throws -> String { "\(arguments.x)" }
    }
    #expect(throws: ToolCallError.self) { _ = try ToolRegistry([AnyTool(Opaque())]) }
  }

  @MainActor @Test func aBuilderClosureWrittenOnTheMainActorStaysThere() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "Oslo.")])
    let session = try LanguageModelSession(model: model, instructions: nil)
    #expect(session.transcript.isEmpty, "instructions: nil means none")
    let city = "Oslo"
    let answer = try await session.respond {
      "Which city is \(city)?"
      MainActor.assumeIsolated { "Asked on the main actor." }
    }
    #expect(answer.content == "Oslo.")
  }

  @Test func prewarmWithAPromptPrefixWarmsTheModelInTheBackground() async throws {
    let model = ScriptedModel(turns: [ModelTurn(text: "hi")])
    let session = try LanguageModelSession(model: model, instructions: "Be brief.")
    session.prewarm(promptPrefix: Prompt("Hello"))
    for _ in 0..<500 where model.prewarms.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
    #expect(model.prewarms.count == 1)
    #expect(session.transcript.count == 1, "prewarming never changes the transcript")
  }
}
