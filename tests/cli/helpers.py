"""Running the real `envscaler` executable as a new user would: a clean environment (no OPENAI_*,
ENVSCALER_*, PREFECT_API_URL from the developer's shell), a temp HOME, and the output checked as text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ENVSCALER = Path(sys.executable).with_name("envscaler")
ROOT = Path(__file__).resolve().parents[2]
SLICE = ROOT / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
SMALL_TOML = """
[mine]
max_tasks = 24
select_n = 3
[validate]
rounds = 6
[scen]
per_env = 1
[flow]
batch_size = 4
"""


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ENVSCALER_", "PREFECT_API", "XDG_DATA_HOME"))}
    env.update(HOME=str(home), PREFECT_HOME=str(home / ".prefect"), **extra)
    return env


def envscaler(*args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ENVSCALER), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def assert_one_line_error(out: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    assert out.returncode == code, (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    assert "Traceback" not in out.stderr + out.stdout, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


def assert_no_noise(stderr: str) -> None:
    """What a user must never see: tracebacks, telemetry failures, nanobind leak dumps."""
    for noise in ("Traceback", "Failed to send telemetry", "nanobind", "leaked instance"):
        assert noise not in stderr, f"{noise!r} on stderr:\n{stderr[-3000:]}"


def ctrl_c_reaches() -> None:
    """`preexec_fn` for a CLI process a spec will Ctrl-C: SIGINT back to its default. A suite started in
    the background (`make test &`, nohup, some CI runners) inherits SIGINT ignored, and Python keeps an
    ignored SIGINT ignored, so the spec would test the launcher instead of the CLI."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_step(progress: Path, proc: subprocess.Popen[str], step: str | None = None,
                  limit_s: float = 240) -> dict[str, Any]:
    """The run's progress file once `step` (any step, if None) is running: streamed stages run side by
    side, so the running one need not be the last listed."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            data = json.loads(progress.read_text())
        except (OSError, ValueError):
            data = None
        if data and any((step is None or s["name"] == step) and s.get("finished_at") is None for s in data["steps"]):
            return data
        time.sleep(0.2)
    raise AssertionError(f"step {step or '(any)'} never started")
