import ToolhostSession

extension Transcript {
  /// This transcript with `text` as its instructions: the first instructions entry replaced, or, in a transcript
  /// without one, a new first entry. For resuming a saved conversation with new instructions. Does not throw.
  public func replacingInstructions(with text: String) -> Transcript {
    var transcript = self
    let entry = Entry.instructions(Instructions(text: text))
    if let i = transcript.entries.firstIndex(where: { if case .instructions = $0 { true } else { false } }) {
      transcript.entries[i] = entry
    } else {
      transcript.entries.insert(entry, at: 0)
    }
    return transcript
  }
}
