"""Spec: a `sandbox.python` that cannot be the jail's interpreter (a typo, a directory, a file that is not
executable) is a config mistake: `run` refuses it in one line naming the setting, the variable that set
it, the value and why, exit 2, before anything is written; `sandbox check` names it first too, never
leading with weakening the sandbox (rt22-R11 F4: exit 1 after a failed run row, and the message led with
`sandbox.allow_weak`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mock_llm.server import MockServer
from tests.cli.helpers import SLICE, assert_one_line_error, clean_env, envscaler


def _not_executable(tmp_path: Path) -> str:
    path = tmp_path / "python3"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o644)
    return str(path)


@pytest.mark.parametrize(("value", "why"), [
    (lambda tmp: "/usr/bin/pyhton3", "no such file"),
    (lambda tmp: str(tmp), "not a file"),
    (_not_executable, "not executable"),
    (lambda tmp: "python3", "not an absolute path"),
])
def test_run_refuses_an_unusable_sandbox_python_before_writing_anything(tmp_path: Path, value, why: str,
                                                                      mock_server: MockServer, prefect_api: str) -> None:
    python = value(tmp_path)
    env = clean_env(tmp_path, ENVSCALER_DATA_DIR=str(tmp_path / "data"), ENVSCALER_SANDBOX__PYTHON=python,
                    OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock", PREFECT_API_URL=prefect_api)
    out = envscaler("run", "-s", str(SLICE), "--run-id", "p1", "--stages", "mine", env=env, timeout=120)
    line = assert_one_line_error(out, f"sandbox.python={python} (from ENVSCALER_SANDBOX__PYTHON): {why}")
    assert "allow_weak" not in line
    assert not (tmp_path / "data").exists()


def test_sandbox_check_names_the_interpreter_first(tmp_path: Path) -> None:
    env = clean_env(tmp_path, ENVSCALER_SANDBOX__PYTHON="/usr/bin/pyhton3")
    out = envscaler("sandbox", "check", env=env, timeout=120)
    line = assert_one_line_error(out, "sandbox.python=/usr/bin/pyhton3: no such file")
    assert "allow_weak" not in line and "rlimit" not in line
