"""Spec: a run whose work finished while the Prefect API stopped answering (its server killed before the
flow could report its end) is reported from the store: its status and exit code, with one warning. The
CLI used to say `failed`, exit 1, for a run whose store said completed and whose exports were written
(an outside check killed the dashboard's server mid-run).

The Prefect API is reached through `tests/cli/dying_prefect.py`, which "dies" at the flow run's first final
state report: deterministic, and the real client, engine and CLI throughout."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.dying_prefect import DyingPrefect
from tests.cli.helpers import clean_env, envscaler

pytestmark = [pytest.mark.prefect]
def test_a_run_that_finished_is_reported_from_the_store_when_prefect_is_gone(
        prefect_api: str, mock_server: Any, tmp_path: Path) -> None:
    proxy = DyingPrefect(prefect_api)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"task": "What is the capital of France?"}\n{"task": "Tell me a joke about cats."}\n')
    (tmp_path / "home").mkdir()
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    PREFECT_API_URL=proxy.api_url, PREFECT_CLIENT_MAX_RETRIES="0")
    try:
        out = envscaler("run", "-s", str(source), "--run-id", "gone", "--quiet", env=env, timeout=300)
    finally:
        proxy.server_close()
    assert proxy.dead.is_set(), ("the flow never reported a final state through the proxy", out.returncode,
                                 out.stderr[-3000:])
    assert out.returncode == 4, (out.returncode, out.stderr[-3000:])  # as without the outage: finished, empty
    assert "run gone: empty" in out.stdout, out.stdout[-2000:]
    assert "warning: the Prefect API stopped answering before run gone could report its end" in out.stderr
    assert "error: run gone failed" not in out.stderr and "Traceback" not in out.stderr
    status = json.loads(envscaler("status", "gone", "--json", env=env).stdout)
    assert status["status"] == "empty"


def test_an_evaluation_that_completed_is_reported_from_the_store_when_prefect_is_gone(
        prefect_api: str, tmp_path: Path) -> None:
    proxy = DyingPrefect(prefect_api)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    (tmp_path / "home").mkdir()
    env = clean_env(tmp_path / "home", PREFECT_API_URL=proxy.api_url, PREFECT_CLIENT_MAX_RETRIES="0")
    try:
        out = envscaler("eval", "bfcl-mt", "--subset", "base", "--limit", "2", "--agent", "gold", "--run-id", "gone-eval",
                        "--json", env=env, timeout=300)
    finally:
        proxy.server_close()
    assert proxy.dead.is_set(), ("the flow never reported a final state through the proxy", out.returncode,
                                 out.stderr[-3000:])
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    assert json.loads(out.stdout)["subsets"]["base"] == {"tasks": 2, "valid": 2, "accuracy": 1.0}
    assert "warning: the Prefect API stopped answering before run gone-eval could report its end" in out.stderr
    assert "unexpected" not in out.stderr and "Traceback" not in out.stderr
