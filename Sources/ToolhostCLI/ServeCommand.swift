import ArgumentParser
import Foundation
import ToolhostCommandLine
import ToolhostMCP
import ToolhostMCPHTTP
import ToolhostMCPHTTPServer
import ToolhostPlugins
import ToolhostSystem

/// `toolhost serve --mcp`: the discovered plugins (MCP servers in plugin folders included) as an MCP stdio server.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serve the plugins to other programs: toolhost serve --mcp",
    discussion: """
      With --mcp, toolhost is an MCP server on stdin and stdout (one JSON-RPC message per line): tools/list gives \
      every discovered tool with its inputSchema, outputSchema and annotations; tools/call runs it with validation \
      and time limits, and failures come back as results with isError. Diagnostics go to stderr. It serves until \
      stdin ends, then stops the plugins it started. A server on stdio has no one to ask, so tools whose approval \
      is `ask` (see config.json; MCP tools and tools not marked read-only or non-destructive) are not served \
      unless --yes is given; `deny` tools never are.

      With --http, it serves MCP over HTTP instead, and every request needs a bearer token: --token-env NAME gives \
      yours; otherwise one is made for the run and written to a file only you can read (the path is printed, the \
      file removed when serve stops); --no-auth serves without one, on a loopback address only.
      """)
  @OptionGroup var plugins: PluginOptions
  @Flag(help: "Speak the Model Context Protocol (over stdio unless --http is given).") var mcp = false
  @Option(
    help: ArgumentHelp(
      "Serve MCP over Streamable HTTP on this port (POST /mcp, GET /health), bound to 127.0.0.1 unless an address "
        + "is given: 8080, 0.0.0.0:8080, [::1]:8080; port 0 picks a free one. Every request needs a bearer token "
        + "(see --token-env and --no-auth).",
      valueName: "[addr:]port"))
  var http: String?
  @Option(
    name: .customLong("token-env"),
    help: ArgumentHelp(
      "With --http: the environment variable holding the bearer token every request must carry "
        + "(Authorization: Bearer ...); without it a token is made and written to a file only you can read.",
      valueName: "name"))
  var tokenEnv: String?
  @Flag(
    name: .customLong("no-auth"),
    help: ArgumentHelp(
      "With --http on a loopback address (127.0.0.1, ::1, localhost): serve without a bearer token, so every "
        + "local user and program can call the tools."))
  var noAuth = false
  @Option(
    name: .customLong("idle-timeout"),
    help: ArgumentHelp(
      "With --http: seconds a connection may take to send a request's head, or stay idle, before it is closed.",
      valueName: "seconds"))
  var idleTimeout = Double(MCPHTTPServer.Limits.defaultIdleTimeout.components.seconds)
  @Option(
    name: .customLong("max-connections"),
    help: ArgumentHelp("With --http: the most connections open at once; more wait to be accepted.", valueName: "n"))
  var maxConnections = MCPHTTPServer.Limits.defaultMaxConnections
  @Option(
    name: .customLong("max-calls"),
    help: ArgumentHelp(
      "With --http: the most tool calls running at once; more are answered HTTP 503 with a JSON-RPC error.",
      valueName: "n"))
  var maxCalls = MCPHTTPServer.Limits.defaultMaxCallsInFlight
  @Option(
    name: .customLong("allow-origin"),
    help: ArgumentHelp(
      "With --http: a browser origin allowed to call the server besides localhost ones (repeatable; * for any).",
      valueName: "origin"))
  var allowOrigin: [String] = []
  @Option(help: "Time limit in seconds for every call (overrides the manifests).") var timeout: Double?
  @Option(name: .customLong("max-output"), help: "Most stdout bytes a plugin may print.")
  var maxOutput: Int?
  @Flag(
    name: .customLong("yes"),
    help: "Serve the tools that would ask for approval too: every client may run them without asking anyone.")
  var yes = false

  func validate() throws {
    guard mcp else {
      throw ValidationError("say which protocol to serve: --mcp (the only one so far)")
    }
    if let timeout, timeout <= 0 { throw ValidationError("--timeout must be more than 0 seconds") }
    if let maxOutput, maxOutput <= 0 {
      throw ValidationError("--max-output must be more than 0 bytes")
    }
    if http == nil, tokenEnv != nil || !allowOrigin.isEmpty || noAuth {
      throw ValidationError("--token-env, --no-auth and --allow-origin go with --http")
    }
    if idleTimeout <= 0 { throw ValidationError("--idle-timeout must be more than 0 seconds") }
    if maxConnections <= 0 { throw ValidationError("--max-connections must be at least 1") }
    if maxCalls <= 0 { throw ValidationError("--max-calls must be at least 1") }
    if let http {
      let (host, _) = try Self.address(http)
      if noAuth, tokenEnv != nil {
        throw ValidationError("--no-auth and --token-env contradict each other: give one of them")
      }
      if noAuth, !Loopback.isHost(host) {
        throw ValidationError(
          "--no-auth serves only a loopback address (127.0.0.1, ::1, localhost), and \(host) is not one: other "
            + "machines could call the tools. Leave out --no-auth (a token is made and written to a file), give "
            + "--token-env NAME, or bind 127.0.0.1")
      }
    }
    if let tokenEnv, (ProcessInfo.processInfo.environment[tokenEnv] ?? "").isEmpty {
      throw ValidationError("--token-env \(tokenEnv): that environment variable is not set or empty")
    }
  }

  /// The host and port of `--http`: `PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host is 127.0.0.1 when absent.
  static func address(_ text: String) throws -> (host: String, port: Int) {
    var host = "127.0.0.1"
    var portText = text
    if let colon = text.lastIndex(of: ":") {
      host = String(text[..<colon])
      portText = String(text[text.index(after: colon)...])
      if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    }
    guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
      throw ValidationError(
        "--http \(text): give a port (0-65535), optionally after an address: 8080, 127.0.0.1:8080, [::1]:8080")
    }
    return (host, port)
  }

  func run() async throws {
    let printer = Printer(raw: false)
    // The plugins' tools at once, without starting anything; MCP servers start in the background, so a client gets
    // its answers while they do (a call of one of their tools waits for them).
    let quick = try await plugins.catalog(startServers: false, printer: printer)
    let yes = self.yes
    let served = MCPServedCatalog(quick: quick, servesAskTools: yes) { event in
      switch event {
      case .diagnostic(let d): Self.report(d, printer: printer)
      case .withheld(let withheld): Self.reportWithheld(withheld, yes: yes, printer: printer)
      case .serversStarted(let count):
        printer.warn("toolhost serve: the MCP servers started; serving \(count) tools")
      }
    }
    printer.warn(
      "toolhost serve: serving \(served.servedCount) tools over MCP \(http == nil ? "on stdio" : "(Streamable HTTP)")"
        + (served.hasServersToStart ? "; starting the MCP servers" : ""))
    let options = MCPServer.Options(
      timeout: timeout.map { Duration(seconds: $0) }, outputLimit: maxOutput, withheld: served.withheld)
    let server = MCPServer(registry: served.registry, options: options)
    served.startServers(on: server) { [plugins] in
      try? await plugins.catalog(startServers: true, printer: printer, quiet: true)
    }
    var failure: String?
    if let http {
      let (host, port) = try Self.address(http)
      let front = MCPHTTPServer(server: server, options: httpOptions(host: host, port: port))
      if noAuth {
        printer.warn("toolhost serve: no bearer token (--no-auth): every local user and program can call these tools")
      }
      do {
        _ = try await InterruptHandler.cancellingOnSignals {
          try await front.run { listening in
            let url = "http://\(listening.address)"
            printer.warn("toolhost serve: listening on \(url)\(MCPHTTPServer.endpoint)")
            if let file = listening.tokenFile { Self.reportTokenFile(file, url: url, printer: printer) }
          }
        }
      } catch is CancellationError {
      } catch let error as MCPHTTPToken.FileError {
        failure = "toolhost serve: cannot write the bearer token's file: \(error)"
      } catch {
        failure = "toolhost serve: cannot listen on \(host):\(port): \(error)"
      }
    } else {
      _ = try await InterruptHandler.cancellingOnSignals { await server.serve() }
    }
    await served.shutdown()
    if let failure {
      printer.warn(failure)
      throw ExitCode(ExitStatus.cannotStart)
    }
  }

  /// The HTTP server's options: the token (the environment's, a new one written to a file, or none with --no-auth),
  /// the origins and the limits.
  func httpOptions(host: String, port: Int) -> MCPHTTPServer.Options {
    let given = tokenEnv.flatMap { ProcessInfo.processInfo.environment[$0] }
    let token = noAuth ? nil : given ?? MCPHTTPToken.generate()
    return MCPHTTPServer.Options(
      host: host, port: port, exchange: MCPHTTPExchange(bearerToken: token, allowedOrigins: allowOrigin),
      limits: MCPHTTPServer.Limits(
        idleTimeout: Duration(seconds: idleTimeout), maxConnections: maxConnections,
        maxCallsInFlight: maxCalls),
      tokenFolder: noAuth || given != nil ? nil : MCPHTTPToken.defaultFolder())
  }

  /// Says on stderr where the generated token is and how to send it (never the token itself).
  static func reportTokenFile(_ file: String, url: String, printer: Printer) {
    let quoted = "'" + file.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    printer.warn(
      "toolhost serve: every request needs the bearer token in \(file) (readable only by you, removed when serve "
        + "stops; --token-env NAME sets your own), for example:\n"
        + "  curl -H \"Authorization: Bearer $(cat \(quoted))\" -H 'Content-Type: application/json' "
        + "-d '{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}' \(url)\(MCPHTTPServer.endpoint)")
  }

  /// Says a plugin's problem or note on stderr.
  static func report(_ diagnostic: PluginDiagnostic, printer: Printer) {
    printer.warn("toolhost serve: \(diagnostic.isError ? "error" : "note"): \(diagnostic)")
  }

  /// Says on stderr which tools are not served, and why.
  static func reportWithheld(_ withheld: [String: String], yes: Bool, printer: Printer) {
    guard !withheld.isEmpty else { return }
    let names = withheld.keys.sorted()
    printer.warn(
      "toolhost serve: \(names.count) tool\(names.count == 1 ? " is" : "s are") not served, because "
        + "\(names.count == 1 ? "it needs" : "they need") approval or \(names.count == 1 ? "is" : "are") denied: "
        + names.joined(separator: ", ")
        + (yes ? "" : " (serve --mcp --yes serves the ones that ask; \"auto\" in config.json serves one)"))
  }
}
