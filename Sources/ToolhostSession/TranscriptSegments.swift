public import ToolhostGeneration
import ToolhostJSON

// FoundationModels' view of entries as segments of text or structure, and of a turn's tool calls as a collection,
// so that code walking `session.transcript` the FoundationModels way reads toolhost's transcript.

extension Transcript {
  /// A piece of an entry's content: text, or a structured value.
  public enum Segment: Sendable, Equatable, Identifiable, CustomStringConvertible {
    /// Text.
    case text(TextSegment)
    /// A structured value (a tool's JSON result, a generated type).
    case structure(StructuredSegment)

    /// The segment's id.
    public var id: String {
      switch self {
      case .text(let s): s.id
      case .structure(let s): s.id
      }
    }

    /// The text, or the value's JSON.
    public var description: String {
      switch self {
      case .text(let s): s.content
      case .structure(let s): s.content.jsonString
      }
    }
  }

  /// A text segment.
  public struct TextSegment: Sendable, Equatable, Identifiable {
    /// The segment's id.
    public var id: String
    /// The text.
    public var content: String

    /// Makes a text segment.
    public init(id: String = Transcript.newID(), content: String) {
      self.id = id
      self.content = content
    }
  }

  /// A structured segment.
  public struct StructuredSegment: Sendable, Equatable, Identifiable {
    /// The segment's id.
    public var id: String
    /// The name of the schema or tool the value comes from.
    public var schemaName: String
    /// The value.
    public var content: GeneratedContent

    /// Makes a structured segment.
    public init(id: String = Transcript.newID(), schemaName: String, content: GeneratedContent) {
      self.id = id
      self.schemaName = schemaName
      self.content = content
    }

    /// Makes a structured segment, the schema name under FoundationModels 26's name.
    @available(*, deprecated, renamed: "init(id:schemaName:content:)")
    public init(id: String = Transcript.newID(), source: String, content: GeneratedContent) {
      self.init(id: id, schemaName: source, content: content)
    }

    /// The schema name under FoundationModels 26's name.
    @available(*, deprecated, renamed: "schemaName")
    public var source: String {
      get { schemaName }
      set { schemaName = newValue }
    }
  }
}

extension Transcript.Instructions {
  /// The instructions as one text segment.
  public var segments: [Transcript.Segment] { [.text(Transcript.TextSegment(id: id, content: text))] }
}

extension Transcript.Prompt {
  /// The prompt as one text segment.
  public var segments: [Transcript.Segment] { [.text(Transcript.TextSegment(id: id, content: text))] }
}

extension Transcript.Response {
  /// The answer as one text segment.
  public var segments: [Transcript.Segment] { [.text(Transcript.TextSegment(id: id, content: text))] }
}

extension Transcript.Reasoning {
  /// The reasoning as one text segment.
  public var segments: [Transcript.Segment] { [.text(Transcript.TextSegment(id: id, content: text))] }
}

extension Transcript.ToolOutput {
  /// The output: its structured value when it has one, else its text.
  public var segments: [Transcript.Segment] {
    if let value {
      return [
        .structure(Transcript.StructuredSegment(id: id, schemaName: toolName, content: GeneratedContent(json: value)))
      ]
    }
    return [.text(Transcript.TextSegment(id: id, content: text))]
  }
}

extension Transcript.ToolCall {
  /// The arguments as generated content (FoundationModels' type for them).
  public var generatedArguments: GeneratedContent { GeneratedContent(json: arguments) }
}

extension Transcript.ToolCalls: RandomAccessCollection {
  /// The first call's position.
  public var startIndex: Int { calls.startIndex }
  /// Past the last call.
  public var endIndex: Int { calls.endIndex }
  /// The call at a position.
  public subscript(position: Int) -> Transcript.ToolCall { calls[position] }
}
