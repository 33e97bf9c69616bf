"""Spec: every export's JSON Lines file has one row per line for every reader, also one that splits
with str.splitlines() (which also breaks at U+2028, U+2029 and U+0085, characters JSON leaves raw)."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.store import Store
from tests.export.records import populate

ODD = "one\u2028two\u2029three\x85four"


def test_line_separators_inside_strings_are_escaped_in_every_jsonl_export(store: Store, runtime, tmp_path: Path) -> None:
    populated = populate(store, runtime)
    traj = populated.trajectories[0]
    messages = [dict(m) for m in traj.messages]
    messages[1]["content"] = f"{messages[1]['content']} {ODD}"
    store.upsert([traj.model_copy(update={"messages": messages})], populated.run_id)
    export_run(store, populated.run_id, Settings(), tmp_path)  # all formats
    files = sorted((tmp_path / populated.run_id).glob("*.jsonl"))
    assert len(files) >= 3
    found = False
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        assert lines == text.split("\n")[:-1], path.name  # no line break but "\n"
        rows = [json.loads(line) for line in lines]
        found = found or any(ODD in json.dumps(row, ensure_ascii=False) for row in rows)
    assert found  # the characters are kept, escaped
