"""A non-streaming request answered with a stream: `data:` chunks in the 200 body.

Some proxies and gateways (and servers that ignore `stream: false`) send the chunks of a streamed
reply (`chat.completion.chunk` objects, one per `data:` line, `data: [DONE]` last) as the body of a
request that did not ask to stream. Each chunk has one reading, so the reply is put back together the
way a streaming client does: content deltas joined, tool-call deltas merged by their `index` (the id,
type and name from the fragment that has them, argument strings joined), the last `finish_reason`
of each choice, and `usage` from the chunk that carries it (the last, by OpenAI's convention). A
stream that stops before its end (no `finish_reason` and no `[DONE]`) or holds a chunk that is not
JSON cannot be read as a whole reply: ValueError, which the gateway retries like any transient bad
answer (`retry.BadAnswer`).
"""

from __future__ import annotations

import json
from typing import Any

_JOINED = ("content", "reasoning_content", "reasoning", "refusal")


def looks_like_sse(raw: bytes) -> bool:
    """Whether the body is an event stream rather than one JSON document."""
    head = raw.lstrip()[:16]
    return head.startswith((b"data:", b"event:", b"id:", b": "))


def _events(text: str) -> list[str]:
    """The `data` of each event (multi-line data joined by newlines, as the SSE spec says)."""
    events, data = [], []
    for line in text.splitlines():
        if not line.strip():
            if data:
                events.append("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        events.append("\n".join(data))
    return events


def _merge_delta(message: dict[str, list[str]], calls: dict[int, dict[str, Any]], delta: dict[str, Any]) -> None:
    """One chunk's delta into the choice's pieces: texts and argument strings are collected as lists
    and joined once at the end (joining as they come copies the text so far for every chunk)."""
    for key in _JOINED:
        piece = delta.get(key)
        if isinstance(piece, str) and piece:
            message.setdefault(key, []).append(piece)
    for position, fragment in enumerate(delta.get("tool_calls") or []):
        if not isinstance(fragment, dict):
            continue
        index = fragment.get("index", position)
        slot = calls.setdefault(index if isinstance(index, int) else position,
                                {"id": None, "type": "function", "function": {"name": "", "arguments": []}})
        if fragment.get("id"):
            slot["id"] = fragment["id"]
        fn = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
        if fn.get("name") and not slot["function"]["name"]:
            slot["function"]["name"] = fn["name"]
        args = fn.get("arguments")
        if isinstance(args, str):
            if isinstance(slot["function"]["arguments"], list):
                slot["function"]["arguments"].append(args)
        elif isinstance(args, dict):
            slot["function"]["arguments"] = args


def _joined_call(call: dict[str, Any]) -> dict[str, Any]:
    args = call["function"]["arguments"]
    return {**call, "function": {**call["function"], "arguments": "".join(args) if isinstance(args, list) else args}}


def completion_from_sse(raw: bytes) -> dict[str, Any]:
    """One chat completion put together from the chunks in `raw`; ValueError when it cannot be."""
    text = raw.decode("utf-8")  # UnicodeDecodeError is a ValueError
    chunks: list[dict[str, Any]] = []
    done = False
    for n, data in enumerate(_events(text), start=1):
        if data.strip() == "[DONE]":
            done = True
            break
        try:
            chunk = json.loads(data)
        except RecursionError:
            raise ValueError("an event-stream chunk nests JSON too deeply to read") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"event-stream chunk {n} is not JSON ({exc.msg})") from None
        if not isinstance(chunk, dict):
            raise ValueError(f"event-stream chunk {n} is a JSON {type(chunk).__name__}, not an object")
        if chunk.get("error") is not None and not chunk.get("choices"):
            return {"error": chunk["error"]}  # a failure relayed mid-stream: read as the error it is
        chunks.append(chunk)
    if not chunks:
        raise ValueError("an event stream without a chunk")
    messages: dict[int, dict[str, list[str]]] = {}
    calls: dict[int, dict[int, dict[str, Any]]] = {}
    finish: dict[int, Any] = {}
    usage: Any = None
    for chunk in chunks:
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            index = choice.get("index", 0) if isinstance(choice.get("index", 0), int) else 0
            message = messages.setdefault(index, {})
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else choice.get("message")
            if isinstance(delta, dict):
                _merge_delta(message, calls.setdefault(index, {}), delta)
            if choice.get("finish_reason"):
                finish[index] = choice["finish_reason"]
    if not done and not finish:
        raise ValueError(f"an event stream that stops before its end ({len(chunks)} chunk(s), "
                         "no finish_reason and no [DONE])")
    choices = []
    for index in sorted(messages):
        message: dict[str, Any] = {"role": "assistant", "content": None}
        message.update({key: "".join(parts) for key, parts in messages[index].items()})
        if calls.get(index):
            message["tool_calls"] = [_joined_call(call) for _, call in sorted(calls[index].items())]
        choices.append({"index": index, "message": message, "finish_reason": finish.get(index)})
    first = chunks[0]
    body: dict[str, Any] = {"id": first.get("id"), "object": "chat.completion", "created": first.get("created"),
                            "model": first.get("model"), "choices": choices}
    if usage is not None:
        body["usage"] = usage
    return body
