"""Spec: `report --out` and `export --out` never destroy what they did not write and never create directory
trees from a typo. `report --out` replaces only a report it wrote (it knows its own pages); a file that is
not one, a directory, or a missing parent directory is one line, exit 2, nothing written. `export --out`
makes its base directory only when the parent exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import assert_one_line_error, clean_env, envscaler


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "home").mkdir()
    db = tmp_path / "runs.duckdb"
    with Store.from_url(str(db)) as store:
        store.save_run(Run(run_id="r1", status="completed"))
    return {"env": clean_env(tmp_path / "home", ENVSCALER_DB_URL=str(db)), "tmp": tmp_path}


def test_report_does_not_replace_a_file_it_did_not_write(user: dict[str, Any]) -> None:
    source = user["tmp"] / "tasks.jsonl"
    source.write_text('{"task": "Book a table for two."}\n')
    out = envscaler("report", "r1", "--out", str(source), env=user["env"])
    assert_one_line_error(out, f"--out {source} exists and is not a report envscaler wrote")
    assert source.read_text() == '{"task": "Book a table for two."}\n'


def test_report_replaces_its_own_report(user: dict[str, Any]) -> None:
    target = user["tmp"] / "r1.html"
    first = envscaler("report", "r1", "--out", str(target), env=user["env"])
    assert first.returncode == 0 and first.stdout.strip() == str(target), first.stderr
    again = envscaler("report", "r1", "--out", str(target), env=user["env"])
    assert again.returncode == 0 and again.stdout.strip() == str(target), again.stderr


def test_report_does_not_create_a_missing_directory(user: dict[str, Any]) -> None:
    target = user["tmp"] / "no" / "such" / "dir" / "x.html"
    out = envscaler("report", "r1", "--out", str(target), env=user["env"])
    assert_one_line_error(out, f"the directory {target.parent} does not exist")
    assert not (user["tmp"] / "no").exists()


def test_report_out_a_directory_is_refused(user: dict[str, Any]) -> None:
    out = envscaler("report", "r1", "--out", str(user["tmp"]), env=user["env"])
    assert_one_line_error(out, f"--out {user['tmp']} is a directory")


def test_export_makes_its_base_directory_but_no_tree(user: dict[str, Any]) -> None:
    deep = user["tmp"] / "no" / "such"
    out = envscaler("export", "r1", "--out", str(deep), env=user["env"])
    assert_one_line_error(out, f"cannot write to --out {deep}", f"the directory {deep.parent} does not exist")
    assert not (user["tmp"] / "no").exists()
    made = envscaler("export", "r1", "--out", str(user["tmp"] / "exports"), env=user["env"])
    assert made.returncode == 0, made.stderr
    assert (user["tmp"] / "exports" / "r1" / "manifest.json").is_file()
