public import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs programs the tests need (the `toolhost` binary, plugins, make, Python) and collects what they print.
public enum Subprocess {
  /// What a finished process did.
  public struct Output: Sendable {
    /// The exit status (or the signal's number when it was killed).
    public var status: Int32
    /// Everything it wrote to stdout.
    public var stdout: Data
    /// Everything it wrote to stderr.
    public var stderr: Data
    /// Whether it was killed because its time ran out.
    public var timedOut: Bool

    /// stdout as UTF-8 text.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// stderr as UTF-8 text.
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    /// stdout, then stderr, as UTF-8 text (for failure messages).
    public var allText: String { stdoutText + stderrText }

    /// This output, or a failure when the process did not end on its own but was stopped because its time ran out.
    public func finished() throws(TestFailure) -> Output {
      if timedOut { throw TestFailure("the process did not finish in time; it wrote:\n\(allText)") }
      return self
    }
  }

  /// Runs a process to completion: writes `input` to its stdin and closes it, collects stdout and stderr
  /// concurrently, and after `timeout` seconds stops it (SIGTERM, then SIGKILL 2 s later). The child starts with no
  /// signal blocked. Blocks the calling thread (Foundation's threads only, no task).
  ///
  /// - Parameters:
  ///   - environment: the child's whole environment; the test process's own when nil.
  ///   - workingDirectory: the child's; the test process's own when nil.
  public static func run(
    executable: URL, arguments: [String], environment: [String: String]? = nil, workingDirectory: URL? = nil,
    input: Data = Data(), timeout: TimeInterval
  ) throws -> Output {
    _ = ignoreSIGPIPE
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let workingDirectory { process.currentDirectoryURL = workingDirectory }
    let stdinPipe = Pipe()
    let stdoutPipe = Pipe()
    let stderrPipe = Pipe()
    process.standardInput = stdinPipe
    process.standardOutput = stdoutPipe
    process.standardError = stderrPipe
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try withUnblockedSignals { try process.run() }

    let stdoutReader = PipeReader(stdoutPipe.fileHandleForReading)
    let stderrReader = PipeReader(stderrPipe.fileHandleForReading)
    let writer = stdinPipe.fileHandleForWriting
    Thread.detachNewThread {
      try? writer.write(contentsOf: input)  // EPIPE when the program ignores stdin: fine
      try? writer.close()
    }

    var timedOut = false
    if exited.wait(timeout: .now() + timeout) == .timedOut {
      timedOut = true
      process.terminate()
      if exited.wait(timeout: .now() + 2) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        exited.wait()
      }
    }
    let stdout = stdoutReader.result(timeout: 5)
    let stderr = stderrReader.result(timeout: 5)
    return Output(
      status: process.terminationStatus, stdout: stdout ?? Data(), stderr: stderr ?? Data(), timedOut: timedOut)
  }

  /// ``run(executable:arguments:environment:workingDirectory:input:timeout:)`` awaited without blocking a thread of
  /// Swift's pool: the process is run and waited for on a thread of its own.
  public static func runWithoutBlocking(
    executable: URL, arguments: [String], environment: [String: String]? = nil, workingDirectory: URL? = nil,
    input: Data = Data(), timeout: TimeInterval
  ) async throws -> Output {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        continuation.resume(
          with: Result {
            try run(
              executable: executable, arguments: arguments, environment: environment,
              workingDirectory: workingDirectory, input: input, timeout: timeout)
          })
      }
    }
  }

  /// Whether `command` (its first word an absolute path) runs and exits 0 within `timeout` seconds (for checks
  /// such as "is this Python package installed"). Blocks the calling thread.
  public static func succeeds(_ command: [String], timeout: TimeInterval = 60) -> Bool {
    guard
      let output = try? run(
        executable: URL(fileURLWithPath: command[0]), arguments: Array(command.dropFirst()), timeout: timeout)
    else { return false }
    return output.status == 0 && !output.timedOut
  }

  /// Runs `body` (which starts a child) with no signals blocked on this thread, so the child can be stopped with
  /// SIGTERM or SIGINT (children inherit the mask, and Swift's threads block SIGTERM and SIGINT).
  public static func withUnblockedSignals<T>(_ body: () throws -> T) rethrows -> T {
    var empty = sigset_t()
    var old = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &old)
    defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
    return try body()
  }

  /// A clean environment for `toolhost`: PATH, HOME `home`, no colours, UTF-8, and nothing else.
  public static func cleanEnvironment(home: String) -> [String: String] {
    let host = ProcessInfo.processInfo.environment
    return ["PATH": host["PATH"] ?? "/usr/bin:/bin", "HOME": home, "NO_COLOR": "1", "LANG": "C.UTF-8"]
  }

  /// Ignores SIGPIPE in the test process, once: a child may exit without reading its stdin, and writing to it must
  /// then fail with EPIPE rather than kill the tests.
  public static let ignoreSIGPIPE: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
  }()

  /// Reads a pipe to its end on a thread of its own.
  private final class PipeReader: @unchecked Sendable {
    // @unchecked: `data` is written once by the reading thread and read only after `finished` is signalled, both
    // under `lock`.
    private let lock = NSLock()
    private var data = Data()
    private let finished = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
      Thread.detachNewThread { [self] in
        let bytes = (try? handle.readToEnd()) ?? Data()
        lock.lock()
        data = bytes
        lock.unlock()
        finished.signal()
      }
    }

    /// The bytes read, once the writers have closed the pipe (nil if they did not within the timeout, e.g. a
    /// leftover grandchild holds it open).
    func result(timeout: TimeInterval) -> Data? {
      guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
      lock.lock()
      defer { lock.unlock() }
      return data
    }
  }
}
