"""Spec: a factory run is visible on the Prefect dashboard, as its flow run and its funnel artifact.

The session's small factory run (tests/fixtures/small_run.py, run id `e2e`) went to the session Prefect
server; headless Chromium then renders the dashboard's flow-run, artifacts and artifact pages, and the rendered DOM must show the run's name
and the funnel. Screenshots land in the test's tmp dir, and in docs/img/ only when
ENVSCALER_UPDATE_SCREENSHOTS=1 (so a normal test run never dirties the checkout).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.small_run import SMALL_RUN_GROUP
from tests.ops.chromium import WINDOW, chromium_binary, dump_dom_showing, png_size, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.prefect, pytest.mark.slow, pytest.mark.xdist_group(SMALL_RUN_GROUP)]

REPO = Path(__file__).resolve().parents[2]
RUN_ID = "e2e"
ARTIFACT_KEY = f"funnel-{RUN_ID}"


async def _server_view(flow_run_id: Any) -> dict[str, Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    async with get_client() as client:
        run = await client.read_flow_run(flow_run_id)
        flow = await client.read_flow(run.flow_id)
        artifacts = await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[ARTIFACT_KEY])))
    # test_factory.py's rerun of the same run id publishes the key again, from another flow run
    return {"run": run, "flow": flow, "artifacts": [a for a in artifacts if a.flow_run_id == flow_run_id]}


@pytest.fixture(scope="module")
def published(prefect_api: str, small_factory_run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
              ) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("dashboard")
    view = asyncio.run(_server_view(small_factory_run["flow_run_id"]))
    ui = prefect_api.removesuffix("/api")
    return {**view, "ui": ui, "tmp": tmp, "browser": chromium_binary(), "profile": tmp / "chrome"}


def test_the_server_has_the_flow_run_and_its_funnel_artifact(published: dict[str, Any]) -> None:
    run, artifacts = published["run"], published["artifacts"]
    assert published["flow"].name == "envscaler-factory"
    assert run.state is not None and run.state.is_completed()
    assert len(artifacts) == 1, artifacts
    assert f"EnvScaler run `{RUN_ID}`" in artifacts[0].data and "selected_topics" in artifacts[0].data


def test_the_flow_run_page_shows_the_run(published: dict[str, Any]) -> None:
    run = published["run"]
    dom = dump_dom_showing(published["browser"], published["profile"], f"{published['ui']}/runs/flow-run/{run.id}",
                           [f"<title>Flow Run: {run.name}", "envscaler-factory"])
    assert f"<title>Flow Run: {run.name}" in dom, dom[-3000:]
    assert "envscaler-factory" in dom


def test_the_artifacts_page_lists_the_funnel(published: dict[str, Any]) -> None:
    dom = dump_dom_showing(published["browser"], published["profile"], f"{published['ui']}/artifacts", [ARTIFACT_KEY])
    assert ARTIFACT_KEY in dom, dom[-3000:]


def test_the_artifact_page_renders_the_funnel_table(published: dict[str, Any]) -> None:
    artifact = published["artifacts"][0]
    stages = ("source_tasks", "selected_topics", "accepted_envs", "trajectories")
    dom = dump_dom_showing(published["browser"], published["profile"], f"{published['ui']}/artifacts/artifact/{artifact.id}",
                           [f">{stage}<" for stage in stages])
    for stage in stages:
        assert f">{stage}<" in dom, f"{stage} not rendered: {dom[-3000:]}"


@pytest.mark.parametrize("page", ["dashboard", "funnel-artifact"])
def test_screenshots_of_the_dashboard(published: dict[str, Any], page: str) -> None:
    path = {"dashboard": f"runs/flow-run/{published['run'].id}",
            "funnel-artifact": f"artifacts/artifact/{published['artifacts'][0].id}"}[page]
    shot = screenshot(published["browser"], published["profile"], f"{published['ui']}/{path}",
                      published["tmp"] / f"{page}.png")
    assert png_size(shot) == WINDOW
    if os.environ.get("ENVSCALER_UPDATE_SCREENSHOTS") == "1":
        target = REPO / "docs" / "img" / f"{page}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)
