import Foundation
import Testing
import ToolhostTestSupport

/// The Swift snippets of README.md and docs/*.md are compiled: each is a file of Examples/Snippets (the target
/// `ToolhostSnippets`, built with the package), and a page whose snippet differs from its compiled copy fails here.
/// Lines are compared trimmed, blank lines left out; a file may hold more than its snippet (a header, say).
@Suite struct DocSnippetTests {
  /// One ```swift block of a page.
  struct Snippet: CustomStringConvertible {
    /// The page's path from the package root.
    var page: String
    /// Which swift block of the page it is, from 1.
    var number: Int
    /// Its lines, trimmed, blank ones left out.
    var lines: [String]

    var description: String { "\(page)'s \(DocSnippetTests.ordinal(number)) swift block" }
  }

  /// A file of Examples/Snippets.
  struct SnippetFile {
    /// Its name.
    var name: String
    /// Its lines, trimmed, blank ones left out.
    var lines: [String]
  }

  static let snippetFolder = "Examples/Snippets"

  /// README.md and the pages of docs/, in order.
  static func pages() throws -> [String] {
    let docs = TestPackage.root.appendingPathComponent("docs")
    let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
    return ["README.md"] + names.sorted().map { "docs/\($0)" }
  }

  /// The lines of `text` trimmed of leading and trailing whitespace, blank lines left out.
  static func normalized<S: StringProtocol>(_ lines: [S]) -> [String] {
    lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
  }

  /// The ```swift blocks of `text` (a fence may be indented, as in a list).
  static func swiftBlocks(in text: String, page: String) -> [Snippet] {
    var snippets: [Snippet] = []
    var block: [Substring]?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if var lines = block {
        if trimmed.hasPrefix("```") {
          snippets.append(Snippet(page: page, number: snippets.count + 1, lines: normalized(lines)))
          block = nil
        } else {
          lines.append(line)
          block = lines
        }
      } else if trimmed == "```swift" || trimmed.hasPrefix("```swift ") {
        block = []
      }
    }
    return snippets
  }

  static func snippets() throws -> [Snippet] {
    try pages().flatMap { page in
      let text = try String(contentsOf: TestPackage.root.appendingPathComponent(page), encoding: .utf8)
      return swiftBlocks(in: text, page: page)
    }
  }

  static func snippetFiles() throws -> [SnippetFile] {
    let folder = TestPackage.root.appendingPathComponent(snippetFolder)
    return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
      .map { name in
        let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        return SnippetFile(name: name, lines: normalized(text.split(separator: "\n", omittingEmptySubsequences: false)))
      }
  }

  /// How many of `snippet`'s lines, from its first, `lines` holds from `start` on.
  static func matchingPrefix(of snippet: [String], in lines: [String], at start: Int) -> Int {
    var count = 0
    while count < snippet.count, start + count < lines.count, lines[start + count] == snippet[count] { count += 1 }
    return count
  }

  /// Whether `lines` holds all of `snippet`, in order and contiguously.
  static func contains(_ lines: [String], _ snippet: [String]) -> Bool {
    lines.indices.contains { matchingPrefix(of: snippet, in: lines, at: $0) == snippet.count }
  }

  /// What to say of a snippet no file holds: its first line that differs from the file that comes nearest.
  static func mismatch(of snippet: Snippet, in files: [SnippetFile]) -> String {
    var best: (file: SnippetFile, start: Int, count: Int)?
    for file in files {
      for start in file.lines.indices {
        let count = matchingPrefix(of: snippet.lines, in: file.lines, at: start)
        if count > 0, count > best?.count ?? 0 { best = (file, start, count) }
      }
    }
    let head = "\(snippet) is not in \(snippetFolder)"
    guard let best else {
      return "\(head): first differing line: \(snippet.lines.first ?? "") (its first line is in no file there; "
        + "compile the snippet as a file of \(snippetFolder) and name its function in main.swift)"
    }
    let line = snippet.lines[best.count]
    let there = best.start + best.count
    let found = there < best.file.lines.count ? "has \(best.file.lines[there])" : "ends"
    return "\(head): first differing line: \(line) (after \(best.count) matching lines, \(best.file.name) \(found) "
      + "there; change the page and the file together)"
  }

  static func ordinal(_ n: Int) -> String {
    let suffix =
      (11...13).contains(n % 100) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
    return "\(n)\(suffix)"
  }

  @Test func everySwiftSnippetOfTheDocsIsCompiled() throws {
    let files = try Self.snippetFiles()
    let snippets = try Self.snippets()
    #expect(snippets.count >= 6, "the README and docs/ have fewer swift blocks than expected: \(snippets)")
    for snippet in snippets where !files.contains(where: { Self.contains($0.lines, snippet.lines) }) {
      Issue.record("\(Self.mismatch(of: snippet, in: files))")
    }
  }

  @Test func everyCompiledSnippetIsShownByAPage() throws {
    let snippets = try Self.snippets()
    for file in try Self.snippetFiles() where file.name != "main.swift" {
      let shown = snippets.contains { !$0.lines.isEmpty && Self.contains(file.lines, $0.lines) }
      #expect(shown, "\(Self.snippetFolder)/\(file.name) holds no swift block of README.md or docs/*.md")
    }
  }

  @Test func aChangedLineIsNamed() {
    let page = Snippet(page: "docs/swift-api.md", number: 2, lines: ["import Toolhost", "let a = 1", "print(a)"])
    let file = SnippetFile(name: "SwiftAPI.swift", lines: ["// header", "import Toolhost", "let a = 2", "print(a)"])
    #expect(!Self.contains(file.lines, page.lines))
    #expect(
      Self.mismatch(of: page, in: [file])
        == "docs/swift-api.md's 2nd swift block is not in Examples/Snippets: first differing line: let a = 1 (after 1 "
        + "matching lines, SwiftAPI.swift has let a = 2 there; change the page and the file together)")
    let text = "a\n```swift\n  x\n\n  y\n```\n```sh\nz\n```\n"
    #expect(Self.swiftBlocks(in: text, page: "p").map(\.lines) == [["x", "y"]])
  }
}
