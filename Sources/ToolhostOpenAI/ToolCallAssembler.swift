public import ToolhostJSON
public import ToolhostSession

/// Assembles streamed tool calls from chat-completion chunk deltas (`choices[0].delta.tool_calls[]`).
///
/// Servers differ: OpenAI sends `index`, `id` and the name in a call's first delta and argument fragments after it;
/// some servers reuse `index` 0 for every call of a parallel turn, others omit `index`, some repeat `id` or the
/// name in every delta, some send arguments as an object. The rules, in order:
/// 1. a delta with an `id` continues the call with that id, or starts a new call when the id is new;
/// 2. without an `id`, a delta continues the latest call with the same `index` (the latest call when there is no
///    `index`), or starts a new call when no call has that index;
/// 3. a delta that names a tool starts a new call instead when the call it would continue already has a name and
///    its arguments are already complete JSON (a parallel call sent with a reused or missing index and no id).
public struct ToolCallAssembler: Sendable {
  struct Partial: Sendable {
    var index: Int?
    var id: String?
    var name: String
    var arguments: String
  }

  private var partials: [Partial] = []

  /// Makes an empty assembler.
  public init() {}

  /// Whether any call was seen.
  public var isEmpty: Bool { partials.isEmpty }

  /// Adds one element of a delta's `tool_calls` array. Elements that are not objects are ignored.
  public mutating func add(_ delta: JSONValue) {
    guard delta.objectValue != nil else { return }
    let index = delta["index"]?.integerValue.map { Int($0) }
    let id = delta["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    let function = delta["function"]
    let name = function?["name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    var fragment = ""
    switch function?["arguments"] {
    case .string(let s)?: fragment = s
    case .object(let o)?: fragment = JSONValue.object(o).serialized()
    case .array(let a)?: fragment = JSONValue.array(a).serialized()
    default: break
    }

    var target: Int?
    if let id {
      target = partials.firstIndex { $0.id == id }
      if target == nil, let last = partials.indices.last, partials[last].id == nil,
        partials[last].index == index,
        partials[last].name.isEmpty
      {
        target = last  // an id arriving after an anonymous first delta
      }
    } else if let index {
      target = partials.lastIndex { $0.index == index }
    } else {
      target = partials.indices.last
    }
    if let t = target, id == nil, name != nil, !partials[t].name.isEmpty,
      Self.isComplete(partials[t].arguments)
    {
      target = nil
    }

    if let t = target {
      if partials[t].id == nil { partials[t].id = id }
      if partials[t].index == nil { partials[t].index = index }
      if let name, partials[t].name.isEmpty { partials[t].name = name }
      partials[t].arguments += fragment
    } else {
      partials.append(Partial(index: index, id: id, name: name ?? "", arguments: fragment))
    }
  }

  /// Adds a whole, non-streamed call (`message.tool_calls[]` or the legacy `message.function_call`).
  public mutating func addComplete(id: String?, name: String, arguments: JSONValue?) {
    var text = ""
    switch arguments {
    case .string(let s)?: text = s
    case let other?: text = other.serialized()
    case nil: break
    }
    partials.append(Partial(index: nil, id: id, name: name, arguments: text))
  }

  /// The calls in order; calls without an id get `call_N` (N from 1), unique within the turn.
  public func calls() -> [Transcript.ToolCall] {
    var used = Set(partials.compactMap(\.id))
    var n = 0
    return partials.map { p in
      var id = p.id
      if id == nil {
        repeat {
          n += 1
          id = "call_\(n)"
        } while used.contains(id!)
        used.insert(id!)
      }
      return Transcript.ToolCall(id: id!, toolName: p.name, rawArguments: p.arguments)
    }
  }

  static func isComplete(_ arguments: String) -> Bool {
    guard
      let last = arguments.utf8.last(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
      ),
      last == UInt8(ascii: "}")
    else { return false }
    return (try? JSONValue.parse(arguments)) != nil
  }
}
