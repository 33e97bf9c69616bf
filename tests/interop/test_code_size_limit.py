"""Spec: an imported env whose class is past pyast.MAX_SOURCE_CHARS is rejected with a reason naming
the limit, and the import keeps its other envs (sandbox red team round 5, F3: 2 MB of class code took
an import to 1.1 GB; under a memory limit the whole import was lost)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core import pyast
from tests.interop.conftest import run_import, settings_for
from tests.interop.test_env_verdicts import DIRECTORY


def _record(env_id: str, code: str) -> dict[str, Any]:
    tool = {"type": "function", "function": {"name": "get_user", "description": "get a user", "parameters": {
        "type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}}
    return {"env_id": env_id, "environment_summary": "users", "environment_introduction": "Users.",
            "state_space_definition": [], "constraints_rules": [], "env_class_name": "UserDirectory",
            "env_class_code": code, "tools": [tool],
            "operation_list": [{"operation_name": "get_user", "operation_type": "query"}]}


def _import_beside_a_good_env(tmp_path: Path, pool: Any, other: dict[str, Any]) -> Any:
    """An import of a sound env and `other`, with no scenarios."""
    directory = tmp_path / "files"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_good": _record("env_good", DIRECTORY),
                                                            other["env_id"]: other}))
    (directory / "rl_scenario_metadata.json").write_text("[]")
    (directory / "sft_scenario_metadata.json").write_text("[]")
    return run_import(directory, settings_for(tmp_path), pool)


def test_an_env_past_the_code_limit_is_rejected_and_the_others_are_kept(tmp_path: Path, sandbox_pool: Any) -> None:
    big = DIRECTORY + "# " + "x" * pyast.MAX_SOURCE_CHARS + "\n"
    report = _import_beside_a_good_env(tmp_path, sandbox_pool, _record("env_big", big))
    assert report.summary["envs"] == {"accepted": 1, "rejected": 1}
    [reason] = report.summary["reasons"]["rejected_envs"]
    assert "MAX_SOURCE_CHARS" in reason and f"{len(big):,} characters" in reason


def test_an_env_with_more_tools_than_a_class_may_have_is_rejected(tmp_path: Path, sandbox_pool: Any) -> None:
    """The factory's static checks refuse a class past static_checks.MAX_TOOLS; the import applied no
    limit (each tool is probed: ~70 ms of host work a tool)."""
    from envscaler_core.synth.static_checks import MAX_TOOLS

    many = _record("env_many", DIRECTORY)
    many["tools"] = many["tools"] * (MAX_TOOLS + 1)
    report = _import_beside_a_good_env(tmp_path, sandbox_pool, many)
    assert report.summary["envs"] == {"accepted": 1, "rejected": 1}
    [reason] = report.summary["reasons"]["rejected_envs"]
    assert "MAX_TOOLS" in reason and f"{MAX_TOOLS + 1} tools" in reason
