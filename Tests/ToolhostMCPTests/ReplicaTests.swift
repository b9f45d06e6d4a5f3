import Foundation
import Testing
import ToolhostCore
import ToolhostJSON
import ToolhostTestSupport

/// `scripts/mcp-replicas`: three `serve --mcp --http` replicas behind HAProxy, driven by the official SDK's client,
/// one replica killed halfway through the last round; no call may be lost. Skipped without HAProxy, except in CI.
@Suite(
  "serve --mcp --http replicas behind HAProxy",
  .enabled(
    if: (Replicas.haproxy && Peers.pythonMCPClient && TestPackage.toolhostBinary != nil) || Replicas.inCI,
    "needs haproxy and curl (scripts/install-deps --test), \(Peers.missingMessage), and the toolhost binary")
)
struct ReplicaTests {
  @Test func noCallIsLostWhenAReplicaDies() async throws {
    let binary = try #require(TestPackage.toolhostBinary)
    let folder = TemporaryFolder(prefix: "toolhost-replicas-test")
    try ExamplePlugins.link(["units"], into: folder.url)
    let environment = folder.userEnvironment(hostEnvironment)
    let outcome = try await ProcessRunner.shared.run(
      ProcessSpec(
        executable: "/bin/bash",
        arguments: [
          TestPackage.root.path + "/scripts/mcp-replicas", "--calls", "600", "--clients", "8", "--json", "--server",
          "\(binary) serve --mcp --http 127.0.0.1:{port} --plugins \(folder.path) --token-env MCP_REPLICAS_TOKEN",
        ],
        environment: environment, workingDirectory: TestPackage.root.path, timeout: .seconds(300)))
    let stdout = String(decoding: outcome.stdout, as: UTF8.self)
    let last = stdout.split(separator: "\n").last.map(String.init) ?? ""
    #expect(outcome.termination == .exited(0), "stdout: \(stdout)\nstderr: \(outcome.stderrText)")
    let report = try JSONValue.parse(last)
    let rounds = report["rounds"]?.arrayValue ?? []
    #expect(rounds.map { $0["replicas"] } == [1, 2, 3], "\(report)")
    #expect(rounds.allSatisfy { $0["ok"] == 600 && $0["lost"] == 0 }, "\(report)")
    #expect(rounds.last?["killed_at"]?.isNull == false, "\(report)")
    #expect(report["lost"] == 0)
    try await Task.sleep(for: .milliseconds(300))
    #expect(ProcessProbe.processes { $0.contains(folder.path) || $0.contains("haproxy -db") }.isEmpty)
  }
}

enum Replicas {
  static let haproxy =
    TestPackage.which("haproxy") != nil || FileManager.default.isExecutableFile(atPath: "/usr/sbin/haproxy")
  static let inCI = ProcessInfo.processInfo.environment["CI"] != nil
}
