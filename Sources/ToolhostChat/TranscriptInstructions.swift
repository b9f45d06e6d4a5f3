public import ToolhostSession

extension Transcript {
  /// This transcript with `text` as its instructions: the first instructions entry replaced, or, in a transcript
  /// without one, a new first entry. For resuming a saved conversation with new instructions. Does not throw.
  public func replacingInstructions(with text: String) -> Transcript {
    updatingInstructions { _ in Instructions(text: text) }
  }
}
