import ArgumentParser
import Foundation

/// `toolhost chat`: an interactive conversation with the discovered tools.
struct Chat: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Chat with a model that can call the plugins' tools.",
    discussion: """
      Streams the answer; each tool call is shown with its arguments, duration and a short result. Ctrl-C cancels \
      the current answer and its running tools; Ctrl-D (end of input) exits. Tools whose approval is `ask` (MCP \
      tools, and tools not marked read-only or non-destructive, unless config.json says otherwise) ask first on a \
      terminal and are refused without one unless --yes. API key: $TOOLHOST_API_KEY or $OPENAI_API_KEY. With \
      --web, the chat is a page on 127.0.0.1 instead (its address, with a one-time token, is printed): the chats of \
      the history in a sidebar, answers and tool calls live, tool results drawn as tables and fields, a tool picker, \
      and approvals asked on the page.
      """)

  @OptionGroup var options: ChatOptions
  @OptionGroup var web: WebOptions

  @Option(
    name: .shortAndLong,
    help: ArgumentHelp("Answer this prompt and exit (as toolhost ask).", valueName: "text"))
  var prompt: String?

  func validate() throws {
    if web.web, prompt != nil { throw ValidationError("--web serves a page; leave out --prompt") }
    if web.web, options.save != nil { throw ValidationError("--web keeps its chats in the history; leave out --save") }
    if web.web, let resume = options.resume, Int64(resume) == nil {
      throw ValidationError("--web goes on with chats of the history: --resume takes a chat id there, not a file")
    }
    if web.web, options.noHistory, options.continueLast || options.resume != nil {
      throw ValidationError(
        "--web --no-history keeps no chats, so there is none to go on with: leave out --continue and --resume")
    }
  }

  func run() async throws {
    if web.web {
      try await ChatWebRun.run(options: options, web: web)
      return
    }
    let chat = try await ChatRun(options: options, command: "chat")
    if let prompt {
      try await chat.runOnce(prompt)
    } else {
      try await chat.runInteractive()
    }
  }
}

/// `toolhost ask "prompt"`: one question, one answer.
struct Ask: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Ask a model one question; it may call the plugins' tools.",
    discussion: """
      The answer goes to stdout, tool calls to stderr. Without a prompt argument, the prompt is read from stdin. \
      Exit status: 0 answered, 1 the model or a tool failed, 64 usage error, 130 interrupted.
      """)

  @OptionGroup var options: ChatOptions

  @Argument(help: "The prompt (default: read from stdin).")
  var prompt: String?

  func run() async throws {
    var text = prompt
    if text == nil {
      if isatty(0) != 0 {
        throw ValidationError("give a prompt: toolhost ask \"...\" (or pipe one on stdin)")
      }
      text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ValidationError("the prompt is empty")
    }
    let chat = try await ChatRun(options: options, command: "ask")
    try await chat.runOnce(text)
  }
}
