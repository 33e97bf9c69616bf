"""Spec: a run that produces nothing says so, and where a run's outputs go is one place.

Three tasks none of which is stateful (the tester's `nostate.jsonl`) finish with status `empty`, exit 4,
a note naming the stage that came out empty and what it means, and the judge's reason for every task it
dropped (summary, `status --json`, report). The run's exports and report go beside the default store,
whatever directory the command starts from; `export` writes to the run's own directory (or `--out`) and
prints absolute paths. Reusing the run id with other sources is refused unless `--add-sources`.
Runs against the mock label their costs as illustrative."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import assert_no_noise, assert_one_line_error, clean_env, envscaler

pytestmark = [pytest.mark.prefect]
RUN = "nostate"
NOT_STATEFUL = ['{"task": "What is the capital of France?"}', '{"task": "Tell me a joke about cats."}',
                '{"task": "Compute 17 times 23."}']


@pytest.fixture(scope="module")
def empty_run(prefect_api: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("empty")
    (tmp / "home").mkdir()
    here = tmp / "somewhere"
    here.mkdir()
    source = here / "nostate.jsonl"
    source.write_text("\n".join(NOT_STATEFUL) + "\n")
    env = clean_env(tmp / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock", PREFECT_API_URL=prefect_api)
    out = envscaler("run", "-s", "nostate.jsonl", "--run-id", RUN, env=env, cwd=here)
    data = tmp / "home" / ".local" / "share" / "envscaler"
    return {"env": env, "tmp": tmp, "here": here, "out": out, "data": data, "source": source}


def test_a_run_that_produces_nothing_exits_4_and_says_why(empty_run: dict[str, Any]) -> None:
    out = empty_run["out"]
    assert out.returncode == 4, out.stderr[-3000:]
    assert f"run {RUN}: empty (nothing produced)" in out.stdout
    assert "note: stateful tasks: 0 — no source task was judged stateful" in out.stdout
    assert "the run produced nothing to train on" in out.stdout
    assert "finished, but produced nothing (stateful tasks: 0" in out.stderr
    assert_no_noise(out.stderr)


def test_the_judges_reasons_are_shown_for_every_dropped_task(empty_run: dict[str, Any]) -> None:
    stdout = empty_run["out"].stdout
    assert "judged not stateful: 3 of 3 source tasks" in stdout
    for line in NOT_STATEFUL:
        assert json.loads(line)["task"] in stdout
    assert stdout.count("judge: ") == 3
    shown = envscaler("status", RUN, "--json", env=empty_run["env"])
    data = json.loads(shown.stdout)
    assert data["status"] == "empty" and data["notes"] and data["judged"]["not_stateful"] == 3
    assert all(example["reason"] and example["origin"].startswith("nostate.jsonl:")
               for example in data["judged"]["not_stateful_examples"])


def test_costs_against_the_mock_are_labelled_illustrative(empty_run: dict[str, Any]) -> None:
    assert "(mock endpoint: prices are illustrative)" in empty_run["out"].stdout
    shown = json.loads(envscaler("status", RUN, "--json", env=empty_run["env"]).stdout)
    assert shown["mock_llm"] is True and shown["progress"]["mock_llm"] is True  # live lines say "(mock)" too


def test_outputs_go_beside_the_default_store_with_absolute_paths(empty_run: dict[str, Any]) -> None:
    exports = empty_run["data"] / "out" / RUN
    assert f"exports: {exports}" in empty_run["out"].stdout and f"report: {exports / 'report.html'}" in empty_run["out"].stdout
    assert (exports / "manifest.json").is_file() and (exports / "report.html").is_file()
    assert sorted(p.name for p in empty_run["here"].iterdir()) == ["nostate.jsonl"]  # nothing in the cwd


def test_the_report_lists_the_judges_reasons_and_the_note(empty_run: dict[str, Any]) -> None:
    page = (empty_run["data"] / "out" / RUN / "report.html").read_text()
    assert "Source tasks judged not stateful (3)" in page and "nothing produced" in page
    assert "Compute 17 times 23." in page
    umask = os.umask(0)
    os.umask(umask)
    assert (empty_run["data"] / "out" / RUN / "report.html").stat().st_mode & 0o777 == 0o666 & ~umask


def test_export_from_another_directory_writes_where_the_run_wrote(empty_run: dict[str, Any], tmp_path: Path) -> None:
    out = envscaler("export", RUN, env=empty_run["env"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    exports = empty_run["data"] / "out" / RUN
    assert f"-> {exports} " in out.stdout.splitlines()[0]
    assert list(tmp_path.iterdir()) == []


def test_export_out_overrides_and_prints_an_absolute_path(empty_run: dict[str, Any], tmp_path: Path) -> None:
    out = envscaler("export", RUN, "--out", "mine", env=empty_run["env"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"-> {tmp_path / 'mine' / RUN} " in out.stdout.splitlines()[0]
    assert (tmp_path / "mine" / RUN / "manifest.json").is_file()


def test_report_from_another_directory_lands_in_the_runs_directory(empty_run: dict[str, Any], tmp_path: Path) -> None:
    out = envscaler("report", RUN, env=empty_run["env"], cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == str(empty_run["data"] / "out" / RUN / "report.html")


def test_resuming_a_finished_run_does_nothing_and_says_so(empty_run: dict[str, Any]) -> None:
    out = envscaler("resume", RUN, env=empty_run["env"])
    assert out.returncode == 0, out.stderr
    assert f"run {RUN} is already finished (it produced nothing): nothing to resume" in out.stdout
    assert json.loads(envscaler("status", RUN, "--json", env=empty_run["env"]).stdout)["status"] == "empty"


def test_reusing_the_run_id_with_other_sources_is_refused(empty_run: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"task": "What time is it in Tokyo?"}\n')
    out = envscaler("run", "-s", str(other), "--run-id", RUN, env=empty_run["env"])
    assert_one_line_error(out, f"run {RUN} already exists with other sources", f"new: {other}",
                          f"not given now: {empty_run['source']}", "--add-sources")
    assert json.loads(envscaler("status", RUN, "--json", env=empty_run["env"]).stdout)["funnel"]["source_tasks"] == 3


def test_add_sources_adds_them_to_the_run(empty_run: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"task": "What time is it in Tokyo?"}\n{"task": "Translate hello into German."}\n')
    out = envscaler("run", "-s", str(other), "--run-id", RUN, "--add-sources", "--quiet", env=empty_run["env"])
    assert out.returncode == 4, out.stderr[-2000:]
    data = json.loads(envscaler("status", RUN, "--json", env=empty_run["env"]).stdout)
    assert data["funnel"]["source_tasks"] == 5 and data["judged"]["not_stateful"] == 5


def test_a_file_added_to_a_run_counts_the_runs_tasks_as_duplicates(empty_run: dict[str, Any], tmp_path: Path) -> None:
    """Duplicates are counted across all the run's files, first seen wins: a file holding only tasks the
    run already has adds no task, and is refused as any file that yields none (it used to be reported
    "3 kept, 0 duplicate" while source_tasks stayed the same)."""
    copy = tmp_path / "copy.jsonl"
    copy.write_text(empty_run["source"].read_text())
    out = envscaler("run", "-s", str(copy), "--run-id", RUN, "--add-sources", env=empty_run["env"])
    assert_one_line_error(out, f"source {copy} yields no task", "3 duplicates of earlier tasks")
    report = json.loads(envscaler("status", RUN, "--json", env=empty_run["env"]).stdout)["sources_report"]
    assert "copy.jsonl" not in [Path(f["path"]).name for f in report["files"]], "nothing was recorded"


def test_adding_sources_without_out_keeps_the_runs_output_directory(empty_run: dict[str, Any], tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text('{"task": "What is 2 plus 2?"}\n')
    second.write_text('{"task": "Name a prime number."}\n')
    started = envscaler("run", "-s", str(first), "--run-id", "kept-out", "--out", str(tmp_path / "chosen"), "--quiet",
                        env=empty_run["env"])
    assert started.returncode == 4, started.stderr[-2000:]
    added = envscaler("run", "-s", str(second), "--run-id", "kept-out", "--add-sources", "--quiet", env=empty_run["env"])
    assert added.returncode == 4, added.stderr[-2000:]
    assert f"report: {tmp_path / 'chosen' / 'kept-out' / 'report.html'}" in added.stdout
    assert not (empty_run["data"] / "out" / "kept-out").exists()
