"""Spec: every setup and input mistake ends in one line naming the cause and the fix, exit 2, with no
traceback and nothing written: bad sources, an uncreatable store, a store another run holds, a refused
API key, a bad environment variable, an unwritable export directory; read-only verbs create no store."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import SLICE, SMALL_TOML, assert_no_noise, assert_one_line_error, clean_env, envscaler


@pytest.fixture
def user(tmp_path: Path, mock_server: Any) -> dict[str, Any]:
    """A new user's shell: the mock as endpoint, a store path of their own, a small config."""
    (tmp_path / "home").mkdir()
    config = tmp_path / "factory.toml"
    config.write_text(SMALL_TOML)
    db = tmp_path / "store" / "runs.duckdb"
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=f"duckdb:///{db}")
    return {"env": env, "db": db, "config": config, "tmp": tmp_path}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


BAD_SOURCES = [
    ("tasks.csv", "id,task\n1,Book a flight to Rome\n", "looks like CSV"),
    ("tasks.xml", "<tasks><task>Book a flight</task></tasks>\n", "looks like XML"),
    ("empty.jsonl", "", "the file is empty"),
    ("broken.json", '[{"input": "User: book a flight"},\n{"input": "Us', "a JSON list that does not parse"),
    ("toolace.json", json.dumps([{"system": "s", "conversations": [{"from": "assistant", "value": "Hello"}]}]),
     "nor ToolACE dialogues"),
    ("notask.jsonl", '{"text": "Book a hotel"}\n', "no string 'task'"),
    ("nonstring.jsonl", '{"task": 42}\n', "'task' missing or not a string"),
]


@pytest.mark.parametrize(("name", "text", "needle"), BAD_SOURCES, ids=[b[0] for b in BAD_SOURCES])
def test_a_bad_source_stops_the_run_before_anything_is_written(user: dict[str, Any], name: str, text: str,
                                                             needle: str) -> None:
    source = write(user["tmp"] / name, text)
    out = envscaler("run", "-s", str(source), "-c", str(user["config"]), env=user["env"])
    assert_one_line_error(out, f"source {source} yields no task", needle)
    assert not user["db"].exists() and not (user["tmp"] / "out").exists()


def test_one_bad_file_among_good_ones_still_stops_the_run(user: dict[str, Any]) -> None:
    bad = write(user["tmp"] / "t.csv", "id,task\n1,x\n")
    out = envscaler("run", "-s", str(SLICE), "-s", str(bad), "-c", str(user["config"]), env=user["env"])
    assert_one_line_error(out, "t.csv yields no task")
    assert not user["db"].exists()


def test_strict_refuses_a_malformed_record(user: dict[str, Any]) -> None:
    source = write(user["tmp"] / "t.jsonl", '{"task": "Book a table for two at Luigi\'s tonight"}\nnot json\n')
    out = envscaler("run", "-s", str(source), "--strict", "-c", str(user["config"]), env=user["env"])
    assert_one_line_error(out, "--strict", "t.jsonl:2: invalid JSON")
    assert not user["db"].exists()


@pytest.mark.parametrize("where", ["proc", "under-a-file"])
def test_an_uncreatable_store_is_one_line(user: dict[str, Any], where: str) -> None:
    blocker = write(user["tmp"] / "plain-file", "x")
    url = "duckdb:////proc/x/y.duckdb" if where == "proc" else f"duckdb:///{blocker}/y.duckdb"
    out = envscaler("run", "-s", str(SLICE), "-c", str(user["config"]), "--db", url, env=user["env"])
    line = assert_one_line_error(out, "cannot create the DuckDB store", "--db")
    assert where == "proc" or "is a file, not a directory" in line


@pytest.mark.parametrize("verb", [["status"], ["status", "r1"], ["export", "r1"], ["report", "r1"],
                                  ["serve-mcp", "env_x"], ["resume", "r1"]])
def test_read_only_verbs_never_create_a_store(user: dict[str, Any], verb: list[str]) -> None:
    out = envscaler(*verb, env=user["env"])
    assert not user["db"].exists() and not user["db"].parent.exists()
    if verb == ["status"]:
        assert out.returncode == 0 and "no runs yet" in out.stdout
    else:
        assert_one_line_error(out, "no store at")


def test_the_loser_of_two_runs_on_one_duckdb_file_is_not_told_to_resume(user: dict[str, Any]) -> None:
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from envscaler_core.store import Store\n"
        f"s = Store.from_url('duckdb:///{user['db']}'); print('held', flush=True); time.sleep(120)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        out = envscaler("run", "-s", str(SLICE), "-c", str(user["config"]), env=user["env"])
    finally:
        holder.kill()
        holder.wait()
    line = assert_one_line_error(out, "already open in another process", f"PID {holder.pid}")
    assert "resume" not in line


def test_a_bad_environment_variable_is_named(user: dict[str, Any]) -> None:
    out = envscaler("run", "-s", str(SLICE), "-c", str(user["config"]),
                    env={**user["env"], "ENVSCALER_MINE__SELECT_N": "abc"})
    line = assert_one_line_error(out, "ENVSCALER_MINE__SELECT_N='abc'", "mine.select_n")
    assert "factory.toml" not in line


@pytest.mark.prefect
def test_a_rejected_api_key_is_one_line(user: dict[str, Any], prefect_api: str) -> None:
    out = envscaler("run", "-s", str(SLICE), "-c", str(user["config"]), "--quiet",
                    env={**user["env"], "OPENAI_API_KEY": "bad-key", "PREFECT_API_URL": prefect_api})
    assert_one_line_error(out, "Incorrect API key", "envscaler resume run-")  # by path when not on PATH
    assert_no_noise(out.stderr)


def test_an_unwritable_export_directory_names_the_path(user: dict[str, Any], tmp_path: Path) -> None:
    from envscaler_core.models import Run
    from envscaler_core.store import Store

    with Store.from_url(user["env"]["ENVSCALER_DB_URL"]) as store:
        store.save_run(Run(run_id="r1"))
    blocker = write(tmp_path / "blocker", "x")
    out = envscaler("export", "r1", "--out", str(blocker / "sub"), env=user["env"])
    line = assert_one_line_error(out, "cannot write", str(blocker))
    assert "--out" in line


@pytest.fixture
def debug_env(user: dict[str, Any]) -> Iterator[dict[str, str]]:
    yield {**user["env"], "ENVSCALER_DB_URL": "duckdb:////proc/x/y.duckdb"}


def test_debug_is_accepted_after_the_verb(debug_env: dict[str, str]) -> None:
    out = envscaler("status", "r1", "--debug", env=debug_env)
    assert out.returncode == 2 and "no store at /proc/x/y.duckdb" in out.stderr


@pytest.mark.parametrize("how", ["flag", "variable"])
def test_an_empty_store_url_is_refused_not_taken_for_the_default_store(user: dict[str, Any], how: str) -> None:
    """`--db "$UNSET_VAR"` (or ENVSCALER_DB_URL set to nothing) wrote runs into the user's real default
    store (an outside check); it names the mistake and touches no store."""
    env = {**user["env"], "ENVSCALER_DB_URL": ""} if how == "variable" else user["env"]
    args = ["--db", ""] if how == "flag" else []
    out = envscaler("run", "-s", str(SLICE), "-c", str(user["config"]), *args, env=env)
    assert_one_line_error(out, "store URL '' is not a database URL")
    assert not (user["tmp"] / "home" / ".local" / "share" / "envscaler").exists()


def test_a_report_is_never_written_over_the_store(user: dict[str, Any]) -> None:
    """`report RUN -o <the store file>` replaced the whole DuckDB store with HTML and exited 0."""
    from envscaler_core.models import Run
    from envscaler_core.store import Store

    user["db"].parent.mkdir(parents=True)
    with Store.from_url(f"duckdb:///{user['db']}") as store:
        store.save_run(Run(run_id="r1", status="completed"))
    before = user["db"].read_bytes()
    out = envscaler("report", "r1", "-o", str(user["db"]), env=user["env"])
    assert_one_line_error(out, "is a database file")
    assert user["db"].read_bytes() == before


def test_an_output_directory_that_cannot_be_made_is_said_before_any_work(user: dict[str, Any]) -> None:
    """`--out` under a regular file failed only at export, after every LLM call was paid for."""
    blocker = write(user["tmp"] / "afile", "not a directory")
    out = envscaler("run", "-s", str(SLICE), "-c", str(user["config"]), "--out", str(blocker), env=user["env"])
    assert_one_line_error(out, "is a file, not a directory", "--out")
    assert not user["db"].exists()
