public import Foundation

/// Type-checks a Swift file as an application outside this package would: against the modules the test build made,
/// with the language mode asked for and none of the package's upcoming-feature settings. It answers what only a
/// compiler run can: whether Apple's samples compile unchanged in Swift 5 and 6 modes, and whether a name stays out of
/// what `import Toolhost` shows.
///
/// The compiler's search paths (modules, C module maps, the macro plugin) are read from SwiftPM's build description
/// (`.build/debug.yaml`), from the command that compiles a test module that imports `Toolhost`.
public enum SwiftTypecheck {
  /// What SwiftPM gave the compiler for `module` that an outside file needs too: module and header search paths,
  /// module maps, the macro plugins, the target. Nil when the build description or the module's command is missing.
  public static func searchArguments(likeModule module: String) -> [String]? {
    guard let description = buildDescription(), let text = try? String(contentsOf: description, encoding: .utf8)
    else { return nil }
    let key = "\"C.\(module)-"
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
    while let line = lines.popFirst() {
      guard line.hasPrefix("  \(key)"), line.contains(".module\"") else { continue }
      while let next = lines.popFirst(), next.hasPrefix("    ") {
        let trimmed = next.drop { $0 == " " }
        guard trimmed.hasPrefix("args: ") else { continue }
        guard let data = trimmed.dropFirst("args: ".count).data(using: .utf8),
          let arguments = try? JSONDecoder().decode([String].self, from: data)
        else { return nil }
        return kept(arguments)
      }
    }
    return nil
  }

  /// Runs `swiftc -typecheck` on `source` (written to a temporary file named `fileName`) in Swift `languageMode`
  /// (5 or 6), with the search paths of `module`'s build. Throws when the build description cannot be read.
  public static func check(
    _ source: String, fileName: String = "main.swift", languageMode: Int, likeModule module: String,
    timeout: TimeInterval = 300
  ) throws -> Subprocess.Output {
    let folder = TemporaryFolder()
    let file = folder.url.appendingPathComponent(fileName)
    try Data(source.utf8).write(to: file)
    return try check(
      files: [file], languageMode: languageMode, likeModule: module, library: false, timeout: timeout)
  }

  /// Runs `swiftc -typecheck` on `files` together, as one module (`-parse-as-library` when `library`: a program
  /// with `@main`), in Swift `languageMode`, with the search paths of `module`'s build.
  public static func check(
    files: [URL], languageMode: Int, likeModule module: String, library: Bool = true, timeout: TimeInterval = 300
  ) throws -> Subprocess.Output {
    guard let search = searchArguments(likeModule: module) else {
      throw TestFailure("no compile command for \(module) in SwiftPM's build description; build the tests first")
    }
    guard let swiftc = TestPackage.which("swiftc") else { throw TestFailure("swiftc is not on PATH") }
    let arguments =
      ["-typecheck", "-swift-version", String(languageMode)] + (library ? ["-parse-as-library"] : []) + search
      + files.map(\.path)
    return try Subprocess.run(executable: URL(fileURLWithPath: swiftc), arguments: arguments, timeout: timeout)
      .finished()
  }

  /// The build description SwiftPM wrote for the build this test runs from (`.build/debug.yaml` beside
  /// `.build/<triple>/debug/`), else the package's `.build/debug.yaml`.
  static func buildDescription() -> URL? {
    let exe =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    var candidates: [URL] = []
    for _ in 0..<4 {
      candidates.append(dir.appendingPathComponent("debug.yaml"))
      dir.deleteLastPathComponent()
    }
    candidates.append(TestPackage.root.appendingPathComponent(".build/debug.yaml"))
    return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
  }

  /// The arguments an outside file shares with the module's compile: search paths, module maps and C flags, macro
  /// plugins, the target and the module cache. Not the module's name, sources, outputs, defines, language mode or
  /// upcoming features.
  static func kept(_ arguments: [String]) -> [String] {
    let paired: Set<String> = ["-I", "-Xcc", "-target", "-module-cache-path", "-sdk", "-resource-dir"]
    var kept: [String] = []
    var rest = arguments.dropFirst()[...]
    while let argument = rest.popFirst() {
      if paired.contains(argument), let value = rest.popFirst() {
        kept += [argument, value]
      } else if argument == "-Xfrontend", rest.first?.hasPrefix("-load-plugin") == true {
        // `-Xfrontend -load-plugin-executable -Xfrontend PATH#MODULE`: the macros' plugin.
        let flag = rest.removeFirst()
        if rest.first == "-Xfrontend", let plugin = rest.dropFirst().first {
          rest.removeFirst(2)
          kept += ["-Xfrontend", flag, "-Xfrontend", plugin]
        }
      } else if ["-F", "-Fsystem", "-L"].contains(argument), let value = rest.popFirst() {
        kept += [argument, value]
      } else if argument.hasPrefix("-F") || argument.hasPrefix("-L") {
        kept.append(argument)
      }
    }
    return kept
  }
}
