import Foundation
import Testing
import ToolhostTestSupport

/// What `import Toolhost` shows an application, checked by compiling files as an app outside the package would (no
/// upcoming features, Swift 5 and 6 modes): the FoundationModels face, and nothing of the chat history's SQLite
/// layer or the web server under the chat page and `serve --http`.
@Suite("What import Toolhost shows")
struct ImportSurfaceTests {
  /// A test module that imports `Toolhost`: its compile command has the search paths an app needs.
  static let module = "ToolhostFoundationModelsTests"

  /// The error-handling shape of a FoundationModels tool: a `String` built by interpolation, returned from a `catch`.
  /// When GRDB was loaded through `import Toolhost`, its `SQL` (a string-interpolation type) took part in this
  /// expression's type-checking and it failed with "cannot convert return expression of type 'SQL'".
  static let interpolatedErrorTool = """
    import Toolhost

    struct SearchTool: Tool {
      let name = "search"
      let description = "Searches the notes."

      @Generable
      struct Arguments {
        @Guide(description: "What to look for")
        var query: String
      }

      func call(arguments: Arguments) async throws -> String {
        do {
          return try lookUp(arguments.query).joined(separator: ", ")
        } catch {
          return "Search failed: \\(error.localizedDescription)"
        }
      }

      func lookUp(_ query: String) throws -> [String] { [query] }
    }
    """

  @Test(arguments: [5, 6])
  func aToolThatInterpolatesAnErrorCompiles(languageMode: Int) throws {
    let output = try SwiftTypecheck.check(
      Self.interpolatedErrorTool, languageMode: languageMode, likeModule: Self.module)
    #expect(output.status == 0, "\(output.allText)")
  }

  /// Names of GRDB (`SQL`, `Row`, `DatabaseQueue`) and of Hummingbird (`Router`, `Application`) are not in scope.
  @Test(arguments: [
    ("let fragment: SQL = \"SELECT 1\"", "SQL"),
    ("func rows(_ row: Row) {}", "Row"),
    ("let queue = try? DatabaseQueue()", "DatabaseQueue"),
    ("let router = Router()", "Router"),
    ("func serve(_ app: Application<Never>) {}", "Application"),
  ])
  func namesOfTheDatabaseAndTheWebServerAreNotInScope(line: String, name: String) throws {
    let output = try SwiftTypecheck.check(
      "import Toolhost\n\n\(line)\n", languageMode: 6, likeModule: Self.module)
    #expect(output.status != 0, "\(name) compiled with only import Toolhost")
    #expect(output.allText.contains("cannot find") && output.allText.contains("'\(name)'"), "\(output.allText)")
  }

  /// Nor are their extensions of the standard library's types, which an app's own expressions would otherwise be
  /// type-checked against (Swift 6 without `MemberImportVisibility` sees the members of every module loaded): GRDB's
  /// `databaseValue` and `sqlExpression` on `String`, Hummingbird's `response(from:context:)` on arrays. These
  /// compiled (or failed only on inference) while `Toolhost` re-exported the history and the chat page.
  @Test(arguments: [
    ("let value = \"text\".databaseValue", "has no member 'databaseValue'"),
    ("let fragment = \"a, b\".sqlExpression", "has no member 'sqlExpression'"),
    ("let encode = [\"a\"].response(from:context:)", "has no member 'response(from:context:)'"),
  ])
  func membersTheDatabaseAndTheWebServerAddAreNotSeen(line: String, error: String) throws {
    for languageMode in [5, 6] {
      let output = try SwiftTypecheck.check(
        "import Toolhost\n\n\(line)\n", languageMode: languageMode, likeModule: Self.module)
      #expect(output.status != 0 && output.allText.contains(error), "Swift \(languageMode): \(output.allText)")
    }
  }

  /// The check itself: the same kind of file with a name `Toolhost` does give compiles, so a failure above is about
  /// the name and not about the compiler's set-up.
  @Test func aNameToolhostGivesIsInScope() throws {
    let output = try SwiftTypecheck.check(
      "import Toolhost\n\nlet session = LanguageModelSession(instructions: \"Be brief.\")\n", languageMode: 6,
      likeModule: Self.module)
    #expect(output.status == 0, "\(output.allText)")
  }
}

/// The samples of FoundationModels 27's documentation (Examples/AppleSamples: tool calling, the tool-calling modes,
/// dynamic instructions and profiles, their modifiers and hooks, session properties, a custom modifier, errors and
/// the transcript), unchanged but for the import, type-checked as an app outside the package would compile them.
/// The package builds them in Swift 6 mode; this checks both language modes with no upcoming features.
@Suite("Apple's documentation samples compile")
struct AppleSamplesCompileTests {
  static var files: [URL] {
    let folder = TestPackage.root.appendingPathComponent("Examples/AppleSamples/Sources/AppleSamples")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasSuffix(".swift") }.sorted().map { folder.appendingPathComponent($0) }
  }

  @Test(arguments: [5, 6])
  func theSamplesTypeCheck(languageMode: Int) throws {
    let files = Self.files
    #expect(files.count >= 4, "the samples' folder: \(files)")
    let output = try SwiftTypecheck.check(
      files: files, languageMode: languageMode, likeModule: ImportSurfaceTests.module)
    #expect(output.status == 0, "Swift \(languageMode): \(output.allText)")
  }
}
