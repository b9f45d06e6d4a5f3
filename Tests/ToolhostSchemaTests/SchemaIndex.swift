import Foundation
import ToolhostJSON

/// Where things are in a generated schema: the subschemas with an `$id` (by file name) and the anchors, for building
/// instances; and helpers to walk and rewrite JSON values by path.
struct SchemaIndex {
  /// One step of a path into a JSON value.
  enum Step: Hashable {
    case key(String)
    case index(Int)
  }

  private let root: JSONValue
  private var byFile: [String: JSONValue] = [:]
  private var anchors: [String: [JSONValue]] = [:]

  /// Keywords whose values are data, not schemas.
  static let dataKeywords: Set<String> = ["const", "enum", "default", "examples"]

  init(_ root: JSONValue) {
    self.root = root
    for path in Self.subschemaPaths(root) {
      guard case .object(let o) = Self.value(at: path, in: root) else { continue }
      if let id = o["$id"]?.stringValue, let file = id.split(separator: "/").last {
        byFile[String(file)] = .object(o)
      }
      for key in ["$anchor", "$dynamicAnchor"] {
        if let name = o[key]?.stringValue { anchors[name, default: []].append(.object(o)) }
      }
    }
  }

  /// The schema a reference probably designates (outermost anchor first; definition names are unique).
  func resolve(_ ref: String) -> JSONValue? {
    let parts = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
    let file = parts.first.flatMap { $0.split(separator: "/").last }.map(String.init)
    let fragment = parts.count > 1 ? String(parts[1]) : ""
    let document = file.flatMap { byFile[$0] } ?? root
    if fragment.isEmpty { return document }
    if !fragment.hasPrefix("/") { return anchors[fragment]?.first }
    guard let decoded = fragment.removingPercentEncoding else { return nil }
    let tokens = decoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
      $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
    for candidate in [document] + Array(byFile.values) {
      var value: JSONValue? = candidate
      for token in tokens { value = value?[token] ?? Int(token).flatMap { value?[$0] } }
      if let value { return value }
    }
    return nil
  }

  /// The paths of every subschema (a value where a schema is expected), the root first.
  static func subschemaPaths(_ schema: JSONValue) -> [[Step]] {
    var paths: [[Step]] = []
    func walk(_ value: JSONValue, _ path: [Step]) {
      guard case .object(let o) = value else {
        if case .bool = value { paths.append(path) }
        return
      }
      paths.append(path)
      for (key, member) in o {
        switch key {
        case "properties", "patternProperties", "$defs", "dependentSchemas":
          for (name, sub) in member.objectValue ?? [:] { walk(sub, path + [.key(key), .key(name)]) }
        case "allOf", "anyOf", "oneOf", "prefixItems":
          for (i, sub) in (member.arrayValue ?? []).enumerated() { walk(sub, path + [.key(key), .index(i)]) }
        case "not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
          "unevaluatedProperties", "unevaluatedItems":
          walk(member, path + [.key(key)])
        default:
          break
        }
      }
    }
    walk(schema, [])
    return paths
  }

  /// The paths of every node of a value, the root first.
  static func allPaths(_ value: JSONValue) -> [[Step]] {
    var paths: [[Step]] = [[]]
    switch value {
    case .object(let o):
      for (key, member) in o { paths += allPaths(member).map { [.key(key)] + $0 } }
    case .array(let a):
      for (i, element) in a.enumerated() { paths += allPaths(element).map { [.index(i)] + $0 } }
    default:
      break
    }
    return paths
  }

  /// The value at `path`, if there is one.
  static func value(at path: [Step], in value: JSONValue) -> JSONValue? {
    var current: JSONValue? = value
    for step in path {
      switch step {
      case .key(let key): current = current?[key]
      case .index(let i): current = current?[i]
      }
    }
    return current
  }

  /// `value` with the node at `path` replaced by `change(node)`.
  static func replacing(
    at path: [Step], in value: JSONValue, _ change: (JSONValue) -> JSONValue
  ) -> JSONValue {
    guard let step = path.first else { return change(value) }
    let rest = Array(path.dropFirst())
    switch (step, value) {
    case (.key(let key), .object(var o)):
      if let member = o[key] { o[key] = replacing(at: rest, in: member, change) }
      return .object(o)
    case (.index(let i), .array(var a)) where a.indices.contains(i):
      a[i] = replacing(at: rest, in: a[i], change)
      return .array(a)
    default:
      return value
    }
  }
}
