"""Spec: `envscaler run -s PATH` names what is wrong with a source path that is there but is no file:
a directory is "a directory", a FIFO or device "not a regular file"; only a path that does not exist is
"not found". Each is one line, exit 2, before any store is made."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.helpers import assert_one_line_error, clean_env, envscaler


def _run(tmp_path: Path, source: Path) -> tuple[object, Path]:
    (tmp_path / "home").mkdir(exist_ok=True)
    db = tmp_path / "s.duckdb"
    out = envscaler("run", "-s", str(source), "--db", str(db), env=clean_env(tmp_path / "home"), timeout=120)
    return out, db


def test_a_directory_given_as_a_source_is_said_to_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    out, db = _run(tmp_path, tmp_path / "tasks")
    line = assert_one_line_error(out, str(tmp_path / "tasks"), "is a directory")  # type: ignore[arg-type]
    assert "not found" not in line and not db.exists()


def test_a_fifo_given_as_a_source_is_said_to_be_no_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "tasks.jsonl")
    out, db = _run(tmp_path, tmp_path / "tasks.jsonl")
    line = assert_one_line_error(out, str(tmp_path / "tasks.jsonl"), "is not a regular file")  # type: ignore[arg-type]
    assert "not found" not in line and not db.exists()


def test_a_missing_source_is_still_not_found(tmp_path: Path) -> None:
    out, db = _run(tmp_path, tmp_path / "nope.jsonl")
    assert_one_line_error(out, "source file(s) not found", str(tmp_path / "nope.jsonl"))  # type: ignore[arg-type]
    assert not db.exists()
