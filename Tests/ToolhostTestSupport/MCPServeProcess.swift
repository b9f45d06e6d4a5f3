public import Foundation
import Synchronization
public import ToolhostJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `toolhost serve --mcp` as a child process, spoken to in JSON-RPC lines: a reader thread collects the responses by
/// id; tests wait for them either blocking their thread or, in async code, without blocking one of the pool.
public final class MCPServeProcess: Sendable {
  /// The running `toolhost`.
  public let process: Process
  private let input: FileHandle
  private let output: FileHandle
  private let logPath: String
  private let responses = Mutex<[Int64: JSONValue]>([:])
  private let inputClosed = Mutex(false)

  /// Starts `binary ARGUMENTS` (a `serve --mcp`) with its stderr going to the file `logPath`.
  public init(
    binary: String, arguments: [String], environment: [String: String], workingDirectory: URL, logPath: String
  ) throws {
    _ = Subprocess.ignoreSIGPIPE  // a server that died makes writes fail instead of killing the tests
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    let process = Process()
    let stdinPipe = Pipe()
    let stdoutPipe = Pipe()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = environment
    process.currentDirectoryURL = workingDirectory
    process.standardInput = stdinPipe
    process.standardOutput = stdoutPipe
    process.standardError = FileHandle(forWritingAtPath: logPath)
    try Subprocess.withUnblockedSignals { try process.run() }
    self.process = process
    self.logPath = logPath
    input = stdinPipe.fileHandleForWriting
    output = stdoutPipe.fileHandleForReading
    Thread.detachNewThread { [self] in readResponses() }
  }

  private func readResponses() {
    var pending: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = read(output.fileDescriptor, &chunk, chunk.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 { break }
      pending += chunk[0..<count]
      while let newline = pending.firstIndex(of: 0x0A) {
        let line = Array(pending[..<newline])
        pending.removeSubrange(...newline)
        guard let message = try? JSONValue.parse(line), let id = message["id"]?.integerValue else { continue }
        responses.withLock { $0[id] = message }
      }
    }
  }

  /// Writes one message as a line on the server's stdin.
  public func send(_ message: JSONValue) throws {
    try input.write(contentsOf: Data((message.serialized() + "\n").utf8))
  }

  /// Takes the response to request `id` if it has come.
  private func takeResponse(_ id: Int64) -> JSONValue? {
    responses.withLock { $0.removeValue(forKey: id) }
  }

  /// The response to request `id`, or nil when none came within `seconds`; blocks the calling thread.
  public func blockingResponse(to id: Int64, within seconds: Double = 30) -> JSONValue? {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
      if let reply = takeResponse(id) { return reply }
      Thread.sleep(forTimeInterval: 0.01)
    }
    return takeResponse(id)
  }

  /// The response to request `id`, or nil when none came within `seconds`; waits without blocking a thread.
  public func response(to id: Int64, within seconds: Double = 30) async -> JSONValue? {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
      if let reply = takeResponse(id) { return reply }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return takeResponse(id)
  }

  /// The `initialize` request (id 0).
  private static let initializeRequest: JSONValue = [
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": [
      "protocolVersion": "2025-11-25", "capabilities": [:], "clientInfo": ["name": "t", "version": "1"],
    ],
  ]

  /// Checks the answer to `initialize`, then sends `notifications/initialized`.
  private func finishInitializing(_ reply: JSONValue?) throws(TestFailure) {
    guard reply?["result"]?["protocolVersion"] != nil else {
      throw TestFailure("serve --mcp did not answer initialize; its log: \(log)")
    }
    do { try send(["jsonrpc": "2.0", "method": "notifications/initialized"]) } catch {
      throw TestFailure("cannot write to serve --mcp: \(error); its log: \(log)")
    }
  }

  /// `initialize` (id 0), then `notifications/initialized`; blocks the calling thread.
  public func blockingInitialize() throws {
    try send(Self.initializeRequest)
    try finishInitializing(blockingResponse(to: 0, within: 30))
  }

  /// `initialize` (id 0), then `notifications/initialized`.
  public func initialize() async throws {
    try send(Self.initializeRequest)
    try finishInitializing(await response(to: 0))
  }

  /// Sends `tools/call` (request `id`) without waiting for its answer.
  public func sendCall(id: Int64, _ tool: String, _ arguments: JSONValue) throws {
    try send([
      "jsonrpc": "2.0", "id": .integer(id), "method": "tools/call",
      "params": ["name": .string(tool), "arguments": arguments],
    ])
  }

  /// The names `tools/list` (request `id`) offers.
  public func toolNames(id: Int64) async throws -> [String] {
    try send(["jsonrpc": "2.0", "id": .integer(id), "method": "tools/list"])
    guard let reply = await response(to: id), let tools = reply["result"]?["tools"]?.arrayValue else {
      throw TestFailure("serve --mcp did not answer tools/list; its log: \(log)")
    }
    return tools.compactMap { $0["name"]?.stringValue }
  }

  /// The `result` of a `tools/call` (request `id`).
  public func call(id: Int64, _ tool: String, _ arguments: JSONValue) async throws -> JSONValue {
    try sendCall(id: id, tool, arguments)
    guard let reply = await response(to: id) else {
      throw TestFailure("serve --mcp did not answer tools/call \(tool); its log: \(log)")
    }
    guard let result = reply["result"] else {
      throw TestFailure("tools/call \(tool) got no result: \(reply.serialized())")
    }
    return result
  }

  /// The URL of the MCP endpoint of a `serve --mcp --http` (from its "listening on" line), once it listens, or
  /// `nil` when it does not within `seconds`.
  public func httpEndpoint(within seconds: Double = 30) async -> String? {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline, process.isRunning {
      if let range = log.range(of: #"http://[^ \n]+/mcp"#, options: .regularExpression) { return String(log[range]) }
      try? await Task.sleep(for: .milliseconds(50))
    }
    return nil
  }

  /// How many descriptors the server has open.
  public var descriptorCount: Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
  }

  /// The end of the server's stderr.
  public var log: String { String(((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").suffix(2000)) }

  /// Closes the server's stdin (once), which asks it to stop.
  public func closeInput() {
    let first = inputClosed.withLock { closed in
      defer { closed = true }
      return !closed
    }
    if first { try? input.close() }
  }

  /// Waits up to `seconds` for the server to exit; whether it did. Blocks the calling thread.
  public func blockingWaitForExit(within seconds: Double) -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
    return !process.isRunning
  }

  /// Closes stdin and, if the server still runs `grace` seconds later, kills it by its pid; blocks the calling
  /// thread until it has exited.
  public func blockingStop(grace: Double = 3) {
    closeInput()
    if !blockingWaitForExit(within: grace) {
      kill(process.processIdentifier, SIGKILL)
      _ = blockingWaitForExit(within: 5)
    }
  }

  /// Closes stdin (or sends `signal`, for a server that does not read stdin, such as `serve --mcp --http`) and, if
  /// the server still runs `grace` seconds later, kills it by its pid; returns once it has exited.
  public func stop(grace: Double = 5, signal: Int32? = nil) async {
    if let signal { kill(process.processIdentifier, signal) } else { closeInput() }
    let deadline = ContinuousClock.now + .seconds(grace)
    while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
  }
}
