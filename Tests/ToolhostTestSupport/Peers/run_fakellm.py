#!/usr/bin/env python3
"""Runs fakellm (the PyPI package, pinned by the tests) for toolhost's tests, with a few test-only additions.

Usage: run_fakellm.py --port P --config RULES.yaml [--capture FILE] [--mangle MODE] [--retry-after SECONDS]

  --capture FILE       append every chat-completions request as a JSON line {"headers": {...}, "body": {...}}
  --mangle MODE        rewrite streamed tool-call deltas the way some servers send them:
                         reuse-index  every tool call gets "index": 0 (ids kept)
                         omit-index   no "index" at all (ids kept on each call's first delta)
                         no-ids       no "index" and no "id" (calls told apart only by their names)
  --retry-after S      add "Retry-After: S" to 429 replies

It serves fakellm's own ASGI app with uvicorn on 127.0.0.1. The process clears the signal mask it may inherit
(a Swift parent's threads block SIGTERM and SIGINT) and exits when its parent goes away, so a crashed test run
leaves no server behind.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time


def watch_parent():
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def mangle_event(data, mode):
    try:
        chunk = json.loads(data)
    except ValueError:
        return data
    changed = False
    for choice in chunk.get("choices") or []:
        for call in (choice.get("delta") or {}).get("tool_calls") or []:
            if mode == "reuse-index":
                call["index"] = 0
            else:
                call.pop("index", None)
                if mode == "no-ids":
                    call.pop("id", None)
            changed = True
    return json.dumps(chunk) if changed else data


def mangle_body(body, mode):
    out = []
    for line in body.decode("utf-8").split("\n"):
        if line.startswith("data: ") and line != "data: [DONE]":
            line = "data: " + mangle_event(line[len("data: "):], mode)
        out.append(line)
    return "\n".join(out).encode("utf-8")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--capture")
    parser.add_argument("--mangle", choices=["reuse-index", "omit-index", "no-ids"])
    parser.add_argument("--retry-after")
    args = parser.parse_args()

    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    threading.Thread(target=watch_parent, daemon=True).start()

    os.environ["FAKELLM_CONFIG"] = args.config
    import uvicorn
    from fakellm.server import app

    capture_lock = threading.Lock()

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or not scope["path"].endswith("/chat/completions"):
            return await app(scope, receive, send)
        body = bytearray()

        async def receive_and_capture():
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body") and args.capture:
                    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
                    try:
                        parsed = json.loads(body)
                    except ValueError:
                        parsed = body.decode("utf-8", "replace")
                    with capture_lock, open(args.capture, "a", encoding="utf-8") as f:
                        f.write(json.dumps({"headers": headers, "body": parsed}) + "\n")
            return message

        status = {"code": 200}

        async def send_and_mangle(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                if message["status"] == 429 and args.retry_after:
                    message = dict(message)
                    message["headers"] = list(message.get("headers", [])) + [
                        (b"retry-after", args.retry_after.encode())
                    ]
            elif message["type"] == "http.response.body" and args.mangle and message.get("body"):
                message = dict(message)
                message["body"] = mangle_body(message["body"], args.mangle)
            await send(message)

        return await app(scope, receive_and_capture, send_and_mangle)

    print(f"fakellm (test wrapper) on http://127.0.0.1:{args.port}", flush=True)
    uvicorn.run(wrapped, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    sys.exit(main())
