import Synchronization
public import ToolhostPlugins
public import ToolhostSession
public import ToolhostTools

/// Applies the user's approval rules (``UserConfiguration/approval(for:)``) to the calls a model makes: `auto` runs,
/// `deny` is refused, `ask` goes to the person through ``ask`` (or runs with ``assumeYes``), and is refused when
/// there is no one to ask. An "always" answer is remembered in the configuration file for that tool from where it
/// comes from (``ToolSource``), so a tool of the same name from another plugin or server still asks.
///
/// ```swift
/// let approver = ToolApprover(configuration: try UserConfiguration.load(), ask: { call, tool, decision in
///   await prompt("Run \(call.toolName)?")   // .yes, .no or .always
/// })
/// var policy = SessionPolicy()
/// policy.approveCall = { call, tool in await approver.decide(call, tool: tool) }
/// ```
public final class ToolApprover: Sendable {
  /// A person's answer to "may this call run?".
  public enum Answer: Sendable, Equatable {
    /// This call runs.
    case yes
    /// This call is refused.
    case no
    /// This call runs, and the tool from its source becomes `auto` in the configuration file
    /// (``UserConfiguration/remember(tool:from:mode:)``).
    case always
  }

  /// Asks the person about one call; `nil` when there is no one to ask.
  public typealias Ask = @Sendable (Transcript.ToolCall, any Tool, ApprovalDecision) async -> Answer

  private let configuration: Mutex<UserConfiguration>
  /// Whether `ask` tools run without asking (`--yes`); `deny` tools are refused all the same.
  public let assumeYes: Bool
  private let ask: Ask?
  private let onNote: @Sendable (String) -> Void
  private let unattendedHint: String?
  /// The tools whose "no one to ask" hint the user has had.
  private let hinted = Mutex<Set<String>>([])

  /// Makes an approver.
  ///
  /// - Parameters:
  ///   - assumeYes: run `ask` tools without asking.
  ///   - ask: asks the person; `nil` when there is no terminal (then `ask` calls are refused unless `assumeYes`).
  ///   - onNote: told, for the user, how to allow a tool that needed approval when no one could be asked (once per
  ///     tool), and when an "always" answer could not be written to the configuration file.
  ///   - unattendedHint: how the program's user lets `ask` tools run when there is no one to ask, added to the note
  ///     about it for the user (the command line says "allow it with --yes"); `nil` for none.
  public init(
    configuration: UserConfiguration, assumeYes: Bool = false, ask: Ask?,
    onNote: @escaping @Sendable (String) -> Void = { _ in }, unattendedHint: String? = nil
  ) {
    self.configuration = Mutex(configuration)
    self.assumeYes = assumeYes
    self.ask = ask
    self.onNote = onNote
    self.unattendedHint = unattendedHint
  }

  /// The rules in force (with the "always" answers given so far).
  public var rules: UserConfiguration { configuration.withLock { $0 } }

  /// Decides one call. Never throws; a refusal carries the reason the model is told, which says only that the user
  /// did not approve: how to allow the tool (flags, `config.json`) is for the user, and goes to ``onNote`` once per
  /// tool when no one can be asked.
  public func decide(_ call: Transcript.ToolCall, tool: any Tool) async -> SessionPolicy.Approval {
    let (decision, path) = configuration.withLock { ($0.approval(for: tool), $0.path) }
    switch decision.mode {
    case .auto:
      return .allow
    case .deny:
      return .refuse(reason: "the user does not allow \(tool.name) to run")
    case .ask:
      if assumeYes { return .allow }
      guard let ask else {
        let first = hinted.withLock { $0.insert(tool.name).inserted }
        if first {
          onNote(
            "\(tool.name) needs approval and there is no terminal to ask on (\(unattendedHint.map { $0 + ", or " } ?? "")"
              + "answer \"always\" once on a terminal, or set \"\(tool.name)\": \"auto\" under approvals.tools in "
              + "\(path)); why it asks: \(decision.reason)")
        }
        return .refuse(reason: "the user has not approved running \(tool.name)")
      }
      switch await ask(call, tool, decision) {
      case .yes:
        return .allow
      case .no:
        return .refuse(reason: "the user declined to run \(tool.name)")
      case .always:
        let source = (tool as? any ExternalTool)?.source ?? .inProcess
        let failure: ConfigurationError? = configuration.withLock { config in
          do throws(ConfigurationError) {
            try config.remember(tool: tool.name, from: source, mode: .auto)
            return nil
          } catch {
            return error
          }
        }
        if let failure { onNote("could not remember the answer: \(failure)") }
        return .allow
      }
    }
  }
}
