public import Foundation
import ToolhostSystem

/// How to run llama.cpp's OpenAI-compatible server (llama-cpp-python's `llama_cpp.server`) for one model.
public struct LocalServerConfiguration: Sendable {
  /// The Python interpreter that has `llama_cpp` installed.
  public var python: String
  /// The GGUF model file.
  public var modelPath: String
  /// The context window in tokens. Default 4096.
  public var contextSize: Int
  /// CPU threads for generation. Default: the number of active processors.
  public var threads: Int
  /// The longest wait for the server to answer after it was started (loading the model included). Default 120 s.
  public var startupTimeout: Duration
  /// The file the server's output is appended to.
  public var logPath: String
  /// More command-line arguments for `llama_cpp.server` (for example `["--n_batch", "256"]`).
  public var extraArguments: [String]
  /// A folder where the server saves the model's state after the system message, so that a server started later
  /// does not read the instructions and tool list again (see ``LlamaServerPatches``); `nil` saves nothing.
  public var promptCacheDirectory: String?

  /// Makes a configuration.
  public init(
    python: String, modelPath: String, contextSize: Int = 4096,
    threads: Int = ProcessInfo.processInfo.activeProcessorCount, startupTimeout: Duration = .seconds(120),
    logPath: String, extraArguments: [String] = [], promptCacheDirectory: String? = nil
  ) {
    self.python = python
    self.modelPath = modelPath
    self.contextSize = contextSize
    self.threads = threads
    self.startupTimeout = startupTimeout
    self.logPath = logPath
    self.extraArguments = extraArguments
    self.promptCacheDirectory = promptCacheDirectory
  }

  /// The arguments after the model, context and threads: ``extraArguments`` after the ones every server gets.
  ///
  /// Requests wait their turn: llama-cpp-python's `interrupt_requests` is on by default, and then a request that
  /// arrives while another is streamed ends that stream at once with `[DONE]` and no finish reason, so `chat`'s
  /// warm-up, its title request or a second program sharing the server would cut a user's answer short (or
  /// leave it empty).
  var launchArguments: [String] { ["--interrupt_requests", "false"] + extraArguments }

  /// The environment the server runs with: PATH, HOME, unbuffered UTF-8 output and the prompt cache's folder.
  func serverEnvironment() -> [String: String] {
    let host = ProcessInfo.processInfo.environment
    var environment = [
      "PATH": host["PATH"] ?? "/usr/local/bin:/usr/bin:/bin", "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8",
    ]
    if let home = host["HOME"] { environment["HOME"] = home }
    if let promptCacheDirectory { environment["TOOLHOST_PROMPT_CACHE"] = promptCacheDirectory }
    return environment
  }
}

/// What a ``LocalModelServer`` reports while it works, for a status line or a log.
public enum LocalServerEvent: Sendable, Equatable {
  /// A server process is starting; its output goes to the log file.
  case starting(logPath: String)
  /// The server answers.
  case ready(pid: Int32, port: Int, startup: Duration)
  /// The server had exited (crashed or was killed) and is being started again.
  case restarting(reason: String)
  /// The server was stopped.
  case stopped(pid: Int32)
}
