public import Foundation

/// Runs the built `toolhost` binary (``TestPackage/toolhostBinary``) the way the tests of the command line do: the
/// one driver of the binary for every test target, each test giving the environment and folder of its own fixture.
public enum ToolhostProcess {
  /// Runs `toolhost ARGUMENTS` in `directory` with exactly `environment` and `input` on stdin, and stops it after
  /// `timeout` seconds (the output says whether it had to). Blocks the calling thread.
  ///
  /// - Throws: ``TestFailure`` when the binary is not built; what `Process` throws when it cannot start.
  public static func run(
    _ arguments: [String], environment: [String: String], in directory: URL, input: String = "",
    timeout: TimeInterval = 60
  ) throws -> Subprocess.Output {
    try Subprocess.run(
      executable: URL(fileURLWithPath: TestPackage.requireToolhostBinary()), arguments: arguments,
      environment: environment, workingDirectory: directory, input: Data(input.utf8), timeout: timeout)
  }

  /// Like ``run(_:environment:in:input:timeout:)``, awaited without blocking a thread of Swift's pool; a run that
  /// had to be stopped after `timeout` seconds is a failure.
  ///
  /// - Throws: ``TestFailure`` when the binary is not built or the run did not finish in time.
  public static func finish(
    _ arguments: [String], environment: [String: String], in directory: URL, input: String = "",
    timeout: TimeInterval = 120
  ) async throws -> Subprocess.Output {
    try await Subprocess.runWithoutBlocking(
      executable: URL(fileURLWithPath: TestPackage.requireToolhostBinary()), arguments: arguments,
      environment: environment, workingDirectory: directory, input: Data(input.utf8), timeout: timeout
    ).finished()
  }
}
