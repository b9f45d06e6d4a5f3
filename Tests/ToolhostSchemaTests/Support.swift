import Foundation
import Testing
import ToolhostJSON
import ToolhostSchema

/// Parses JSON text written in a test; a syntax error is a bug in the test.
func json(_ text: String) -> JSONValue {
  do { return try JSONValue.parse(text) } catch {
    fatalError("bad JSON in a test: \(error): \(text)")
  }
}

/// Compiles a schema written as JSON text.
func compile(_ text: String) throws -> JSONSchema {
  try JSONSchema(json(text))
}

/// The issues of `instance` (JSON text) against `schema`, as descriptions, after checking that `isValid` agrees.
func problems(
  _ schema: JSONSchema, _ instance: String, sourceLocation: SourceLocation = #_sourceLocation
) -> [String] {
  let value = json(instance)
  let issues = schema.validate(value)
  #expect(
    schema.isValid(value) == issues.isEmpty, "isValid disagrees with validate for \(instance)",
    sourceLocation: sourceLocation)
  return issues.map(\.description)
}

/// The error that compiling `text` throws, or `nil` when it compiles.
func schemaError(_ text: String) -> SchemaError? {
  do {
    _ = try JSONSchema(json(text))
    return nil
  } catch {
    return error
  }
}

/// Runs `body` on a thread with a large stack and returns its result: deep-recursion tests must not depend on the
/// test runner's thread stack size (512 KB on some platforms), especially in unoptimized builds.
func onLargeStack<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { continuation in
    let thread = Thread { continuation.resume(returning: body()) }
    thread.stackSize = 64 << 20
    thread.start()
  }
}
