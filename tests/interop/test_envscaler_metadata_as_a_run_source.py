"""Spec: `run -s` on EnvScaler's pretty-printed env metadata says what the file is and nothing false about
it (interop re-check, F6d: the message went on "first problem: env_metadata.json:1: invalid JSON", the line
reader's complaint about a valid multi-line JSON document)."""

from __future__ import annotations

from pathlib import Path

from envscaler_core.mine.source_report import inspect_sources, source_errors
from tests.interop.conftest import fixture_files


def test_pretty_printed_env_metadata_is_named_with_no_invalid_json_problem(tmp_path: Path) -> None:
    path = fixture_files(tmp_path) / "env_metadata.json"
    assert path.read_text().startswith("{\n"), "the fixture is pretty-printed, as EnvScaler writes it"
    [error] = source_errors(inspect_sources([path]))
    assert "EnvScaler's env metadata" in error and "invalid JSON" not in error, error
