"""Spec: `make demo` and then the other verbs, without flags, see the same store; the run report opens in a
browser with no network and shows the funnel chart, an env page with its code, and a trajectory as a chat.

The demo runs as a new user would, in a fresh directory with a fresh HOME (so the default store under
~/.local/share/envscaler is empty), reporting to the session's Prefect server. Headless Chromium renders
the report from a file:// URL; screenshots land in the test's tmp dir, and in docs/img/ only when
ENVSCALER_UPDATE_SCREENSHOTS=1."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import ROOT, assert_no_noise, clean_env, envscaler
from tests.ops.chromium import WINDOW, chromium_binary, dump_dom, png_size, screenshot

pytestmark = [pytest.mark.slow, pytest.mark.prefect]


@pytest.fixture(scope="module")
def demo(prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("newuser")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PREFECT_API_URL=prefect_api)
    # as after `make demo`: the venv is not activated, so `envscaler` alone is not on PATH
    out = envscaler("demo", "--max-tasks", "24", env={**env, "PATH": "/usr/local/bin:/usr/bin:/bin"}, cwd=tmp,
                    timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    run_id = re.search(r"^run (demo-\S+): completed", out.stdout, re.M)
    assert run_id, out.stdout
    return {"env": env, "tmp": tmp, "out": out, "run": run_id.group(1)}


def test_the_demo_prints_where_its_report_went_without_noise(demo: dict[str, Any]) -> None:
    report = demo["tmp"] / "home" / ".local" / "share" / "envscaler" / "out" / demo["run"] / "report.html"
    assert f"report     {report}" in demo["out"].stdout and report.is_file()
    assert_no_noise(demo["out"].stderr)


def test_the_demo_says_how_to_call_envscaler_when_it_is_not_on_path(demo: dict[str, Any]) -> None:
    from tests.cli.helpers import ENVSCALER

    stdout = demo["out"].stdout
    assert f"{ENVSCALER} status {demo['run']}" in stdout
    assert f"`envscaler` is not on your PATH: call it as {ENVSCALER}, or first `source {ENVSCALER.parent / 'activate'}`" \
        in stdout
    assert "(mock endpoint: prices are illustrative)" in stdout


def test_status_after_the_demo_lists_its_run_from_the_default_store(demo: dict[str, Any]) -> None:
    elsewhere = demo["tmp"] / "elsewhere"
    elsewhere.mkdir()
    out = envscaler("status", env=demo["env"], cwd=elsewhere)
    assert out.returncode == 0 and demo["run"] in out.stdout and "completed" in out.stdout, out.stdout
    header, row = out.stdout.splitlines()[:2]
    assert header.index("STATUS") == row.index("completed")  # aligned columns
    assert (demo["tmp"] / "home" / ".local" / "share" / "envscaler" / "envscaler.duckdb").is_file()
    assert not (elsewhere / "envscaler.duckdb").exists()


def test_report_writes_one_self_contained_file(demo: dict[str, Any]) -> None:
    target = demo["tmp"] / "r.html"
    out = envscaler("report", demo["run"], "--out", str(target), env=demo["env"])
    assert out.returncode == 0 and out.stdout.strip() == str(target)
    page = target.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the report must not fetch anything"
    assert "<svg" in page and 'id="funnel-chart"' in page


@pytest.fixture(scope="module")
def rendered(demo: dict[str, Any]) -> dict[str, Any]:
    report = demo["tmp"] / "home" / ".local" / "share" / "envscaler" / "out" / demo["run"] / "report.html"
    page = report.read_text()
    env_id = re.search(r'id="env-(env_[0-9a-f]+)"', page).group(1)  # type: ignore[union-attr]
    trajectory = re.search(r'id="traj-([0-9a-f]{12})"', page).group(1)  # type: ignore[union-attr]
    browser = chromium_binary()
    return {"url": report.as_uri(), "env": env_id, "traj": trajectory, "browser": browser,
            "profile": demo["tmp"] / "chrome", "tmp": demo["tmp"]}


def test_the_browser_shows_the_funnel_an_env_and_a_trajectory(rendered: dict[str, Any]) -> None:
    dom = dump_dom(rendered["browser"], rendered["profile"], rendered["url"])
    assert '<svg id="funnel-chart"' in dom and "accepted envs" in dom
    assert f'<section class="env" id="env-{rendered["env"]}"' in dom and '<span class="k">class</span>' in dom
    assert f'id="traj-{rendered["traj"]}"' in dom and 'class="msg user"' in dom and 'class="msg tool"' in dom


@pytest.mark.parametrize("page", ["report-overview", "report-env", "report-trajectory"])
def test_screenshots_of_the_report(rendered: dict[str, Any], page: str) -> None:
    anchor = {"report-overview": "", "report-env": f"#env-{rendered['env']}",
              "report-trajectory": f"#traj-{rendered['traj']}"}[page]
    shot = screenshot(rendered["browser"], rendered["profile"], rendered["url"] + anchor, rendered["tmp"] / f"{page}.png")
    assert png_size(shot) == WINDOW
    if os.environ.get("ENVSCALER_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(shot, ROOT / "docs" / "img" / f"{page}.png")
