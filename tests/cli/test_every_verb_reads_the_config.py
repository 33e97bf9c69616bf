"""Spec: every verb that takes settings reads them in the documented layers (defaults < `-c` file <
ENVSCALER_* variables < flags), so a bad value in the file or a variable is refused by each, in one line
naming the setting and where it came from (docs/configuration.md). An outside check (rt22-R12 F1) found
`validate` passing its flags' defaults over the file and the environment, so `validate.rounds: abc` ran.
Each verb is the real executable; the refusal comes before any file, store or sandbox is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import assert_one_line_error, clean_env, envscaler

VERBS = {
    "run": ("run", "-s", "tasks.jsonl"),
    "resume": ("resume", "r1"),
    "status": ("status",),
    "report": ("report", "r1"),
    "export": ("export", "r1"),
    "import": ("import", "envscaler", "--envs", "envs.json"),
    "validate": ("validate", "--code", "lib.py", "--state", "state.json"),
    "sandbox exec": ("sandbox", "exec", "--code", "lib.py", "--class", "Lib", "--calls", "calls.json"),
    "serve-mcp": ("serve-mcp", "env_x"),
    "eval bfcl-mt": ("eval", "bfcl-mt", "--limit", "1"),
}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The input files every verb above finds, so that only the setting can be wrong."""
    (tmp_path / "tasks.jsonl").write_text('{"task": "Book a table."}\n')
    (tmp_path / "envs.json").write_text("{}")
    (tmp_path / "lib.py").write_text("class Lib:\n    def __init__(self, init_config=None):\n        self.b = {}\n\n"
                                     "    def get(self, k: str) -> dict:\n        \"\"\"Get.\"\"\"\n"
                                     "        return {\"success\": k in self.b}\n")
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "calls.json").write_text("[]")
    (tmp_path / "bad.yaml").write_text("validate:\n  rounds: abc\n")
    return tmp_path


@pytest.mark.parametrize("verb", list(VERBS))
def test_a_bad_value_in_the_config_file_is_refused_naming_the_setting_and_the_file(verb: str, workdir: Path) -> None:
    out = envscaler(*VERBS[verb], "-c", "bad.yaml", env=clean_env(workdir, ENVSCALER_DATA_DIR=str(workdir / "d")),
                    cwd=workdir, timeout=120)
    assert_one_line_error(out, "validate.rounds", "bad.yaml")


@pytest.mark.parametrize("verb", list(VERBS))
def test_a_bad_value_in_a_variable_is_refused_naming_the_variable(verb: str, workdir: Path) -> None:
    env = clean_env(workdir, ENVSCALER_DATA_DIR=str(workdir / "d"), ENVSCALER_VALIDATE__CHAINS="abc")
    out = envscaler(*VERBS[verb], env=env, cwd=workdir, timeout=120)
    assert_one_line_error(out, "validate.chains", "ENVSCALER_VALIDATE__CHAINS")
