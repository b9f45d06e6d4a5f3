/// Transforms that keep a long conversation within a small model's context, as FoundationModels' history
/// utilities do: drop the tool calls and outputs of turns already answered (the answer carries what the model took
/// from them), and keep a rolling window of the latest turns. The transcript a session keeps is not changed; a
/// backend applies these to the request it sends.
///
/// ```swift
/// let sent = request.transcript.fitted(toTokens: 4096 - 512)  // unchanged while it fits
/// ```
extension Transcript {
  /// The transcript without the tool calls and outputs of answered turns. The current turn (from the last prompt
  /// on) keeps them, since the model is still working with them.
  public func droppingCompletedToolCalls() -> Transcript {
    let current = lastPromptIndex ?? 0
    return Transcript(
      entries: entries.enumerated().compactMap { i, entry in
        guard i < current else { return entry }
        switch entry {
        case .toolCalls, .toolOutput: return nil
        default: return entry
        }
      })
  }

  /// The instructions and as many of the latest turns as fit in `budget` tokens (as `estimate` counts them): whole
  /// turns are dropped, oldest first. The current turn is always kept, even when it alone is over the budget.
  public func window(budget: Int, estimate: (Entry) -> Int = Transcript.estimatedTokens(_:)) -> Transcript {
    let instructions = entries.filter { if case .instructions = $0 { true } else { false } }
    let rest = entries.filter { if case .instructions = $0 { false } else { true } }
    // Turns: each starts at a prompt (entries before the first prompt form a turn of their own).
    var turns: [[Entry]] = []
    for entry in rest {
      if case .prompt = entry {
        turns.append([entry])
      } else if turns.isEmpty {
        turns.append([entry])
      } else {
        turns[turns.count - 1].append(entry)
      }
    }
    var used = instructions.map(estimate).reduce(0, +)
    var kept: [[Entry]] = []
    for (n, turn) in turns.reversed().enumerated() {
      let cost = turn.map(estimate).reduce(0, +)
      if n > 0 && used + cost > budget { break }
      used += cost
      kept.insert(turn, at: 0)
    }
    return Transcript(entries: instructions + kept.flatMap { $0 })
  }

  /// The transcript as it is when it fits in `budget` tokens; otherwise without the tool calls of answered turns,
  /// and then, if that is still too long, the latest turns that fit (``window(budget:estimate:)``).
  public func fitted(toTokens budget: Int, estimate: (Entry) -> Int = Transcript.estimatedTokens(_:)) -> Transcript {
    if entries.map(estimate).reduce(0, +) <= budget { return self }
    let lighter = droppingCompletedToolCalls()
    if lighter.entries.map(estimate).reduce(0, +) <= budget { return lighter }
    return lighter.window(budget: budget, estimate: estimate)
  }

  /// A rough token count for an entry: one token per 3 characters of what is sent for it (text, call arguments,
  /// output), plus a few for the message around it; none for reasoning, which is not sent. Errs high for English, so a budget is rarely overrun.
  public static func estimatedTokens(_ entry: Entry) -> Int {
    let characters: Int
    switch entry {
    case .instructions(let e): characters = e.text.count
    case .prompt(let e): characters = e.text.count
    case .toolCalls(let e):
      characters = (e.text?.count ?? 0) + e.calls.map { $0.toolName.count + $0.argumentsJSON.count + 16 }.reduce(0, +)
    case .toolOutput(let e): characters = e.text.count + e.toolName.count
    case .response(let e): characters = e.text.count
    case .reasoning: return 0  // not sent back to the model
    }
    return estimatedTokens(characters: characters)
  }

  /// The rough token count of a message of `characters` characters: one token per 3 characters, plus a few for the
  /// message around it.
  public static func estimatedTokens(characters: Int) -> Int { characters / 3 + 8 }

  /// The index of the last prompt, if any.
  private var lastPromptIndex: Int? {
    entries.lastIndex { if case .prompt = $0 { true } else { false } }
  }
}
