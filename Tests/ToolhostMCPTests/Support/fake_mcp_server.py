#!/usr/bin/env python3
"""A tiny MCP stdio server for toolhost's tests (standard library only).

Tools: echo (structured result), fail (isError result), hang (never answers, keeps serving), freeze (blocks the
whole server, so it no longer answers ping), die (exits with status 3), grandchild (starts `sleep 1000` in the
server's process group and returns its pid), pid (returns the server's pid).
tools/list is paginated: two pages. Every message received is appended to $FAKE_MCP_LOG (one JSON per line).
$FAKE_MCP_VERSION forces the protocol version it answers. It writes to stderr at start and before dying.
"""
import json
import os
import subprocess
import sys
import time

LOG = os.environ.get("FAKE_MCP_LOG")
FORCED_VERSION = os.environ.get("FAKE_MCP_VERSION")
SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
OBJECT = {"type": "object"}
TOOLS = [
    {"name": "echo", "description": "Echoes its arguments.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "outputSchema": {"type": "object", "properties": {"echo": {"type": "object"}}},
     "annotations": {"readOnlyHint": True, "title": "Echo"}},
    {"name": "fail", "description": "Always fails.", "inputSchema": OBJECT},
    {"name": "hang", "description": "Never answers.", "inputSchema": OBJECT},
    {"name": "freeze", "description": "Blocks the server.", "inputSchema": OBJECT},
    {"name": "die", "description": "Exits with status 3.", "inputSchema": OBJECT},
    {"name": "grandchild", "description": "Starts a grandchild.", "inputSchema": OBJECT},
    {"name": "pid", "description": "The server's pid.", "inputSchema": OBJECT},
]
# With --with-progress, also listed: progress(steps, interval, stall) reports progress `steps` times, `interval`
# seconds apart, to a request that sent a progressToken, then waits `stall` seconds and answers.
PROGRESS_TOOL = {"name": "progress", "description": "Reports progress, then answers.", "inputSchema": OBJECT}
if "--with-progress" in sys.argv:
    TOOLS.append(PROGRESS_TOOL)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id_, value):
    send({"jsonrpc": "2.0", "id": id_, "result": value})


def text(t):
    return [{"type": "text", "text": t}]


def main():
    sys.stderr.write("fake server starting\n")
    sys.stderr.flush()
    if "--startup-delay" in sys.argv:  # a slow server: reads nothing for this many seconds
        time.sleep(float(sys.argv[sys.argv.index("--startup-delay") + 1]))
    children = []
    for line in sys.stdin:
        if not line.strip():
            continue
        if LOG:
            with open(LOG, "a") as f:
                f.write(line.strip() + "\n")
        message = json.loads(line)
        method, id_, params = message.get("method"), message.get("id"), message.get("params") or {}
        if id_ is None:
            continue  # notifications
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = FORCED_VERSION or (asked if asked in SUPPORTED else SUPPORTED[0])
            result(id_, {"protocolVersion": version, "capabilities": {"tools": {}},
                         "serverInfo": {"name": "fake", "version": "1.0"}})
        elif method == "ping":
            result(id_, {})
        elif method == "tools/list":
            if params.get("cursor") == "page2":
                result(id_, {"tools": TOOLS[3:]})
            else:
                result(id_, {"tools": TOOLS[:3], "nextCursor": "page2"})
        elif method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            if name == "echo" and "log" in args:  # says it on stderr and as a log message, then answers
                sys.stderr.write(f"stderr: {args['log']}\n")
                sys.stderr.flush()
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": f"message: {args['log']}"}})
            if name == "echo":
                result(id_, {"content": text(json.dumps(args)), "structuredContent": {"echo": args}})
            elif name == "fail":
                result(id_, {"content": text("it failed on purpose"), "isError": True})
            elif name == "hang":
                pass
            elif name == "freeze":
                time.sleep(1000)
            elif name == "die":
                sys.stderr.write("fake server: dying on purpose\n")
                sys.stderr.flush()
                os._exit(3)
            elif name == "grandchild":
                child = subprocess.Popen(["sleep", "1000"])
                children.append(child)
                result(id_, {"content": text(str(child.pid)), "structuredContent": {"pid": child.pid}})
            elif name == "big":  # not listed: a reply of args["bytes"] characters of text
                result(id_, {"content": text("x" * int(args.get("bytes", 1000)))})
            elif name == "progress":
                token = (params.get("_meta") or {}).get("progressToken")
                steps = int(args.get("steps", 3))
                for i in range(steps):
                    time.sleep(float(args.get("interval", 0.2)))
                    if token is not None:
                        send({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": token, "progress": i + 1, "total": steps,
                                         "message": f"step {i + 1}"}})
                time.sleep(float(args.get("stall", 0)))
                result(id_, {"content": text("done"), "structuredContent": {"steps": steps, "token": token is not None}})
            elif name == "pid":
                result(id_, {"content": text(str(os.getpid())), "structuredContent": {"pid": os.getpid()}})
            else:
                send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
        else:
            send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
