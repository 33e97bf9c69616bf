"""Spec: the reference-solutions sidecar's `key` is computed exactly as docs/interop.md says (its Python
snippet, run as written, gives the key the importer matches), and an entry whose key matches no record says
how the key is computed. Before (differential round 3, F6) the docs said only "key hashes env id, task id,
init_config and task": one of 64 plausible encodings worked, found by trial."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from envscaler_core.interop.solutions import read_solutions, scenario_key, solution_entry, solutions_document

ROOT = Path(__file__).resolve().parents[2]
RECORD = {"env_id": "env_lib", "env_class_name": "Library", "task_id": 7, "init_config": {"b": {"é": [1, 2.5]}},
          "task": "Lend Dune — now.", "checklist": [], "checklist_with_func": []}


def _key_snippet() -> str:
    doc = (ROOT / "docs" / "interop.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", doc.split("How the `key` is computed", 1)[1], re.S)
    assert block is not None, "no python block after 'How the `key` is computed'"
    return textwrap.dedent(block.group(1))  # the block sits in a list item


def test_the_documented_snippet_computes_the_key_the_importer_matches() -> None:
    scope: dict[str, object] = {"record": RECORD}
    exec(_key_snippet(), scope)  # noqa: S102 - the doc's own three lines
    assert scope["key"] == scenario_key(RECORD)


def test_a_key_matching_no_record_says_how_keys_are_computed(tmp_path: Path) -> None:
    path = tmp_path / "sol.json"
    entry = {**solution_entry(RECORD, []), "key": "0" * 64}
    path.write_text(json.dumps(solutions_document([entry])))
    [note] = read_solutions(path).unmatched(path, {scenario_key(RECORD)})
    assert "sha256" in note and 'sort_keys=True, separators=(",", ":"), ensure_ascii=False' in note
