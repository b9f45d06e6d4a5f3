import Testing
import ToolhostEval
import ToolhostJSON

/// The number reading and the answer checks, each made to fire and not to fire.
@Suite("answer checks")
struct AnswerChecksTests {
  func values(_ text: String, markers: Bool = false) -> [[Double]] {
    writtenNumbers(in: text, skippingListMarkers: markers).map { $0.readings.map(\.value) }
  }

  @Test func numbersWithSignsSeparatorsAndListMarkers() {
    #expect(values("a high of -0.9 °C and a low of −6.2 °C") == [[-0.9], [-6.2]])
    #expect(values("+3 and 10-15 and Covid-19") == [[3], [10], [15], [19]])
    #expect(values("1,609.34 m, 1.609,34 m or 1,000,000") == [[1609.34], [1609.34], [1_000_000]])
    // One separator before three digits: a decimal or thousands, both readings kept.
    #expect(values("1,000 g") == [[1.0, 1000]])
    #expect(values("6,21 miles") == [[6.21]])
    #expect(values("3,5,8 and 2.5,4") == [[3], [5], [8], [2.5], [4]])
    #expect(values("It is 6.2.") == [[6.2]])
    #expect(values("14:00 on 2026-11-25") == [[14], [0], [2026], [11], [25]])
    let list = "Recipes:\n1. Baguette, 75% water\n  2) Pita\n3 cups of flour"
    #expect(values(list, markers: true) == [[75], [3]])
    #expect(values(list, markers: false) == [[1], [75], [2], [3]])
  }

  @Test func roundingAllowedButNotOtherFigures() {
    let n = writtenNumbers(in: "6.2 6.21 6 6.3 6.28 7")
    let result = 6.21371
    #expect(n.map { $0.stands(for: result) } == [true, true, true, false, false, false])
    #expect(writtenNumbers(in: "-6")[0].stands(for: -6.2))
    #expect(!writtenNumbers(in: "6")[0].stands(for: -6.2))
  }

  let weather = AskTranscript(
    calls: [ObservedCall(id: "1", tool: "getWeather", arguments: ["city": "Oslo", "month": 1], round: 1)],
    results: [
      ObservedResult(
        id: "1", tool: "getWeather", ok: true,
        result: ["city": "Oslo", "averageHigh": -0.9, "averageLow": -6.2, "precipitation": 57, "period": "1991–2020"],
        text: "Oslo in January: high -0.9 °C")
    ])

  @Test func numberNotInResults() {
    let facts = ResultFacts(weather.results)
    let question = "What's the weather in Oslo in January?"
    #expect(numbersNotFound(in: "Oslo is 57°C with 57 mm of rain.", question: question, facts: facts) == [])
    #expect(
      numbersNotFound(in: "Highs of −0.9 °C, lows of -6 °C, 57 mm since 1991.", question: question, facts: facts)
        == [])
    #expect(numbersNotFound(in: "Highs of 0.9 °C and 60 mm.", question: question, facts: facts) == ["0.9", "60"])
    // A figure of the question counts as given.
    #expect(numbersNotFound(in: "For 3 nights: -1 °C.", question: "Oslo for 3 nights?", facts: facts) == [])
  }

  @Test func echo() {
    let facts = ResultFacts(weather.results)
    let empty = ResultFacts([])
    #expect(isEcho("Mark to-do #1 as done.", question: "Mark to-do #1 as done.", facts: empty))
    #expect(isEcho("Current time in New York, please!", question: "current time in New York please", facts: empty))
    #expect(isEcho("The weather in Oslo in January.", question: "What's the weather in Oslo in January?", facts: facts))
    // Adding a figure or a word from the results, or a plain confirmation, is not an echo.
    #expect(!isEcho("The weather in Oslo in January: -0.9.", question: "Weather in Oslo in January?", facts: facts))
    #expect(!isEcho("Done.", question: "Mark to-do #1 as done.", facts: empty))
    #expect(!isEcho("It is cold: highs of -0.9 °C.", question: "Is Oslo cold in January?", facts: facts))
    // The question's words in another order answer it.
    #expect(
      !isEcho(
        "Athens is warmer than Madrid in March.", question: "Which is warmer in March, Madrid or Athens?",
        facts: empty))
    #expect(
      isEcho(
        "Which is warmer in March, Madrid or Athens.", question: "Which is warmer in March, Madrid or Athens?",
        facts: empty))
  }

  @Test func failureOwnedUpTo() {
    #expect(admitsFailure("I couldn't get the time: the tool needs approval."))
    #expect(admitsFailure("Je n’ai pas pu obtenir l’heure."))
    #expect(admitsFailure("Leider kann ich das nicht."))
    #expect(admitsFailure("Não foi possível."))
    #expect(!admitsFailure("It is 14:05 in Tokyo."))
    #expect(!admitsFailure("Sono le 14:05 a Tokyo."))
  }

  @Test func argumentMatchingRules() {
    #expect(matches(.integer(7), 7))
    #expect(matches(.real(7), 7))
    #expect(!matches(.integer(8), 7))
    #expect(matches("America/New_York", "new_york"))
    #expect(matches("Lisboa", ["Lisbon", "Lisboa"]))
    #expect(!matches(nil, "x"))
    #expect(matches([12, 15.0, 9], [12, 15, 9]))
    #expect(!matches([12, 15], [12, 15, 9]))
    let datasets: JSONValue = [["name": "A", "values": [1, 2]], ["name": "B", "values": [3, 4]]]
    #expect(matches(datasets, ["values": [3, 4]]))
    #expect(matches(datasets, [["values": [1, 2]], ["values": [3, 4]]]))
    #expect(!matches(datasets, [["values": [1, 2]], ["values": [5]]]))
    #expect(argumentsMatch(["city": "Oslo"], ["city": "oslo", "fahrenheit": false]))
    #expect(!argumentsMatch(["city": "Oslo", "fahrenheit": true], ["city": "oslo", "fahrenheit": false]))
  }

  @Test func inventedArgumentNames() {
    let expected: JSONObject = ["datasets": ["values": [1, 2]]]
    let call: JSONValue = [
      "datasets": [["name": "x", "values": [1, 2], "weights": [1, 1]]], "rounding": ["digits": 2],
    ]
    #expect(
      inventedArguments(call, expected: expected, allowed: ["datasets.name"]) == ["datasets.weights", "rounding"])
    // A data set nobody gave, beside the user's (the "weights" set of issue 30).
    let extraSet: JSONValue = [
      "datasets": [["name": "numbers", "values": [1, 2]], ["name": "weights", "values": [1, 1]]]
    ]
    #expect(inventedArguments(extraSet, expected: expected, allowed: ["datasets.name"]) == ["datasets[1]"])
    #expect(inventedArguments(["city": "Oslo"], expected: ["city": "Oslo"], allowed: []) == [])
    #expect(inventedArguments(["city": "Oslo", "month": 11], expected: ["city": "Oslo"], allowed: []) == ["month"])
    #expect(
      inventedArguments(["city": "Oslo", "units": "celsius"], expected: ["city": "Oslo"], allowed: ["units"]) == [])
  }
}
