import Foundation
import Synchronization
import Testing
import ToolhostLocal
import ToolhostSession
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The real local model's servers, a toolhost's own and a shared one, as another account on the machine meets them:
/// the command line names neither port nor key, the socket is the server's own, every request without the key is
/// refused (FastAPI's pages included), and such requests do not keep a shared server alive.
@Suite(
  "local model server access", .serialized,
  .enabled(if: LocalTestEnvironment.runsLocalModel, LocalTestEnvironment.skipReason))
struct LocalServerAccessTests {
  let work: URL

  init() throws {
    work = try TemporaryFolder.make(prefix: "toolhost-local-tests")
  }

  /// The default model with its log in this test's folder, no saved prompt prefixes, and a shared server recorded in
  /// this test's folder when `keepAlive` is set.
  func configuration(keepAlive: Duration? = nil) throws -> LocalModelConfiguration {
    var configuration = try LocalModelConfiguration.named(LocalTestEnvironment.model)
    configuration.server.logPath = work.appendingPathComponent("server.log").path
    configuration.server.promptCacheDirectory = nil
    configuration.server.startupTimeout = .seconds(240)
    configuration.shared = keepAlive.map {
      SharedServerConfiguration(runDirectory: work.appendingPathComponent("run").path, keepAlive: $0)
    }
    return configuration
  }

  /// Stops the model's server, shared or not, and waits for it to end.
  func stop(_ model: LocalModel, _ pid: Int32?) async {
    await model.sharedServer?.stop()
    await model.shutdown()
    if let pid { #expect(await ProcessProbe.waitForEnd(pid, timeout: 10), "server \(pid) still runs") }
  }

  /// What every server must show: its command line (`/proc/PID/cmdline`, readable by every account) holds neither
  /// its port nor its key, the socket listening on its port is the server's own, and only requests with its key get
  /// anything but 401.
  func expectOnlyItsKeyOpensIt(_ endpoint: LocalModelServer.Endpoint) {
    let commandLine = FileManager.default.contents(atPath: "/proc/\(endpoint.pid)/cmdline") ?? Data()
    let words = commandLine.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    #expect(!words.isEmpty)
    #expect(!words.contains("--port") && !words.contains(String(endpoint.port)), "the port is on its command line")
    #expect(!words.contains { $0.contains(endpoint.key) }, "the key is on its command line")
    #expect(Listener.owner(ofPort: endpoint.port, among: [endpoint.pid]) == endpoint.pid)

    let port = endpoint.port
    for path in ["/v1/models", "/docs", "/openapi.json", "/extras/tokenize/count", "/no-such-page"] {
      #expect(RawHTTP.status(port: port, path: path) == 401, "GET \(path) without a key")
      #expect(
        RawHTTP.status(port: port, path: path, headers: ["Authorization": "Bearer \(endpoint.key)x"]) == 401,
        "GET \(path) with a wrong key")
    }
    let chat = #"{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}"#
    #expect(RawHTTP.status(port: port, method: "POST", path: "/v1/chat/completions", body: chat) == 401)
    let key = ["Authorization": "Bearer \(endpoint.key)"]
    #expect(RawHTTP.status(port: port, path: "/v1/models", headers: key) == 200)
    #expect(RawHTTP.status(port: port, path: "/docs", headers: key) == 200)
  }

  /// A toolhost's own server (`shared` false) and a shared one.
  @Test(arguments: [false, true]) func aServerAnswersOnlyRequestsWithItsKey(shared: Bool) async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let model = LocalModel(configuration: try configuration(keepAlive: shared ? .seconds(120) : nil))
    var pid: Int32?
    do {
      let endpoint = try await model.start()
      pid = endpoint.pid
      #expect((model.sharedServer != nil) == shared)
      expectOnlyItsKeyOpensIt(endpoint)
      let turn = try await model.turn(for: Self.sayHi)
      #expect(!turn.text.isEmpty)
    } catch {
      await stop(model, pid)
      throw error
    }
    await stop(model, pid)
  }

  /// Another account that reads the server's port from its command line and binds it first (the model takes
  /// seconds to load) would get the prompt and answer as the model. Support/port_squatter.py does that; the server
  /// toolhost talks to must be the process it started, and the squatter must get nothing.
  @Test func aProcessWaitingForTheServersPortGetsNoRequest() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let squatter = try Squatter(folder: work)
    defer { squatter.stop() }
    try await squatter.waitUntilWatching()
    let model = LocalModel(configuration: try configuration())
    var pid: Int32?
    do {
      let endpoint = try await model.start()
      pid = endpoint.pid
      let turn = try await model.turn(for: Self.sayHi)
      #expect(turn.text != "squatted")
      #expect(Listener.owner(ofPort: endpoint.port, among: [endpoint.pid, squatter.pid]) == endpoint.pid)
    } catch {
      await stop(model, pid)
      throw error
    }
    await stop(model, pid)
    #expect(squatter.output == "watching\n", "the squatter got a port or requests:\n\(squatter.output)")
  }

  /// A shared server with a keep-alive of 2 s stops on time although something without its key asks it for a page
  /// every half second.
  @Test func requestsWithoutTheKeyDoNotKeepASharedServerAlive() async throws {
    defer { try? FileManager.default.removeItem(at: work) }
    let model = LocalModel(configuration: try configuration(keepAlive: .seconds(2)))
    var pid: Int32?
    do {
      let endpoint = try await model.start()
      pid = endpoint.pid
      let refused = Counter()
      let knocking = Task.detached {
        while !Task.isCancelled {
          for path in ["/v1/models", "/docs"] where RawHTTP.status(port: endpoint.port, path: path) == 401 {
            refused.add()
          }
          try? await Task.sleep(for: .milliseconds(500))
        }
      }
      let ended = await ProcessProbe.waitForEnd(endpoint.pid, timeout: 60)
      knocking.cancel()
      await knocking.value
      #expect(ended, "the shared server \(endpoint.pid) outlived its keep-alive while refused requests came in")
      #expect(refused.value > 0, "no request reached the server")
    } catch {
      await stop(model, pid)
      throw error
    }
    await stop(model, pid)
  }

  static let sayHi = ModelRequest(
    transcript: Transcript(entries: [.prompt(.init(text: "Say hi."))]), tools: [], toolChoice: .none,
    options: GenerationOptions(maximumResponseTokens: 4))
}

/// A count kept across tasks.
final class Counter: Sendable {
  private let count = Mutex(0)
  func add() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}

/// Support/port_squatter.py, running, with its output in a file.
final class Squatter {
  private let process = Process()
  private let outputFile: URL

  /// Starts the squatter; its output goes to `folder/squatter.out`.
  init(folder: URL) throws {
    outputFile = folder.appendingPathComponent("squatter.out")
    _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", TestPackage.root.appendingPathComponent("Tests/ToolhostLocalTests/Support/port_squatter.py").path,
    ]
    process.standardOutput = try FileHandle(forWritingTo: outputFile)
    process.standardInput = FileHandle.nullDevice
    try process.run()
  }

  var pid: Int32 { process.processIdentifier }
  var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

  /// Waits until it watches the process list.
  func waitUntilWatching() async throws {
    for _ in 0..<200 where !output.contains("watching") {
      try await Task.sleep(for: .milliseconds(50))
    }
    guard output.contains("watching") else { throw TestFailure("the squatter did not start: \(output)") }
  }

  /// Kills it and waits for it.
  func stop() {
    if process.isRunning { kill(pid, SIGKILL) }
    process.waitUntilExit()
  }
}

/// Which process holds a listening socket.
enum Listener {
  /// Of `candidates`, the process that has the socket listening on 127.0.0.1:`port` open (by its inode in
  /// `/proc/net/tcp` and the links in `/proc/PID/fd`); `nil` when none has.
  static func owner(ofPort port: Int, among candidates: [Int32]) -> Int32? {
    let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
    let local = "0100007F:" + String(format: "%04X", port)
    let inodes = table.split(separator: "\n").dropFirst().compactMap { line -> String? in
      let fields = line.split(separator: " ")
      // sl, local address, remote address, state (0A: listening), queues, timer, retransmits, uid, timeout, inode
      guard fields.count > 9, fields[1] == local, fields[3] == "0A" else { return nil }
      return String(fields[9])
    }
    return candidates.first { pid in
      let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
      return fds.contains { fd in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)") else {
          return false
        }
        return inodes.contains { target == "socket:[\($0)]" }
      }
    }
  }
}

/// Plain HTTP/1.1 requests on a fresh connection, for what a client other than toolhost sends.
enum RawHTTP {
  /// Sends one request to 127.0.0.1:`port` and returns the response's status code, or `nil` without an answer
  /// (nothing listens, or no status line within 10 s).
  static func status(
    port: Int, method: String = "GET", path: String, headers: [String: String] = [:], body: String = ""
  ) -> Int? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { return nil }
    var request =
      "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
      + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
    for (name, value) in headers { request += "\(name): \(value)\r\n" }
    let bytes = Array((request + "\r\n" + body).utf8)
    guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { return nil }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 512)
    while !received.contains(10) {
      let n = recv(fd, &buffer, buffer.count, 0)
      if n <= 0 { break }
      received += buffer[0..<n]
    }
    let statusLine = received.prefix { $0 != 13 && $0 != 10 }
    let parts = String(decoding: statusLine, as: UTF8.self).split(separator: " ")
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return nil }
    return Int(parts[1])
  }
}
