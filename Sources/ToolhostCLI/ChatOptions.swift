public import ArgumentParser
import ToolhostChat
import ToolhostOpenAI
import ToolhostSystem

/// Options shared by `chat` and `ask`.
struct ChatOptions: ParsableArguments {
  @OptionGroup var plugins: PluginOptions
  @OptionGroup var output: OutputOptions

  @Option(
    help: ArgumentHelp(
      "The model name (default: $TOOLHOST_MODEL, else gpt-4o-mini); `local` runs the default local model "
        + "(Qwen2.5-Coder 1.5B) with llama.cpp, `local:0.5b` the smaller, faster one (`toolhost model install "
        + "--with-0.5b`), "
        + "`local:/path/model.gguf` any GGUF file.", valueName: "name"))
  var model: String?

  @Option(
    name: .customLong("tool-calling"),
    help: ArgumentHelp(
      "How the model calls tools: `native` (the server's tool calls; the default for HTTP models) or `guided` "
        + "(a reply constrained to a JSON Schema; the default for local models).", valueName: "mode"))
  var toolCalling: ToolCallingStrategy?

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp(
      "The OpenAI-compatible API, up to /v1 (default: $TOOLHOST_BASE_URL, $OPENAI_BASE_URL, else OpenAI's).",
      valueName: "url"))
  var baseURL: String?

  @Option(
    name: .customLong("tool"),
    help: ArgumentHelp(
      "Offer only this tool, and tell the model to use it (repeatable).", valueName: "name"))
  var toolNames: [String] = []

  @Flag(
    name: .customLong("require-tool"),
    help: "Make the model call a tool before it answers each prompt.")
  var requireTool = false

  @Flag(name: .customLong("no-tools"), help: "Offer no tools.")
  var noTools = false

  @Option(help: ArgumentHelp("Instructions for the model (the system message).", valueName: "text"))
  var instructions: String?

  @Option(
    help: ArgumentHelp(
      "Save the conversation to this JSONL file after each answer.", valueName: "file"))
  var save: String?

  @Option(
    help: ArgumentHelp(
      "Continue a kept chat (an id from `toolhost chats`), or the conversation saved in this JSONL file (saved back "
        + "there unless --save is given).",
      valueName: "id|file"))
  var resume: String?

  @Flag(name: .customLong("continue"), help: "Continue the last chat kept in the history.")
  var continueLast = false

  @Flag(
    name: .customLong("no-history"),
    help: "Keep nothing of this conversation in the chat history (\"history\": false in config.json for always).")
  var noHistory = false

  @Flag(help: "Print the session's events as NDJSON on stdout instead of text.")
  var json = false

  @Flag(
    name: .customLong("yes"),
    help: "Run the tools that would ask first (approval `ask`) without asking; `deny` tools still never run.")
  var yes = false

  @Flag(
    name: .customLong("no-stream"),
    help: "Ask the server for whole replies instead of streamed ones.")
  var noStream = false

  @Option(
    name: .customLong("max-tool-rounds"), help: "The most rounds of tool calls for one prompt.")
  var maxToolRounds = 8

  @Option(help: "Sampling temperature.")
  var temperature: Double?

  @Option(
    name: .customLong("keep-alive"),
    help: ArgumentHelp(
      "Keep a local model's server running this long after its last request, for the next ask or chat to "
        + "reuse (`90s`, `5m`, `1h`; default: $TOOLHOST_MODEL_KEEP_ALIVE, else 5m; `0`: it ends with toolhost, "
        + "unless `toolhost model start` started one). `toolhost model stop` stops it.",
      valueName: "time"))
  var keepAlive: String?

  @Option(
    help: ArgumentHelp(
      "Time limit in seconds for each tool call (overrides the manifests).", valueName: "s"))
  var timeout: Double?

  func validate() throws {
    if noTools && (!toolNames.isEmpty || requireTool) {
      throw ValidationError("--no-tools cannot be combined with --tool or --require-tool")
    }
    if continueLast && resume != nil { throw ValidationError("--continue and --resume cannot be combined") }
    if maxToolRounds < 1 { throw ValidationError("--max-tool-rounds must be at least 1") }
    if let timeout, timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds") }
    try ModelCommand.validate(keepAlive: keepAlive, allowingNone: true)
  }

  /// The conversation these options set up (the conversation to resume is read by ``ChatRun``, which reports a
  /// file it cannot read).
  var setup: ChatSetup {
    ChatSetup(
      tools: noTools ? .none : (toolNames.isEmpty ? .allowed : .named(toolNames)), instructions: instructions,
      maximumToolRounds: maxToolRounds, toolTimeout: timeout.map { Duration(seconds: $0) },
      assumeYes: yes, requireTool: requireTool, temperature: temperature, streaming: !noStream)
  }

  /// The model `--model`, `--base-url`, `--tool-calling` and `--keep-alive` choose.
  var modelChoice: ModelChoice {
    ModelChoice(name: model, baseURL: baseURL, toolCalling: toolCalling, keepAlive: keepAlive)
  }
}

extension ToolCallingStrategy: ExpressibleByArgument {}
