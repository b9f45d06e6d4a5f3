// The compiler's resolution of `$ref` and `$dynamicRef`: URI resolution, JSON Pointer and anchor fragments, and
// percent-decoding.

import ToolhostJSON

extension Compiler {
  // MARK: - References

  /// The node a `$ref` or `$dynamicRef` designates (compiled later if it has not been yet), and for a `$dynamicRef`
  /// whose target is a `$dynamicAnchor`, the anchor's name, which evaluation looks up in the dynamic scope.
  mutating func reference(_ value: JSONValue, from key: SchemaKey, base: URIReference, dynamic: Bool)
    throws(SchemaError) -> (node: Int, anchor: String?)
  {
    let keyword = dynamic ? "$dynamicRef" : "$ref"
    let location = index.location(key)
    guard case .string(let ref) = value else {
      throw Self.invalid(location, "'\(keyword)' must be a string, got \(value.typeName)")
    }
    let target = URIReference(ref).resolved(against: base)
    if !walked && (target.withoutFragment != index.resources[0].uri || !Self.isPointerFragment(target.fragment)) {
      restart = true  // another document or an anchor: compiled again, with the index walked
      return (0, nil)
    }
    let resource = try index.resource(target.withoutFragment, for: ref, at: location)
    guard let fragment = Self.percentDecoded((target.fragment ?? "")[...]) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message: "'\(keyword)' \(Self.quote(ref)) has invalid percent-encoding")
    }
    let root = index.resources[resource].root
    let place: SchemaKey
    var anchor: String?
    if fragment.isEmpty {
      place = root
    } else if fragment.hasPrefix("/") {
      guard let tokens = JSONPointer.tokens(fragment) else {
        throw SchemaError(
          kind: .unresolvedReference, schemaLocation: location,
          message: "'\(keyword)' \(Self.quote(ref)) is not a valid JSON Pointer")
      }
      place = SchemaKey(document: root.document, pointer: root.pointer + JSONPointer.pointer(tokens))
    } else {
      guard let found = index.anchor(fragment, in: resource) else {
        throw SchemaError(
          kind: .unresolvedReference, schemaLocation: location,
          message: "'\(keyword)' \(Self.quote(ref)) does not resolve: no '$anchor' named \(Self.quote(fragment))")
      }
      place = found
      if dynamic && index.resources[resource].dynamicAnchors[fragment] == found {
        anchor = fragment
        dynamicNames.insert(fragment)
      }
    }
    guard let designated = index.value(at: place) else {
      throw SchemaError(
        kind: .unresolvedReference, schemaLocation: location,
        message:
          "'\(keyword)' \(Self.quote(ref)) does not resolve: the schema has nothing at \(Self.quote(fragment))")
    }
    switch designated {
    case .object, .bool: break
    default:
      throw Self.invalid(
        location, "'\(keyword)' \(Self.quote(ref)) designates \(designated.typeName), not a schema")
    }
    // The target's depth is not known from here; its number of pointer tokens is an upper bound.
    let depth = JSONPointer.tokens(place.pointer)?.count ?? 0
    return (schema(designated, at: place, depth: depth, info: index.info(at: place)), anchor)
  }

  /// Whether a fragment is empty or a JSON Pointer (percent-encoded or not), not an anchor name.
  private static func isPointerFragment(_ fragment: String?) -> Bool {
    guard let first = fragment?.utf8.first else { return true }
    return first == UInt8(ascii: "/") || first == UInt8(ascii: "%")
  }

  /// Decodes `%XX` escapes (as UTF-8); `nil` for a malformed escape or invalid UTF-8.
  static func percentDecoded(_ text: Substring) -> String? {
    guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next().flatMap(hexValue),
        let low = iterator.next().flatMap(hexValue)
      else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
