"""Spec: ToolACE files (ShareGPT-like records whose system text holds the tool list) are a Stage 1
source, recognised by content, with the same malformed/filtered/duplicate accounting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.mine import read_sources

SYSTEM = ("You are an expert in composing functions. You are given a question and a set of possible functions.\n"
          "Here is a list of functions in JSON format that you can invoke:\n"
          '[{"name": "Cancel Order", "description": "Cancel an order", "parameters": {"type": "dict", '
          '"properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}].\n'
          "Should you decide to return the function call(s), put it in the format of [func1(params_name=params_value)]")


def record(first: Any, *, system: Any = SYSTEM, turns: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    convo = [first] if first is not None else []
    convo += turns if turns is not None else [{"from": "assistant", "value": '[Cancel Order(order_id="58291")]'},
                                              {"from": "tool", "value": '[{"name": "Cancel Order", "results": {"ok": true}}]'}]
    return {"system": system, "conversations": convo}


def user(text: Any) -> dict[str, Any]:
    return {"from": "user", "value": text}


def test_a_toolace_list_yields_each_dialogues_first_user_turn(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps([record(user("Cancel my order 58291, please. ")),
                                record(user("Move my dentist appointment to Friday."))], indent=2))
    result = read_sources([path])
    assert [(t.text, t.dataset) for t in result.tasks] == [
        ("Cancel my order 58291, please.", "toolace"), ("Move my dentist appointment to Friday.", "toolace")]
    assert [t.origin for t in result.tasks] == ["data.json:2", "data.json:19"]
    assert result.counts[str(path)].dataset == "toolace"


def test_malformed_filtered_and_duplicate_records_are_each_counted(tmp_path: Path) -> None:
    path = tmp_path / "toolace.json"
    records = [
        record(user("Cancel my order 58291.")),
        record(user("Cancel my order 58291.")),                        # duplicate
        record(user("帮我取消订单")),                                    # filtered: non-English
        record(user("Show me the photo of my order")),                 # filtered: multimodal
        record({"from": "assistant", "value": "Hi"}),                 # malformed: first turn not the user's
        {"system": SYSTEM},                                            # malformed: no conversations
        record(user(["not", "text"])),                                 # malformed: value not a string
        record(user("Book a table for two."), system=["not text"]),    # malformed: system not a string
        "a string",                                                    # malformed: not an object
        record(None, turns=[]),                                        # malformed: no turns at all
        record(None, turns=[{"from": "system", "value": SYSTEM}, {"from": "human", "value": "Refund order 77."}]),
    ]
    path.write_text(json.dumps(records))
    result = read_sources([path])
    counts = result.counts[str(path)]
    assert [t.text for t in result.tasks] == ["Cancel my order 58291.", "Refund order 77."]
    assert (counts.raw, counts.kept, counts.duplicates, counts.filtered, counts.malformed) == (5, 2, 1, 2, 6)
    assert counts.filter_reasons == {"non-english": 1, "multimodal": 1}
    assert [p.reason for p in result.problems] == [
        "toolace: the first turn is from 'assistant', not the user", "toolace: 'conversations' is not a list",
        "toolace: the first user turn's 'value' is not a string", "toolace: 'system' is not a string",
        "ToolACE record is not a JSON object", "toolace: no turn after the system turns"]


def test_toolace_as_json_lines_is_recognised_per_record(tmp_path: Path) -> None:
    path = tmp_path / "toolace.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [record(user("Cancel order 12.")), {"task": "Archive file z"}]) + "\n")
    result = read_sources([path])
    assert [(t.text, t.dataset, t.origin) for t in result.tasks] == [
        ("Cancel order 12.", "toolace", "toolace.jsonl:1"), ("Archive file z", "jsonl", "toolace.jsonl:2")]


def test_an_api_bank_list_is_still_api_bank(tmp_path: Path) -> None:
    path = tmp_path / "bank.json"
    path.write_text(json.dumps([{"instruction": "", "input": "User: Add a meeting tomorrow.\nGenerate API Request: ",
                                 "output": ""}]))
    assert [(t.text, t.dataset) for t in read_sources([path]).tasks] == [("Add a meeting tomorrow.", "api-bank")]
