public import Foundation
public import ToolhostJSON
import ToolhostSchema
import ToolhostSystem
import ToolhostTools

/// A mistake in command-line arguments, in words that say what to type instead.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong.
  public var message: String
  /// Makes an error.
  public init(_ message: String) { self.message = message }
  /// The message.
  public var description: String { message }
}

/// Command-line flags derived from a tool's input schema: `toolhost call getWeather --city Boston`.
///
/// Each top-level property is a flag: strings, integers and numbers take a value (checked), booleans are
/// `--flag` / `--no-flag`, enums list their choices, arrays repeat the flag, objects take a JSON value. camelCase
/// names also answer to kebab-case (`--search-term`). `--json VALUE` (`{...}`, `@file` or `-` for stdin) gives the
/// whole argument object instead.
public struct ToolCommandLine: Sendable {
  /// One flag.
  public struct Option: Sendable {
    /// The property name.
    public var property: String
    /// The flag spellings, preferred first (`--search-term`, `--searchTerm`).
    public var flags: [String]
    /// The property's schema.
    public var schema: JSONValue
    /// Whether the schema requires it.
    public var isRequired: Bool
    /// The JSON type it takes (`string`, `integer`, `number`, `boolean`, `array`, `object`, or `json` for anything).
    public var kind: String
  }

  /// The tool's name.
  public let toolName: String
  /// The tool's input schema.
  public let schema: JSONValue
  /// The flags, in schema order.
  public let options: [Option]

  /// Derives the flags of `schema`, following its local `$ref`s to the fields they designate.
  public init(toolName: String, schema: JSONValue) {
    self.toolName = toolName
    self.schema = schema
    let expanded = JSONSchema.inliningReferences(in: schema)
    let required = Set(expanded["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    var options: [Option] = []
    for (name, property) in expanded["properties"]?.objectValue ?? [:] {
      var flags = ["--" + Self.kebab(name)]
      if Self.kebab(name) != name { flags.append("--" + name) }
      options.append(
        Option(
          property: name, flags: flags, schema: property, isRequired: required.contains(name),
          kind: Self.kind(of: property)))
    }
    self.options = options
  }

  /// `searchTerm` → `search-term`; `max_items` stays as it is.
  public static func kebab(_ name: String) -> String {
    var out = ""
    var previousLower = false
    for ch in name {
      if ch.isUppercase && previousLower {
        out.append("-")
      }
      out.append(ch.isUppercase ? Character(ch.lowercased()) : ch)
      previousLower = ch.isLowercase || ch.isNumber
    }
    return out
  }

  static func kind(of schema: JSONValue) -> String {
    if let t = schema["type"]?.stringValue { return t }
    if let types = schema["type"]?.arrayValue?.compactMap(\.stringValue) {
      let nonNull = types.filter { $0 != "null" }
      if nonNull.count == 1 { return nonNull[0] }
    }
    if let e = schema["enum"]?.arrayValue, e.allSatisfy({ $0.stringValue != nil }) { return "string" }
    if schema["const"]?.stringValue != nil { return "string" }
    return "json"
  }

  /// Parses `arguments` (everything after the tool's name) into the argument object.
  ///
  /// Values are converted to the property's type; the full schema check is the caller's (``ToolRegistry``).
  /// - Throws: ``UsageError`` for an unknown flag (suggesting the nearest), a missing value, a value of the wrong
  ///   type, an enum value not among the choices, a stray positional word, or a missing required flag.
  public func parse(
    _ arguments: [String], readFile: (String) throws -> String = { try String(contentsOfFile: $0, encoding: .utf8) },
    readStandardInput: () throws -> String = {
      String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
  ) throws(UsageError) -> JSONValue {
    var object = JSONObject()
    var wholeObject: JSONValue?
    var i = 0
    func value(for flag: String) throws(UsageError) -> String {
      guard i + 1 < arguments.count else { throw UsageError("\(flag) needs a value") }
      i += 1
      return arguments[i]
    }
    while i < arguments.count {
      let word = arguments[i]
      guard word.hasPrefix("--"), word.count > 2 else {
        if word == "-h" { throw UsageError("use --help for help") }
        throw UsageError(
          "unexpected argument \"\(word)\": give arguments as flags, e.g. \(usageLine())")
      }
      var flag = word
      var inline: String?
      if let eq = word.firstIndex(of: "=") {
        flag = String(word[..<eq])
        inline = String(word[word.index(after: eq)...])
      }
      if flag == "--json", option(for: "--json") == nil {
        let text: String
        if let inline { text = inline } else { text = try value(for: flag) }
        wholeObject = try loadJSON(text, readFile: readFile, readStandardInput: readStandardInput)
        i += 1
        continue
      }
      var negated = false
      var found = option(for: flag)
      if found == nil, flag.hasPrefix("--no-"), let o = option(for: "--" + flag.dropFirst(5)), o.kind == "boolean" {
        found = o
        negated = true
      }
      guard let option = found else { throw unknownOption(flag) }
      let flagName = option.flags[0]
      if option.kind == "boolean" {
        object[option.property] = .bool(try Self.switchValue(inline, negated: negated, flag: flagName))
        i += 1
        continue
      }
      let text: String
      if let inline { text = inline } else { text = try value(for: flag) }
      if option.kind == "array" {
        let item = try convert(text, schema: option.schema["items"] ?? [:], flag: flagName)
        var list = object[option.property]?.arrayValue ?? []
        list.append(item)
        object[option.property] = .array(list)
      } else {
        object[option.property] = try convert(text, schema: option.schema, flag: flagName)
      }
      i += 1
    }
    return try completed(object, over: wholeObject)
  }

  /// The arguments the flags gave, over the `--json` object when there is one (flags given beside it win); without
  /// one, every required flag must have been given.
  private func completed(_ object: JSONObject, over wholeObject: JSONValue?) throws(UsageError) -> JSONValue {
    if let wholeObject {
      guard case .object(var merged) = wholeObject else {
        throw UsageError("--json needs a JSON object, got \(wholeObject.typeName)")
      }
      for (k, v) in object { merged[k] = v }
      return .object(merged)
    }
    let missing = options.filter { $0.isRequired && object[$0.property] == nil }
    if !missing.isEmpty {
      let names = missing.map { "\($0.flags[0]) <\(Self.placeholder($0))>" }.joined(separator: ", ")
      throw UsageError("missing required \(missing.count == 1 ? "option" : "options") \(names) for \(toolName)")
    }
    return .object(object)
  }

  /// The error for a flag the tool does not have: the nearest flag it has, and where toolhost's own options go.
  private func unknownOption(_ flag: String) -> UsageError {
    let all = options.flatMap(\.flags) + ["--json"]
    let near = nearestNames(to: flag, in: all, limit: 1)
    var message = "unknown option \(flag) for \(toolName)"
    if let n = near.first { message += "; did you mean \(n)?" }
    if ["--timeout", "--verbose", "--plugins", "--max-output"].contains(flag) {
      message += " (toolhost's own options go before the tool name)"
    }
    return UsageError(message + " (see `toolhost call \(toolName) --help`)")
  }

  /// A switch's value: on when given alone (off for its `--no-` form), or as `=true`, `=yes`, `=1`, `=false` ...
  private static func switchValue(_ inline: String?, negated: Bool, flag: String) throws(UsageError) -> Bool {
    guard let inline else { return !negated }
    switch inline.lowercased() {
    case "true", "yes", "1": return !negated
    case "false", "no", "0": return negated
    default: throw UsageError("\(flag) is a switch: use \(flag) or --no-\(flag.dropFirst(2))")
    }
  }

  func option(for flag: String) -> Option? {
    options.first { $0.flags.contains(flag) }
  }

  func convert(_ text: String, schema: JSONValue, flag: String) throws(UsageError) -> JSONValue {
    let kind = Self.kind(of: schema)
    if let choices = schema["enum"]?.arrayValue {
      let strings = choices.compactMap(\.stringValue)
      if kind == "string" || strings.count == choices.count {
        guard strings.contains(text) else {
          let near = didYouMean(nearestNames(to: text, in: strings, limit: 1))
          throw UsageError("\(flag) must be one of \(strings.joined(separator: ", ")); got \"\(text)\"\(near)")
        }
        return .string(text)
      }
    }
    switch kind {
    case "string":
      return .string(text)
    case "integer":
      if let v = Int64(text.trimmingCharacters(in: .whitespaces)) { return .integer(v) }
      throw UsageError("\(flag) expects an integer, got \"\(text)\"")
    case "number":
      let t = text.trimmingCharacters(in: .whitespaces)
      if let v = Int64(t) { return .integer(v) }
      if let v = Double(t), v.isFinite { return .real(v) }
      throw UsageError("\(flag) expects a number, got \"\(text)\"")
    case "boolean":
      if text == "true" { return .bool(true) }
      if text == "false" { return .bool(false) }
      throw UsageError("\(flag) expects true or false, got \"\(text)\"")
    case "object", "array":
      do { return try JSONValue.parse(text) } catch {
        throw UsageError(
          "\(flag) expects a JSON \(kind), e.g. \(kind == "object" ? "'{\"key\": 1}'" : "'[1, 2]'"): \(error.description)"
        )
      }
    default:
      // Anything goes: JSON when it parses, else the text as a string.
      return (try? JSONValue.parse(text)) ?? .string(text)
    }
  }

  func loadJSON(
    _ text: String, readFile: (String) throws -> String, readStandardInput: () throws -> String
  ) throws(UsageError) -> JSONValue {
    var source = text
    var origin = "--json"
    do {
      if text == "-" {
        source = try readStandardInput()
        origin = "--json - (stdin)"
      } else if text.hasPrefix("@") {
        source = try readFile(String(text.dropFirst()))
        origin = "--json \(text)"
      }
    } catch {
      throw UsageError("cannot read \(text.dropFirst()): \(error.localizedDescription)")
    }
    do { return try JSONValue.parse(source) } catch {
      throw UsageError("\(origin) is not valid JSON: \(error.description)")
    }
  }

  /// `<string>`, `<integer>`, `<celsius|fahrenheit>`, ...
  static func placeholder(_ option: Option) -> String {
    let s = option.kind == "array" ? (option.schema["items"] ?? [:]) : option.schema
    if let e = s["enum"]?.arrayValue?.compactMap(\.stringValue), !e.isEmpty, e.count <= 6 {
      return e.joined(separator: "|")
    }
    let k = kind(of: s)
    return k == "json" ? "json" : k
  }

  /// `toolhost call NAME --city <string> [--month <integer>] ...`.
  public func usageLine() -> String {
    var parts = ["toolhost call \(toolName)"]
    for o in options {
      let f = o.kind == "boolean" ? o.flags[0] : "\(o.flags[0]) <\(Self.placeholder(o))>"
      let repeated = o.kind == "array" ? " ..." : ""
      parts.append(o.isRequired ? f + repeated : "[\(f)\(repeated)]")
    }
    return parts.joined(separator: " ")
  }

  /// Help for `toolhost call NAME --help`, generated from the schema.
  public func help(description: String) -> String {
    var out =
      "\(toolName): \(description)\n\nUSAGE: \(usageLine())\n       toolhost call \(toolName) --json '{...}' | --json @FILE | --json -\n\nOPTIONS:\n"
    var rows: [(String, String)] = []
    for o in options {
      let spelled =
        o.kind == "boolean"
        ? "\(o.flags[0]), --no-\(o.flags[0].dropFirst(2))" : "\(o.flags[0]) <\(Self.placeholder(o))>"
      var words: [String] = []
      if o.isRequired { words.append("(required)") }
      if o.kind == "array" { words.append("(repeatable)") }
      if let d = o.schema["description"]?.stringValue { words.append(d) }
      let constraints = SchemaSummary.constraints(of: o.schema)
      if !constraints.isEmpty { words.append("[" + constraints.joined(separator: ", ") + "]") }
      rows.append((spelled, words.joined(separator: " ")))
    }
    rows.append(("--json <object|@file|->", "The whole argument object as JSON instead of flags."))
    rows.append(("-h, --help", "Show this help."))
    let width = min(34, rows.map(\.0.count).max() ?? 0)
    for (flag, text) in rows {
      if flag.count > width {
        out += "  \(flag)\n" + String(repeating: " ", count: width + 4) + text + "\n"
      } else {
        out += "  " + flag.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text + "\n"
      }
    }
    return out
  }
}
