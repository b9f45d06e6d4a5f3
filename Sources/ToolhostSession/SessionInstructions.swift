/// Instructions that steer the model toward chosen tools, as `toolhost chat --tool NAME` uses them.
public enum SessionInstructions {
  /// `base` followed by a sentence telling the model to use `tools` (and only them) when they help.
  public static func preferring(tools names: [String], base: String?) -> String? {
    guard !names.isEmpty else { return base }
    let list: String
    if names.count == 1 {
      list = names[0]
    } else {
      list = names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
    let plural = names.count == 1 ? "tool" : "tools"
    let sentence =
      "Use the \(plural) \(list) to answer: call \(names.count == 1 ? "it" : "them") for facts and computations "
      + "instead of answering from memory, then answer from the results."
    guard let base, !base.isEmpty else { return sentence }
    return base + "\n\n" + sentence
  }
}

extension Transcript {
  /// The transcript as a request that steers the model toward `tools` sends it: its first instructions end with
  /// ``SessionInstructions/preferring(tools:base:)``'s sentence (instructions are added at the start when there are
  /// none). Entries keep their ids.
  public func steering(toward tools: [String]) -> Transcript {
    updatingInstructions { current in
      guard var instructions = current else {
        return SessionInstructions.preferring(tools: tools, base: nil).map { Transcript.Instructions(text: $0) }
      }
      instructions.text = SessionInstructions.preferring(tools: tools, base: instructions.text) ?? instructions.text
      return instructions
    }
  }

  /// This transcript with its instructions changed by `change`, which gets the first instructions entry (`nil` when
  /// there is none) and returns what stands in its place; a new entry goes first, and `nil` leaves the transcript
  /// as it is.
  public func updatingInstructions(_ change: (Instructions?) -> Instructions?) -> Transcript {
    var copy = self
    let index = copy.entries.firstIndex { if case .instructions = $0 { true } else { false } }
    var current: Instructions?
    if let index, case .instructions(let existing) = copy.entries[index] { current = existing }
    guard let updated = change(current) else { return copy }
    if let index {
      copy.entries[index] = .instructions(updated)
    } else {
      copy.entries.insert(.instructions(updated), at: 0)
    }
    return copy
  }
}
