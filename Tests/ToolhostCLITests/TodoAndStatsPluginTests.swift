import Foundation
import Testing
import ToolhostTestSupport

/// The todo (POSIX shell, output "text") and stats (Swift) example plugins.
extension ExamplePluginTests {
  // MARK: - todo (POSIX shell, output "text")

  func todo(_ tool: String, _ arguments: [String: Any] = [:], file: URL) throws
    -> Subprocess.Output
  {
    let output = try PluginProcess.call(
      plugin: "todo", tool: tool, arguments: arguments,
      environment: ["TOOLHOST_TODO_FILE": file.path])
    #expect(!output.timedOut)
    return output
  }

  @Test func todoLifecycle() throws {
    let directory = try TemporaryFolder.make(prefix: "toolhost-plugin-tests")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("lists/todo.tsv")  // created on demand

    #expect(try todo("todoList", file: file).stdoutText == "The to-do list is empty.\n")

    let milk = try todo("todoAdd", ["text": "Buy milk"], file: file)
    #expect(milk.status == 0)
    #expect(milk.stdoutText == "Added #1 [ ] Buy milk\n")

    let tricky = "Pack:\tpassport\nand \\n tickets"
    let packed = try todo("todoAdd", ["text": tricky, "due": "Friday"], file: file)
    #expect(packed.status == 0, "\(packed.stderrText)")
    #expect(packed.stdoutText.hasPrefix("Added #2 [ ] Pack:\tpassport\n"))
    #expect(packed.stdoutText.hasSuffix("and \\n tickets (due Friday)\n"))
    // One line per item on disk: tab, newline and backslash are escaped.
    let stored = try String(contentsOf: file, encoding: .utf8)
    #expect(stored.split(separator: "\n").count == 3)
    #expect(stored.contains("\tFriday\tPack:\\tpassport\\nand \\\\n tickets\n"))

    let list = try todo("todoList", file: file).stdoutText
    #expect(list.contains("#1 [ ] Buy milk\n"))
    #expect(list.contains("#2 [ ] Pack:\tpassport\n"))
    #expect(list.hasSuffix("2 open, 0 done.\n"))

    #expect(try todo("todoDone", ["id": 1], file: file).stdoutText == "Done: #1 [x] Buy milk\n")
    let open = try todo("todoList", file: file).stdoutText
    #expect(!open.contains("Buy milk"))
    #expect(open.hasSuffix("1 open, 1 done.\n"))
    let all = try todo("todoList", ["includeDone": true], file: file).stdoutText
    #expect(all.contains("#1 [x] Buy milk\n"))

    let removed = try todo("todoRemove", ["id": 2], file: file)
    #expect(removed.status == 0)
    #expect(removed.stdoutText.hasPrefix("Removed #2 "))

    // Ids are never reused.
    #expect(try todo("todoAdd", ["text": "Call mum"], file: file).stdoutText.hasPrefix("Added #3 "))
    #expect(
      try todo("todoClear", ["onlyDone": true], file: file).stdoutText.hasPrefix("Removed 1 item"))
    let cleared = try todo("todoClear", file: file)
    #expect(cleared.stdoutText == "Removed 1 item; 0 left.\n")
    #expect(
      try todo("todoList", ["includeDone": true], file: file).stdoutText
        == "The to-do list is empty.\n")
    #expect(
      try todo("todoAdd", ["text": "Water plants"], file: file).stdoutText.hasPrefix("Added #4 "))
  }

  @Test func todoErrorsExitWithStatusOne() throws {
    let directory = try TemporaryFolder.make(prefix: "toolhost-plugin-tests")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("todo.tsv")

    let missing = try todo("todoDone", ["id": 99], file: file)
    #expect(missing.status == 1)
    #expect(missing.stdout.isEmpty)
    #expect(missing.stderrText.contains("#99"))

    #expect(try todo("todoRemove", ["id": 5], file: file).status == 1)
    let blank = try todo("todoAdd", ["text": " \t "], file: file)
    #expect(blank.status == 1)
    #expect(blank.stderrText.contains("text"))

    // A file that is not a to-do list is left alone.
    try Data("my notes\n".utf8).write(to: file)
    #expect(try todo("todoAdd", ["text": "x"], file: file).status == 1)
    #expect(try String(contentsOf: file, encoding: .utf8) == "my notes\n")
  }

  @Test func todoDefaultsToAFileInHome() throws {
    let home = try TemporaryFolder.make(prefix: "toolhost-plugin-tests")
    defer { try? FileManager.default.removeItem(at: home) }
    let output = try PluginProcess.call(
      plugin: "todo", tool: "todoAdd", arguments: ["text": "Renew passport"], home: home)
    #expect(output.status == 0, "\(output.stderrText)")
    let file = home.appendingPathComponent(".local/share/toolhost-todo/todo.tsv")
    #expect(try String(contentsOf: file, encoding: .utf8).contains("\tRenew passport\n"))
  }

  // MARK: - stats (Swift)

  @Test func statsMatchHandComputedValues() throws {
    let reply = try callJSON(
      "stats", "describeData",
      [
        "datasets": [
          ["name": "scores", "values": [2, 4, 4, 4, 5, 5, 7, 9]],
          ["name": "weighted", "values": [10, 20, 30], "weights": [1, 2, 1]],
        ],
        "percentiles": [25, 90],
      ])
    let datasets = try #require(reply.result?["datasets"] as? [[String: Any]])
    #expect(datasets.count == 2)

    // n = 8, sum 40, mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32, variance 32/7.
    let scores = datasets[0]
    #expect(scores["name"] as? String == "scores")
    #expect(number(scores["count"]) == 8)
    #expect(number(scores["sum"]) == 40)
    #expect(number(scores["mean"]) == 5)
    #expect(number(scores["median"]) == 4.5)
    #expect(number(scores["min"]) == 2)
    #expect(number(scores["max"]) == 9)
    #expect(number(scores["variance"]) == 4.571)  // 4.5714…
    #expect(number(scores["stdev"]) == 2.138)  // √(32/7) = 2.13809…
    // R type 7: p25 at position 1.75 (4 and 4), p90 at 6.3 (7 + 0.3 × 2).
    let percentiles = (scores["percentiles"] as? [[String: Any]] ?? []).map {
      [number($0["p"]), number($0["value"])]
    }
    #expect(percentiles == [[25, 4], [90, 7.6]])

    // Frequency weights: as if the data were 10, 20, 20, 30.
    let weighted = datasets[1]
    #expect(number(weighted["count"]) == 3)
    #expect(number(weighted["totalWeight"]) == 4)
    #expect(number(weighted["sum"]) == 80)
    #expect(number(weighted["mean"]) == 20)
    #expect(number(weighted["median"]) == 20)
    #expect(number(weighted["variance"]) == 66.667)  // (100 + 0 + 0 + 100) / 3
    #expect(number(weighted["stdev"]) == 8.165)
    #expect(weighted["weighted"] as? Bool == true)

    let lines = reply.text?.split(separator: "\n").map(String.init) ?? []
    let table = lines.prefix(3).map { $0.split(separator: " ").map(String.init) }
    #expect(
      table.first == [
        "dataset", "count", "sum", "mean", "median", "min", "max", "stdev", "variance", "p25",
        "p90",
      ])
    #expect(
      table.dropFirst().first == [
        "scores", "8", "40", "5", "4.5", "2", "9", "2.138", "4.571", "4", "7.6",
      ])
    #expect(table.last?.first == "weighted")
  }

  @Test func statsRoundingAndMeasures() throws {
    func describe(_ rounding: [String: Any]) throws -> [String: Any] {
      let reply = try callJSON(
        "stats", "describeData",
        [
          "datasets": [["name": "x", "values": [0.1, 0.2, 0.25]]],
          "measures": ["sum", "mean", "stdev"], "rounding": rounding,
        ])
      return try #require((reply.result?["datasets"] as? [[String: Any]])?.first)
    }
    // sum 0.55, mean 0.18333…, stdev 0.076376…
    let ceil = try describe(["digits": 1, "mode": "ceil"])
    #expect(number(ceil["sum"]) == 0.6)
    #expect(number(ceil["mean"]) == 0.2)
    #expect(ceil["count"] == nil, "only the measures asked for")
    let floor = try describe(["digits": 2, "mode": "floor"])
    #expect(number(floor["sum"]) == 0.55)  // not 0.54 from 0.55 × 100 = 54.999…
    #expect(number(floor["stdev"]) == 0.07)
    let nearest = try describe(["digits": 0])
    #expect(number(nearest["sum"]) == 1)

    let single = try callJSON(
      "stats", "describeData", ["datasets": [["name": "one", "values": [42]]]])
    let one = try #require((single.result?["datasets"] as? [[String: Any]])?.first)
    #expect(one["stdev"] is NSNull, "undefined for a single value")
    #expect(number(one["median"]) == 42)
  }

  @Test func statsReportsMismatchedWeights() throws {
    let reply = try callJSON(
      "stats", "describeData",
      ["datasets": [["name": "b", "values": [1, 2, 3, 4], "weights": [1, 2, 3]]]])
    #expect(reply.errorCode == "invalid_arguments")
    #expect(reply.errorMessage?.contains("weights") == true)
    #expect(number(reply.errorData?["values"]) == 4)
    #expect(number(reply.errorData?["weights"]) == 3)

    let duplicate = try callJSON(
      "stats", "describeData",
      ["datasets": [["name": "a", "values": [1]], ["name": "a", "values": [2]]]])
    #expect(duplicate.errorCode == "invalid_arguments")
  }
}
