import Foundation
public import ToolhostJSON
import ToolhostSchema
public import ToolhostSystem
public import ToolhostTools

/// One tool of a manifest.
public struct ToolDefinition: Sendable {
  /// The tool's name.
  public var name: String
  /// A title for people.
  public var title: String?
  /// What it does, for a model.
  public var description: String
  /// The JSON Schema of its arguments.
  public var inputSchema: JSONValue
  /// The JSON Schema of its result, if declared.
  public var outputSchema: JSONValue?
  /// Arguments after the manifest's fixed ones.
  public var arguments: [String]
  /// Its time limit in seconds, if it has its own.
  public var timeout: Double?
  /// MCP-style hints.
  public var annotations: ToolAnnotations
  /// Its own resource limits, over the manifest's.
  public var limits: ResourceLimits
  /// How a page draws its results (`"display"`: title, fields, columns, labels, hidden fields, units), if given.
  public var display: JSONValue?
  /// Requests the tool serves with their arguments (`"examples"`), for the model.
  public var examples: [ToolExample]

  /// Makes a definition.
  public init(
    name: String, title: String? = nil, description: String, inputSchema: JSONValue, outputSchema: JSONValue? = nil,
    arguments: [String] = [], timeout: Double? = nil, annotations: ToolAnnotations = ToolAnnotations(),
    limits: ResourceLimits = ResourceLimits(), display: JSONValue? = nil, examples: [ToolExample] = []
  ) {
    self.name = name
    self.title = title
    self.description = description
    self.inputSchema = inputSchema
    self.outputSchema = outputSchema
    self.arguments = arguments
    self.timeout = timeout
    self.annotations = annotations
    self.limits = limits
    self.display = display
    self.examples = examples
  }
}

extension ResourceLimits {
  /// Limits from a manifest's `"limits"` object (`memoryMiB`, `cpuSeconds`, `processes`, `fileSizeMiB`,
  /// `openFiles`, `outputMiB`); unset values stay `nil`.
  public init(manifestJSON json: JSONValue?) {
    func int(_ key: String) -> Int? { json?[key]?.integerValue.map { Int($0) } }
    self.init(
      memoryBytes: int("memoryMiB").map { $0 << 20 }, cpuSeconds: int("cpuSeconds"), processes: int("processes"),
      fileSizeBytes: int("fileSizeMiB").map { $0 << 20 }, openFiles: int("openFiles"),
      outputBytes: int("outputMiB").map { $0 << 20 })
  }
}

/// A manifest that cannot be used.
public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of problem: one of the manifest kinds of ``PluginDiagnostic/Kind`` (`unreadable`, `invalidJSON`,
  /// `schemaViolation`, `badToolName`, `commandMissing`, `commandNotExecutable`, `unsafePermissions`, `untrusted`),
  /// so a manifest error becomes a discovery diagnostic as it is.
  public typealias Kind = PluginDiagnostic.Kind

  /// The manifest file.
  public var path: String
  /// What is wrong.
  public var kind: Kind
  /// What is wrong, in words, with line:column or JSON paths.
  public var message: String

  /// `path: message`.
  public var description: String { "\(path): \(message)" }
}

extension ToolAnnotations {
  init(json: JSONValue?) {
    self.init(
      title: json?["title"]?.stringValue, readOnlyHint: json?["readOnlyHint"]?.boolValue,
      destructiveHint: json?["destructiveHint"]?.boolValue, idempotentHint: json?["idempotentHint"]?.boolValue,
      openWorldHint: json?["openWorldHint"]?.boolValue)
  }

  /// The annotations as an MCP `annotations` object (absent hints omitted).
  public var json: JSONValue {
    var o = JSONObject()
    if let title { o["title"] = .string(title) }
    if let readOnlyHint { o["readOnlyHint"] = .bool(readOnlyHint) }
    if let destructiveHint { o["destructiveHint"] = .bool(destructiveHint) }
    if let idempotentHint { o["idempotentHint"] = .bool(idempotentHint) }
    if let openWorldHint { o["openWorldHint"] = .bool(openWorldHint) }
    return .object(o)
  }
}
