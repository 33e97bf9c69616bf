"""Spec: the read-only verbs read an existing store they cannot write, and the verbs that write say so.

A store copied to a read-only place (a read-only mount, a directory or file made immutable) is still a
record to look at: `status`, `report --out` and `export --out` open it read-only (DuckDB's read_only
mode) and work. They used to fail with "cannot create the DuckDB store ...: directory ... is not
writable", though the file existed and nothing was to be created. `run` on such a store is refused in
one line that says it cannot be written to (not "created") and that reading it still works.

The read-only place is made with `chattr +i` as root (root writes through permission bits) and with
`chmod` otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import SLICE, assert_one_line_error, clean_env, envscaler

RUN = "kept"


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """Make a path read-only for this process; undone after the test (pytest must delete it)."""
    made: list[tuple[Path, int]] = []

    def make(path: Path) -> None:
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
                pytest.skip("chattr +i is not available here: cannot make a path read-only for root")
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)
        made.append((path, path.stat().st_mode))
        assert not os.access(path, os.W_OK)

    yield make
    for path, mode in reversed(made):
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        else:
            path.chmod(mode | 0o700)


@pytest.fixture
def store(tmp_path: Path) -> dict[str, Any]:
    """A store holding one finished run, in a directory of its own, and a user without other stores."""
    (tmp_path / "home").mkdir()
    (tmp_path / "ro").mkdir()
    db = tmp_path / "ro" / "flag.duckdb"
    with Store.from_url(str(db)) as opened:
        opened.save_run(Run(run_id=RUN, status="completed", sources=[str(SLICE)]))
    return {"db": db, "tmp": tmp_path, "env": clean_env(tmp_path / "home")}


@pytest.mark.parametrize("what", ["directory", "file"])
def test_status_reads_a_store_it_cannot_write(store: dict[str, Any], read_only: Callable[[Path], None], what: str) -> None:
    read_only(store["db"].parent if what == "directory" else store["db"])
    listed = envscaler("status", "--db", str(store["db"]), env=store["env"], timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert RUN in listed.stdout and "completed" in listed.stdout
    shown = envscaler("status", RUN, "--json", "--db", str(store["db"]), env=store["env"], timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "completed"


def test_export_and_report_read_a_store_in_a_read_only_directory(store: dict[str, Any],
                                                                  read_only: Callable[[Path], None]) -> None:
    read_only(store["db"].parent)
    out = store["tmp"] / "out"
    exported = envscaler("export", RUN, "--db", str(store["db"]), "--out", str(out), env=store["env"], timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert (out / RUN / "manifest.json").is_file()
    report = envscaler("report", RUN, "--db", str(store["db"]), "--out", str(out / "r.html"), env=store["env"],
                       timeout=120)
    assert report.returncode == 0, report.stderr
    assert (out / "r.html").is_file()


def test_two_readers_read_at_once(store: dict[str, Any]) -> None:
    """Read-only opens share the file: a `status` while another command only reads it waits for nothing."""
    with Store.from_url(str(store["db"]), create=False):
        shown = envscaler("status", RUN, "--json", "--db", str(store["db"]), env=store["env"], timeout=120)
    assert shown.returncode == 0, shown.stderr


def test_run_on_a_store_in_a_read_only_directory_says_it_cannot_write_to_it(
        store: dict[str, Any], read_only: Callable[[Path], None], mock_server: Any) -> None:
    read_only(store["db"].parent)
    env = {**store["env"], "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "mock"}
    out = envscaler("run", "-s", str(SLICE), "--db", str(store["db"]), env=env, timeout=120)
    line = assert_one_line_error(out, f"cannot write to the DuckDB store {store['db']}", "is not writable",
                                 "read-only commands (status, report, export) can still read it")
    assert "create" not in line
