"""Spec: a skipped scenario record's reason names what is really wrong (round-trip check 4, F6). An
env id that differs from the metadata's only in Unicode normalisation (NFD 'café' against NFC) printed
exactly like it; now the message says so and shows both as escapes. An empty task was refused "because
EnvScaler's loaders read it", which they do happily (its runtime plays it); now the reason is the real one."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from envscaler_core.interop.read import read_envs, read_scenarios
from tests.interop.conftest import FIXTURES

NFC = unicodedata.normalize("NFC", "env café")
NFD = unicodedata.normalize("NFD", "env café")


def _reasons(tmp_path: Path, records: list[dict[str, Any]]) -> list[str]:
    env = json.loads((FIXTURES / "env_metadata.json").read_text())["env_1"]
    (tmp_path / "e.json").write_text(json.dumps({NFC: env}))
    (tmp_path / "rl.json").write_text(json.dumps(records))
    envs, problems, skipped = read_envs(tmp_path / "e.json")
    assert not problems
    _, problems = read_scenarios([tmp_path / "rl.json"], envs, skipped)
    return [p.reason for p in problems]


def _record(**overrides: Any) -> dict[str, Any]:
    record = {"env_id": NFC, "env_class_name": "X", "task_id": "t1", "init_config": {}, "task": "Do it.",
              "checklist": [], "checklist_with_func": []}
    return {**record, **overrides}


def test_an_env_id_differing_only_in_unicode_normalisation_is_named_so(tmp_path: Path) -> None:
    [reason] = _reasons(tmp_path, [_record(env_id=NFD)])
    assert "only in Unicode normalisation" in reason
    assert ascii(NFC) in reason and ascii(NFD) in reason


def test_an_unknown_non_ascii_env_id_is_shown_as_escapes_too(tmp_path: Path) -> None:
    [reason] = _reasons(tmp_path, [_record(env_id="env thé")])
    assert reason == "env_id 'env thé' is not in the env metadata (as escapes: 'env th\\xe9')"


def test_an_empty_task_says_the_agent_would_have_nothing_to_do_not_that_loaders_need_it(tmp_path: Path) -> None:
    [reason] = _reasons(tmp_path, [_record(task="  ")])
    assert reason.startswith("'task' is empty: the agent would be given nothing to do")
    assert "loaders" not in reason


def test_an_env_id_differing_in_compatibility_forms_says_nfkc_and_escapes_the_non_ascii_side(tmp_path: Path) -> None:
    """Interop re-check F6e: full-width 'ＥＮＶ' against 'ENV' was called "the same text, other code points"
    (NFC), and only the ASCII side was shown "as escapes"."""
    env = json.loads((FIXTURES / "env_metadata.json").read_text())["env_1"]
    (tmp_path / "e.json").write_text(json.dumps({"\uff25\uff2e\uff36_wide": env}))
    (tmp_path / "rl.json").write_text(json.dumps([_record(env_id="ENV_wide")]))
    envs, _, skipped = read_envs(tmp_path / "e.json")
    [problem] = read_scenarios([tmp_path / "rl.json"], envs, skipped)[1]
    assert "NFKC" in problem.reason and "NFC:" not in problem.reason
    assert "\\uff25\\uff2e\\uff36_wide" in problem.reason and "'ENV_wide'" in problem.reason
