import Foundation
import Synchronization
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

/// The Python peers of these tests, in Support/.
enum Paths {
  static let support = TestPackage.root.path + "/Tests/ToolhostMCPTests/Support"
  static let fakeServer = support + "/fake_mcp_server.py"
  static let persistentPlugin = support + "/persistent_plugin.py"
  static let clientCheck = support + "/mcp_client_check.py"
  static let erasPeer = support + "/mcp_eras_peer.py"
}

/// The PyPI peers the tests use, pinned: `pip install mcp==2.3.0 mcp-server-time==2026.10.19`.
enum Peers {
  static let python3 = TestPackage.which("python3")
  static let mcpServerTime = TestPackage.which("mcp-server-time")

  /// Whether `import mcp` works and is version 2.3.0.
  static let pythonMCPClient: Bool = {
    guard let python3 else { return false }
    return Subprocess.succeeds([
      python3, "-c", "import importlib.metadata as m, mcp; assert m.version('mcp') == '2.3.0'",
    ])
  }()

  static let missingMessage =
    "needs the PyPI peers: pip install mcp==2.3.0 mcp-server-time==2026.10.19"
}

/// Checks that the process groups of `pids` end within 3 s, and kills what is left of them either way (so no test
/// leaves processes behind).
func expectGroupsToEnd(_ pids: [Int32], sourceLocation: SourceLocation = #_sourceLocation) async {
  for pid in Set(pids) where pid > 0 {
    let left = await ProcessProbe.waitForGroupToEnd(pid)
    #expect(left.isEmpty, "process group \(pid) still has \(left)", sourceLocation: sourceLocation)
    ProcessProbe.killGroup(pid)
  }
}

/// The host environment for spawned peers: the test process's own (PATH finds python3 and the pip scripts).
let hostEnvironment = ProcessInfo.processInfo.environment

extension JSONValue {
  /// Shorthand for tests: the value at a key path.
  subscript(path path: String...) -> JSONValue? {
    var v: JSONValue? = self
    for k in path { v = v?[k] }
    return v
  }
}

/// What a call's stderr sink received, chunk by chunk (the sink may run on any thread).
final class StderrChunks: Sendable {
  private let chunks = Mutex<[String]>([])
  func append(_ chunk: String) { chunks.withLock { $0.append(chunk) } }
  var all: [String] { chunks.withLock { $0 } }
}
