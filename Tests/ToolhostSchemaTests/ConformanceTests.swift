import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema
import ToolhostTestSupport

/// Where the official JSON-Schema-Test-Suite is: `$TOOLHOST_SHARED_DIR/testdata/...` when the variable is set, else
/// `../shared/testdata/...` next to the package root.
enum OfficialSuite {
  static func candidate() -> String {
    TestPackage.sharedTestData("JSON-Schema-Test-Suite").path
  }

  /// The suite's root directory, when it exists.
  static let root: String? = {
    var isDirectory: ObjCBool = false
    let path = candidate()
    return FileManager.default.fileExists(atPath: "\(path)/tests/draft2020-12", isDirectory: &isDirectory)
      && isDirectory.boolValue
      ? path : nil
  }()

  /// The suite's `remotes/` documents under the URIs its tests use (`http://localhost:1234/...`).
  static func registry() throws -> SchemaRegistry {
    let root = try #require(Self.root)
    var registry = SchemaRegistry()
    let remotes = "\(root)/remotes"
    let files = FileManager.default.enumerator(atPath: remotes)?.compactMap { $0 as? String } ?? []
    for file in files where file.hasSuffix(".json") {
      let text = try String(contentsOfFile: "\(remotes)/\(file)", encoding: .utf8)
      registry.add(try JSONValue.parse(text), at: "http://localhost:1234/\(file)")
    }
    return registry
  }

  /// The groups of one test file: each a schema and its tests.
  static func groups(_ path: String) throws -> [JSONValue] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return try #require(try JSONValue.parse(text).arrayValue, "\(path) is not an array of groups")
  }

  /// The `.json` files of a directory of the suite, sorted.
  static func files(_ relative: String) throws -> [String] {
    let directory = "\(try #require(root))/tests/\(relative)"
    return try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
      .sorted().map { "\(directory)/\($0)" }
  }

  /// Runs every group of the files against the validator compiled with `options`; returns the failures and the
  /// numbers of groups and tests run. A schema that does not compile is a failure.
  static func run(_ files: [String], options: SchemaOptions) throws -> (failures: [String], groups: Int, tests: Int) {
    var failures: [String] = []
    var groupsRun = 0
    var testsRun = 0
    for path in files {
      let file = URL(fileURLWithPath: path).lastPathComponent
      for group in try groups(path) {
        let name = group["description"]?.stringValue ?? "?"
        groupsRun += 1
        let schema: JSONSchema
        do {
          schema = try JSONSchema(try #require(group["schema"]), options: options)
        } catch let error as SchemaError {
          failures.append("\(file) › \(name): the schema does not compile: \(error)")
          continue
        }
        for test in group["tests"]?.arrayValue ?? [] {
          testsRun += 1
          let description = test["description"]?.stringValue ?? "?"
          let data = test["data"] ?? .null
          let expected = test["valid"]?.boolValue ?? false
          let issues = schema.validate(data)
          let fast = schema.isValid(data)
          if issues.isEmpty != expected || fast != expected {
            failures.append(
              "\(file) › \(name) › \(description): expected \(expected ? "valid" : "invalid"), "
                + "isValid says \(fast), validate says \(issues.isEmpty ? "valid" : issues.map(\.description).joined(separator: "; "))"
            )
          }
          // Every issue must have a usable message and locations that are pointers (or URI#pointer elsewhere).
          for issue in issues
          where issue.message.isEmpty
            || !(issue.instanceLocation.isEmpty || issue.instanceLocation.hasPrefix("/"))
            || !(issue.keywordLocation.isEmpty || issue.keywordLocation.hasPrefix("/")
              || issue.keywordLocation.contains("#"))
          {
            failures.append("\(file) › \(name) › \(description): malformed issue \(issue)")
          }
        }
      }
    }
    return (failures, groupsRun, testsRun)
  }
}

@Suite("JSON-Schema-Test-Suite conformance")
struct ConformanceTests {
  static let missing =
    "JSON-Schema-Test-Suite not found at \(OfficialSuite.candidate()); set TOOLHOST_SHARED_DIR to the shared directory"

  @Test(
    "every test of the required draft2020-12 suite passes",
    .enabled(if: OfficialSuite.root != nil, Comment(rawValue: missing)))
  func draft2020_12() throws {
    let files = try OfficialSuite.files("draft2020-12")
    #expect(files.count > 40)
    let result = try OfficialSuite.run(files, options: SchemaOptions(registry: try OfficialSuite.registry()))
    print(
      "JSON-Schema-Test-Suite draft2020-12: \(files.count) files, \(result.groups) groups, \(result.tests) tests, "
        + "\(result.failures.count) failures")
    for failure in result.failures { Issue.record(Comment(rawValue: failure)) }
  }

  @Test(
    "the optional format tests pass with format as an assertion",
    .enabled(if: OfficialSuite.root != nil, Comment(rawValue: missing)))
  func formatAssertions() throws {
    let files = try OfficialSuite.files("draft2020-12/optional/format")
    let options = SchemaOptions(registry: try OfficialSuite.registry(), format: .assertion)
    let result = try OfficialSuite.run(files, options: options)
    print(
      "JSON-Schema-Test-Suite draft2020-12/optional/format as assertions: \(result.groups) groups, "
        + "\(result.tests) tests, \(result.failures.count) failures")
    for failure in result.failures { Issue.record(Comment(rawValue: failure)) }
  }

  @Test("format is an annotation by default", .enabled(if: OfficialSuite.root != nil, Comment(rawValue: missing)))
  func formatAnnotations() throws {
    for path in try OfficialSuite.files("draft2020-12/optional/format") {
      for group in try OfficialSuite.groups(path) {
        let schema = try JSONSchema(try #require(group["schema"]))
        for test in group["tests"]?.arrayValue ?? [] {
          #expect(schema.isValid(test["data"] ?? .null), "\(path): \(test["description"] ?? "?")")
        }
      }
    }
  }
}
