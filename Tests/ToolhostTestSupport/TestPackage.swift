public import Foundation

/// Where things are for the tests: the package, its example plugins, the shared test data and the built binary.
public enum TestPackage {
  /// The package root, found from this file's path (Tests/ToolhostTestSupport/).
  public static let root: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The example plugins' folder, `plugins/` in the package.
  public static var plugins: URL { root.appendingPathComponent("plugins") }

  /// `$TOOLHOST_SHARED_DIR/testdata/RELATIVE` when that variable is set, else `../shared/testdata/RELATIVE` beside
  /// the package root (whether it exists or not).
  public static func sharedTestData(_ relative: String) -> URL {
    if let shared = ProcessInfo.processInfo.environment["TOOLHOST_SHARED_DIR"], !shared.isEmpty {
      return URL(fileURLWithPath: shared).appendingPathComponent("testdata").appendingPathComponent(relative)
    }
    return root.appendingPathComponent("../shared/testdata").appendingPathComponent(relative).standardizedFileURL
  }

  /// The `toolhost` binary: `$TOOLHOST_BIN` (the test command's copy), else the one built beside the test bundle (or
  /// in `.build/debug`); nil when none is built.
  public static let toolhostBinary: String? = {
    if let explicit = ProcessInfo.processInfo.environment["TOOLHOST_BIN"], !explicit.isEmpty { return explicit }
    return builtProduct("toolhost")
  }()

  /// The executable product `name` built beside the test bundle (or in `.build/debug`); nil when it is not built.
  public static func builtProduct(_ name: String) -> String? {
    let exe =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    var candidates: [URL] = []
    // The bundle may be a directory (…/toolhostPackageTests.xctest/…) on some platforms.
    for _ in 0..<3 {
      candidates.append(dir.appendingPathComponent(name))
      dir.deleteLastPathComponent()
    }
    candidates.append(root.appendingPathComponent(".build/debug/" + name))
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }?.path
  }

  /// ``toolhostBinary``, or a failure that says how to get one.
  public static func requireToolhostBinary() throws(TestFailure) -> String {
    guard let toolhostBinary else {
      throw TestFailure("the toolhost binary is not built beside the tests; build it or set TOOLHOST_BIN")
    }
    return toolhostBinary
  }

  /// The path of the executable `name` on PATH, nil when there is none.
  public static func which(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
  }
}

/// A test precondition or helper that failed, with what went wrong.
public struct TestFailure: Error, CustomStringConvertible, Sendable {
  /// What went wrong.
  public var description: String
  /// A failure saying `description`.
  public init(_ description: String) { self.description = description }
}
