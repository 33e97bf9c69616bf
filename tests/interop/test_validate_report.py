"""Spec: what `envscaler validate` prints for a state held in EnvScaler's type markers: `--text` describes
each attribute as the class holds it (a seat map of 4 tuple keys is "dict of 4", a set "set of 2"), not
by the marker's keys (`dict of 2 (__type__, items)`), and `--full` has `accepted` at the top level, as the
default JSON does (outside check, minor findings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.interop.test_marker_probes import CODE, CONFIG

REPO = Path(__file__).resolve().parents[2]


def _validate(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "garage.py").write_text(CODE)
    (tmp_path / "state.json").write_text(json.dumps(CONFIG))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    return subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(tmp_path / "garage.py"),
                           "--state", str(tmp_path / "state.json"), "--mode", "programmatic", *flags],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)


def test_text_describes_marker_backed_attributes_as_the_class_holds_them(tmp_path: Path) -> None:
    out = _validate(tmp_path, "--text")
    state = next(line for line in out.stdout.splitlines() if line.strip().startswith("state:"))
    assert "spots: dict of 3 (('B1', 1), ('B1', 2), ('B2', 1))" in state and "permits: set of 1" in state, state
    assert "__type__" not in state


def test_full_json_has_the_verdict_on_top(tmp_path: Path) -> None:
    out = _validate(tmp_path, "--full")
    full = json.loads(out.stdout)
    assert full["accepted"] is True and full["accepted"] == full["report"]["accepted"]
    assert "rounds" in full
