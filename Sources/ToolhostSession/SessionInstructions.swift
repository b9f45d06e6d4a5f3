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
    var copy = self
    if let i = copy.entries.firstIndex(where: { if case .instructions = $0 { true } else { false } }),
      case .instructions(var instructions) = copy.entries[i]
    {
      instructions.text = SessionInstructions.preferring(tools: tools, base: instructions.text) ?? instructions.text
      copy.entries[i] = .instructions(instructions)
    } else if let text = SessionInstructions.preferring(tools: tools, base: nil) {
      copy.entries.insert(.instructions(Transcript.Instructions(text: text)), at: 0)
    }
    return copy
  }
}
