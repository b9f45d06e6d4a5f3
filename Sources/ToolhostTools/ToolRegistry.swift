public import ToolhostJSON
public import ToolhostSchema
import ToolhostSystem

/// A set of tools by name, with their compiled schemas: validates arguments, then calls, one or many at once.
///
/// Schemas are compiled once, when the registry is made. Every failure comes back as a ``ToolCallError``.
///
/// ```swift
/// let registry = try ToolRegistry([WeatherTool(), AddTool()])
/// do {
///   let output = try await registry.call("add", arguments: ["a": 2, "b": 3])
///   print(output.displayText)
/// } catch {
///   print(error.description)  // what went wrong: an unknown tool, each invalid argument, a timeout, ...
/// }
/// ```
public struct ToolRegistry: Sendable {
  struct Entry: Sendable {
    let tool: any Tool
    let schema: JSONSchema
  }

  private let entries: [String: Entry]
  /// The tools in the order given.
  public let tools: [any Tool]

  /// A registry with no tools.
  public static let empty = ToolRegistry(entries: [:], tools: [])

  private init(entries: [String: Entry], tools: [any Tool]) {
    self.entries = entries
    self.tools = tools
  }

  /// Makes a registry; the first tool of a name wins. An ``AnyTool`` is unwrapped: ``tools`` holds the tool it wraps.
  ///
  /// - Throws: ``ToolCallError`` wrapping a ``SchemaError`` when a tool's parameters schema does not compile, or a
  ///   ``ToolDefinitionError`` when its `Arguments` cannot be made from a call's arguments.
  public init(_ tools: [any Tool]) throws(ToolCallError) {
    var entries: [String: Entry] = [:]
    var kept: [any Tool] = []
    for wrapped in tools where entries[wrapped.name] == nil {
      // An AnyTool is kept as the tool it wraps, so that approvals, trust and where a tool comes from see that tool.
      let tool = (wrapped as? AnyTool)?.base ?? wrapped
      guard Self.argumentsAreConvertible(tool) else {
        throw ToolCallError(tool: tool, underlyingError: ToolDefinitionError.argumentsNotConvertible(tool: tool))
      }
      let schema: JSONSchema
      if let pre = tool as? any PrecompiledTool {
        schema = pre.compiledParameters
      } else {
        do { schema = try JSONSchema(tool.parameters) } catch {
          throw ToolCallError(tool: tool, underlyingError: error)
        }
      }
      entries[tool.name] = Entry(tool: tool, schema: schema)
      kept.append(tool)
    }
    self.entries = entries
    self.tools = kept
  }

  private static func argumentsAreConvertible<T: Tool>(_ tool: T) -> Bool { T.argumentsAreConvertible }

  /// The tool called `name`.
  public func tool(named name: String) -> (any Tool)? { entries[name]?.tool }

  /// The tool names nearest to `name` (edit distance, prefixes), best first.
  public func suggestions(for name: String, limit: Int = 3) -> [String] {
    nearestNames(to: name, in: tools.map(\.name), limit: limit)
  }

  /// Checks `arguments` against the named tool's schema.
  ///
  /// - Returns: every issue; empty when valid. An unknown tool or a non-object yields one issue.
  public func validate(_ arguments: JSONValue, for name: String) -> [ValidationIssue] {
    guard let entry = entries[name] else {
      return [
        ValidationIssue(instanceLocation: "", keywordLocation: "", keyword: "tool", message: "no tool named \(name)")
      ]
    }
    return entry.schema.validate(arguments)
  }

  /// Validates and runs one call.
  ///
  /// - Throws: ``ToolCallError``: `.unknownTool` for a name that matches no tool, `.invalidArguments` with every
  ///   issue (nothing is run), or the tool's own failure (``ToolFailure`` for plugins).
  public func call(_ name: String, arguments: JSONValue, context: ToolCallContext = ToolCallContext())
    async throws(ToolCallError) -> ToolOutput
  {
    guard let entry = entries[name] else {
      throw ToolCallError(toolName: name, underlyingError: ToolFailure.unknownTool(suggestions: suggestions(for: name)))
    }
    let issues = entry.schema.validate(arguments)
    if !issues.isEmpty {
      throw ToolCallError(tool: entry.tool, underlyingError: ToolFailure.invalidArguments(issues))
    }
    return try await run(entry, arguments: arguments, context: context)
  }

  /// Runs one call whose arguments the caller has already checked with ``validate(_:for:)`` (found no issue),
  /// without checking them again: the session validates a model's call to send repairs back, and would otherwise
  /// pay for the schema a second time on every call it runs.
  ///
  /// - Throws: ``ToolCallError`` as ``call(_:arguments:context:)`` does, except `.invalidArguments` from the schema.
  package func call(
    validated name: String, arguments: JSONValue, context: ToolCallContext = ToolCallContext()
  ) async throws(ToolCallError) -> ToolOutput {
    guard let entry = entries[name] else {
      throw ToolCallError(toolName: name, underlyingError: ToolFailure.unknownTool(suggestions: suggestions(for: name)))
    }
    return try await run(entry, arguments: arguments, context: context)
  }

  /// Runs `entry`'s tool with `arguments` (already validated) under `context`, wrapping what it throws.
  private func run(_ entry: Entry, arguments: JSONValue, context: ToolCallContext) async throws(ToolCallError)
    -> ToolOutput
  {
    do {
      return try await ToolCallContext.$current.withValue(context) {
        try await entry.tool.invoke(arguments)
      }
    } catch let error as ToolCallError {
      throw error
    } catch is CancellationError {
      throw ToolCallError(tool: entry.tool, underlyingError: ToolFailure.cancelled)
    } catch {
      throw ToolCallError(tool: entry.tool, underlyingError: error)
    }
  }

  /// Runs many calls at once, at most `concurrency` at a time, each with its own time limit.
  ///
  /// One failure never cancels the others. Cancelling the calling task cancels every call still running.
  /// - Returns: one result per call, in input order.
  public func callAll(
    _ calls: [ToolCallRequest], concurrency: Int = 8, context: ToolCallContext = ToolCallContext()
  ) async -> [Result<ToolOutput, ToolCallError>] {
    var results = [Result<ToolOutput, ToolCallError>?](repeating: nil, count: calls.count)
    await withBoundedConcurrency(calls.count, width: concurrency) { i -> Result<ToolOutput, ToolCallError> in
      let call = calls[i]
      var ctx = context
      if let t = call.timeout { ctx.timeout = t }
      do throws(ToolCallError) {
        return .success(try await self.call(call.tool, arguments: call.arguments, context: ctx))
      } catch {
        return .failure(error)
      }
    } collect: { i, result in
      results[i] = result
    }
    return results.map { $0! }
  }
}

/// One call in a batch.
public struct ToolCallRequest: Sendable, Hashable {
  /// The tool's name.
  public var tool: String
  /// The argument object.
  public var arguments: JSONValue
  /// A time limit for this call only.
  public var timeout: Duration?

  /// Makes a call.
  public init(tool: String, arguments: JSONValue, timeout: Duration? = nil) {
    self.tool = tool
    self.arguments = arguments
    self.timeout = timeout
  }
}

/// The names in `candidates` nearest to `name`: case-insensitive edit distance of at most a third of the length
/// (at least 2), or a shared prefix, best first.
public func nearestNames(to name: String, in candidates: [String], limit: Int = 3) -> [String] {
  let target = Array(name.lowercased())
  var scored: [(Int, String)] = []
  for c in candidates {
    let lc = Array(c.lowercased())
    let d = editDistance(target, lc)
    let threshold = max(2, target.count / 3)
    if d <= threshold || (target.count >= 3 && lc.starts(with: target)) { scored.append((d, c)) }
  }
  return scored.sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }.prefix(limit).map(\.1)
}

func editDistance(_ a: [Character], _ b: [Character]) -> Int {
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
    }
    swap(&previous, &current)
  }
  return previous[b.count]
}

/// ` (did you mean A, B?)`, or nothing without suggestions: the end of every "no such name" message.
package func didYouMean(_ suggestions: [String]) -> String {
  suggestions.isEmpty ? "" : " (did you mean \(suggestions.joined(separator: ", "))?)"
}

/// A tool written in Swift that cannot be offered as it is.
public enum ToolDefinitionError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Its `Arguments` type is neither `@Generable`, `Decodable` nor `JSONValue`, so no call could be converted into it.
  case argumentsNotConvertible(tool: String, arguments: String)

  static func argumentsNotConvertible<T: Tool>(tool: T) -> ToolDefinitionError {
    .argumentsNotConvertible(tool: tool.name, arguments: String(describing: T.Arguments.self))
  }

  /// What is wrong and what to do.
  public var description: String {
    switch self {
    case .argumentsNotConvertible(let tool, let arguments):
      "the tool \(tool) takes \(arguments), which is neither @Generable nor Decodable, so no call can be converted "
        + "into it; mark it @Generable (or Decodable, with a parameters schema)"
    }
  }
}
