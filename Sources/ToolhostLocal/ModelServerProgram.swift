import Foundation
import ToolhostJSON

/// The Python that runs llama-cpp-python's server for toolhost, one program for both kinds of server: a server of a
/// toolhost's own (``LocalModelServer``) and a shared one that outlives it (``SharedModelServer``).
///
/// Both run as `python -c PROGRAM SETTINGS`, where `SETTINGS` is JSON with the model, the context size, the threads
/// and llama-cpp-python's other arguments (``settings(_:idle:statePath:lockPath:)``); neither a port nor a key is
/// on the command line, which every account on the machine can read. The program:
///
/// 1. a server of toolhost's own makes itself non-dumpable (``hidden``), so that other processes of the user cannot
///    read its key in `/proc/PID/environ`. A shared server does not: its key is in its state file (0600) for every
///    toolhost of the user, so hiding its environment would protect nothing, and a toolhost that adopts it (a
///    subreaper, when the forking process exits) must read its environment to tell it from a plugin's orphan, which
///    it would otherwise end;
/// 2. binds a socket to `127.0.0.1:0` itself, so the kernel picks a port no other process holds (it listens once the
///    model is loaded);
/// 3. writes `{"pid": PID, "port": PORT}` and a newline to its stdout, a pipe only toolhost reads (``report(_:)``
///    reads it), then points its stdout at its stderr, the log;
/// 4. applies ``LlamaServerPatches`` and runs llama-cpp-python's app with uvicorn on that socket, behind a guard that
///    answers 401 to every HTTP request without `Authorization: Bearer KEY` before the app sees it (FastAPI's
///    `/docs` and `/openapi.json` included). The key comes in the environment variable ``keyVariable``, which the
///    program removes from its own environment.
///
/// A server of toolhost's own also ends as soon as its stdin (a socket from toolhost that nothing is written to)
/// closes, so it ends with toolhost even when toolhost is killed with SIGKILL. A shared server forks first (the first
/// process exits, so it belongs to no toolhost) and stops by itself after `idle` seconds without an authorized
/// request: requests without the key neither reach the app nor keep the server alive.
enum ModelServerProgram {
  /// The environment variable that carries the server's key.
  static let keyVariable = "TOOLHOST_SERVER_KEY"

  /// The program of a server of toolhost's own. It reads descriptor 0 with `os.read`, not through `sys.stdin`: a
  /// daemon thread blocked inside the buffered reader makes Python abort (SIGABRT) when the server exits by itself.
  static let own =
    hidden + bind + """
      def watch():
          try:
              while os.read(0, 65536):
                  pass
          except Exception:
              pass
          os._exit(0)
      threading.Thread(target=watch, daemon=True).start()
      report()

      """ + LlamaServerPatches.source + "\n" + serve

  /// The program of a shared server. Its first line is ``SharedModelServer/marker``, which tells it from any other
  /// process with a recycled PID.
  static let shared =
    "# \(SharedModelServer.marker)\n" + bind + """
      if os.fork() > 0:
          os._exit(0)
      os.setsid()
      report()

      """ + LlamaServerPatches.source + "\n" + serve

  /// Reads the settings, binds the socket and defines `report()`.
  private static let bind = """
    import json, os, socket, sys, threading
    cfg = json.loads(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Bound, the port is this process's alone (no SO_REUSEADDR or SO_REUSEPORT); uvicorn listens once the model is
    # loaded, so until then a connection is refused at once instead of waiting.
    sock.bind(("127.0.0.1", 0))
    def report():
        # The port goes to toolhost alone (stdout is its pipe); everything printed afterwards goes to the log.
        os.write(1, (json.dumps({"pid": os.getpid(), "port": sock.getsockname()[1]}) + "\\n").encode())
        os.dup2(2, 1)

    """

  /// Makes the server non-dumpable (Linux's `PR_SET_DUMPABLE` 0, which `execve` reset): other processes of the
  /// user, the plugins toolhost runs among them, can no longer read its environment (the key) or memory in `/proc`.
  static let hidden = """
    import ctypes, sys
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)

    """

  /// Runs the app behind the key check; with `idle` in the settings, stops after that many seconds without an
  /// authorized request and removes the state file if it still names this process.
  private static let serve = """
    import argparse, fcntl, hmac, time, uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import Settings, ServerSettings, ModelSettings
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    parser = argparse.ArgumentParser()
    add_args_from_model(parser, Settings)
    args = parser.parse_args(["--model", cfg["model"], "--n_ctx", str(cfg["n_ctx"]),
                              "--n_threads", str(cfg["n_threads"])] + cfg["extra"])
    server_settings = parse_model_from_args(ServerSettings, args)
    key = os.environ.pop("\(keyVariable)")
    # llama-cpp-python checks it too, on its /v1 routes; the guard below checks it on every route.
    server_settings.api_key = key
    app = create_app(server_settings=server_settings, model_settings=[parse_model_from_args(ModelSettings, args)])
    # Authorized requests in flight, and when the last one ended.
    busy = [0, time.monotonic()]
    class Guard:
        # Answers 401 to a request without the key before the app sees it; only authorized requests are activity.
        def __init__(self, app, key):
            self.app = app
            self.expected = ("Bearer " + key).encode()
        async def __call__(self, scope, receive, send):
            if scope["type"] not in ("http", "websocket"):
                return await self.app(scope, receive, send)
            given = b""
            for name, value in scope.get("headers") or []:
                if name.lower() == b"authorization":
                    given = value
            if not hmac.compare_digest(given, self.expected):
                if scope["type"] == "websocket":
                    return await send({"type": "websocket.close", "code": 1008})
                body = b'{"error":{"message":"this server needs its bearer key","type":"unauthorized"}}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode()),
                                        (b"www-authenticate", b"Bearer")]})
                return await send({"type": "http.response.body", "body": body})
            if scope["type"] == "http" and scope.get("path") == "/toolhost/alive":
                # Answered here, not by the app: its routes wait for the model while it generates, and a client
                # that asks whether the server lives must not take a busy server for a hung one. Not activity.
                body = json.dumps({"busy": busy[0]}).encode()
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                return await send({"type": "http.response.body", "body": body})
            busy[0] += 1
            try:
                await self.app(scope, receive, send)
            finally:
                busy[0] -= 1
                busy[1] = time.monotonic()
    server = uvicorn.Server(uvicorn.Config(Guard(app, key), log_level="warning", timeout_keep_alive=30))
    def forget():
        try:
            with open(cfg["lock"], "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                with open(cfg["state"]) as f:
                    if json.load(f).get("pid") == os.getpid():
                        os.unlink(cfg["state"])
        except Exception:
            pass
    def watch_idle():
        while not server.should_exit:
            time.sleep(1)
            if busy[0] == 0 and time.monotonic() - busy[1] > cfg["idle"]:
                print("=== idle for %d s: stopping" % cfg["idle"], file=sys.stderr)
                forget()
                server.should_exit = True
    if cfg.get("idle"):
        threading.Thread(target=watch_idle, daemon=True).start()
    server.run(sockets=[sock])
    """

  /// The JSON argument after the program: the model, context, threads and llama-cpp-python's other arguments from
  /// `configuration`; for a shared server also the idle time in seconds and its state and lock files.
  static func settings(
    _ configuration: LocalServerConfiguration, idle: Int? = nil, statePath: String? = nil, lockPath: String? = nil
  ) -> String {
    var settings = JSONObject([
      ("model", .string(configuration.modelPath)), ("n_ctx", .integer(Int64(configuration.contextSize))),
      ("n_threads", .integer(Int64(configuration.threads))),
      ("extra", .array(configuration.launchArguments.map { .string($0) })),
    ])
    if let idle { settings["idle"] = .integer(Int64(idle)) }
    if let statePath { settings["state"] = .string(statePath) }
    if let lockPath { settings["lock"] = .string(lockPath) }
    return JSONValue.object(settings).serialized()
  }

  /// What the server runs, for the log: `PYTHON llama_cpp.server --model M --n_ctx N --n_threads T` and the other
  /// arguments.
  static func summary(_ configuration: LocalServerConfiguration) -> String {
    "\(configuration.python) llama_cpp.server --model \(configuration.modelPath) --n_ctx \(configuration.contextSize) "
      + "--n_threads \(configuration.threads) \(configuration.launchArguments.joined(separator: " "))"
  }

  /// A new random key: 24 bytes from the system's secure generator, in hex.
  static func makeKey() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
  }

  /// The PID and port in the program's first line of output, or `nil` when `line` is not that report.
  static func report(_ line: [UInt8]) -> (pid: Int32, port: Int)? {
    guard let info = try? JSONValue.parse(line), let pid = info["pid"]?.integerValue.flatMap(Int32.init(exactly:)),
      let port = info["port"]?.integerValue.flatMap(Int.init(exactly:)), (1...65535).contains(port)
    else { return nil }
    return (pid, port)
  }
}
