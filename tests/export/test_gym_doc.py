"""Spec: the gym example in docs/exports.md runs as written, in a fresh interpreter, on a real RL export
(only the placeholder path replaced): every name it uses is imported in the block itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.store import Store
from tests.export.records import Populated

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "/path/to/out/run-x/rl_scenarios.parquet"


def _gym_block() -> str:
    doc = (ROOT / "docs" / "exports.md").read_text(encoding="utf-8")
    section = doc.split("## Gym API", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None, "no python block under '## Gym API'"
    return block.group(1)


def test_the_gym_example_in_the_exports_doc_runs_as_written(store: Store, populated: Populated, tmp_path: Path) -> None:
    code = _gym_block()
    assert PLACEHOLDER in code
    export_run(store, populated.run_id, Settings(), tmp_path, formats=["rl"])
    exported = tmp_path / populated.run_id / "rl_scenarios.parquet"
    script = tmp_path / "gym_example.py"
    script.write_text(code.replace(PLACEHOLDER, str(exported)))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENVSCALER_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-3000:]
    reward, all_passed = out.stdout.split()
    assert 0.0 <= float(reward) <= 1.0 and all_passed in ("True", "False")
