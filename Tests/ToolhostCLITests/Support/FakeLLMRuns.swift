import Foundation
import ToolhostTestSupport

/// The environment `toolhost` runs with against fakellm: a clean one (no colours, no terminal), HOME `home`, and an
/// API key.
func fakeLLMEnvironment(home: URL) -> [String: String] {
  var environment = Subprocess.cleanEnvironment(home: home.path)
  environment["TOOLHOST_API_KEY"] = "cli-key"
  return environment
}

/// Runs `toolhost ARGUMENTS` in `directory` with `environment` and `stdin`, against `server` when given (its URL and
/// the model `cli-model`); a run that takes more than 120 s fails.
func runToolhost(
  _ arguments: [String], server: FakeLLM?, environment: [String: String], in directory: URL, stdin: String = ""
) async throws -> Subprocess.Output {
  var arguments = arguments
  if let server { arguments += ["--base-url", server.baseURL, "--model", "cli-model"] }
  return try await ToolhostProcess.finish(arguments, environment: environment, in: directory, input: stdin)
}
