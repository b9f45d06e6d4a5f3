#!/usr/bin/env python3
"""A stand-in for llama.cpp's server in toolhost's tests: takes the same arguments after `-c CODE`, and behaves as
the file named by --model says: `answer` (answers every chat request with "stub answer"), `die-on-chat` (exits
when a chat request arrives) or `die-at-start` (exits at once). Like toolhost's launcher, it exits when its stdin
closes."""
import http.server
import json
import os
import sys
import threading

args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
with open(args[args.index("--model") + 1]) as f:
    mode = f.read().strip()


def watch_stdin():
    try:
        while os.read(0, 65536):
            pass
    except Exception:
        pass
    os._exit(0)


threading.Thread(target=watch_stdin, daemon=True).start()
if mode == "die-at-start":
    print("stub: failing at start on purpose", file=sys.stderr, flush=True)
    sys.exit(7)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply({"object": "list", "data": []})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if mode == "die-on-chat":
            print("stub: dying on a chat request on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        self.reply({"choices": [{"message": {"role": "assistant", "content": "stub answer"}, "finish_reason": "stop"}]})


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
