"""Spec: a run that fails because its store's disk is full is shown as failed, for that reason.

The store lives on a small tmpfs of its own (needs root to mount; skipped otherwise); the user's data
directory (ENVSCALER_DATA_DIR, under HOME) is elsewhere. While the run works (a slow mock keeps it
busy), the tmpfs is filled to the last byte. The flow's writes, its last word on the run row and the
progress file beside the store all fail; the CLI then keeps the run's end under the data directory,
and `status` shows `failed` with the disk's error. It used to show `interrupted — its process is gone
(killed?)`, the real reason lost."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mock_llm.server import MockServer
from tests.cli.helpers import ENVSCALER, SLICE, SMALL_TOML, clean_env, envscaler, wait_for_step

pytestmark = [pytest.mark.slow, pytest.mark.prefect]
RUN = "full"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> None:
    """Write until the disk refuses a single byte more."""
    for name, size in (("filler", 1 << 20), ("filler2", 512), ("filler3", 1)):
        fd = os.open(disk / name, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * size)
        except OSError:
            pass
        finally:
            os.close(fd)


@pytest.fixture
def failed(small_disk: Path, slow_mock: MockServer, prefect_api: str, tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "home").mkdir()
    (tmp_path / "f.toml").write_text(SMALL_TOML)
    db = small_disk / "s.duckdb"
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=slow_mock.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=f"duckdb:///{db}", PREFECT_API_URL=prefect_api)
    proc = subprocess.Popen([str(ENVSCALER), "run", "-s", str(SLICE), "-c", str(tmp_path / "f.toml"), "--run-id", RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            stdin=subprocess.DEVNULL)
    try:
        wait_for_step(Path(f"{db}.progress") / f"{RUN}.json", proc, "mine.judge")
        _fill(small_disk)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return {"env": env, "code": proc.returncode, "stderr": err, "stdout": out}


def test_status_shows_the_disk_full_failure_not_a_kill(failed: dict[str, Any]) -> None:
    assert failed["code"] in (1, 2), failed["stderr"][-3000:]
    assert "No space left on device" in failed["stderr"], failed["stderr"][-3000:]
    assert "the store could not record this end" in failed["stderr"]
    shown = envscaler("status", RUN, "--json", env=failed["env"], timeout=120)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["status"] == "failed", data["error"]
    assert "No space left on device" in data["error"] and "killed" not in data["error"]
    listed = envscaler("status", env=failed["env"], timeout=120)
    assert f"{RUN}" in listed.stdout and "failed" in listed.stdout, listed.stdout
