import Synchronization
public import ToolhostCore
public import ToolhostGeneration
public import ToolhostJSON

/// A tool marked destructive, so that the default approval asks for it; counts its calls.
public struct WipeTool: Tool {
  public let name = "wipe"
  public let description = "Deletes everything."
  public let parameters: JSONValue = ["type": "object"]
  /// Counts the calls that ran.
  public let calls: CallCounter
  public var annotations: ToolAnnotations { ToolAnnotations(destructiveHint: true) }
  /// Makes the tool with its counter.
  public init(calls: CallCounter) { self.calls = calls }
  public func call(arguments: JSONValue) async throws -> String {
    calls.increment()
    return "wiped"
  }
}

/// A thread-safe counter.
public final class CallCounter: Sendable {
  private let value = Mutex(0)
  /// Starts at zero.
  public init() {}
  /// Adds one.
  public func increment() { value.withLock { $0 += 1 } }
  /// The count so far.
  public var count: Int { value.withLock { $0 } }
}
