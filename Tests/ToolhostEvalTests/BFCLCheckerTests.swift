/// ToolhostEval's port of BFCL's AST checker, case by case against the verdicts the package's own checker
/// (`ast_checker.py` of bfcl-eval 2026.3.23) gave for the same calls; and the data, schema and sample helpers.
import Testing
import ToolhostEval
import ToolhostJSON

@Suite("BFCL: the AST checker's port and the data")
struct BFCLCheckerTests {
  /// A function with every kind of parameter BFCL declares, and its acceptable arguments.
  static let area = try! JSONValue.parse(
    #"""
    {"name":"calc.area","description":"","parameters":{"type":"dict",
    "properties":{"base":{"type":"integer"},"height":{"type":"float"},"unit":{"type":"string"},
    "tags":{"type":"array","items":{"type":"string"}},"opts":{"type":"dict","properties":{}},
    "rows":{"type":"array","items":{"type":"dict"}},"flag":{"type":"boolean"}},"required":["base"]}}
    """#)
  static let areaTruth = try! JSONValue.parse(
    #"""
    [{"calc.area":{"base":[10],"height":[5.0,""],"unit":["square meters",""],"tags":[["a b","C"],""],
    "opts":[{"mode":["fast"],"x":["",1]},""],"rows":[[{"k":["v"]}],""],"flag":[true,""]}}]
    """#)
  static let play = try! JSONValue.parse(
    #"""
    {"name":"play","description":"","parameters":{"type":"dict",
    "properties":{"artist":{"type":"string"},"minutes":{"type":"integer"}},"required":["artist",
    "minutes"]}}
    """#)
  static let other = try! JSONValue.parse(
    #"""
    {"name":"other","description":"","parameters":{"type":"dict","properties":{"q":{"type":"string"}},
    "required":["q"]}}
    """#)
  static let playTruth = try! JSONValue.parse(
    #"""
    [{"play":{"artist":["Taylor Swift"],"minutes":[20]}},{"play":{"artist":["Maroon 5"],
    "minutes":[15]}}]
    """#)

  struct Row: Sendable, CustomStringConvertible {
    var category: BFCLCategory
    var calls: String
    var valid: Bool
    var errorType: String?
    init(_ category: BFCLCategory, _ calls: String, _ valid: Bool, _ errorType: String?) {
      (self.category, self.calls, self.valid, self.errorType) = (category, calls, valid, errorType)
    }
    var description: String { "\(category.rawValue) \(calls)" }
  }

  /// What BFCL's checker said of each (printed by running it on these inputs).
  static let rows: [Row] = [
    Row(.simple, #"[{"calc.area":{"base":10}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":10,"height":5}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":10.0}}]"#, false, "type_error:simple"),
    Row(.simple, #"[{"calc.area":{"base":"10"}}]"#, false, "type_error:simple"),
    Row(.simple, #"[{"calc.area":{"height":5}}]"#, false, "simple_function_checker:missing_required"),
    Row(.simple, #"[{"calc.area":{"base":10,"unit":"Square-Meters"}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":10,"unit":"sq m"}}]"#, false, "value_error:string"),
    Row(.simple, #"[{"calc.area":{"base":10,"extra":1}}]"#, false, "simple_function_checker:unexpected_param"),
    Row(.simple, #"[{"calc_area":{"base":10}}]"#, false, "simple_function_checker:wrong_func_name"),
    Row(
      .simple, #"[{"calc.area":{"base":10}},{"calc.area":{"base":10}}]"#,
      false, "simple_function_checker:wrong_count"),
    Row(.simple, #"[{"calc.area":{"base":10,"tags":["A_B","c"]}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":10,"tags":["c","a b"]}}]"#, false, "value_error:list/tuple"),
    Row(.simple, #"[{"calc.area":{"base":10,"tags":["a b",3]}}]"#, false, "value_error:list/tuple"),
    Row(.simple, #"[{"calc.area":{"base":10,"opts":{"mode":"FAST"}}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":10,"opts":{"mode":"fast","y":2}}}]"#, false, "value_error:dict_key"),
    Row(.simple, #"[{"calc.area":{"base":10,"opts":{}}}]"#, false, "value_error:dict_key"),
    Row(.simple, #"[{"calc.area":{"base":10,"rows":[{"k":"v"}]}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":10,"rows":[{"k":"v"},{"k":"v"}]}}]"#, false, "value_error:list_dict_count"),
    Row(.simple, #"[{"calc.area":{"base":10,"flag":1}}]"#, false, "type_error:simple"),
    Row(.simple, #"[{"calc.area":{"base":10,"flag":true}}]"#, true, nil),
    Row(.simple, #"[{"calc.area":{"base":true}}]"#, false, "type_error:simple"),
    Row(.simple, #"[]"#, false, "simple_function_checker:wrong_count"),
    Row(
      .parallel, #"[{"play":{"artist":"Maroon 5","minutes":15}},{"play":{"artist":"taylor swift","minutes":20}}]"#,
      true, nil),
    Row(
      .parallel,
      #"[{"play":{"artist":"Taylor Swift","minutes":20}},{"play":{"artist":"Taylor Swift","minutes":20}}"#
        + #"]"#,
      false, "parallel_function_checker_no_order:cannot_find_match"),
    Row(
      .parallel,
      #"[{"play":{"artist":"Taylor Swift","minutes":20}},{"play":{"artist":"Maroon 5","minutes":15}},{"p"#
        + #"lay":{"artist":"Maroon 5","minutes":20}}]"#,
      false, "parallel_function_checker_no_order:wrong_count"),
    Row(
      .parallel, #"[{"play":{"artist":"Taylor Swift","minutes":20}}]"#,
      false, "parallel_function_checker_no_order:wrong_count"),
    Row(.multiple, #"[{"play":{"artist":"Taylor Swift","minutes":20}}]"#, true, nil),
    Row(.multiple, #"[{"other":{"q":"x"}}]"#, false, "simple_function_checker:wrong_func_name"),
  ]

  @Test(arguments: rows)
  func theVerdictIsBFCLs(row: Row) throws {
    let calls = try JSONValue.parse(row.calls).arrayValue!.map { call -> BFCLChecker.Call in
      let member = call.objectValue!.makeIterator().next()!
      return (member.key, member.value)
    }
    let (functions, truth): ([JSONValue], [JSONValue]) =
      switch row.category {
      case .parallel: ([Self.play], Self.playTruth.arrayValue!)
      case .multiple: ([Self.other, Self.play], [Self.playTruth[0]!])
      default: ([Self.area], Self.areaTruth.arrayValue!)
      }
    let verdict = BFCLChecker.check(category: row.category, functions: functions, calls: calls, groundTruth: truth)
    #expect(verdict.valid == row.valid, "\(verdict)")
    #expect(verdict.errorType == row.errorType, "\(verdict)")
  }

  @Test func irrelevanceIsRightOnlyWithoutACall() {
    #expect(BFCLChecker.check(category: .irrelevance, functions: [Self.play], calls: [], groundTruth: []).valid)
    let made = BFCLChecker.check(
      category: .irrelevance, functions: [Self.play], calls: [("play", ["artist": "x", "minutes": 1])],
      groundTruth: [])
    #expect(!made.valid)
  }

  @Test func bfclTypesBecomeJSONSchema() throws {
    let schema = BFCLSchema.inputSchema(of: Self.area)
    #expect(schema["type"] == "object")
    #expect(schema["properties"]?["height"]?["type"] == "number")
    #expect(schema["properties"]?["opts"]?["type"] == "object")
    #expect(schema["properties"]?["rows"]?["items"]?["type"] == "object")
    #expect(schema["required"] == ["base"])
    let odd = BFCLSchema.jsonSchema(
      try JSONValue.parse(
        #"""
        {"type":"dict","required":["a","gone"],
         "properties":{"a":{"type":"any","default":3},"t":{"type":"tuple","items":{"type":"float"}}}}
        """#))
    #expect(odd["properties"]?["a"] == .object([:]))
    #expect(odd["properties"]?["t"]?["type"] == "array" && odd["properties"]?["t"]?["items"]?["type"] == "number")
    #expect(odd["required"] == ["a"])
  }

  @Test func casesAreReadWithTheirAnswers() throws {
    let first =
      #"{"id": "simple_python_0", "question": [[{"role": "system", "content": "Be brief."}, "#
      + #"{"role": "user", "content": "Area of 10 by 5?"}]], "function": [{"name": "calc.area", "#
      + #""description": "", "parameters": {"type": "dict", "properties": {}, "required": []}}]}"#
    let second =
      #"{"id": "simple_python_1", "question": [[{"role": "user", "content": "No answer kept."}]], "function": []}"#
    let data = first + "\n" + second
    let answers = #"{"id": "simple_python_0", "ground_truth": [{"calc.area": {"base": [10]}}]}"#
    let cases = try BFCLCase.load(category: .simple, data: data, answers: answers)
    #expect(cases.map(\.id) == ["simple_python_0"])
    #expect(cases.first?.question == "Area of 10 by 5?" && cases.first?.system == "Be brief.")
    #expect(throws: BFCLDataError.self) { try BFCLCase.load(category: .simple, data: "nope", answers: nil) }
  }

  @Test func theSampleIsSeededAndStable() {
    let ids = (0..<400).map { "simple_python_\($0)" }
    let a = BFCLSample.pick(ids, count: 50, seed: 1)
    #expect(a.count == 50 && Set(a).count == 50)
    #expect(a == BFCLSample.pick(ids, count: 50, seed: 1))
    #expect(a != BFCLSample.pick(ids, count: 50, seed: 2))
    #expect(BFCLSample.pick(ids, count: 500, seed: 1) == ids)
  }
}
