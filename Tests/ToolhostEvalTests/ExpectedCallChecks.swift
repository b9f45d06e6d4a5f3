// Checks of a questions file's expected calls against the tools' input schemas, shared by the tests of the
// `answers` set (the example plugins) and of the held-out set (Benchmarks/heldout/plugins).
import Foundation
import ToolhostEval
import ToolhostJSON
import ToolhostSchema

/// The manifests of the plugins in `folder` (those `plugins` names, or every subfolder with a `toolhost.json`):
/// plugin name → the manifest's JSON.
func pluginManifests(in folder: URL, plugins: [String]? = nil) throws -> [String: JSONValue] {
  let names =
    try plugins
    ?? FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      FileManager.default.fileExists(
        atPath: folder.appendingPathComponent($0).appendingPathComponent("toolhost.json").path)
    }
  var manifests: [String: JSONValue] = [:]
  for name in names {
    let file = folder.appendingPathComponent(name).appendingPathComponent("toolhost.json")
    manifests[name] = try JSONValue.parse(try String(contentsOf: file, encoding: .utf8))
  }
  return manifests
}

/// The tools of `manifests`: tool name → the tool's entry in its manifest (`name`, `inputSchema`, `annotations`…).
func manifestTools(_ manifests: [String: JSONValue]) -> [String: JSONValue] {
  var tools: [String: JSONValue] = [:]
  for manifest in manifests.values {
    for tool in manifest["tools"]?.arrayValue ?? [] { tools[tool["name"]?.stringValue ?? ""] = tool }
  }
  return tools
}

/// What is wrong with the names in `questions`' expected calls: a tool `schemas` (tool name → input schema) does not
/// have, or an expected or allowed argument (the first part of a dotted name) that is not a property of its tool's
/// input schema. Empty when all are the tools' own.
func argumentNameProblems(_ questions: [EvalQuestion], schemas: [String: JSONValue]) -> [String] {
  var problems: [String] = []
  for q in questions {
    for call in q.calls {
      guard let schema = schemas[call.tool] else {
        problems.append("\(q.prompt): no tool \(call.tool)")
        continue
      }
      let known = Set(schema["properties"]?.objectValue?.keys ?? [])
      let names = call.arguments.keys + call.allowedArguments.map { String($0.prefix { $0 != "." }) }
      for name in names where !known.contains(name) { problems.append("\(q.prompt): \(call.tool) has no \(name)") }
    }
  }
  return problems
}

/// What is wrong with the values in `questions`' expected calls: an expected value (each alternative of an array, for
/// a property that is not an array) that no valid argument can match. A value matches when it is valid for its
/// property's schema, formats asserted; a string also when it is the part a valid value contains that a question
/// expects of a date, time or date-time (`12-03` of `2026-12-03`, `15:30` of `15:30:00Z`, `2026-11-20` of
/// `2026-11-20T00:00:00Z`). Call ``argumentNameProblems(_:schemas:)`` for the names.
func argumentValueProblems(_ questions: [EvalQuestion], schemas: [String: JSONValue]) -> [String] {
  var problems: [String] = []
  for q in questions {
    for call in q.calls {
      for (name, expected) in call.arguments {
        guard let property = schemas[call.tool]?["properties"]?[name] else { continue }
        let validator: JSONSchema
        do { validator = try JSONSchema(property, options: SchemaOptions(format: .assertion)) } catch {
          problems.append("\(call.tool).\(name): its schema does not compile: \(error)")
          continue
        }
        let isList = property["type"]?.stringValue == "array"
        let values = isList ? [expected] : expected.arrayValue ?? [expected]
        for value in values where !canBeMatched(value, validator) {
          problems.append("\(q.prompt): \(call.tool) \(name) \(value.description) is never a valid argument")
        }
      }
    }
  }
  return problems
}

/// Whether a valid value of `validator` can match the expected `value` (see ``argumentValueProblems``).
private func canBeMatched(_ value: JSONValue, _ validator: JSONSchema) -> Bool {
  if validator.isValid(value) { return true }
  guard let text = value.stringValue else { return false }
  let completed = ["2026-" + text, text + ":00Z", text + "T00:00:00Z"]
  return completed.contains { validator.isValid(.string($0)) }
}
