"""Spec: `run --run-id EXISTING` continues that run with the run's own settings, built as `resume` builds
them (configuration.md: "a run keeps its own settings, so one run is one experiment"): without -c it does
not fall back to the defaults, `--add-sources` neither, and an experiment setting given explicitly now
(config file, environment, flag) that differs from the run's is refused in one line naming it, before the
run's row is touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import load_settings, public_config
from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import assert_one_line_error, clean_env, envscaler

EXPERIMENT = '[mine]\nselect_n = 5\n[validate]\nrounds = 10\n[scen]\nper_env = 2\n[llm.models]\nagent = "gpt-4.1-mini"\n'
TASKS = ('{"task": "Book a table for two at an Italian restaurant tonight."}\n'
         '{"task": "Add milk and eggs to my shopping list."}\n')


@pytest.fixture
def user(tmp_path: Path, mock_server: Any) -> dict[str, Any]:
    (tmp_path / "home").mkdir()
    (tmp_path / "tasks.jsonl").write_text(TASKS)
    (tmp_path / "more.jsonl").write_text('{"task": "Cancel my gym membership renewal."}\n')
    (tmp_path / "factory.toml").write_text(EXPERIMENT)
    db = tmp_path / "runs.duckdb"
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=str(db))
    return {"env": env, "tmp": tmp_path, "db": db}


def _row(db: Path, run_id: str) -> Run:
    store = Store.from_url(str(db))
    try:
        run = store.get_run(run_id)
    finally:
        store.close()
    assert run is not None
    return run


def _experiment(run: Run) -> tuple[Any, ...]:
    c = run.config
    return c["mine"]["select_n"], c["validate"]["rounds"], c["scen"]["per_env"], c["llm"]["models"]["agent"]


@pytest.fixture
def seeded(user: dict[str, Any]) -> dict[str, Any]:
    """A completed run made with factory.toml, written straight into the store (no flow needed)."""
    settings = load_settings(user["tmp"] / "factory.toml", environ={}, overrides={"store": {"url": str(user["db"])}})
    store = Store.from_url(str(user["db"]))
    try:
        store.save_run(Run(run_id="exp1", status="completed", config=public_config(settings),
                           sources=[str(user["tmp"] / "tasks.jsonl")]))
    finally:
        store.close()
    return user


@pytest.mark.parametrize(("how", "needle"), [
    ({"env": {"ENVSCALER_MINE__SELECT_N": "20"}}, "mine.select_n is 5 there, 20 here (ENVSCALER_MINE__SELECT_N)"),
    ({"config": "[scen]\nper_env = 3\n"}, "scen.per_env is 2 there, 3 here (in "),
    ({"args": ["--strict"]}, "mine.strict_sources is False there, True here (--strict)"),
])
def test_an_experiment_setting_given_now_that_differs_is_refused(seeded: dict[str, Any], how: dict[str, Any],
                                                                  needle: str) -> None:
    args = ["run", "-s", str(seeded["tmp"] / "tasks.jsonl"), "--run-id", "exp1", *how.get("args", [])]
    if "config" in how:
        (seeded["tmp"] / "other.toml").write_text(how["config"])
        args += ["-c", str(seeded["tmp"] / "other.toml")]
    before = _row(seeded["db"], "exp1")
    out = envscaler(*args, env={**seeded["env"], **how.get("env", {})})
    assert_one_line_error(out, "run exp1 keeps its own settings", needle)
    assert _row(seeded["db"], "exp1") == before


@pytest.mark.prefect
def test_without_c_and_with_add_sources_the_run_keeps_its_settings(user: dict[str, Any], prefect_api: str) -> None:
    env = {**user["env"], "PREFECT_API_URL": prefect_api}
    tasks, more = str(user["tmp"] / "tasks.jsonl"), str(user["tmp"] / "more.jsonl")
    first = envscaler("run", "-s", tasks, "-c", str(user["tmp"] / "factory.toml"), "--run-id", "exp2",
                      "--stages", "mine", "-q", env=env)
    assert first.returncode in (0, 4), first.stderr[-3000:]
    assert _experiment(_row(user["db"], "exp2")) == (5, 10, 2, "gpt-4.1-mini")
    again = envscaler("run", "-s", tasks, "--run-id", "exp2", "--stages", "mine", "-q", env=env)
    assert again.returncode in (0, 4), again.stderr[-3000:]
    assert _experiment(_row(user["db"], "exp2")) == (5, 10, 2, "gpt-4.1-mini")
    # the run's own settings given again (here with -c) are no change, so not refused
    added = envscaler("run", "-s", more, "--run-id", "exp2", "--add-sources", "-c", str(user["tmp"] / "factory.toml"),
                      "--stages", "mine", "-q", env={**env, "ENVSCALER_MINE__SELECT_N": "5"})
    assert added.returncode in (0, 4), added.stderr[-3000:]
    run = _row(user["db"], "exp2")
    assert _experiment(run) == (5, 10, 2, "gpt-4.1-mini") and more in run.sources, json.dumps(run.config)[:500]
