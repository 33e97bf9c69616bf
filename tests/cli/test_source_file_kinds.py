"""Spec: `envscaler run -s PATH` names what is wrong with a source path that is there but is no file:
a directory is "a directory", a FIFO or device "not a regular file"; only a path that does not exist is
"not found". Each is one line, exit 2, before any store is made."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

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


@pytest.mark.parametrize(("bom_and_text", "encoding"), [
    (lambda text: text.encode("utf-16"), "UTF-16 (little-endian)"),
    (lambda text: b"\xfe\xff" + text.encode("utf-16-be"), "UTF-16 (big-endian)"),
    (lambda text: text.encode("utf-32"), "UTF-32 (little-endian)"),
])
def test_a_utf16_or_utf32_source_is_named_as_such_with_how_to_convert_it(tmp_path: Path, bom_and_text: Any,
                                                                         encoding: str) -> None:
    """Windows' "Unicode" (PowerShell 5's `>`) writes UTF-16 with a byte order mark: not a binary file."""
    source = tmp_path / "tasks.jsonl"
    source.write_bytes(bom_and_text('{"task": "Book a table for two."}\n'))
    out, db = _run(tmp_path, source)
    family = encoding.split()[0]
    line = assert_one_line_error(out, f"{encoding} text, not UTF-8",  # type: ignore[arg-type]
                                 f"iconv -f {family} -t UTF-8 {source}")
    assert "binary" not in line and not db.exists()


def test_a_utf16_config_file_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    config = tmp_path / "factory.toml"
    config.write_bytes("[mine]\nselect_n = 3\n".encode("utf-16"))
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"task": "Book a table for two."}\n')
    out = envscaler("run", "-s", str(source), "-c", str(config), "--db", str(tmp_path / "s.duckdb"),
                    env=clean_env(tmp_path / "home"), timeout=120)
    assert_one_line_error(out, str(config), "UTF-16 (little-endian) text, not UTF-8")


def test_a_missing_source_is_still_not_found(tmp_path: Path) -> None:
    out, db = _run(tmp_path, tmp_path / "nope.jsonl")
    assert_one_line_error(out, "source file(s) not found", str(tmp_path / "nope.jsonl"))  # type: ignore[arg-type]
    assert not db.exists()


def test_one_file_given_several_times_is_one_source(tmp_path: Path, mock_server: Any) -> None:
    """`-s a.jsonl -s a.jsonl -s x/../a.jsonl` read the file three times ("6 records: 2 kept, 4 duplicate").
    The source report is printed before the flow starts; a Prefect API that does not answer stops it there."""
    (tmp_path / "home").mkdir()
    (tmp_path / "x").mkdir()
    source = tmp_path / "a.jsonl"
    source.write_text('{"task": "Book a table for two."}\n{"task": "Cancel my gym membership."}\n')
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    PREFECT_API_URL="http://127.0.0.1:9/api")
    out = envscaler("run", "-s", str(source), "-s", str(source), "-s", str(tmp_path / "x" / ".." / "a.jsonl"),
                    "--db", str(tmp_path / "s.duckdb"), env=env, timeout=120)
    listed = [line for line in out.stderr.splitlines() if "a.jsonl " in line and "records" in line]
    assert len(listed) == 1, out.stderr
    assert "2 records: 2 kept, 0 duplicate" in listed[0], out.stderr
