#!/usr/bin/env python3
"""A persistent toolhost plugin for tests: one request per line in, one reply per line out.

Tools: whoami (its pid and how many calls it served), sleep (sleeps `seconds`, then answers), crash (writes to
stderr and exits 3 without answering), garbage (prints a line that is not JSON), grandchild (starts `sleep 1000`
in its process group and returns its pid), fail (an error reply), big (a reply whose text is `bytes` long).
"""
import json
import os
import subprocess
import sys
import time

served = 0
children = []
for line in sys.stdin:
    if not line.strip():
        continue
    served += 1
    request = json.loads(line)
    tool, args = request["tool"], request["arguments"]
    if tool == "whoami":
        reply = {"result": {"pid": os.getpid(), "served": served, "persistent": os.environ.get("TOOLHOST_PERSISTENT")}}
    elif tool == "sleep":
        started = time.monotonic()
        time.sleep(args.get("seconds", 1))
        reply = {"result": {"pid": os.getpid(), "started": started, "ended": time.monotonic()}}
    elif tool == "crash":
        sys.stderr.write("persistent plugin: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif tool == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        continue
    elif tool == "grandchild":
        child = subprocess.Popen(["sleep", "1000"])
        children.append(child)
        reply = {"result": {"pid": os.getpid(), "child": child.pid}}
    elif tool == "big":
        reply = {"result": {"pid": os.getpid(), "text": "a" * args.get("bytes", 1)}}
    else:
        reply = {"error": {"message": f"no tool {tool}", "code": "unknown_tool"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
