import Foundation
import Testing
import ToolhostJSON
import ToolhostSession

@testable import ToolhostGuided
@testable import ToolhostOpenAI

/// ``GuidedFollowUp/results``: when the tools' results answer the request by themselves, they are the answer and
/// no request is sent; otherwise the model is asked, as before.
@Suite struct GuidedResultsAnswerTests {
  let fixtures = GuidedAnswerTests()

  /// `prompt`, one round of `calls` and their `outputs` (value, rendering), each output answering the call of its
  /// index.
  func round(
    _ prompt: String, _ calls: [(String, JSONValue)], _ outputs: [(JSONValue?, String?)], failing: Int? = nil,
    failure: String = "unknown city"
  ) -> Transcript {
    let made = calls.enumerated().map { index, call in
      Transcript.ToolCall(id: "c\(index)", toolName: call.0, arguments: call.1)
    }
    let results = outputs.enumerated().map { index, output in
      Transcript.Entry.toolOutput(
        .init(
          callID: "c\(index)", toolName: calls[index].0,
          text: index == failing ? failure : output.1 ?? output.0?.serialized() ?? "",
          value: index == failing ? nil : output.0, isError: index == failing, summary: output.1))
    }
    return Transcript(entries: [.prompt(.init(text: prompt)), .toolCalls(.init(calls: made))] + results)
  }

  let oslo: (JSONValue?, String?) = (
    ["city": "Oslo", "month": 1, "averageHigh": -0.9, "averageLow": -6.2, "precipitation": 57],
    "Oslo, Norway — January normals: high -0.9 °C, low -6.2 °C, precipitation 57 mm"
  )

  @Test func oneRenderedResultIsTheAnswer() {
    let transcript = round(
      "Is it cold in Oslo in January?", [("getWeather", ["city": "Oslo", "month": 1])], [oslo])
    #expect(
      GuidedToolCalls.answerFromResults(transcript, tools: [fixtures.weather])
        == "Oslo, Norway — January normals: high -0.9 °C, low -6.2 °C, precipitation 57 mm")
  }

  @Test func severalResultsAreOneLineEach() {
    let transcript = round(
      "Add 'book the vet' and 'renew my passport' to my to-do list.",
      [("todoAdd", ["text": "book the vet"]), ("todoAdd", ["text": "renew my passport"])],
      [(["id": 4], "Added #4 [ ] book the vet"), (["id": 5], "Added #5 [ ] renew my passport")])
    #expect(
      GuidedToolCalls.answerFromResults(transcript, tools: [fixtures.todoAdd])
        == "Added #4 [ ] book the vet\nAdded #5 [ ] renew my passport")
  }

  @Test func aComparisonIsLedByWhatTheFiguresSay() {
    let athens: (JSONValue?, String?) = (
      ["city": "Athens", "month": 1, "averageHigh": 13.6, "averageLow": 6.8, "precipitation": 56],
      "Athens, Greece — January normals: high 13.6 °C, low 6.8 °C, precipitation 56 mm"
    )
    let transcript = round(
      "Which has the higher average in January, Oslo or Athens?",
      [("getWeather", ["city": "Oslo", "month": 1]), ("getWeather", ["city": "Athens", "month": 1])], [oslo, athens])
    let answer = GuidedToolCalls.answerFromResults(transcript, tools: [fixtures.weather])
    #expect(answer?.hasPrefix("By the results, Athens is higher (") == true, "\(answer ?? "nil")")
    // A word of a topic ("warmer") names no figure the library could rank by: the model answers.
    let warmer = round(
      "Which is warmer in January, Oslo or Athens?",
      [("getWeather", ["city": "Oslo", "month": 1]), ("getWeather", ["city": "Athens", "month": 1])], [oslo, athens])
    #expect(GuidedToolCalls.answerFromResults(warmer, tools: [fixtures.weather]) == nil)
    #expect(answer?.contains("\nOslo, Norway — January normals") == true)
    #expect(answer?.contains("\nAthens, Greece — January normals") == true)
  }

  @Test func theModelAnswersWhatTheResultsDoNotSettle() {
    let weather = [fixtures.weather]
    let one = [("getWeather", ["city": "Oslo", "month": 1] as JSONValue)]
    // A choice the figures cannot make: one result, or no figure the comparative is about.
    #expect(GuidedToolCalls.answerFromResults(round("Is Oslo warmer than usual?", one, [oslo]), tools: weather) == nil)
    #expect(
      GuidedToolCalls.answerFromResults(round("Which month is best in Oslo?", one, [oslo]), tools: weather) == nil)
    // A result without a rendering for people.
    #expect(
      GuidedToolCalls.answerFromResults(round("Weather in Oslo in January?", one, [(oslo.0, nil)]), tools: weather)
        == nil)
    // A failed call.
    #expect(
      GuidedToolCalls.answerFromResults(
        round("Weather in Oslo in January?", one, [oslo], failing: 0), tools: weather) == nil)
    // Part of the request left undone: the Paris weather.
    #expect(
      GuidedToolCalls.answerFromResults(
        round("What's the weather in Oslo in January and in Paris in May?", one, [oslo]), tools: weather) == nil)
    // A first search that found nothing may be followed by a broader one.
    let nothing = round(
      "Any recipes with rye?", [("searchBreadDatabase", ["searchTerm": "rye breads"])],
      [(["count": 0, "recipes": []], "No recipes match \"rye breads\".")])
    #expect(GuidedToolCalls.answerFromResults(nothing, tools: [fixtures.bread]) == nil)
    // Not the answer step: no results since the prompt.
    #expect(
      GuidedToolCalls.answerFromResults(
        Transcript(entries: [.prompt(.init(text: "Weather in Oslo?"))]), tools: weather) == nil)
  }

  @Test func noRequestIsSentForAnAnswerTheResultsGive() async throws {
    // Nothing listens on the discard port: a request would fail to connect.
    let configuration = OpenAIConfiguration(
      baseURL: "http://127.0.0.1:9/v1", model: "m", connectTimeout: .seconds(2), maximumRetries: 0,
      toolCalling: .guided, guidedFollowUp: .results)
    let transcript = round(
      "Is it cold in Oslo in January?", [("getWeather", ["city": "Oslo", "month": 1])], [oslo])
    let request = ModelRequest(transcript: transcript, tools: [fixtures.weather], toolChoice: .auto)
    try await OpenAIModel.withModel(configuration) { model in
      let turn = try await model.turn(for: request)
      #expect(turn.text == oslo.1)
      #expect(turn.toolCalls.isEmpty)
      var streamed = ""
      for try await event in model.streamTurn(for: request) {
        if case .textDelta(let text) = event { streamed += text }
      }
      #expect(streamed == oslo.1)
      // With the model answering, the same request is sent, and fails to connect.
      await #expect(throws: LanguageModelError.self) {
        var other = configuration
        other.guidedFollowUp = .answer
        _ = try await OpenAIModel.withModel(other) { try await $0.turn(for: request) }
      }
    }
  }
}

extension GuidedResultsAnswerTests {
  @Test func aRenderingThatIsJSONIsShownAsLines() {
    let text = #"{"timezone": "Europe/Berlin", "datetime": "2026-11-27T17:05:40+01:00", "is_dst": false}"#
    let transcript = round(
      "What's the time in Berlin?", [("get_current_time", ["timezone": "Europe/Berlin"])],
      [(try? JSONValue.parse(text), text)])
    let answer = GuidedToolCalls.answerFromResults(transcript, tools: [])
    #expect(answer?.contains("timezone: Europe/Berlin") == true, "\(answer ?? "nil")")
    #expect(answer?.contains("datetime: 2026-11-27T17:05:40+01:00") == true, "\(answer ?? "nil")")
    #expect(answer?.contains("{") == false, "\(answer ?? "nil")")
  }

  @Test func aRefusedCallIsStatedAsItsFailure() {
    let refusal = #"{"error": {"tool": "todoRemove", "code": "refused", "message": "refused: not approved"}}"#
    let remove = Transcript.ToolDefinition(
      name: "todoRemove", description: "Deletes the to-do item with the given id for good.",
      parameters: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]])
    let refused = round(
      "Delete to-do #3.", [("todoRemove", ["id": 3])], [(nil, nil)], failing: 0, failure: refusal)
    #expect(GuidedToolCalls.answerFromResults(refused, tools: [remove]) == "todoRemove failed: refused: not approved")
    // Another failure may be fixed by another call: the model is asked.
    let failed = round("Delete to-do #3.", [("todoRemove", ["id": 3])], [(nil, nil)], failing: 0)
    #expect(GuidedToolCalls.answerFromResults(failed, tools: [remove]) == nil)
  }

  /// A plugin whose output is text (the to-do list's) wrote it for people: it is the answer. A text cut to fit the
  /// output limit is not: the model is asked.
  @Test func aPlainTextResultIsTheAnswer() {
    let list = Transcript.ToolDefinition(
      name: "todoList",
      description: "Lists the user's to-do items, one per line as \"#id [ ] text (due …)\" ([x] marks a done item), "
        + "followed by a count of open and done items.",
      parameters: ["type": "object", "properties": ["includeDone": ["type": "boolean"]]])
    let done = Transcript.ToolDefinition(
      name: "todoDone",
      description: "Marks the to-do item with the given id as done (it stays on the list, hidden from todoList unless "
        + "includeDone is set). Fails if there is no such id.",
      parameters: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]])
    let tools = [fixtures.weather, fixtures.units, fixtures.stats, fixtures.todoAdd, list, done]
    let text = "#1 [ ] buy milk\n#2 [ ] call the dentist\n3 open, 0 done.\n"
    func transcript(cut: Int?, prompt: String = "What do I still have to do?") -> Transcript {
      Transcript(entries: [
        .prompt(.init(text: prompt)),
        .toolCalls(.init(calls: [Transcript.ToolCall(id: "c0", toolName: "todoList", arguments: [:])])),
        .toolOutput(.init(callID: "c0", toolName: "todoList", text: text, charactersCut: cut)),
      ])
    }
    #expect(
      GuidedToolCalls.answerFromResults(transcript(cut: nil), tools: [list])
        == "#1 [ ] buy milk\n#2 [ ] call the dentist\n3 open, 0 done.")
    #expect(GuidedToolCalls.answerFromResults(transcript(cut: 120), tools: [list]) == nil)
    // German capitalises nouns: "To-do-Liste" is what the called tool is about, not a name left uncovered.
    #expect(
      GuidedToolCalls.answerFromResults(
        transcript(cut: nil, prompt: "Was steht auf meiner To-do-Liste?"), tools: tools)
        == "#1 [ ] buy milk\n#2 [ ] call the dentist\n3 open, 0 done.")
  }
}
