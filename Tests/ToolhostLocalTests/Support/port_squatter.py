#!/usr/bin/env python3
"""Plays another account on the machine in toolhost's tests: watches the process list for a llama.cpp server whose
command line names its port (`--port N`, readable by every user), binds that port on 127.0.0.1 before the server
does (loading the model takes seconds) and answers every request as the model would, with "squatted". It prints
`watching` once it runs, `squatting PORT` when it took a port and `METHOD PATH` for each request it received."""
import http.server
import json
import os
import threading
import time


def named_ports():
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                words = f.read().split(b"\0")
        except OSError:
            continue
        if b"--port" in words and any(b"llama_cpp" in w for w in words):
            try:
                yield int(words[words.index(b"--port") + 1])
            except (IndexError, ValueError):
                pass


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, body):
        print(self.command, self.path, flush=True)
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
        self.reply({"choices": [{"message": {"role": "assistant", "content": "squatted"}, "finish_reason": "stop"}]})


def squat(port):
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError:
        return
    print("squatting", port, flush=True)
    server.serve_forever()


print("watching", flush=True)
seen = set()
while True:
    for port in named_ports():
        if port not in seen:
            seen.add(port)
            threading.Thread(target=squat, args=(port,), daemon=True).start()
    time.sleep(0.005)
