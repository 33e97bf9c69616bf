"""Spec: a Postgres password given in --db never reaches what the dashboard and the store show (the
flow run's parameters, its artifacts and logs, the runs table), and the run still reaches its store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import clean_env, envscaler

pytestmark = [pytest.mark.prefect, pytest.mark.postgres]
PASSWORD = "s3cretPW"


def test_a_store_password_is_in_no_flow_parameter_artifact_log_or_run_row(
        tmp_path: Path, mock_server: Any, postgres_server: Any, prefect_api: str) -> None:
    (tmp_path / "home").mkdir()
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"task": "Book a table for two at an Italian restaurant tonight."}\n')
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    PREFECT_API_URL=prefect_api)
    with postgres_server.fresh_database("pw") as plain:  # trust auth: any password is accepted
        url = plain.replace(f"//{postgres_server.user}@", f"//{postgres_server.user}:{PASSWORD}@")
        out = envscaler("run", "-s", str(source), "--run-id", "pw-1", "--stages", "mine", "--db", url, env=env)
        assert out.returncode in (0, 4), out.stderr[-3000:]
        assert PASSWORD not in out.stdout + out.stderr

        from envscaler_core.store import Store

        store = Store.from_url(url)
        try:
            run = store.get_run("pw-1")
        finally:
            store.close()
        assert run is not None and PASSWORD not in json.dumps(run.config)

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterName,
        LogFilter,
        LogFilterFlowRunId,
    )

    with get_client(sync_client=True) as client:
        flow_runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=["pw-1"])))
        assert len(flow_runs) == 1
        flow_run = flow_runs[0]
        assert flow_run.parameters["config"]["store"]["url"].endswith(f":***@{url.split('@', 1)[1]}")
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run.id])))
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run.id])))
    shown = json.dumps(flow_run.parameters) + "".join(str(a.data) for a in artifacts) + "".join(l.message for l in logs)
    assert PASSWORD not in shown
