"""Spec: LlamaFactory sharegpt export with tools, plus the dataset_info.json entry that registers it."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.store import Store
from tests.export.consumers import assert_llamafactory_sharegpt_row, load_with_datasets, read_jsonl
from tests.export.records import Populated


def _export(store: Store, populated: Populated, tmp_path: Path) -> tuple[Path, dict, list[dict]]:
    export_run(store, populated.run_id, Settings(), tmp_path)
    folder = tmp_path / populated.run_id
    (name, info), = json.loads((folder / "dataset_info.json").read_text()).items()
    assert name.startswith("envscaler_")
    return folder, info, read_jsonl(folder / info["file_name"])


def test_dataset_info_registers_the_file_with_its_columns_and_tags(store: Store, populated: Populated, tmp_path: Path) -> None:
    folder, info, rows = _export(store, populated, tmp_path)
    assert info["formatting"] == "sharegpt" and (folder / info["file_name"]).is_file()
    assert all(set(info["columns"].values()) <= set(row) for row in rows)


def test_every_row_follows_llamafactory_sharegpt_rules(store: Store, populated: Populated, tmp_path: Path) -> None:
    _, info, rows = _export(store, populated, tmp_path)
    assert len(rows) == 3  # the reward-0 trajectory is left out by default
    for row in rows:
        assert_llamafactory_sharegpt_row(row, info)


def test_tool_calls_become_function_call_and_observation_turns(store: Store, populated: Populated, tmp_path: Path) -> None:
    _, _, rows = _export(store, populated, tmp_path)
    replay = next(r for r in rows if r["id"] == populated.trajectories[0].fingerprint)
    roles = [t["from"] for t in replay["conversations"]]
    assert roles == ["human", "function_call", "observation", "function_call", "observation", "gpt"]
    call = json.loads(replay["conversations"][1]["value"])
    assert call == {"name": "lend_book", "arguments": {"book_id": "b1", "member": "Ana"}}
    assert json.loads(replay["conversations"][2]["value"])["success"] is True
    assert replay["system"] == populated.trajectories[0].messages[0]["content"]


def test_parallel_calls_are_one_function_call_turn_holding_a_list(store: Store, populated: Populated, tmp_path: Path) -> None:
    _, _, rows = _export(store, populated, tmp_path)
    parallel = next(r for r in rows if r["id"] == populated.trajectories[1].fingerprint)
    calls = json.loads(parallel["conversations"][1]["value"])
    assert [c["arguments"]["book_id"] for c in calls] == ["b1", "b2"]
    assert len(parallel["conversations"][2]["value"].splitlines()) == 2


def test_the_datasets_library_reads_it(store: Store, populated: Populated, tmp_path: Path) -> None:
    folder, info, rows = _export(store, populated, tmp_path)
    ds = load_with_datasets(folder / info["file_name"], tmp_path / "hf")
    assert ds.num_rows == len(rows)
    assert [json.loads(t)[0]["name"] for t in ds["tools"]] == ["list_books"] * len(rows)


def _default_tool_formatter(tools: list[dict]) -> str:
    """What LlamaFactory 0.9.5's default tool formatter reads of a tool (data/tool_utils.py, read from its
    wheel): each property's top-level `type`, its `enum` joined as strings, its `items.type`."""
    lines = []
    for tool in tools:
        for name, param in tool["parameters"]["properties"].items():
            enum = ", ".join(param["enum"]) if param.get("enum") else ""
            lines.append(f"{name} ({param.get('type', '')}): {param.get('description', '')} {enum}")
    return "\n".join(lines)


def test_a_nullable_enum_parameter_is_printable_by_llamafactorys_default_formatter(populated: Populated) -> None:
    """An outside check: a parameter typed ["string", "null"] with null in its enum made LlamaFactory's
    default formatter raise TypeError on every row of that env (and print a Python list as the type)."""
    from envscaler_core.export.llamafactory import llamafactory_line
    from envscaler_core.models import ToolSchema

    traj = populated.trajectories[0]
    nullable = ToolSchema.model_validate({"type": "function", "function": {
        "name": "list_books", "description": "List books.", "parameters": {"type": "object", "properties": {
            "genre": {"type": ["string", "null"], "enum": ["sf", "poetry", None], "description": "a genre"}}}}})
    row, problem = llamafactory_line("fp", traj.model_copy(update={"tools": [*traj.tools, nullable]}))
    assert problem is None and row is not None
    text = _default_tool_formatter(json.loads(row["tools"]))
    assert "genre (string): a genre (or null) sf, poetry" in text
