import Foundation
import Testing
import ToolhostTestSupport

/// The example plugins in plugins/, tested at the wire level: each call spawns
/// the plugin as the host will (see Support/PluginProcess.swift) and checks the
/// reply against schemas/reply.schema.json and the tool's outputSchema.
// The tests block while plugins run; on the main actor they keep Swift's two pool threads free.
@MainActor
@Suite("Example plugins")
struct ExamplePluginTests {
  init() throws {
    try ExamplePlugins.build()  // make -C plugins, once per test process
  }

  // MARK: - Helpers

  /// Calls a tool of an output "json" plugin and checks the reply's structure,
  /// that the exit status agrees with it (0 result, 1 error) and, for a result,
  /// the tool's outputSchema. validArguments: also check the arguments against
  /// the inputSchema, as the host would before calling.
  func callJSON(
    _ plugin: String, _ tool: String, _ arguments: [String: Any],
    validArguments: Bool = true, workingDirectory: URL? = nil, request: Data? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> PluginReply {
    let manifest = try PluginProcess.Manifest(plugin: plugin)
    let entry = try manifest.tool(tool)
    if validArguments, let schema = entry["inputSchema"] as? [String: Any] {
      let problems = SchemaSubset.problems(arguments, schema)
      #expect(
        problems.isEmpty, "test arguments invalid: \(problems)", sourceLocation: sourceLocation)
    }
    let output = try PluginProcess.call(
      plugin: plugin, tool: tool, arguments: arguments, workingDirectory: workingDirectory,
      request: request)
    #expect(!output.timedOut, sourceLocation: sourceLocation)
    let reply = try PluginReply(output)
    switch reply {
    case .result(let result, _):
      #expect(output.status == 0, "stderr: \(output.stderrText)", sourceLocation: sourceLocation)
      if let schema = entry["outputSchema"] as? [String: Any] {
        let problems = SchemaSubset.problems(result, schema)
        #expect(
          problems.isEmpty, "result vs outputSchema: \(problems)", sourceLocation: sourceLocation)
      }
    case .error:
      #expect(output.status == 1, sourceLocation: sourceLocation)
    }
    return reply
  }

  func number(_ value: Any?) -> Double? {
    value.flatMap(SchemaSubset.number)
  }

  func loadJSON(_ plugin: String, _ file: String) throws -> [String: Any] {
    let url = ExamplePlugins.folder(of: plugin).appendingPathComponent(file)
    return try #require(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
  }

  // MARK: - Manifests

  @Test("manifests are well-formed", arguments: ["weather", "bread", "todo", "stats"])
  func manifest(plugin: String) throws {
    let manifest = try PluginProcess.Manifest(plugin: plugin)
    let allowedKeys: Set<String> = [
      "$schema", "manifestVersion", "command", "args", "timeout", "env", "output", "tools", "sandbox",
    ]
    #expect(Set(manifest.json.keys).isSubset(of: allowedKeys))
    #expect(manifest.json["manifestVersion"] as? Int == 1)
    #expect(["json", "text"].contains(manifest.output))
    let executable = try manifest.executableURL()
    #expect(FileManager.default.isExecutableFile(atPath: executable.path), "\(executable.path)")
    #expect(!manifest.tools.isEmpty)

    let toolKeys: Set<String> = [
      "name", "title", "description", "inputSchema", "outputSchema", "args", "timeout",
      "annotations", "display", "examples",
    ]
    let hintKeys: Set<String> = [
      "title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
    ]
    for tool in manifest.tools {
      let name = try #require(tool["name"] as? String)
      #expect(Set(tool.keys).isSubset(of: toolKeys), "\(name)")
      #expect(name.range(of: "^[A-Za-z0-9_.-]{1,64}$", options: .regularExpression) != nil)
      #expect((tool["description"] as? String)?.count ?? 0 >= 80, "\(name): describe it properly")
      let input = try #require(tool["inputSchema"] as? [String: Any], "\(name)")
      #expect(input["type"] as? String == "object")
      #expect((input["additionalProperties"] as? NSNumber)?.boolValue == false, "\(name)")
      for (property, schema) in input["properties"] as? [String: Any] ?? [:] {
        let description = (schema as? [String: Any])?["description"] as? String
        #expect(description?.isEmpty == false, "\(name).\(property) has no description")
      }
      // An example is a request with the arguments it takes (the schema's checks run at discovery).
      for example in tool["examples"] as? [[String: Any]] ?? [] {
        #expect((example["prompt"] as? String)?.isEmpty == false, "\(name): an example without a prompt")
        #expect(example["arguments"] is [String: Any], "\(name): an example without arguments")
      }
      let annotations = try #require(tool["annotations"] as? [String: Any], "\(name)")
      #expect(Set(annotations.keys).isSubset(of: hintKeys))
      #expect(annotations["openWorldHint"] as? Bool == false, "no plugin uses the network")
      if manifest.output == "json" {
        #expect(tool["outputSchema"] is [String: Any], "\(name) has no outputSchema")
      }
      let timeout = manifest.timeout(of: tool)
      #expect(timeout > 0 && timeout <= 30)
    }
  }

  @Test(
    "a request that is not JSON gets a bad_request error reply",
    arguments: [
      ("weather", "getWeather"), ("bread", "searchBreadDatabase"), ("stats", "describeData"),
    ])
  func badRequest(plugin: String, tool: String) throws {
    let reply = try callJSON(
      plugin, tool, [:], validArguments: false, request: Data("{not json".utf8))
    #expect(reply.errorCode == "bad_request")
  }

  @Test func aPluginThatOverrunsItsTimeIsKilled() throws {
    // The helper's own safety net: a hung plugin must not hang the tests.
    let start = Date()
    let output = try Subprocess.run(
      executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec sleep 30"],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: TestPackage.plugins,
      input: Data(), timeout: 0.5)
    #expect(output.timedOut)
    #expect(output.status != 0)
    #expect(Date().timeIntervalSince(start) < 10)
  }

  // MARK: - weather (Python)

  @Test func weatherBostonInNovember() throws {
    let reply = try callJSON("weather", "getWeather", ["city": "Boston", "month": 11])
    let result = try #require(reply.result)
    #expect(result["city"] as? String == "Boston")
    #expect(result["country"] as? String == "United States")
    #expect(result["monthName"] as? String == "November")
    #expect(number(result["averageHigh"]) == 11.2)
    #expect(number(result["averageLow"]) == 2.9)
    #expect(number(result["precipitation"]) == 98)
    #expect(result["temperatureUnit"] as? String == "°C")
    #expect(result["precipitationUnit"] as? String == "mm")
    #expect(result["period"] as? String == "1991–2020")
    #expect(
      reply.text
        == "Boston, United States — November normals: high 11.2 °C, low 2.9 °C, "
        + "precipitation 98 mm (1991–2020 normals)")
  }

  @Test func weatherFahrenheitAndForgivingNames() throws {
    let fahrenheit = try #require(
      try callJSON(
        "weather", "getWeather", ["city": "boston, USA", "month": 11, "units": "fahrenheit"]
      ).result)
    #expect(fahrenheit["city"] as? String == "Boston")
    #expect(number(fahrenheit["averageHigh"]) == 52.2)  // 11.2 °C
    #expect(number(fahrenheit["averageLow"]) == 37.2)  // 2.9 °C
    #expect(number(fahrenheit["precipitation"]) == 3.86)  // 98 mm
    #expect(fahrenheit["precipitationUnit"] as? String == "in")

    let spellings = [
      ("NYC", "New York City"), ("new york city", "New York City"), ("Sao Paulo", "São Paulo"),
      ("SÃO PAULO, Brazil", "São Paulo"), ("Washington, D.C.", "Washington, D.C."),
      ("reykjavik", "Reykjavík"), ("Bombay", "Mumbai"), ("Wien", "Vienna"),
    ]
    for (query, canonical) in spellings {
      let result = try callJSON("weather", "getWeather", ["city": query, "month": 1]).result
      #expect(result?["city"] as? String == canonical, "\(query)")
    }
  }

  @Test func weatherMonthDefaultsToTheCurrentMonth() throws {
    let result = try #require(try callJSON("weather", "getWeather", ["city": "Tokyo"]).result)
    let month = Calendar(identifier: .gregorian).component(.month, from: Date())
    #expect(number(result["month"]) == Double(month))
    #expect(result["units"] as? String == "celsius")
  }

  @Test func weatherUnknownCityIsAnErrorWithSuggestions() throws {
    let typo = try callJSON("weather", "getWeather", ["city": "Bostn", "month": 3])
    #expect(typo.errorCode == "unknown_city")
    #expect(typo.errorMessage?.contains("Boston") == true)
    let suggestions = typo.errorData?["suggestions"] as? [String]
    #expect(suggestions?.first == "Boston")

    let nowhere = try callJSON("weather", "getWeather", ["city": "Atlantis"])
    #expect(nowhere.errorCode == "unknown_city")
    #expect((nowhere.errorData?["knownCities"] as? [String])?.count ?? 0 >= 55)

    // A known city name with a country that does not match it.
    let wrongCountry = try callJSON("weather", "getWeather", ["city": "Paris, Canada"])
    #expect(wrongCountry.errorCode == "unknown_city")
  }

  @Test func weatherClimateTableIsComplete() throws {
    let table = try loadJSON("weather", "climate.json")
    #expect((table["source"] as? String)?.contains("Wikipedia") == true)
    let cities = try #require(table["cities"] as? [[String: Any]])
    #expect(cities.count >= 55)
    let continents = Set(cities.compactMap { $0["continent"] as? String })
    #expect(continents.count >= 6, "\(continents.sorted())")
    var names = Set<String>()
    for city in cities {
      let name = try #require(city["name"] as? String)
      #expect(names.insert(name).inserted, "duplicate \(name)")
      #expect(city["country"] is String && city["period"] is String, "\(name)")
      let high = (city["high"] as? [Any] ?? []).compactMap(number)
      let low = (city["low"] as? [Any] ?? []).compactMap(number)
      let rain = (city["precipitation"] as? [Any] ?? []).compactMap(number)
      #expect(high.count == 12 && low.count == 12 && rain.count == 12, "\(name)")
      #expect(zip(high, low).allSatisfy { $0 > $1 }, "\(name): a high below its low")
      #expect(rain.allSatisfy { $0 >= 0 }, "\(name)")
    }
    #expect(names.contains("Boston"))
  }

  // MARK: - bread (C)

  @Test func breadSearchFindsRyeBreadsAndRespectsTheLimit() throws {
    let reply = try callJSON("bread", "searchBreadDatabase", ["searchTerm": "rye"])
    let result = try #require(reply.result)
    let recipes = try #require(result["recipes"] as? [[String: Any]])
    #expect(recipes.count == 3)  // the default limit
    #expect(number(result["count"]) == 3)
    #expect(number(result["totalMatches"]) ?? 0 >= 6)
    for recipe in recipes {
      let name = recipe["name"] as? String ?? ""
      #expect(name.lowercased().contains("rye"), "name matches rank first: \(name)")
      let grams = (recipe["ingredients"] as? [[String: Any]] ?? []).compactMap {
        number($0["grams"])
      }
      #expect(!grams.isEmpty && grams.allSatisfy { $0 > 0 })
    }
    let lines = reply.text?.split(separator: "\n") ?? []
    #expect(lines.count == 4)
    #expect(lines.first?.hasPrefix("3 of ") == true)

    // One or two recipes are shown whole: ingredients and method under each.
    let two = try callJSON("bread", "searchBreadDatabase", ["searchTerm": "rye", "limit": 2])
    let shown = two.text?.split(separator: "\n").map(String.init) ?? []
    #expect(shown.count == 7, "\(shown)")
    #expect(shown.filter { $0.hasPrefix("   Ingredients: ") && $0.contains(" g rye flour") }.count == 2, "\(shown)")
    #expect(shown.filter { $0.hasPrefix("   Method: ") }.count == 2, "\(shown)")

    let six = try #require(
      try callJSON("bread", "searchBreadDatabase", ["searchTerm": "RYE", "limit": 6]).result)
    let names = (six["recipes"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    #expect(names.count == 6)
    // Once a recipe without "rye" in its name appears, no later one has it.
    let firstOther = names.firstIndex { !$0.lowercased().contains("rye") } ?? names.count
    #expect(names[firstOther...].allSatisfy { !$0.lowercased().contains("rye") })
    #expect(names.contains("Boston brown bread") || names.contains("Pain de campagne"))

    let one = try callJSON("bread", "searchBreadDatabase", ["searchTerm": "rye", "limit": 1])
    #expect((one.result?["recipes"] as? [Any])?.count == 1)
  }

  @Test func breadSearchIgnoresAccentsAndCombinesWords() throws {
    let cheese = try callJSON("bread", "searchBreadDatabase", ["searchTerm": "pao de queijo"])
    let first = (cheese.result?["recipes"] as? [[String: Any]])?.first
    #expect(first?["name"] as? String == "Pão de queijo")

    let both = try #require(
      try callJSON("bread", "searchBreadDatabase", ["searchTerm": "flatbread yogurt", "limit": 6])
        .result)
    let names = (both["recipes"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    #expect(Set(names) == ["Naan", "Bazlama"])
  }

  @Test func breadSearchWithoutMatchesIsAnEmptyResult() throws {
    let reply = try callJSON("bread", "searchBreadDatabase", ["searchTerm": "xyzzy"])
    let result = try #require(reply.result)
    #expect(number(result["count"]) == 0)
    #expect((result["recipes"] as? [Any])?.isEmpty == true)
    #expect(reply.text?.hasPrefix("No recipes match") == true)
  }

  @Test func breadRejectsWhatTheSchemaForbids() throws {
    // The host validates arguments first; the plugin checks again on its own.
    let tooMany = try callJSON(
      "bread", "searchBreadDatabase", ["searchTerm": "rye", "limit": 7], validArguments: false)
    #expect(tooMany.errorCode == "invalid_arguments")
    let blank = try callJSON("bread", "searchBreadDatabase", ["searchTerm": "   "])
    #expect(blank.errorCode == "invalid_arguments")
  }

  @Test func breadReportsAMissingOrCorruptDatabase() throws {
    let directory = try TemporaryFolder.make(prefix: "toolhost-plugin-tests")
    defer { try? FileManager.default.removeItem(at: directory) }
    let arguments: [String: Any] = ["searchTerm": "rye"]

    let missing = try callJSON(
      "bread", "searchBreadDatabase", arguments, workingDirectory: directory)
    #expect(missing.errorCode == "database_unavailable")

    let database = directory.appendingPathComponent("recipes.json")
    try Data(#"{"recipes": [{"name": "Rye"#.utf8).write(to: database)
    let truncated = try callJSON(
      "bread", "searchBreadDatabase", arguments, workingDirectory: directory)
    #expect(truncated.errorCode == "database_corrupt")

    try Data(#"{"recipes": [{"name": "Rye", "origin": 7}]}"#.utf8).write(to: database)
    let malformed = try callJSON(
      "bread", "searchBreadDatabase", arguments, workingDirectory: directory)
    #expect(malformed.errorCode == "database_corrupt")
    #expect(malformed.errorMessage?.contains("recipe 1") == true)
  }

  @Test func breadDatabaseHasThirtyWellFormedRecipes() throws {
    let recipes = try #require(try loadJSON("bread", "recipes.json")["recipes"] as? [[String: Any]])
    #expect(recipes.count >= 30)
    let names = recipes.compactMap { $0["name"] as? String }
    #expect(Set(names).count == recipes.count, "names are unique")
    for recipe in recipes {
      let name = recipe["name"] as? String ?? "?"
      #expect(recipe["origin"] is String && recipe["method"] is String, "\(name)")
      #expect(number(recipe["hydration"]).map { $0 > 0 } == true, "\(name)")
      #expect(number(recipe["totalMinutes"]).map { $0 > 0 } == true, "\(name)")
      #expect((recipe["tags"] as? [String])?.isEmpty == false, "\(name)")
      #expect((recipe["ingredients"] as? [[String: Any]])?.count ?? 0 >= 2, "\(name)")
    }
  }
}
