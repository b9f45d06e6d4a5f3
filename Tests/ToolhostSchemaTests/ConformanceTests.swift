import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema

/// Where the official JSON-Schema-Test-Suite is: `$TOOLHOST_SHARED_DIR/testdata/...` when the variable is set, else
/// `../shared/testdata/...` next to the package root (found from this file's path).
enum OfficialSuite {
  static let relativePath = "testdata/JSON-Schema-Test-Suite/tests/draft2020-12"

  static func candidate(filePath: String = #filePath) -> String {
    if let shared = ProcessInfo.processInfo.environment["TOOLHOST_SHARED_DIR"], !shared.isEmpty {
      return "\(shared)/\(relativePath)"
    }
    let root = URL(fileURLWithPath: filePath)
      .deletingLastPathComponent()  // <root>/Tests/ToolhostSchemaTests
      .deletingLastPathComponent()  // <root>/Tests
      .deletingLastPathComponent()  // <root>
    return root.appendingPathComponent("../shared/\(relativePath)").standardizedFileURL.path
  }

  /// The draft 2020-12 test directory, when it exists.
  static let directory: String? = {
    var isDirectory: ObjCBool = false
    let path = candidate()
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
      && isDirectory.boolValue
      ? path : nil
  }()
}

@Suite("JSON-Schema-Test-Suite conformance")
struct ConformanceTests {
  /// A group that was not run, and why.
  struct Skip {
    let file: String
    let group: String
    let tests: Int
    let reason: String
  }

  @Test(
    "every supported group of draft2020-12 passes",
    .enabled(
      if: OfficialSuite.directory != nil,
      "JSON-Schema-Test-Suite not found at \(OfficialSuite.candidate()); set TOOLHOST_SHARED_DIR to the shared directory"
    ))
  func draft2020_12() throws {
    let directory = try #require(OfficialSuite.directory)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
      $0.hasSuffix(".json")
    }.sorted()
    #expect(!files.isEmpty, "no test files in \(directory)")

    var filesRun = 0
    var groupsRun = 0
    var testsRun = 0
    var failures: [String] = []
    var skips: [Skip] = []
    var groupCount: [String: Int] = [:]

    for file in files {
      let text = try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)
      let groups = try #require(
        try JSONValue.parse(text).arrayValue, "\(file) is not an array of groups")
      groupCount[file] = groups.count
      var ranInFile = false
      for group in groups {
        let name = group["description"]?.stringValue ?? "?"
        let tests = group["tests"]?.arrayValue ?? []
        let schema: JSONSchema
        do {
          schema = try JSONSchema(try #require(group["schema"]))
        } catch let error as SchemaError {
          if error.kind == .invalidSchema {
            failures.append(
              "\(file) › \(name): the schema was rejected as invalid: \(error.message)")
          } else {
            let place = error.schemaLocation.isEmpty ? "/" : error.schemaLocation
            skips.append(
              Skip(
                file: file, group: name, tests: tests.count, reason: "\(place): \(error.message)"))
          }
          continue
        }
        ranInFile = true
        groupsRun += 1
        for test in tests {
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
          // Every issue must have a usable message and locations that are pointers.
          for issue in issues {
            if issue.message.isEmpty
              || !(issue.instanceLocation.isEmpty || issue.instanceLocation.hasPrefix("/"))
              || !(issue.keywordLocation.isEmpty || issue.keywordLocation.hasPrefix("/"))
            {
              failures.append("\(file) › \(name) › \(description): malformed issue \(issue)")
            }
          }
        }
      }
      if ranInFile { filesRun += 1 }
    }

    // The summary.
    let skippedTests = skips.reduce(0) { $0 + $1.tests }
    var lines = [
      "JSON-Schema-Test-Suite draft2020-12 (\(directory)):",
      "  ran \(filesRun) of \(files.count) files, \(groupsRun) groups, \(testsRun) tests; "
        + "skipped \(skips.count) groups (\(skippedTests) tests); \(failures.count) failures",
    ]
    let skippedByFile = Dictionary(grouping: skips, by: \.file)
    let wholeFiles = skippedByFile.keys.filter { skippedByFile[$0]!.count == groupCount[$0] }
      .sorted()
    if !wholeFiles.isEmpty {
      lines.append("  skipped files (every group):")
      for file in wholeFiles {
        let reasons = Set(skippedByFile[file]!.map { Self.kind(of: $0.reason) }).sorted().joined(
          separator: "; ")
        let count = skippedByFile[file]!.count
        lines.append("    \(file) (\(count) group\(count == 1 ? "" : "s")): \(reasons)")
      }
    }
    let partial = skips.filter { !wholeFiles.contains($0.file) }
    if !partial.isEmpty {
      lines.append("  skipped groups:")
      for skip in partial { lines.append("    \(skip.file) › \(skip.group): \(skip.reason)") }
    }
    print(lines.joined(separator: "\n"))

    for failure in failures { Issue.record(Comment(rawValue: failure)) }
    #expect(groupsRun > 0)
  }

  /// A skip reason without the group-specific details, to summarise a whole file.
  static func kind(of reason: String) -> String {
    guard let colon = reason.range(of: ": ") else { return reason }
    let message = String(reason[colon.upperBound...])
    if message.hasPrefix("keyword '") || message.hasPrefix("'$id'") { return message }
    if message.hasPrefix("remote reference") { return "remote references" }
    if message.hasPrefix("'$ref'") && message.contains("anchor") { return "references to anchors" }
    if message.hasPrefix("'$schema'") { return "custom meta-schemas" }
    return message
  }
}
