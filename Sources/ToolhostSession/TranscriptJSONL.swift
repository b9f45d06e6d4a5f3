import Foundation
public import ToolhostJSON
import ToolhostSystem

/// A transcript file that cannot be read.
public struct TranscriptFileError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The file, when reading one.
  public var path: String?
  /// The 1-based line that is wrong, if one is.
  public var line: Int?
  /// What is wrong.
  public var message: String

  /// Makes an error.
  public init(path: String? = nil, line: Int? = nil, message: String) {
    self.path = path
    self.line = line
    self.message = message
  }

  /// `transcript.jsonl:3: not valid JSON: ...`.
  public var description: String {
    var location = path ?? "transcript"
    if let line { location += ":\(line)" }
    return "\(location): \(message)"
  }
}

extension Transcript {
  /// The transcript as JSONL: one compact JSON entry per line, each line ending in a newline.
  public func jsonl() -> String {
    var out = ""
    for entry in entries {
      out += Self.json(of: entry).serialized()
      out += "\n"
    }
    return out
  }

  /// One entry as a JSON value.
  public static func json(of entry: Entry) -> JSONValue {
    // Encoding these plain structs cannot fail; a failure would be a programming error.
    (try? JSONValueEncoder().encode(entry)) ?? [
      "type": .string(entry.type), "id": .string(entry.id),
    ]
  }

  /// Reads JSONL written by ``jsonl()``; blank lines are skipped.
  ///
  /// - Throws: ``TranscriptFileError`` naming the first line that is not valid JSON or not an entry.
  public init(jsonl: String) throws(TranscriptFileError) {
    var entries: [Entry] = []
    var number = 0
    for line in jsonl.split(separator: "\n", omittingEmptySubsequences: false) {
      number += 1
      let text = line.trimmingCharacters(in: .whitespaces)
      if text.isEmpty { continue }
      let value: JSONValue
      do { value = try JSONValue.parse(text) } catch {
        throw TranscriptFileError(line: number, message: "not valid JSON: \(error.description)")
      }
      do {
        entries.append(try JSONValueDecoder().decode(Entry.self, from: value))
      } catch {
        throw TranscriptFileError(
          line: number, message: "not a transcript entry: \(Self.describe(error))")
      }
    }
    self.init(entries: entries)
  }

  /// Reads a JSONL transcript file.
  ///
  /// - Throws: ``TranscriptFileError`` when the file cannot be read or a line is not an entry.
  public static func load(from path: String) throws(TranscriptFileError) -> Transcript {
    let data: Data
    do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
      throw TranscriptFileError(
        path: path, message: "cannot read the file: \((error as NSError).localizedDescription)")
    }
    do {
      return try Transcript(jsonl: String(decoding: data, as: UTF8.self))
    } catch {
      var e = error
      e.path = path
      throw e
    }
  }

  /// Writes the transcript as JSONL, replacing the file atomically (a crash leaves the old file or the new one).
  ///
  /// A conversation may hold anything the user or a tool said, so a new file is readable by the user only (0600)
  /// and an existing one keeps its mode.
  /// - Throws: ``TranscriptFileError`` when the file cannot be written.
  public func save(to path: String) throws(TranscriptFileError) {
    do {
      try FileSafety.writeSecretFile(path, Array(jsonl().utf8))
    } catch {
      throw TranscriptFileError(path: path, message: "cannot write the file: \(error.localizedDescription)")
    }
  }

  static func describe(_ error: any Error) -> String {
    switch error as? DecodingError {
    case .dataCorrupted(let c): return c.debugDescription
    case .keyNotFound(let key, _): return "missing \"\(key.stringValue)\""
    case .typeMismatch(let type, let c):
      let path = c.codingPath.map(\.stringValue).joined(separator: ".")
      return "\(path.isEmpty ? "value" : "\"\(path)\"") is not a \(type)"
    case .valueNotFound(_, let c):
      return "\"\(c.codingPath.map(\.stringValue).joined(separator: "."))\" is null"
    default: return "\(error)"
    }
  }
}
