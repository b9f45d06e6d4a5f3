#!/usr/bin/env python3
"""Drives `toolhost serve --mcp` with the official Python MCP client (mcp 2.3.0: stdio_client + ClientSession).

Usage: mcp_client_check.py TOOLHOST_BINARY PLUGIN_FOLDER
Prints one JSON object with what it saw; exits 0 when every check passed, 1 with the failed checks otherwise.
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary, folder):
    failures = []
    seen = {}

    def check(condition, what):
        if not condition:
            failures.append(what)

    params = StdioServerParameters(command=binary, args=["serve", "--mcp", "--plugins", folder])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["protocolVersion"] = init.protocol_version
            seen["serverName"] = init.server_info.name
            check(init.protocol_version == "2025-11-25", f"protocol version {init.protocol_version}")
            check(init.capabilities.tools is not None, "no tools capability")

            tools = (await session.list_tools()).tools
            by_name = {t.name: t for t in tools}
            seen["tools"] = sorted(by_name)
            weather = by_name.get("getWeather")
            check(weather is not None, "getWeather not listed")
            if weather:
                schema = weather.input_schema
                check(schema.get("type") == "object", "getWeather inputSchema type")
                check(schema.get("required") == ["city"], f"getWeather required {schema.get('required')}")
                check("city" in schema.get("properties", {}), "getWeather has no city property")
                check(weather.output_schema is not None, "getWeather has no outputSchema")
                a = weather.annotations
                check(a is not None and a.read_only_hint is True, "getWeather readOnlyHint")
                check(a is not None and a.destructive_hint is False, "getWeather destructiveHint")
                check(weather.title == "Typical weather (climate normals)", f"getWeather title {weather.title}")

            result = await session.call_tool("getWeather", {"city": "Boston", "month": 11})
            seen["boston"] = result.structured_content
            check(not result.is_error, f"getWeather Boston failed: {result.content}")
            sc = result.structured_content or {}
            check(sc.get("city") == "Boston" and sc.get("month") == 11, f"structuredContent {sc}")
            check(any(c.type == "text" and "Boston" in c.text for c in result.content), "no text content")

            bad = await session.call_tool("getWeather", {"city": "Boston", "month": 13})
            seen["invalid"] = [c.text for c in bad.content if c.type == "text"]
            check(bad.is_error is True, "an invalid call is not isError")
            check(any("month" in t for t in seen["invalid"]), f"the invalid call's text {seen['invalid']}")

            unknown = await session.call_tool("getWeather", {"city": "Atlantis"})
            seen["unknownCity"] = [c.text for c in unknown.content if c.type == "text"]
            check(unknown.is_error is True, "an unknown city is not isError")

            try:
                await session.call_tool("noSuchTool", {})
                failures.append("an unknown tool was not a JSON-RPC error")
            except Exception as e:  # McpError
                seen["unknownTool"] = str(e)

            await session.send_ping()
    print(json.dumps({"seen": seen, "failures": failures}, default=str))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
