import Foundation
import Synchronization
import ToolhostJSON
import ToolhostSchema

/// The plugin protocol on the wire: the request line a persistent plugin reads, the checks of a reply object, call
/// IDs, and excerpts of bad output for error messages.
extension PluginTool {
  static let replySchema: JSONSchema = {
    do { return try JSONSchema(JSONValue.parse(EmbeddedSchemas.reply)) } catch {
      fatalError("toolhost: the embedded reply schema is invalid: \(error)")
    }
  }()

  /// Whether `reply` matches `schemas/reply.schema.json`, checked directly (the schema validator runs only for
  /// replies that fail this, to say why).
  static func isWellFormedReply(_ reply: JSONValue) -> Bool {
    guard let o = reply.objectValue else { return false }
    if o["result"] != nil {
      for (key, value) in o {
        switch key {
        case "result": continue
        case "text": if value.stringValue == nil { return false }
        default: return false
        }
      }
      return true
    }
    guard o.count == 1, let error = o["error"]?.objectValue,
      let message = error["message"]?.stringValue, !message.isEmpty
    else { return false }
    for (key, value) in error {
      switch key {
      case "message", "data": continue
      case "code": if value.stringValue == nil { return false }
      default: return false
      }
    }
    return true
  }

  /// The request line of a persistent call: the same object as a one-shot request, serialized directly.
  static func requestLine(tool: String, arguments: JSONValue, callID: String, traceParent: String? = nil) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(96)
    bytes.append(contentsOf: #"{"toolhost":1,"tool":"#.utf8)
    appendJSONString(tool, to: &bytes)
    bytes.append(contentsOf: #","arguments":"#.utf8)
    bytes.append(contentsOf: arguments.serialized().utf8)
    bytes.append(contentsOf: #","callId":"#.utf8)
    appendJSONString(callID, to: &bytes)
    if let traceParent {
      bytes.append(contentsOf: #","traceparent":"#.utf8)
      appendJSONString(traceParent, to: &bytes)
    }
    bytes.append(UInt8(ascii: "}"))
    return bytes
  }

  /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
  static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
    let hex: [UInt8] = Array("0123456789abcdef".utf8)
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(byte)
      case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        bytes.append(contentsOf: Array("\\u00".utf8))
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0xF)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// Says what is wrong with a reply object in plain words (the oneOf of the schema is hard to read).
  static func replyProblem(_ reply: JSONValue) -> String {
    let keys = reply.objectValue?.keys ?? []
    if keys.contains("result") && keys.contains("error") { return "it has both \"result\" and \"error\"" }
    if !keys.contains("result") && !keys.contains("error") {
      return "it has neither \"result\" nor \"error\" (keys: \(keys.map { "\"\($0)\"" }.joined(separator: ", ")))"
    }
    let allowed: Set<String> = keys.contains("result") ? ["result", "text"] : ["error"]
    if let extra = keys.first(where: { !allowed.contains($0) }) { return "unexpected key \"\(extra)\"" }
    if keys.contains("text"), reply["text"]?.stringValue == nil { return "\"text\" must be a string" }
    if let e = reply["error"] {
      if e["message"]?.stringValue?.isEmpty != false { return "\"error\" needs a non-empty string \"message\"" }
      return "\"error\" may only have \"message\", \"code\" (a string) and \"data\""
    }
    return "it does not match"
  }

  static func excerpt(_ bytes: [UInt8]) -> String {
    let text = String(decoding: bytes.prefix(200), as: UTF8.self)
      .replacingOccurrences(of: "\n", with: "\\n")
    return bytes.count > 200 ? text + "…" : text
  }

  static func makeCallID() -> String {
    // A random prefix once per process and a counter: unique, and no getrandom(2) call per tool call.
    "call-" + callIDPrefix + String(callCounter.add(1, ordering: .relaxed).newValue, radix: 36)
  }

  static let callIDPrefix = String(UInt64.random(in: 0...UInt64.max) >> 24, radix: 36) + "-"
  static let callCounter = Atomic<Int>(0)
}
