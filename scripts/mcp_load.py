#!/usr/bin/env python3
"""Load driver for an MCP server over Streamable HTTP, using the official MCP Python SDK client (`mcp` 2.3.0).

  python3 scripts/mcp_load.py --url http://127.0.0.1:8080/mcp [--calls 10000] [--clients 16]
                              [--tool convertUnits --arguments '{"value":5,"from":"mi","to":"km"}']
                              [--mode auto|legacy|2026-07-28] [--kill-group-at-half PGID] [--token-env NAME]

C concurrent workers share N `tools/call` requests. Each worker holds one SDK `Client` (default mode "auto": it
probes `server/discover` once, then every call is a self-contained 2026-07-28 POST). A call is tried up to 3
times on a transport failure (connection refused/reset, the response cut off), an HTTP 5xx (which the SDK turns
into a JSON-RPC INTERNAL_ERROR) or a client-side timeout; a result with isError, or any other JSON-RPC error, is
a failure and not retried (it would fail the same way again). Prints one JSON object on stdout:
{"calls", "ok", "lost", "retried", "reconnects", "seconds", "calls_per_s", "p50_ms", "p99_ms", ...};
"lost" = calls that did not succeed (failed after retries, or failed for good). Progress notes go to stderr.

--token-env NAME sends the bearer token in the environment variable NAME with every request (`toolhost serve
--mcp --http` wants one unless started with --no-auth). A server that is busy (HTTP 503, toolhost's JSON-RPC error
-32010: it runs as many calls as it may) is retried like a transport failure.

--kill-group-at-half PGID sends SIGKILL to process group PGID once half the calls have finished, to show what a
replica dying under load costs (scripts/mcp-replicas uses it).
"""
import argparse
import json
import math
import os
import signal
import sys
import time
import warnings

import anyio
import httpx2  # the SDK's HTTP client library (a dependency of `mcp`)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT

ATTEMPTS = 3
# The SDK reports an HTTP error status without a JSON-RPC body (HAProxy's 502/503/504 pages) as INTERNAL_ERROR,
# a dropped connection it noticed as CONNECTION_CLOSED, and its own read timeout as REQUEST_TIMEOUT. A server's
# real JSON-RPC errors (bad params, unknown tool, ...) are deterministic and not worth retrying.
SERVER_BUSY = -32010  # toolhost's answer (HTTP 503) to a call over its --max-calls
RETRYABLE = {INTERNAL_ERROR, CONNECTION_CLOSED, REQUEST_TIMEOUT, SERVER_BUSY}


def backoff(attempt: int) -> float:
    return 0.05 * 2 ** (attempt - 1)  # 50 ms, 100 ms: long enough for the balancer to route around a dead replica


class Run:
    def __init__(self, a):
        self.a, self.next, self.done = a, 0, 0
        self.ok, self.lost, self.retried, self.reconnects = 0, 0, 0, 0
        self.latencies: list[float] = []  # seconds, first attempt to success, of the calls that succeeded
        self.errors: dict[str, int] = {}  # why calls were lost
        self.retry_causes: dict[str, int] = {}  # why attempts were repeated
        self.killed_at = None
        token = os.environ.get(a.token_env) if a.token_env else None
        if a.token_env and not token:
            sys.exit(f"mcp_load: --token-env {a.token_env}: that environment variable is not set or empty")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def take(self):
        """The next call for a worker: [attempts made, time of the first attempt], or None when all are handed out."""
        if self.next >= self.a.calls:
            return None
        self.next += 1
        return [0, None]

    def finish(self, call, ok: bool, why: str = "") -> None:
        self.done += 1
        if ok:
            self.ok += 1
            self.latencies.append(time.perf_counter() - call[1])
        else:
            self.lost += 1
            self.errors[why] = self.errors.get(why, 0) + 1
        if call[0] > 1:
            self.retried += 1
        if self.a.kill_group_at_half and self.killed_at is None and self.done >= self.a.calls // 2:
            self.killed_at = self.done
            print(f"mcp_load: SIGKILL to process group {self.a.kill_group_at_half} after {self.done} calls",
                  file=sys.stderr)
            try:
                os.killpg(self.a.kill_group_at_half, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def note_retry(self, why: str) -> None:
        self.retry_causes[why] = self.retry_causes.get(why, 0) + 1


def describe(e: BaseException) -> str:
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return f"{type(e).__name__}: {e}"[:160]


async def worker(run: Run) -> None:
    # One HTTP connection pool per worker, kept across reconnects: building an httpx client costs ~40 ms of CPU
    # (mostly its TLS context), which would otherwise be paid again for every session rebuilt after a failure.
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), headers=run.headers) as http:
        call = run.take()
        while call is not None:
            call = await session(run, http, call)


async def session(run: Run, http, call):
    """Make calls on one SDK session, starting with `call`, until the work runs out (-> None) or the transport
    fails (-> the call to go on with: the one that was in flight if it has attempts left)."""
    a = run.a
    connected = False
    try:
        # When the connection under a request breaks, the SDK's streamable-HTTP transport (2.3.0) fails as a whole:
        # the pending call is cancelled and the `async with` raises the transport error. So a session lives until
        # the first transport failure and is then rebuilt, the call in flight carried over.
        async with Client(streamable_http_client(a.url, http_client=http), mode=a.mode,
                          read_timeout_seconds=a.timeout) as client:
            connected = True
            while call is not None:
                # The clock starts at the first attempt, so a session's one-off `server/discover` is not charged
                # to its first call; reconnecting after a failure is (the caller waits for it).
                call[1] = call[1] or time.perf_counter()
                call[0] += 1
                try:
                    result = await client.call_tool(a.tool, a.arguments)
                except MCPError as e:
                    if e.code in RETRYABLE and call[0] < ATTEMPTS:
                        run.note_retry(f"MCPError {e.code}: {e.error.message}"[:160])
                        await anyio.sleep(backoff(call[0]))
                        continue
                    run.finish(call, False, f"MCPError {e.code}: {e.error.message}"[:160])
                else:
                    if result.is_error:
                        text = " ".join(getattr(c, "text", "") for c in result.content)
                        run.finish(call, False, f"isError: {text}"[:160])
                    else:
                        run.finish(call, True)
                call = run.take()
        return None
    except Exception as e:  # the transport failed: while connecting, or under the call in flight
        if call is None:
            return None  # broke while closing an idle session: nothing was lost
        if not connected:
            call[1] = call[1] or time.perf_counter()
            call[0] += 1  # could not even reach the server: that was an attempt too
        run.reconnects += 1
        if call[0] >= ATTEMPTS:
            run.finish(call, False, describe(e))
            return run.take()
        run.note_retry(describe(e))
        await anyio.sleep(backoff(call[0]))
        return call


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 2)


def percentile(sorted_values: list[float], p: float):
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8080/mcp")
    p.add_argument("--calls", type=int, default=10000)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--tool", default="convertUnits")
    p.add_argument("--arguments", type=json.loads, default={"value": 5, "from": "mi", "to": "km"})
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a call counts as timed out")
    p.add_argument("--mode", default="auto", choices=["auto", "legacy", "2026-07-28"],
                   help="the SDK's connect mode: auto probes server/discover and falls back to initialize; legacy "
                   "is the 2025-11-25 initialize handshake; 2026-07-28 skips the probe")
    p.add_argument("--kill-group-at-half", type=int, metavar="PGID")
    p.add_argument("--token-env", metavar="NAME", help="the environment variable holding the server's bearer token")
    run = Run(p.parse_args())
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(run.a.clients):
            tg.start_soon(worker, run)
    seconds = time.perf_counter() - start
    lat = sorted(run.latencies)
    print(json.dumps({
        "calls": run.a.calls, "ok": run.ok, "lost": run.lost, "retried": run.retried,
        "reconnects": run.reconnects, "seconds": round(seconds, 3), "calls_per_s": round(run.a.calls / seconds, 1),
        "p50_ms": ms(percentile(lat, 50)), "p99_ms": ms(percentile(lat, 99)),
        "killed_at": run.killed_at, "errors": run.errors, "retry_causes": run.retry_causes,
    }))
    sys.exit(1 if run.lost else 0)


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # the SDK warns about deprecated features this driver does not use
    anyio.run(main)
