#!/usr/bin/env python3
"""The official Python MCP SDK (mcp 2.3.0) in both protocol eras, as a peer of toolhost's tests.

Usage:
  mcp_eras_peer.py server modern     a stdio server that speaks only 2026-07-28 (initialize is refused with -32022)
  mcp_eras_peer.py server dual       the SDK's default stdio server: 2026-07-28, or initialize for 2025-11-25
  mcp_eras_peer.py server http PORT  the SDK's server over Streamable HTTP on 127.0.0.1:PORT/mcp, both eras, its
                                     defaults (answers as server-sent event streams, sessions for initialize)
  mcp_eras_peer.py client MODE CMD…  a client (MODE: 2026-07-28 pinned, legacy = 2025-11-25 initialize, auto =
                                     server/discover first) against the server CMD: lists the tools, calls
                                     getWeather for Boston in November, prints one JSON object with what it saw.
  mcp_eras_peer.py client MODE URL   the same over Streamable HTTP, when the one argument starts with http.
  mcp_eras_peer.py progress MODE CMD…|URL  calls the tool `progress` (steps 3) with a progress callback and prints
                                     the reports it got and the result.

The servers have one tool, echo(text) -> {"echoed": text}. The SDK has no public switch for a 2026-07-28-only
stdio server; `server modern` drives the modern half of its dual-era loop (mcp.server.runner._serve_modern_stream).
"""
import json
import sys
import warnings
from typing import TypedDict

import anyio


class Echoed(TypedDict):
    echoed: str


def build():
    from mcp.server.caching import CacheHint
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("eras-peer", version="2.3.0",
                       cache_hints={"tools/list": CacheHint(ttl_ms=60_000, scope="public")})

    @server.tool()
    def echo(text: str) -> Echoed:
        """Echo the text back."""
        return Echoed(echoed=text)

    return server


async def serve_modern():
    from mcp.server.runner import _serve_modern_stream
    from mcp.server.stdio import stdio_server

    low = build()._lowlevel_server
    async with low.lifespan(low) as state:
        async with stdio_server() as (read, write):
            await _serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)


def target(command):
    """A server for the SDK's Client: a URL (Streamable HTTP) as it is, else a command to run on stdio."""
    from mcp.client.stdio import StdioServerParameters

    if len(command) == 1 and command[0].startswith("http"):
        return command[0]
    return StdioServerParameters(command=command[0], args=command[1:])


async def client(mode, command):
    from mcp import Client

    seen = {"mode": mode}
    try:
        async with Client(target(command), mode=mode) as c:
            seen["negotiated"] = c.protocol_version
            listed = await c.list_tools()
            seen["tools"] = [t.name for t in listed.tools]
            seen["ttlMs"] = getattr(listed, "ttl_ms", None)
            seen["cacheScope"] = getattr(listed, "cache_scope", None)
            result = await c.call_tool("getWeather", {"city": "Boston", "month": 11})
            seen["isError"] = result.is_error
            seen["structured"] = result.structured_content
            seen["text"] = [b.text for b in result.content if b.type == "text"]
    except Exception as e:  # noqa: BLE001 - the test reads the failure from the report
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        seen["failure"] = f"{type(e).__name__}: {getattr(e, 'error', e)}"[:600]
    print(json.dumps(seen))


async def progress(mode, command):
    from mcp import Client

    seen = {"mode": mode, "reports": []}

    async def report(progress, total, message):
        seen["reports"].append({"progress": progress, "total": total, "message": message})

    try:
        async with Client(target(command), mode=mode) as c:
            result = await c.call_tool("progress", {"steps": 3, "interval": 0.3}, progress_callback=report)
            seen["isError"] = result.is_error
            seen["structured"] = result.structured_content
    except Exception as e:  # noqa: BLE001 - the test reads the failure from the report
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        seen["failure"] = f"{type(e).__name__}: {getattr(e, 'error', e)}"[:600]
    print(json.dumps(seen))


def main(argv):
    warnings.simplefilter("ignore")
    if argv[:2] == ["server", "modern"]:
        anyio.run(serve_modern)
    elif argv[:2] == ["server", "dual"]:
        build().run()
    elif argv[:2] == ["server", "http"] and len(argv) == 3:
        import uvicorn

        app = build().streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=int(argv[2]), log_level="warning", access_log=False)
    elif len(argv) >= 3 and argv[0] == "progress":
        anyio.run(progress, argv[1], argv[2:])
    elif len(argv) >= 3 and argv[0] == "client":
        anyio.run(client, argv[1], argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
