"""`envscaler serve-mcp --transport http` as a real subprocess, for the specs that talk HTTP to it."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from envscaler_core.store import Store
from tests.export.records import populate


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_serving(db_url: str, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The server on a free port (`extra` flags added), up and answering; yields its /mcp URL and process.
    Its output goes to a file, not a pipe: a pipe nobody reads fills with its log lines (one per refused
    session) and then blocks the server."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "envscaler.cli", "serve-mcp", "env_library_test", "--db", db_url,
             "--transport", "http", "--port", str(port), *extra],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, text=True,
        )
        try:
            deadline = time.monotonic() + 60  # start-up wait, not an assertion on speed
            while True:
                try:
                    httpx.get(url, timeout=2)
                    break
                except httpx.TransportError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        pytest.fail(f"server did not come up: {log.read()[-500:]}")
                    time.sleep(0.2)
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def populated_store(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any, name: str) -> str:
    """The URL of a DuckDB store holding the populated run, closed so a server process can open it."""
    url = f"duckdb:///{tmp_path_factory.mktemp(name) / 'store.duckdb'}"
    with Store.from_url(url) as store:
        populate(store, sandbox_pool)
    return url
