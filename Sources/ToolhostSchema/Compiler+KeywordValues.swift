// The compiler's reading of keyword values (types, counts, string lists, subschema arrays and maps, patterns) and
// the schema errors it throws.

import ToolhostJSON

extension Compiler {
  // MARK: - Keyword values

  func typeCheck(_ value: JSONValue, at location: String, keywordLocation: String)
    throws(SchemaError)
    -> TypeCheck
  {
    var names: [String] = []
    switch value {
    case .string(let name): names = [name]
    case .array(let items):
      for item in items {
        guard case .string(let name) = item else {
          throw Self.invalid(location, "'type' must be a type name or an array of type names")
        }
        if names.contains(name) {
          throw Self.invalid(location, "'type' lists \(Self.quote(name)) twice")
        }
        names.append(name)
      }
    default:
      throw Self.invalid(location, "'type' must be a type name or an array of type names")
    }
    var mask = TypeMask()
    for name in names {
      guard let bit = TypeMask(name: name) else {
        throw Self.invalid(
          location,
          "'type' \(Self.quote(name)) is not a JSON Schema type (use array, boolean, integer, null, number, object or string)"
        )
      }
      mask.insert(bit)
    }
    // An empty list allows nothing, which the mask expresses by itself.
    return TypeCheck(mask: mask, names: names, location: keywordLocation)
  }

  /// A non-negative integer such as `minLength`; `2.0` counts as an integer, as the specification allows.
  func count(_ value: JSONValue, _ key: String, at location: String) throws(SchemaError)
    -> Int
  {
    if case .real(let d) = value, d.isFinite, d.rounded() == d, d >= 0 {
      return d >= 9.0e18 ? Int.max : Int(d)
    }
    guard let n = value.integerValue, n >= 0 else {
      throw Self.invalid(
        location, "'\(key)' must be a non-negative integer, got \(Self.describe(value))")
    }
    return Int(n)
  }

  func strings(_ value: JSONValue, _ key: String, at location: String) throws(SchemaError)
    -> [String]
  {
    guard case .array(let items) = value else {
      throw Self.invalid(location, "'\(key)' must be an array of strings, got \(value.typeName)")
    }
    var result: [String] = []
    for item in items {
      guard case .string(let s) = item else {
        throw Self.invalid(
          location, "'\(key)' must be an array of strings, but it holds \(Self.describe(item))")
      }
      if !result.contains(where: { Equality.sameScalars($0, s) }) { result.append(s) }
    }
    return result
  }

  func dependentRequired(_ value: JSONValue, _ key: String, at location: String) throws(SchemaError)
    -> [(String, [String])]
  {
    guard case .object(let map) = value else {
      throw Self.invalid(location, "'\(key)' must be an object, got \(value.typeName)")
    }
    var rules: [(String, [String])] = []
    for name in map.keys {
      rules.append((name, try strings(map[name]!, key, at: location)))
    }
    return rules
  }

  mutating func schemaArray(
    _ value: JSONValue, _ keyword: String, at key: SchemaKey, depth: Int
  )
    throws(SchemaError) -> [Int]
  {
    guard case .array(let items) = value, !items.isEmpty else {
      throw Self.invalid(index.location(key), "'\(keyword)' must be a non-empty array of schemas")
    }
    var result: [Int] = []
    result.reserveCapacity(items.count)
    for (i, item) in items.enumerated() {
      result.append(schema(item, at: child(key, keyword, String(i)), depth: depth))
    }
    return result
  }

  mutating func schemaObject(
    _ value: JSONValue, _ keyword: String, at key: SchemaKey, depth: Int
  )
    throws(SchemaError) -> [(String, Int)]
  {
    guard case .object(let map) = value else {
      throw Self.invalid(
        index.location(key), "'\(keyword)' must be an object whose values are schemas, got \(value.typeName)")
    }
    var result: [(String, Int)] = []
    result.reserveCapacity(map.count)
    for name in map.keys {
      result.append((name, schema(map[name]!, at: child(key, keyword, name), depth: depth)))
    }
    return result
  }

  mutating func pattern(_ source: String, _ key: String, at location: String)
    throws(SchemaError) -> Pattern
  {
    if let compiled = patterns[source] { return compiled }
    do {
      let compiled = try Pattern(source)
      patterns[source] = compiled
      return compiled
    } catch {
      throw Self.invalid(
        location,
        "'\(key)' \(Self.quote(source)) is not a valid regular expression: \(error.message)")
    }
  }

  // MARK: - Errors

  static func invalid(_ location: String, _ message: String) -> SchemaError {
    SchemaError(kind: .invalidSchema, schemaLocation: location, message: message)
  }

  /// A short rendering of a keyword value for error messages.
  static func describe(_ value: JSONValue) -> String {
    "\(value.typeName) \(Messages.preview(value))"
  }

  /// Text in single quotes, for schema errors.
  static func quote(_ text: String) -> String {
    "'\(text)'"
  }
}
