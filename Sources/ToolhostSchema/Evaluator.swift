import ToolhostJSON

/// One step of an instance location.
enum PathToken {
  case key(String)
  case index(Int)
}

/// What the keywords applied to one instance location evaluated so far: the annotations that `unevaluatedProperties`
/// and `unevaluatedItems` read. Only subschemas that succeed contribute.
struct Evaluated {
  var keys: Set<String> = []
  var allKeys = false
  /// Items `0..<prefix` were evaluated (by `prefixItems`).
  var prefix = 0
  var allItems = false
  /// Items that matched `contains`.
  var indices: Set<Int> = []

  mutating func merge(_ other: Evaluated) {
    keys.formUnion(other.keys)
    allKeys = allKeys || other.allKeys
    prefix = max(prefix, other.prefix)
    allItems = allItems || other.allItems
    indices.formUnion(other.indices)
  }

  func covers(key: String) -> Bool { allKeys || keys.contains(key) }
  func covers(item: Int) -> Bool { allItems || item < prefix || indices.contains(item) }
}

/// The state of one validation: whether issues are collected, how deep the evaluation is, where in the instance it
/// is (only tracked when collecting), the dynamic scope and annotations when the schema needs them, and the issues so
/// far.
struct Context {
  /// Collect every issue (`validate`) or stop at the first failure and build nothing (`isValid`).
  let collect: Bool
  /// Report a failed `anyOf` or `oneOf` as the issues of its closest alternative instead of one issue that quotes
  /// them, so that explanations of nested alternatives do not nest.
  let flatten: Bool
  var depth: Int
  var path: [PathToken]
  var issues: [ValidationIssue] = []
  /// The schema resources entered, outermost first (kept only when the program uses `$dynamicRef`).
  var scope: [Int] = []
  /// What has been evaluated at the current instance location, when some enclosing schema's `unevaluated*` needs it;
  /// `nil` otherwise.
  var evaluated: Evaluated?

  init(
    collect: Bool, flatten: Bool = false, depth: Int = 0, path: [PathToken] = [], scope: [Int] = [],
    evaluated: Evaluated? = nil
  ) {
    self.collect = collect
    self.flatten = flatten
    self.depth = depth
    self.path = path
    self.scope = scope
    self.evaluated = evaluated
  }

  /// A context that stops at the first failure, at the same depth and scope, collecting annotations afresh if this
  /// one collects them.
  func quiet() -> Context {
    Context(collect: false, depth: depth, scope: scope, evaluated: evaluated == nil ? nil : Evaluated())
  }

  /// A context that collects every issue, flattened, at the same place, depth and scope, with no annotations.
  func explaining() -> Context {
    Context(collect: true, flatten: true, depth: depth, path: path, scope: scope)
  }

  /// The JSON Pointer of the current instance location.
  var instanceLocation: String {
    var text = ""
    for token in path {
      text += "/"
      switch token {
      case .key(let key): text += JSONPointer.escape(key)
      case .index(let index): text += String(index)
      }
    }
    return text
  }

  mutating func report(_ keyword: String, _ location: String, _ message: String) {
    issues.append(
      ValidationIssue(
        instanceLocation: instanceLocation, keywordLocation: location, keyword: keyword,
        message: message)
    )
  }
}

extension Program {
  func isValid(_ instance: JSONValue) -> Bool {
    var context = Context(collect: false)
    return evaluate(0, instance, &context)
  }

  func validate(_ instance: JSONValue) -> [ValidationIssue] {
    var context = Context(collect: true)
    _ = evaluate(0, instance, &context)
    return context.issues
  }

  /// Evaluates node `index` against `instance`. When collecting, every failure has been reported when this returns
  /// `false`; otherwise it returns at the first failure.
  func evaluate(_ index: Int, _ instance: JSONValue, _ context: inout Context) -> Bool {
    let node = nodes[index]
    switch node.kind {
    case .anything:
      return true
    case .nothing:
      if context.collect {
        context.report("false", node.location, "no value is allowed here (the schema is false)")
      }
      return false
    case .checks:
      break
    }
    guard context.depth < JSONSchema.maximumDepth else {
      if context.collect {
        context.report(
          "$ref", node.location,
          "the value is nested too deeply: validation stopped after \(JSONSchema.maximumDepth) nested schemas"
        )
      }
      return false
    }
    context.depth += 1
    defer { context.depth -= 1 }
    let entered = usesDynamicScope && context.scope.last != node.resource
    if entered { context.scope.append(node.resource) }
    defer { if entered { context.scope.removeLast() } }
    guard node.collectsAnnotations else { return evaluateChecks(node, instance, &context) }
    // This node reads annotations: collect its own afresh, and pass them up if it succeeds.
    let outer = context.evaluated
    context.evaluated = Evaluated()
    let valid = evaluateChecks(node, instance, &context)
    if var outer, let mine = context.evaluated, valid {
      outer.merge(mine)
      context.evaluated = outer
    } else {
      context.evaluated = outer
    }
    return valid
  }

  /// Evaluates the keywords of a node that has some.
  @inline(__always)
  private func evaluateChecks(_ node: Node, _ instance: JSONValue, _ context: inout Context) -> Bool {
    var valid = true
    if let type = node.type, TypeMask.of(instance).isDisjoint(with: type.mask) {
      guard context.collect else { return false }
      context.report("type", type.location, Messages.type(type.names, instance))
      valid = false
    }
    for check in node.general {
      if !evaluateGeneral(check, instance, &context) {
        guard context.collect else { return false }
        valid = false
      }
    }
    switch instance {
    case .integer, .real:
      for check in node.numeric {
        if !evaluateNumber(check, instance, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .string(let s):
      for check in node.string {
        if !evaluateString(check, s, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .array(let a):
      for check in node.array {
        if !evaluateArray(check, a, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .object(let o):
      for check in node.object {
        if !evaluateObject(check, o, instance, &context) {
          guard context.collect else { return false }
          valid = false
        }
      }
    case .bool, .null:
      break
    }
    return valid
  }

  /// Evaluates a node at the current place without collecting issues, whatever the context does. Its annotations,
  /// when the context collects them and the node succeeds, are added to the context's.
  @inline(__always)
  func matches(_ index: Int, _ instance: JSONValue, _ context: inout Context) -> Bool {
    var quiet = context.quiet()
    let valid = evaluate(index, instance, &quiet)
    if valid, let found = quiet.evaluated { context.evaluated?.merge(found) }
    return valid
  }

  /// Evaluates a node at the current place without collecting issues or annotations.
  @inline(__always)
  func matchesQuietly(_ index: Int, _ instance: JSONValue, _ context: borrowing Context) -> Bool {
    var quiet = Context(collect: false, depth: context.depth, scope: context.scope)
    return evaluate(index, instance, &quiet)
  }

  /// Evaluates a node on a member or an item, with the instance location extended by `token` when collecting, and
  /// annotations (which belong to one instance location) set aside meanwhile.
  @inline(__always)
  func evaluate(
    _ index: Int, _ instance: JSONValue, at token: PathToken, _ context: inout Context
  ) -> Bool {
    let annotations = context.evaluated
    if annotations != nil { context.evaluated = nil }
    defer { if annotations != nil { context.evaluated = annotations } }
    guard context.collect else { return evaluate(index, instance, &context) }
    context.path.append(token)
    defer { context.path.removeLast() }
    return evaluate(index, instance, &context)
  }
}
