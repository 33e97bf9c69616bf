"""Spec: an import's scenarios are rolled out with `envscaler run --run-id IMP --stages rollout,export`
(no -s), and the run stays an import: re-importing the same files changes nothing. `run -s` refuses
EnvScaler's env metadata as it refuses every file that holds no task, whatever the stages (outside
check round 4, F4: `run --stages rollout,export -s <the import's files>` read nothing, turned the import
into a factory run, and the re-import was then refused).

The CLI runs from this tree (`python -m envscaler.cli`), so the spec checks this tree's code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.importer import ImportReport
from envscaler_core.models import Run
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.trajectory import Trajectory
from envscaler_core.store import Store
from tests.cli.helpers import assert_one_line_error, clean_env
from tests.interop.conftest import fixture_files, run_import, settings_for

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envscaler.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=400, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any, mock_server: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("rollout-import")
    directory = fixture_files(tmp)
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="imp")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=settings.store.url)
    return {"dir": directory, "settings": settings, "env": env, "tmp": tmp, "pool": sandbox_pool}


def _row(settings: Any, run_id: str = "imp") -> Run:
    with Store.from_url(settings.store.url) as store:
        run = store.get_run(run_id)
    assert run is not None
    return run


def test_run_refuses_envscalers_env_metadata_as_a_file_with_no_task(imported: dict[str, Any]) -> None:
    out = _cli("run", "-s", str(imported["dir"] / "env_metadata.json"), "--run-id", "fresh", "--stages",
               "rollout,export", env=imported["env"])
    assert_one_line_error(out, "yields no task", "EnvScaler's env metadata", "--stages rollout,export")


def test_task_files_are_refused_for_an_import(imported: dict[str, Any]) -> None:
    (imported["tmp"] / "tasks.jsonl").write_text('{"task": "Add milk and eggs to my shopping list."}\n')
    before = _row(imported["settings"])
    out = _cli("run", "--run-id", "imp", "-s", str(imported["tmp"] / "tasks.jsonl"), "--stages", "rollout,export",
               env=imported["env"])
    assert_one_line_error(out, "run imp is an EnvScaler import", "--stages rollout,export")
    assert _row(imported["settings"]) == before


def test_only_the_rollout_and_export_stages_run_on_an_import(imported: dict[str, Any]) -> None:
    out = _cli("run", "--run-id", "imp", env=imported["env"])
    assert_one_line_error(out, "only its rollout and export stages run on it")


def test_without_sources_only_an_import_goes_on(imported: dict[str, Any]) -> None:
    out = _cli("run", "--run-id", "nothing-here", "--stages", "rollout,export", env=imported["env"])
    assert_one_line_error(out, "Missing option '--source' / '-s'", "there is no run nothing-here")


@pytest.mark.prefect
@pytest.mark.slow
def test_an_import_rolls_out_stays_an_import_and_re_imports_unchanged(imported: dict[str, Any], prefect_api: str) -> None:
    out = _cli("run", "--run-id", "imp", "--stages", "rollout,export", "-q", "--json",
               env={**imported["env"], "PREFECT_API_URL": prefect_api})
    assert out.returncode == 0, out.stderr[-3000:]
    settings = imported["settings"]
    with Store.from_url(settings.store.url) as store:
        trajectories = sorted(t.fingerprint for t in store.query(Trajectory, run_id="imp"))
        audits = sorted((s.fingerprint, s.audit) for s in store.query(ImportedScenario, run_id="imp"))
    assert trajectories, "the verified imported scenarios were rolled out"
    row = _row(settings)
    assert row.origin == "import" and row.stages == ["rollout", "export"], row

    again: ImportReport = run_import(imported["dir"], settings, imported["pool"], run_id="imp")
    assert again.run_id == "imp"
    with Store.from_url(settings.store.url) as store:
        assert sorted(t.fingerprint for t in store.query(Trajectory, run_id="imp")) == trajectories
        assert sorted((s.fingerprint, s.audit) for s in store.query(ImportedScenario, run_id="imp")) == audits
    assert _row(settings) == row
