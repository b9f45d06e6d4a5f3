import ToolhostJSON

/// The words of validation messages. Only called on the failure path.
enum Messages {
  /// The longest string shown in full, in Unicode scalars.
  static let stringPreview = 40
  /// The longest array or object text shown in full, in characters.
  static let valuePreview = 60
  /// The most enum values, or allowed property names, that are listed.
  static let listLimit = 12

  /// A value as JSON text, shortened with `…` when long: `"kelvin"`, `9`, `{"a":1}`.
  static func preview(_ value: JSONValue) -> String {
    switch value {
    case .string(let s):
      let scalars = s.unicodeScalars
      guard scalars.count > stringPreview else { return value.serialized() }
      var text = JSONValue.string(
        String(String.UnicodeScalarView(scalars.prefix(stringPreview - 3)))
      ).serialized()
      text.removeLast()
      return text + "…\""
    case .array, .object:
      let text = value.serialized()
      guard text.count > valuePreview else { return text }
      return text.prefix(valuePreview - 3) + "…"
    default:
      return value.serialized()
    }
  }

  /// `"ab"`, or `"abcdefgh…" (120 characters)` when the preview is shortened.
  static func previewWithLength(_ s: String, length: Int) -> String {
    let text = preview(.string(s))
    return length > stringPreview ? "\(text) (\(length) characters)" : text
  }

  /// `a`, `a or b`, `a, b or c`.
  static func alternatives(_ items: [String]) -> String {
    switch items.count {
    case 0: return "nothing"
    case 1: return items[0]
    default: return items.dropLast().joined(separator: ", ") + " or " + items[items.count - 1]
    }
  }

  /// `a`, `a and b`, `a, b and c`.
  static func conjunction(_ items: [String]) -> String {
    switch items.count {
    case 0: return ""
    case 1: return items[0]
    default: return items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }
  }

  /// A comma-separated list, cut after ``listLimit`` items.
  static func list(_ items: [String]) -> String {
    guard items.count > listLimit else { return items.joined(separator: ", ") }
    return items.prefix(listLimit).joined(separator: ", ") + ", … (\(items.count - listLimit) more)"
  }

  static func quoted(_ name: String) -> String {
    preview(.string(name))
  }

  static func type(_ names: [String], _ value: JSONValue) -> String {
    names.isEmpty
      ? "no type is allowed (the type list is empty), got \(value.typeName)"
      : "expected \(alternatives(names)), got \(value.typeName)"
  }

  static func items(_ n: Int) -> String {
    n == 1 ? "1 item" : "\(n) items"
  }

  static func properties(_ n: Int) -> String {
    n == 1 ? "1 property" : "\(n) properties"
  }

  static func characters(_ n: Int) -> String {
    n == 1 ? "1 character" : "\(n) characters"
  }
}
