"""Spec: an EnvScaler scenario record given twice (the same record twice in a list, or the same scenario
file passed twice to `--scenarios`) is imported once; the second is counted as a duplicate in the run's
source report and named, and the audit, the funnel and both exports hold it once (rt22-R11 F5: `2 kept,
0 duplicate`, `2 verified`, 1 row in the RL export and 2 identical rows in EnvScaler's own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import FIXTURES

ENVSCALER = Path(sys.executable).with_name("envscaler")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ENVSCALER), *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def twice(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The fixture's first env and its first RL record, that record written twice in one scenario file."""
    tmp = tmp_path_factory.mktemp("twice")
    envs = json.loads((FIXTURES / "env_metadata.json").read_text())
    record = json.loads((FIXTURES / "rl_scenario_metadata.json").read_text())[0]
    (tmp / "env_metadata.json").write_text(json.dumps({record["env_id"]: envs[record["env_id"]]}))
    (tmp / "rl_twice.json").write_text(json.dumps([record, record]))
    db = f"duckdb:///{tmp / 'twice.duckdb'}"
    done = _cli("import", "envscaler", "--envs", str(tmp / "env_metadata.json"), "--scenarios",
                str(tmp / "rl_twice.json"), "--db", db, "--run-id", "twice", "--json")
    assert done.returncode == 0, done.stderr
    return {"tmp": tmp, "db": db, "audit": json.loads(done.stdout), "stderr": done.stderr, "record": record}


def test_the_second_record_is_counted_as_a_duplicate_and_named(twice: dict[str, Any]) -> None:
    status = json.loads(_cli("status", "twice", "--db", twice["db"], "--json").stdout)
    [scenarios] = [f for f in status["sources_report"]["files"] if f["path"].endswith("rl_twice.json")]
    assert (scenarios["records"], scenarios["kept"], scenarios["duplicates"], scenarios["malformed"]) == (2, 1, 1, 0)
    assert scenarios["problems"] == [f"rl_twice.json[1]: duplicate of rl_twice.json[0] (the same record: env_id "
                                     f"{twice['record']['env_id']!r}, task_id {twice['record']['task_id']!r}): "
                                     "the first is imported, this one skipped"]
    assert "rl_twice.json[1]: duplicate of rl_twice.json[0]" in twice["stderr"]


def test_the_audit_and_both_exports_hold_it_once(twice: dict[str, Any]) -> None:
    assert sum(twice["audit"]["scenarios"].values()) == 1
    out = twice["tmp"] / "out"
    for fmt in ("rl", "envscaler"):
        done = _cli("export", "twice", "--db", twice["db"], "--format", fmt, "--out", str(out))
        assert done.returncode == 0, done.stderr
    rl = [line for line in (out / "twice" / "rl_scenarios.jsonl").read_text().splitlines() if line.strip()]
    ours = json.loads((out / "twice" / "rl_scenario_metadata.json").read_text())
    assert len(ours) == 1 and ours[0]["task_id"] == twice["record"]["task_id"]
    assert len(rl) <= 1  # the RL export holds verified scenarios only


def test_the_same_scenario_file_given_twice_is_read_once(twice: dict[str, Any]) -> None:
    tmp = twice["tmp"]
    (tmp / "rl_once.json").write_text(json.dumps([twice["record"]]))
    db = f"duckdb:///{tmp / 'again.duckdb'}"
    done = _cli("import", "envscaler", "--envs", str(tmp / "env_metadata.json"), "--scenarios",
                str(tmp / "rl_once.json"), str(tmp / "rl_once.json"), "--db", db, "--run-id", "again", "--json")
    assert done.returncode == 0, done.stderr
    assert sum(json.loads(done.stdout)["scenarios"].values()) == 1
    assert "rl_once.json#2[0]: duplicate of rl_once.json[0] (rl_once.json is given more than once)" in done.stderr
