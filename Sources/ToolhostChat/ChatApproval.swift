import ToolhostSession

/// How the tools whose approval is `ask` are decided (see ``ToolApprover``).
public struct ChatApproval: Sendable {
  /// Asks the person about one call; `nil` when there is no one to ask (then such calls are refused unless
  /// ``ChatSetup/assumeYes``).
  public var ask: ToolApprover.Ask?
  /// Told, for the user, how to allow a tool that needed approval when no one could be asked, and when an "always"
  /// answer could not be remembered.
  public var onNote: @Sendable (String) -> Void
  /// How the program's user lets `ask` tools run when there is no one to ask, added to the note about it; `nil` for
  /// none.
  public var unattendedHint: String?

  /// Makes the hooks; by default no one is asked and nothing is told.
  public init(
    ask: ToolApprover.Ask? = nil, onNote: @escaping @Sendable (String) -> Void = { _ in },
    unattendedHint: String? = nil
  ) {
    self.ask = ask
    self.onNote = onNote
    self.unattendedHint = unattendedHint
  }
}
