"""One small factory run (the SMALL config of test_factory.py, run id `e2e`) for the whole session.

test_factory.py inspects it and re-runs it; test_operations.py compares its funnel and token spend
with runs under a budget cap and under LLM faults. The run only has to happen once for both: the
operations specs read its summary and nothing else, and the rerun spec leaves its store as it was.
Both files carry `xdist_group(SMALL_RUN_GROUP)`, so `make test` sends them to the same worker.
"""

from __future__ import annotations

from typing import Any

import pytest

SMALL_RUN_GROUP = "small-factory-run"


@pytest.fixture(scope="session")
def small_factory_run(prefect_api: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.flows.test_factory import run, small_settings

    tmp = tmp_path_factory.mktemp("factory")
    config = small_settings(tmp, mock_server)
    before = mock_server.stats()["requests_total"]
    summary = run("e2e", config)
    return {"summary": summary, "config": config, "requests": mock_server.stats()["requests_total"] - before, "tmp": tmp}
