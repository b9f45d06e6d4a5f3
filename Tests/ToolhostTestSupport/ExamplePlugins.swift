public import Foundation

/// The example plugins in `plugins/`: built once per test process, and linked into folders of a test's own.
public enum ExamplePlugins {
  /// The result of `make -C plugins`, run the first time it is needed.
  private static let built: Result<Void, TestFailure> = {
    do {
      let output = try Subprocess.run(
        executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["make", "-C", TestPackage.plugins.path],
        workingDirectory: TestPackage.root, timeout: 600)
      if output.status == 0, !output.timedOut { return .success(()) }
      let why = output.timedOut ? "timed out" : "exited with status \(output.status)"
      return .failure(TestFailure("make -C plugins \(why):\n\(output.stdoutText)\(output.stderrText)"))
    } catch {
      return .failure(TestFailure("could not run make -C plugins: \(error)"))
    }
  }()

  /// Builds the compiled example plugins the first time it is called (`make -C plugins`); throws make's output
  /// when that fails.
  public static func build() throws(TestFailure) {
    try built.get()
  }

  /// The folder of the example plugin `name`.
  public static func folder(of name: String) -> URL {
    TestPackage.plugins.appendingPathComponent(name)
  }

  /// Links the example plugins `names` from `plugins/` into `directory` (symbolic links `directory/NAME`).
  public static func link(_ names: [String], into directory: URL) throws {
    for name in names {
      try FileManager.default.createSymbolicLink(
        at: directory.appendingPathComponent(name), withDestinationURL: folder(of: name))
    }
  }

  /// A plugin folder with only the weather, bread and todo example plugins (built, and linked from `plugins/`), so
  /// plugins other teams add (MCP servers among them) neither slow the tests nor change them. Made once per test
  /// process and removed when it ends.
  public static let weatherBreadTodo: Result<URL, TestFailure> = {
    do {
      try build()
      let directory = try TemporaryFolder.make(prefix: "toolhost-example-plugins")
      TemporaryFolder.removeAtExit(directory.path)  // shared by the whole test process, so removed when it ends
      try link(["weather", "bread", "todo"], into: directory)
      return .success(directory)
    } catch let error as TestFailure {
      return .failure(error)
    } catch {
      return .failure(TestFailure("cannot link the example plugins: \(error)"))
    }
  }()
}
