"""Spec: records shaped exactly as EnvScaler's own pipeline writes them import and audit cleanly.

Shapes read from RUC-NLPIR/EnvScaler (not copied): the final env record of
`skel_builder/stage3_check_env/step3_filter_env_by_check_result.py` (11 fields, keyed `env_<n>`), tool
schemas as `analysis_env_src/get_tool_schema.py` converts annotations (`Optional[T]` -> `[T, "null"]`
and not required, `Any` -> `{}`, `List[T]` -> array with items, `Dict[...]` -> bare object,
`float` -> number), `operation_list` entries with `operation_name/operation_description/operation_type`
plus `code`, and the scenario record of `scen_generator/step3_gen_task_check_func.py` (timestamp
`task_id` "MMDD-HHMMSS", `checklist`, `checklist_with_func`) with checks in its prompt's style."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions

CODE = '''from typing import Any, Dict, List, Optional, TypedDict


class NoteInfo(TypedDict):
    note_id: str
    text: str
    tags: List[str]
    meta: Dict[str, Any]
    score: float
    remark: Optional[str]


class NotesApp:
    def __init__(self, init_config: dict):
        # Notes: note_id -> NoteInfo
        self.notes: Dict[str, NoteInfo] = {}
        self.init_config = init_config

    def get_note(self, note_id: str) -> dict:
        """
        Retrieve a note by its id.

        Args:
            note_id (str): The note's id.

        Returns:
            dict: {"success": True, "data": NoteInfo} or {"success": False, "error": str}
        """
        if note_id not in self.notes:
            return {"success": False, "error": "Note not found"}
        return {"success": True, "data": self.notes[note_id]}

    def add_note(self, note_id: str, text: str, tags: List[str], meta: Dict[str, Any], score: float,
                 extra: Any = None, remark: Optional[str] = None) -> dict:
        """
        Add a new note.

        Args:
            note_id (str): Id of the new note; must not exist yet.
            text (str): The note's text; must not be empty.
            tags (List[str]): Tags of the note.
            meta (Dict[str, Any]): Free-form metadata.
            score (float): Importance score.
            extra (Any): Ignored.
            remark (Optional[str]): An optional remark.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if note_id in self.notes:
            return {"success": False, "error": "Note already exists"}
        if not text:
            return {"success": False, "error": "Text must not be empty"}
        self.notes[note_id] = {"note_id": note_id, "text": text, "tags": list(tags), "meta": dict(meta),
                               "score": float(score), "remark": remark}
        return {"success": True, "message": f"Note {note_id} added"}

    def delete_note(self, note_id: str) -> dict:
        """
        Delete a note.

        Args:
            note_id (str): The note to delete.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if note_id not in self.notes:
            return {"success": False, "error": "Note not found"}
        del self.notes[note_id]
        return {"success": True, "message": f"Note {note_id} deleted"}
'''


def _tool(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": {"type": "object", "properties": props, "required": required}}}


def _op(name: str, kind: str) -> dict[str, Any]:
    return {"operation_name": name, "operation_description": f"{name.replace('_', ' ')}.", "operation_type": kind,
            "code": f"def {name}(self, ...): ..."}


ENV = {
    "env_id": "env_1",
    "environment_summary": "Personal notes",
    "environment_introduction": "A personal notes app holding notes with tags, metadata and scores.",
    "state_space_definition": [{"entity": "Note", "attributes": "note_id, text, tags, meta, score, remark",
                                "description": "A note."}],
    "constraints_rules": ["Note ids are unique.", "A note's text is never empty."],
    "operation_list": [_op("get_note", "query"), _op("add_note", "state_change"), _op("delete_note", "state_change")],
    "env_class_name": "NotesApp",
    "env_class_code": CODE,
    "env_class_def": "class NotesApp:\n    def __init__(self, init_config: dict):\n        ...",
    "env_structure": {"states": {"notes": "Dict[str, NoteInfo]"}, "init_config": "init_config"},
    "tools": [
        _tool("get_note", "Retrieve a note by its id.", {"note_id": {"type": "string"}}, ["note_id"]),
        _tool("add_note", "Add a new note.", {
            "note_id": {"type": "string"}, "text": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}}, "meta": {"type": "object"},
            "score": {"type": "number"}, "extra": {}, "remark": {"type": ["string", "null"]}},
            ["note_id", "text", "tags", "meta", "score", "extra"]),
        _tool("delete_note", "Delete a note.", {"note_id": {"type": "string"}}, ["note_id"]),
    ],
}

CONFIG = {"notes": {"n1": {"note_id": "n1", "text": "Buy milk", "tags": ["home"], "meta": {"source": "phone"},
                           "score": 0.5, "remark": None}}}
CHECKS = [
    ("Has the note n2 been added?", "def check_func(final_state):\n"
     "    return 'n2' in final_state.get('notes', {}) and 'n2' not in initial_state.get('notes', {})"),
    ("Has the note n2 been tagged 'work'?", "def check_func(final_state):\n"
     "    note = final_state.get('notes', {}).get('n2')\n    return note is not None and 'work' in note.get('tags', [])"),
    ("Has the note n1 been kept?", "def check_func(final_state):\n"
     "    return final_state['notes'].get('n1') == initial_state['notes']['n1'] and len(final_state['notes']) == 2"),
]
PLAN = [{"name": "add_note", "arguments": {"note_id": "n2", "text": "Send report", "tags": ["work"],
                                            "meta": {"due": "friday"}, "score": 1.0, "extra": None, "remark": None}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("shapes")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_1": ENV}, indent=2, ensure_ascii=False))
    scenario = {"env_id": "env_1", "env_class_name": "NotesApp", "task_id": "1123-182301", "init_config": CONFIG,
                "task": "Add a work note n2 'Send report' due friday.", "checklist": [c for c, _ in CHECKS],
                "checklist_with_func": [{"check_item": c, "check_func": f} for c, f in CHECKS]}
    sft = {k: v for k, v in scenario.items() if k not in ("checklist", "checklist_with_func")}
    (directory / "rl_scenario_metadata.json").write_text(json.dumps([scenario], indent=2))
    (directory / "sft_scenario_metadata.json").write_text(json.dumps([{**sft, "task_id": "1123-182302"}], indent=2))
    write_solutions(directory, {"1123-182301": PLAN})
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool, run_id="shapes")
    with Store.from_url(settings.store.url) as store:
        scenarios = store.query(ImportedScenario, run_id="shapes")
    return {"report": report, "scenarios": scenarios}


def test_an_env_record_as_envscalers_skel_builder_writes_it_is_accepted(imported: dict[str, Any]) -> None:
    summary = imported["report"].summary
    assert summary["envs"] == {"accepted": 1, "rejected": 0}, summary["reasons"]
    assert imported["report"].problems == []


def test_a_scenario_as_envscalers_generator_writes_it_is_verified_by_its_reference_solution(imported: dict[str, Any]) -> None:
    rl = next(s for s in imported["scenarios"] if s.split == "rl")
    assert rl.task_id == "1123-182301" and rl.audit == "verified", (rl.reasons, rl.attempts)
    assert [c.on_initial for c in rl.checks] == [False, False, False]
    sft = next(s for s in imported["scenarios"] if s.split == "sft")
    assert sft.audit == "unproven"
