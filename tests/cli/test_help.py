"""Spec: one front door; every verb of the design card exists and documents itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ENVSCALER = Path(sys.executable).with_name("envscaler")
VERBS = ["demo", "run", "resume", "status", "validate", "sandbox", "export", "serve-mcp", "mock-llm"]


def test_help_lists_every_verb() -> None:
    out = subprocess.run([str(ENVSCALER), "--help"], capture_output=True, text=True, check=True).stdout
    assert all(f" {verb} " in out for verb in VERBS), out
    assert "not implemented" not in out


@pytest.mark.parametrize("verb", VERBS)
def test_each_verb_has_help(verb: str) -> None:
    out = subprocess.run([str(ENVSCALER), verb, "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "Usage" in out.stdout, out.stderr
