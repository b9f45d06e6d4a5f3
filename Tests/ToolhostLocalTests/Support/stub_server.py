#!/usr/bin/env python3
"""A stand-in for llama.cpp's server in toolhost's tests: takes the same arguments as toolhost's server program
(`-c PROGRAM SETTINGS`) and the key in TOOLHOST_SERVER_KEY, binds 127.0.0.1:0 and reports its port on stdout as that
program does, answers 401 to a request without the key, and behaves as the file named by the settings' model says:
`answer` (answers every chat request with "stub answer"), `die-on-chat` (exits when a chat request arrives) or
`die-at-start` (exits at once) or `chatty` (prints another line before its port). Like toolhost's program, it exits when its stdin closes."""
import http.server
import json
import os
import socket
import sys
import threading

settings = json.loads(sys.argv[sys.argv.index("-c") + 2])
with open(settings["model"]) as f:
    mode = f.read().strip()
key = os.environ.pop("TOOLHOST_SERVER_KEY")


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

    def reply(self, body, status=200):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if self.headers.get("Authorization") == "Bearer " + key:
            return True
        self.reply({"error": {"message": "stub: no key"}}, status=401)
        return False

    def do_GET(self):
        if self.authorized():
            self.reply({"object": "list", "data": []})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.authorized():
            return
        if mode == "die-on-chat":
            print("stub: dying on a chat request on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        self.reply({"choices": [{"message": {"role": "assistant", "content": "stub answer"}, "finish_reason": "stop"}]})


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
if mode == "chatty":
    print("stub: a line before the port", flush=True)
os.write(1, (json.dumps({"pid": os.getpid(), "port": server.server_address[1]}) + "\n").encode())
server.serve_forever()
