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
