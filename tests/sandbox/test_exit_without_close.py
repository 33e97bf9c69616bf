"""Spec: a script that never closes its pool exits cleanly: its units die with it, and no descriptor the
interpreter's exit already closed is closed again (that printed EBADF tracebacks, and a reused number
would have closed somebody else's file)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = '''
from envscaler_core.config import SandboxSettings
from sandbox import SandboxPool
pool = SandboxPool(SandboxSettings())
code = "class A:\\n    def __init__(self, c=None):\\n        self.n = 1\\n    def f(self) -> dict:\\n        return {'success': True}\\n"
for _ in range(3):
    episode = pool.open_episode(code, "A", {})
    assert episode.call("f", {}).ok
print("played")
'''


def test_a_pool_left_open_at_exit_says_nothing_on_stderr(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "played", done.stderr
    assert "Traceback" not in done.stderr and "Bad file descriptor" not in done.stderr, done.stderr
