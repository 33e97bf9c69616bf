"""How the consumers of each export read it, written from their documented conventions (not from our
exporter), so a test fails when our files stop being what the trainer expects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROLES = {"system", "user", "assistant", "tool"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_with_datasets(path: Path, cache: Path):  # type: ignore[no-untyped-def]
    """What TRL / verifiers / most trainers do: `datasets.load_dataset` on the local file."""
    import datasets

    kind = "parquet" if path.suffix == ".parquet" else "json"
    return datasets.load_dataset(kind, data_files=str(path), split="train", cache_dir=str(cache))


OPENAI_MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "weight"}
"""What OpenAI's chat fine-tuning format documents on a message (a line holds messages, tools,
parallel_tool_calls and the deprecated functions, nothing else)."""
OPENAI_LINE_KEYS = {"messages", "tools", "parallel_tool_calls", "functions"}


def read_sft(out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(row of sft_messages.jsonl, its line of the provenance sidecar), paired by the sidecar's `line`."""
    rows, meta = read_jsonl(out / "sft_messages.jsonl"), read_jsonl(out / "sft_messages_meta.jsonl")
    assert [m["line"] for m in meta] == list(range(1, len(rows) + 1))
    return list(zip(rows, meta, strict=True))


def assert_openai_chat_row(row: dict[str, Any]) -> None:
    """OpenAI's chat fine-tuning format with tools: only its documented keys, arguments as JSON strings."""
    assert set(row) <= OPENAI_LINE_KEYS, set(row) - OPENAI_LINE_KEYS
    for tool in row["tools"]:
        assert tool["type"] == "function"
        fn = tool["function"]
        assert isinstance(fn["name"], str) and isinstance(fn["description"], str)
        assert fn["parameters"]["type"] == "object"
    pending: list[str] = []
    for i, msg in enumerate(row["messages"]):
        role = msg["role"]
        assert role in ROLES, f"message {i}: role {role!r}"
        if role != "tool":
            assert not pending, f"message {i}: calls {pending} unanswered before a {role} message"
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            assert isinstance(msg.get("content"), str) or (msg.get("content") is None and calls), f"message {i}"
            for call in calls:
                assert call["type"] == "function" and isinstance(call["id"], str) and call["id"]
                assert isinstance(call["function"]["name"], str)
                assert isinstance(call["function"]["arguments"], str), "arguments must be a JSON string"
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                pending.append(call["id"])
        elif role == "tool":
            assert msg["tool_call_id"] in pending, f"message {i}: answers no pending call"
            pending.remove(msg["tool_call_id"])
            assert isinstance(msg["content"], str)
        else:
            assert isinstance(msg["content"], str)
        assert set(msg) <= OPENAI_MESSAGE_KEYS, set(msg) - OPENAI_MESSAGE_KEYS
    assert not pending, f"calls {pending} never answered"


def assert_hf_chat_row(row: dict[str, Any]) -> None:
    """The Hugging Face chat-template convention: a tool call's `arguments` is a dict, and its id is 9
    alphanumeric characters (Mistral v0.3's template raises on any other), answered by a tool message."""
    pending: list[str] = []
    for i, msg in enumerate(row["messages"]):
        for call in msg.get("tool_calls") or []:
            assert isinstance(call["function"]["arguments"], dict), f"message {i}: arguments must be a dict"
            assert len(call["id"]) == 9 and call["id"].isalnum(), f"message {i}: call id {call['id']!r}"
            pending.append(call["id"])
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in pending, f"message {i}: answers no pending call"
            pending.remove(msg["tool_call_id"])
    assert not pending, f"calls {pending} never answered"


def assert_llamafactory_sharegpt_row(row: dict[str, Any], info: dict[str, Any]) -> None:
    """LlamaFactory's sharegpt rules: columns and tags from dataset_info; user/observation turns at odd
    positions (1-based), assistant/function turns at even ones; function_call values are JSON with a
    name and an arguments object (a list of them for parallel calls); tools is a JSON string."""
    columns, tags = info["columns"], info["tags"]
    turns = row[columns["messages"]]
    assert turns and len(turns) % 2 == 0, f"{len(turns)} turns"
    user_side = {tags["user_tag"], tags["observation_tag"]}
    model_side = {tags["assistant_tag"], tags["function_tag"]}
    for index, turn in enumerate(turns):
        role, value = turn[tags["role_tag"]], turn[tags["content_tag"]]
        assert role in (user_side if index % 2 == 0 else model_side), f"turn {index}: {role}"
        assert isinstance(value, str)
        if role == tags["function_tag"]:
            calls = json.loads(value)
            for call in calls if isinstance(calls, list) else [calls]:
                assert isinstance(call["name"], str) and isinstance(call["arguments"], dict)
    assert isinstance(row[columns["system"]], str)
    tools = json.loads(row[columns["tools"]])
    assert all({"name", "description", "parameters"} <= set(t) for t in tools)
