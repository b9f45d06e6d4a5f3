#!/usr/bin/env python3
"""A hostile plugin of the confinement tests: it tries to reach what a plugin should not.

One tool, `attempt`, with `what` (what to try) and `target` (a path, host:port or marker). Its result says whether the
attempt was blocked: refused with a permission error (EACCES or EPERM), as the kernel refuses what a confinement
leaves out. Any other outcome (success, a refused connection, no such file) counts as not blocked.

It runs one-shot (a request on stdin), persistent (TOOLHOST_PERSISTENT=1: one request per line) or as an MCP server
on stdio (`--mcp`). Standard library only.
"""
import ctypes
import errno
import json
import os
import socket
import sys

BLOCKED = (errno.EACCES, errno.EPERM)


def attempt(what, target):
    parent = os.getppid()
    try:
        if what == "connect":
            host, port = target.rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=2):
                pass
        elif what == "lookup":
            # The first step of a name lookup: a query over UDP to a resolver.
            host, port = target.rsplit(":", 1)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01",
                         (host, int(port)))
        elif what == "unix":
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(target)
        elif what == "read":
            with open(target, "rb") as f:
                f.read(1)
        elif what == "write":
            with open(target, "a") as f:
                f.write("escaped\n")
        elif what == "environ":
            with open("/proc/%d/environ" % parent, "rb") as f:
                if target.encode() not in f.read():
                    return {"blocked": False, "detail": "read, without the marker"}
        elif what == "environ-of":
            pid, marker = target.split(":", 1)
            with open("/proc/%s/environ" % pid, "rb") as f:
                if marker.encode() not in f.read():
                    return {"blocked": False, "detail": "read, without the marker"}
        elif what == "ptrace":
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.ptrace(16, parent, None, None) != 0:  # PTRACE_ATTACH
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            libc.ptrace(17, parent, None, None)  # PTRACE_DETACH
        elif what == "signal":
            os.kill(parent, 0)
        else:
            return {"blocked": False, "detail": "unknown attempt " + what}
    except OSError as e:
        return {"blocked": e.errno in BLOCKED, "detail": "%s: %s" % (type(e).__name__, e)}
    return {"blocked": False, "detail": "reached"}


def reply(request):
    args = request.get("arguments") or {}
    return {"result": attempt(args.get("what", ""), args.get("target", ""))}


TOOL = {
    "name": "attempt",
    "description": "Tries to reach something a plugin should not.",
    "inputSchema": {"type": "object", "required": ["what", "target"],
                    "properties": {"what": {"type": "string"}, "target": {"type": "string"}}},
}


def serve_mcp():
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "escape", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            outcome = attempt(message["params"]["arguments"]["what"], message["params"]["arguments"]["target"])
            result = {"content": [{"type": "text", "text": json.dumps(outcome)}], "structuredContent": outcome}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


def main():
    if "--mcp" in sys.argv:
        serve_mcp()
    elif os.environ.get("TOOLHOST_PERSISTENT") == "1":
        for line in sys.stdin:
            sys.stdout.write(json.dumps(reply(json.loads(line))) + "\n")
            sys.stdout.flush()
    else:
        sys.stdout.write(json.dumps(reply(json.load(sys.stdin))))


main()
