"""Headless Chromium, one short-lived process per page: render a URL, return its DOM or a screenshot.

The Prefect dashboard is a single-page app; `--virtual-time-budget` lets its scripts and API calls
settle before Chromium dumps the rendered DOM (virtual time does not advance while requests are in
flight, so a slow server delays the dump instead of truncating it).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

WINDOW = (1400, 1000)
_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
          "--hide-scrollbars", f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=15000"]


def chromium_binary() -> str:
    """The browser, or fail as root (CI installs it with `make test`) / skip for a developer without it."""
    found = shutil.which("chromium", path="/usr/bin:" + os.environ.get("PATH", "")) or shutil.which("chromium-browser")
    if found:
        return found
    reason = "no chromium binary: `make test` installs the Debian package 'chromium'"
    if os.geteuid() == 0:
        pytest.fail(reason)
    pytest.skip(reason)


def _run(binary: str, profile: Path, args: list[str], timeout_s: float) -> subprocess.CompletedProcess[bytes]:
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([binary, *_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          timeout=timeout_s, start_new_session=True)
    if done.returncode != 0:
        raise RuntimeError(f"chromium {args[-1]} exited {done.returncode}: {done.stderr.decode(errors='replace')[-1500:]}")
    return done


def dump_dom(binary: str, profile: Path, url: str, timeout_s: float = 120.0) -> str:
    return _run(binary, profile, ["--dump-dom", url], timeout_s).stdout.decode(errors="replace")


def dump_dom_showing(binary: str, profile: Path, url: str, needles: list[str], attempts: int = 3) -> str:
    """The DOM of the first render that shows every needle, else the last render (for the message).

    Lists in the dashboard fill a virtual scroller after a layout pass; under load the dump can come
    before it, so a page that lacks its content is rendered again (a fresh browser each time)."""
    dom = ""
    for _ in range(attempts):
        dom = dump_dom(binary, profile, url)
        if all(n in dom for n in needles):
            break
    return dom


def screenshot(binary: str, profile: Path, url: str, out: Path, timeout_s: float = 120.0) -> Path:
    _run(binary, profile, [f"--screenshot={out}", url], timeout_s)
    if not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot for {url}")
    return out


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG header (and proof the file is a PNG)."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height
