"""Spec: the SFT files as their consumers read them (outside check, 2026-11-26): chat templates get
JSON-object arguments and 9-alphanumeric call ids from sft_hf.jsonl; OpenAI's fine-tuning upload gets only
its documented keys in sft_messages.jsonl; old `datasets` versions get one type per JSON path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jinja2

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.models import ToolSchema
from envscaler_core.rollout import run_rollout
from envscaler_core.store import Store
from tests.export.consumers import assert_hf_chat_row, assert_openai_chat_row, read_jsonl, read_sft
from tests.export.records import Populated, verified
from tests.export.sft_helpers import MalformedArgs, with_ids_of
from tests.scenarios.helpers import library_env, scenario

# The Hugging Face tool-use convention as the Qwen2.5 / Llama-3.1 templates apply it: the call's
# arguments go through `tojson`, so a JSON string comes out quoted a second time.
HF_STYLE_TEMPLATE = (
    "{% for m in messages %}{% for c in m.tool_calls or [] %}"
    '<tool_call>{"name": {{ c.function.name | tojson }}, "arguments": {{ c.function.arguments | tojson }}}</tool_call>'
    "{% endfor %}{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{% endfor %}"
)


def _render(row: dict) -> str:  # type: ignore[type-arg]
    env = jinja2.Environment()
    env.filters["tojson"] = lambda v: json.dumps(v, ensure_ascii=False)  # what transformers' template env does
    return env.from_string(HF_STYLE_TEMPLATE).render(messages=row["messages"], tools=row["tools"])


def test_a_chat_template_renders_hf_file_arguments_as_json_objects(store: Store, populated: Populated, tmp_path: Path) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path)
    rows = read_jsonl(tmp_path / populated.run_id / "sft_hf.jsonl")
    assert len(rows) == 3
    for row in rows:
        assert_hf_chat_row(row)
        rendered = _render(row)
        assert '"arguments": {"book_id": "b1"' in rendered and '"arguments": "{' not in rendered


def test_hf_rows_are_the_openai_rows_with_object_arguments(store: Store, populated: Populated, tmp_path: Path) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path)
    hf = read_jsonl(tmp_path / populated.run_id / "sft_hf.jsonl")
    pairs = read_sft(tmp_path / populated.run_id)
    for h, (row, meta) in zip(hf, pairs, strict=True):
        assert h["id"] == meta["id"] and h["tools"] == row["tools"]
        as_strings = [{**m, "tool_calls": [{**c, "function": {**c["function"], "arguments": json.dumps(
            c["function"]["arguments"])}} for c in m["tool_calls"]]} if m.get("tool_calls") else m for m in h["messages"]]
        assert [{k: v for k, v in m.items()} for m in as_strings] == [
            {**m, **({"tool_calls": [{**c, "function": {**c["function"], "arguments": json.dumps(json.loads(
                c["function"]["arguments"]))}} for c in m["tool_calls"]]} if m.get("tool_calls") else {})}
            for m in row["messages"]]


def test_call_ids_are_nine_alphanumerics_answered_and_stable(store: Store, populated: Populated, tmp_path: Path) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path / "a")
    export_run(store, populated.run_id, Settings(), tmp_path / "b")
    for name in ("sft_messages.jsonl", "sft_hf.jsonl"):
        first = (tmp_path / "a" / populated.run_id / name).read_bytes()
        assert first == (tmp_path / "b" / populated.run_id / name).read_bytes()
    for row, _ in read_sft(tmp_path / "a" / populated.run_id):
        ids = [c["id"] for m in row["messages"] for c in m.get("tool_calls") or []]
        assert ids and all(len(i) == 9 and i.isalnum() for i in ids) and len(set(ids)) == len(ids)
        assert_openai_chat_row(row)  # every tool message answers a call of the turn before it


def test_openai_file_holds_only_openai_keys_and_provenance_is_in_the_sidecar(
    store: Store, populated: Populated, tmp_path: Path
) -> None:
    thinking = populated.trajectories[0].model_copy(deep=True)
    thinking.messages[2] = {**thinking.messages[2], "reasoning_content": "Lend b1 first."}
    store.upsert([thinking], populated.run_id)
    export_run(store, populated.run_id, Settings(), tmp_path)
    pairs = read_sft(tmp_path / populated.run_id)
    assert len(pairs) == 3  # the trajectory's fingerprint leaves its messages out: the copy replaced it
    for row, meta in pairs:
        assert set(row) == {"messages", "tools"}
        assert_openai_chat_row(row)
        assert set(meta) == {"line", "id", "env_id", "scenario_fp", "mode", "reward"}
    (row, _), = [(r, m) for r, m in pairs if m["id"] == thinking.fingerprint]
    assert row["messages"] == with_ids_of(row["messages"], [
        {k: v for k, v in m.items() if k != "reasoning_content"} for m in thinking.messages])
    (hf,) = [h for h in read_jsonl(tmp_path / populated.run_id / "sft_hf.jsonl") if h["id"] == thinking.fingerprint]
    assert hf["messages"][2]["reasoning_content"] == "Lend b1 first." and "<think>Lend b1 first.</think>" in _render(hf)


def test_exported_tool_schemas_use_anyof_not_a_list_type(store: Store, populated: Populated, tmp_path: Path) -> None:
    listed = populated.trajectories[0].model_copy(deep=True)
    index = next(i for i, t in enumerate(listed.tools) if t.function.parameters.get("properties"))
    tool = listed.tools[index].model_dump(mode="json")
    name = next(iter(tool["function"]["parameters"]["properties"]))
    tool["function"]["parameters"]["properties"][name] = {"type": ["string", "null"], "description": "or none"}
    listed.tools[index] = ToolSchema.model_validate(tool)
    store.upsert([listed], populated.run_id)
    export_run(store, populated.run_id, Settings(), tmp_path)
    out = tmp_path / populated.run_id
    texts = {n: (out / n).read_text() for n in ("sft_messages.jsonl", "sft_hf.jsonl", "envs.jsonl")}
    assert all('"type":["' not in text for text in texts.values())
    (row, _), = [(r, m) for r, m in read_sft(out) if m["id"] == listed.fingerprint]
    assert row["tools"][index]["function"]["parameters"]["properties"][name] == {
        "description": "or none", "anyOf": [{"type": "string"}, {"type": "null"}]}


def test_a_trajectory_failing_checks_with_malformed_messages_is_counted_under_both_reasons(
    store: Store, populated: Populated, runtime, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    bad = asyncio.run(run_rollout(library_env(), verified(scenario()), runtime, None, Settings(), agent=MalformedArgs()))
    assert not bad.all_passed
    store.upsert([bad], populated.run_id)
    manifest = export_run(store, populated.run_id, Settings(), tmp_path)  # require_all_passed: the filter drops it too
    assert manifest.dropped == {"trajectory: not all checks passed (reward N)": 1,
                                "trajectory: not all checks passed (reward N) + malformed OpenAI messages": 1}
    assert sum(manifest.dropped.values()) + manifest.counts.trajectories_kept == manifest.counts.trajectories
