"""Spec: `envscaler eval bfcl-mt --run-id RUN` on an existing evaluation continues it with the run's own
settings, as `resume` and `run --run-id` do: the shell's values of settings the run keeps no longer
replace the run's record, and one given explicitly with another value is refused, naming it. (Run as
`python -m envscaler.cli` from this tree, with the gold agent: no model is asked.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.store import Store
from tests.cli.helpers import ROOT, assert_one_line_error, clean_env

pytestmark = [pytest.mark.prefect]
RUN = "bfcl-own-settings"
EVAL = ("eval", "bfcl-mt", "--subset", "base", "--limit", "1", "--agent", "gold", "--run-id", RUN)


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envscaler.cli", *args], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT)}, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL)


def _repair_attempts(db: str) -> Any:
    with Store.from_url(db, create=False) as store:
        return store.get_run(RUN).config["llm"]["repair_attempts"]


@pytest.fixture(scope="module")
def evaluated(prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An evaluation started with a setting it keeps (llm.repair_attempts = 5) given in its shell."""
    tmp = tmp_path_factory.mktemp("evalown")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PREFECT_API_URL=prefect_api)
    db = f"duckdb:///{tmp / 'store.duckdb'}"
    out = _cli(*EVAL, "--db", db, env={**env, "ENVSCALER_LLM__REPAIR_ATTEMPTS": "5"}, cwd=tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    assert _repair_attempts(db) == 5
    return {"env": env, "tmp": tmp, "db": db}


def test_running_it_again_from_a_plain_shell_keeps_the_runs_settings(evaluated: dict[str, Any]) -> None:
    out = _cli(*EVAL, "--db", evaluated["db"], env=evaluated["env"], cwd=evaluated["tmp"])
    assert out.returncode == 0, out.stderr[-3000:]
    assert _repair_attempts(evaluated["db"]) == 5


def test_another_value_given_explicitly_is_refused_naming_it(evaluated: dict[str, Any]) -> None:
    out = _cli(*EVAL, "--db", evaluated["db"], env={**evaluated["env"], "ENVSCALER_LLM__REPAIR_ATTEMPTS": "3"},
               cwd=evaluated["tmp"])
    assert_one_line_error(out, "llm.repair_attempts", "ENVSCALER_LLM__REPAIR_ATTEMPTS", f"run {RUN}")
    assert _repair_attempts(evaluated["db"]) == 5


def test_an_llm_evaluation_run_again_without_model_keeps_the_runs_model(
        mock_server: Any, evaluated: dict[str, Any], tmp_path: Path) -> None:
    """Before, the model --model leaves out was the shell's llm.models.agent, and the run was refused
    for evaluating "another model"."""
    endpoint = tmp_path / "endpoint.json"  # how the run reaches its model: the shell's business
    endpoint.write_text(json.dumps({"llm": {"base_url": mock_server.base_url, "api_key": "mock", "backoff_base_s": 0.05}}))
    args = ("eval", "bfcl-mt", "--subset", "base", "--limit", "1", "--agent", "llm", "--run-id", "bfcl-llm-own",
            "-c", str(endpoint), "--db", evaluated["db"])
    first = _cli(*args, "--model", "mock-bfcl", env=evaluated["env"], cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    again = _cli(*args, env=evaluated["env"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "model mock-bfcl" in again.stdout
