import Foundation
import Testing
import ToolhostEval
import ToolhostJSON
import ToolhostTestSupport

/// The questions file of the `answers` eval: what issue 30 asks of it, and expectations that the example tools can
/// meet.
@Suite("answers questions file")
struct QuestionFileTests {
  let questions = Result {
    try EvalQuestion.load(from: TestPackage.root.appendingPathComponent("Benchmarks/answers.json"))
  }

  @Test func countsPerCategoryAndTool() throws {
    let questions = try questions.get()
    #expect(questions.count >= 80)
    let per = Dictionary(grouping: questions, by: \.category).mapValues(\.count)
    #expect(per[.several, default: 0] >= 12)
    #expect(per[.none, default: 0] >= 12)
    #expect(per[.language, default: 0] >= 8)
    #expect(per[.terse, default: 0] >= 8)
    let tools = [
      "getWeather", "searchBreadDatabase", "todoAdd", "todoList", "todoDone", "todoRemove", "todoClear",
      "convertUnits", "describeData", "get_current_time", "convert_time",
    ]
    let calls = questions.flatMap(\.calls).map(\.tool)
    for tool in tools { #expect(calls.filter { $0 == tool }.count >= 2, "\(tool)") }
    #expect(Set(calls).subtracting(tools).isEmpty)
    #expect(Set(questions.map(\.prompt)).count == questions.count, "a prompt is there twice")
    for q in questions where q.category == .several { #expect(q.calls.count >= 2, "\(q.prompt)") }
  }

  /// Every expected or allowed argument is a property of the tool's input schema (the plugins' manifests; the time
  /// server's two tools as it lists them).
  @Test func argumentsAreTheToolsOwn() throws {
    let manifests = try pluginManifests(
      in: TestPackage.plugins, plugins: ["weather", "bread", "todo", "units", "stats"])
    var schemas = manifestTools(manifests).compactMapValues { $0["inputSchema"] }
    let string: JSONValue = ["type": "string"]
    schemas["get_current_time"] = ["type": "object", "properties": ["timezone": string]]
    schemas["convert_time"] = [
      "type": "object", "properties": ["source_timezone": string, "time": string, "target_timezone": string],
    ]
    for problem in argumentNameProblems(try questions.get(), schemas: schemas) { Issue.record("\(problem)") }
  }

  @Test func malformedFilesAreRefusedWithTheQuestion() {
    #expect(throws: EvalFileError("no \"questions\" array")) { try EvalQuestion.parse(["q": []]) }
    #expect(throws: EvalFileError("question 0: category is not one of several, none, language, terse, single")) {
      try EvalQuestion.parse(["questions": [["prompt": "x", "category": "other", "calls": []]]])
    }
    #expect(throws: EvalFileError("question 0: no calls for a single question")) {
      try EvalQuestion.parse(["questions": [["prompt": "x", "category": "single", "calls": []]]])
    }
    #expect(throws: EvalFileError.self) {
      try EvalQuestion.load(from: URL(fileURLWithPath: "/nonexistent/answers.json"))
    }
    let parsed = try? EvalQuestion.parse([
      "questions": [
        [
          "prompt": "Weather in Oslo?", "category": "single", "sequential": true,
          "calls": [
            ["tool": "getWeather", "arguments": ["city": "Oslo"], "allowedArguments": ["units"]],
            ["tool": "todoClear", "needsApproval": true],
          ],
        ]
      ]
    ])
    #expect(
      parsed == [
        EvalQuestion(
          prompt: "Weather in Oslo?", category: .single,
          calls: [
            ExpectedCall(tool: "getWeather", arguments: ["city": "Oslo"], allowedArguments: ["units"]),
            ExpectedCall(tool: "todoClear", needsApproval: true),
          ],
          sequential: true)
      ])
  }
}
