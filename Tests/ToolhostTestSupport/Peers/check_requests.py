#!/usr/bin/env python3
"""Checks chat-completion request bodies against the `openai` package's request types.

Usage: check_requests.py CAPTURE.jsonl
Each line of CAPTURE.jsonl is {"headers": {...}, "body": {...}} as written by run_fakellm.py --capture.
Every body is validated with pydantic against openai.types.chat.completion_create_params
(CompletionCreateParamsNonStreaming or ...Streaming); `messages` and `tools` are iterated so each element is
validated (pydantic checks Iterable fields lazily), each message against the TypedDict of its role, and unknown
keys are reported (TypedDict validation ignores them). Also: assistant messages with tool_calls must have
content "" (strict servers reject null), and function arguments must be JSON text.
Prints "checked N requests: ok" and exits 0, or prints every problem and exits 1.
"""
import json
import sys

from pydantic import TypeAdapter, ValidationError
from openai.types.chat import completion_create_params as params
from openai.types.chat.chat_completion_assistant_message_param import ChatCompletionAssistantMessageParam
from openai.types.chat.chat_completion_developer_message_param import ChatCompletionDeveloperMessageParam
from openai.types.chat.chat_completion_function_tool_param import ChatCompletionFunctionToolParam
from openai.types.chat.chat_completion_message_function_tool_call_param import (
    ChatCompletionMessageFunctionToolCallParam,
)
from openai.types.chat.chat_completion_system_message_param import ChatCompletionSystemMessageParam
from openai.types.chat.chat_completion_tool_message_param import ChatCompletionToolMessageParam
from openai.types.chat.chat_completion_user_message_param import ChatCompletionUserMessageParam

ROLES = {
    "system": ChatCompletionSystemMessageParam,
    "developer": ChatCompletionDeveloperMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}
NON_STREAMING = TypeAdapter(params.CompletionCreateParamsNonStreaming)
STREAMING = TypeAdapter(params.CompletionCreateParamsStreaming)
ADAPTERS = {role: TypeAdapter(t) for role, t in ROLES.items()}
TOOL = TypeAdapter(ChatCompletionFunctionToolParam)
TOOL_CALL = TypeAdapter(ChatCompletionMessageFunctionToolCallParam)


def keys_of(typed_dict):
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)


def check(body, where, problems):
    def problem(text):
        problems.append(f"{where}: {text}")

    if not isinstance(body, dict):
        problem("the body is not a JSON object")
        return
    adapter = STREAMING if body.get("stream") else NON_STREAMING
    root_type = params.CompletionCreateParamsStreaming if body.get("stream") else params.CompletionCreateParamsNonStreaming
    unknown = set(body) - keys_of(root_type)
    if unknown:
        problem(f"unknown top-level keys {sorted(unknown)}")
    try:
        validated = adapter.validate_python(body)
        # Iterable fields are validated lazily: iterate them to force it.
        list(validated["messages"])
        if "tools" in validated:
            list(validated["tools"])
    except ValidationError as e:
        problem(f"does not match {root_type.__name__}: {e}")
    for i, message in enumerate(body.get("messages", [])):
        role = message.get("role") if isinstance(message, dict) else None
        typed = ROLES.get(role)
        if typed is None:
            problem(f"messages[{i}] has role {role!r}")
            continue
        try:
            ADAPTERS[role].validate_python(message)
        except ValidationError as e:
            problem(f"messages[{i}] ({role}) does not match {typed.__name__}: {e}")
        extra = set(message) - keys_of(typed)
        if extra:
            problem(f"messages[{i}] ({role}) has unknown keys {sorted(extra)}")
        if role == "assistant" and "tool_calls" in message:
            if message.get("content") != "":
                problem(f"messages[{i}] has tool_calls and content {message.get('content')!r}, not \"\"")
            for j, call in enumerate(message["tool_calls"]):
                try:
                    TOOL_CALL.validate_python(call)
                    json.loads(call["function"]["arguments"])
                except (ValidationError, KeyError, TypeError, ValueError) as e:
                    problem(f"messages[{i}].tool_calls[{j}] is not a function tool call with JSON arguments: {e}")
    for i, tool in enumerate(body.get("tools", [])):
        try:
            TOOL.validate_python(tool)
        except ValidationError as e:
            problem(f"tools[{i}] does not match ChatCompletionFunctionToolParam: {e}")
    if "tool_choice" in body and "tools" not in body:
        problem("tool_choice is sent without tools")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    problems = []
    count = 0
    with open(sys.argv[1], encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            count += 1
            check(json.loads(line)["body"], f"request {count} (line {number})", problems)
    if count == 0:
        problems.append("no requests were captured")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"checked {count} requests: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
