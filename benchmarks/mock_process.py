"""The mock LLM as a separate process for benchmarks that measure a whole factory run (its CPU must not
share the measured process), on a free loopback port at 0 ms latency."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 (loopback)
        return json.load(r)


def start_mock(cwd: Path | None = None, env: dict[str, str] | None = None,
               latency_ms: int = 0) -> tuple[subprocess.Popen[bytes], str]:
    """(process, root URL) once the mock answers `/mock/stats`. With `cwd`, the mock of the code checked
    out there (`envscaler.cli` imported from that directory), so two codebases can be compared."""
    from envscaler.prefect_server import free_port

    port = free_port()
    cmd = [sys.executable, "-c", "import sys; from envscaler.cli import main; sys.exit(main())",
           "mock-llm", "--port", str(port), "--latency-ms", str(latency_ms)]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            get_json(f"http://127.0.0.1:{port}/mock/stats")
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"mock LLM{f' of {cwd}' if cwd else ''} did not start")
