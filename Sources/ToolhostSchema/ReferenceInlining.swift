public import ToolhostJSON

extension JSONSchema {
  /// A copy of `schema` in which every local `$ref` (a JSON Pointer such as `#/$defs/Person`, an `$anchor` of the
  /// root, or either after the root's own `$id`) is replaced by the schema it designates, with the `$ref`'s sibling
  /// keywords laid over it; for showing a tool's fields and for constrained decoders that do not follow references.
  ///
  /// A reference back into one being expanded (a recursive schema), one deeper than `maximumDepth`, and one to
  /// another document are left as they are. Only keywords whose values are schemas are walked, so values of `const`,
  /// `enum`, `default` and `examples` are never changed. Does not throw.
  ///
  /// ```swift
  /// let inlined = JSONSchema.inliningReferences(
  ///   in: ["properties": ["who": ["$ref": "#/$defs/Person"]], "$defs": ["Person": ["type": "object"]]])
  /// inlined["properties"]?["who"]  // ["type": "object"]
  /// ```
  public static func inliningReferences(in schema: JSONValue, maximumDepth: Int = 8) -> JSONValue {
    var inliner = ReferenceInliner(root: schema, maximumDepth: maximumDepth)
    return inliner.inline(schema, expanding: [])
  }
}

/// Replaces local references by their targets, recursively, stopping at cycles and at a depth.
private struct ReferenceInliner {
  let root: JSONValue
  let maximumDepth: Int
  /// The root's `$id` without fragment, which a reference may repeat before its fragment.
  let rootID: String?
  /// `$anchor` and `$dynamicAnchor` names of the root resource → their pointers.
  var anchors: [String: String] = [:]

  init(root: JSONValue, maximumDepth: Int) {
    self.root = root
    self.maximumDepth = maximumDepth
    rootID = root["$id"]?.stringValue.map { URIReference($0).withoutFragment }
    collectAnchors(root, at: "", isRoot: true)
  }

  private mutating func collectAnchors(_ value: JSONValue, at pointer: String, isRoot: Bool) {
    guard case .object(let object) = value else { return }
    if !isRoot && object["$id"] != nil { return }  // another resource: its anchors are not the root's
    for keyword in ["$anchor", "$dynamicAnchor"] {
      if let name = object[keyword]?.stringValue, anchors[name] == nil { anchors[name] = pointer }
    }
    var children: [(JSONValue, SubschemaSlot)] = []
    Keywords.forEachSubschema(of: object) { children.append(($0, $1)) }
    for (child, slot) in children { collectAnchors(child, at: slot.pointer(under: pointer), isRoot: false) }
  }

  /// The pointer a local reference designates; `nil` for another document or an unknown anchor.
  private func pointer(of ref: String) -> String? {
    let reference = URIReference(ref)
    let base = reference.withoutFragment
    guard base.isEmpty || base == rootID else { return nil }
    guard let fragment = Compiler.percentDecoded((reference.fragment ?? "")[...]) else { return nil }
    if fragment.isEmpty || fragment.hasPrefix("/") { return fragment }
    return anchors[fragment]
  }

  mutating func inline(_ value: JSONValue, expanding: [String]) -> JSONValue {
    guard case .object(var object) = value else { return value }
    // Definitions are reached only through references.
    var children: [(JSONValue, SubschemaSlot)] = []
    Keywords.forEachSubschema(of: object, skipping: ["$defs", "definitions"]) { children.append(($0, $1)) }
    for (child, slot) in children { slot.set(inline(child, expanding: expanding), in: &object) }
    guard let ref = object["$ref"]?.stringValue, let target = pointer(of: ref), !expanding.contains(target),
      expanding.count < maximumDepth, let designated = JSONPointer.resolve(target, in: root)
    else {
      return .object(object)
    }
    let expanded = inline(designated, expanding: expanding + [target])
    guard case .object(var merged) = expanded else {
      // `true` or `false`: with siblings, keep the reference; alone, the boolean is the schema.
      return object.count == 1 ? expanded : .object(object)
    }
    merged["$id"] = nil
    merged["$defs"] = nil
    merged["definitions"] = nil
    for key in object.keys where key != "$ref" { merged[key] = object[key] }
    return .object(merged)
  }
}
