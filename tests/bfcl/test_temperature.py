"""Spec: `eval bfcl-mt --agent llm` sends a temperature with every request, as BFCL's handlers do
(default BFCL's 0.001; `--temperature T` to sample as the paper did, at 0.7), and the evaluation
stores it, so a resume at another temperature is refused like one with another --model. The real CLI
(this worktree's code, `python -m envscaler.cli`) in a subprocess, the session Prefect server, a real
DuckDB file, the mock LLM over HTTP; a recording relay in front of the mock reads the request bodies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.prefect]

ROOT = Path(__file__).resolve().parents[2]


class Relay:
    """Forwards every request to `upstream` unchanged and keeps the JSON bodies of chat requests."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.bodies = upstream.rstrip("/"), []
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, body: bytes | None) -> None:
                path = self.path[len("/v1"):] if self.path.startswith("/v1") else self.path
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                request = urllib.request.Request(relay.upstream + path, data=body, headers=headers, method=self.command)
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        status, payload, kind = response.status, response.read(), response.headers.get("content-type")
                except urllib.error.HTTPError as exc:
                    status, payload, kind = exc.code, exc.read(), exc.headers.get("content-type")
                self.send_response(status)
                self.send_header("content-type", kind or "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802
                self._forward(None)

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path.endswith("/chat/completions"):
                    relay.bodies.append(json.loads(body))
                self._forward(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def relay(mock_stats_reset: Any) -> Iterator[Relay]:
    relay = Relay(mock_stats_reset.base_url)
    try:
        yield relay
    finally:
        relay.close()


def _eval(tmp_path: Path, relay: Relay, prefect_api: str, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"llm": {"base_url": relay.base_url, "api_key": "mock", "backoff_base_s": 0.05}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    env["PREFECT_API_URL"] = prefect_api
    return subprocess.run([sys.executable, "-m", "envscaler.cli", "eval", "bfcl-mt", "--subset", "base", "--limit", "1",
                           "--agent", "llm", "--model", "mock-bfcl", "-c", str(config),
                           "--db", f"duckdb:///{tmp_path / 'eval.duckdb'}", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_every_request_carries_bfcls_default_temperature(relay: Relay, prefect_api: str, tmp_path: Path) -> None:
    out = _eval(tmp_path, relay, prefect_api, "--run-id", "t-default", "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    assert relay.bodies and {body.get("temperature") for body in relay.bodies} == {0.001}


def test_a_given_temperature_is_sent_and_a_resume_at_another_is_refused(
        relay: Relay, prefect_api: str, tmp_path: Path) -> None:
    out = _eval(tmp_path, relay, prefect_api, "--run-id", "t-07", "--temperature", "0.7", "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    assert relay.bodies and {body.get("temperature") for body in relay.bodies} == {0.7}
    for other in (["--temperature", "0.2"], []):  # another value, or none (BFCL's default)
        refused = _eval(tmp_path, relay, prefect_api, "--run-id", "t-07", *other)
        assert refused.returncode == 2, refused.stderr[-3000:]
        assert "sampled with --temperature 0.7; resume it with the same --temperature" in refused.stderr
    again = _eval(tmp_path, relay, prefect_api, "--run-id", "t-07", "--temperature", "0.7", "--json")
    assert again.returncode == 0, again.stderr[-3000:]


def test_a_temperature_for_the_gold_agent_is_refused_in_one_line(prefect_api: str) -> None:
    env = {**os.environ, "PREFECT_API_URL": prefect_api}
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "eval", "bfcl-mt", "--temperature", "0.7"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "--temperature only applies to --agent llm" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_minus_zero_is_stored_sent_and_named_as_zero() -> None:
    """-0.0 was accepted on a resume of a run stored at 0, overwrote it, and came back as -0."""
    import math

    from envscaler.commands.eval import resume_options
    from envscaler_core.bfcl.evaluate import EvalRequest

    request = EvalRequest(subsets=["base"], agent="llm", model="m", temperature=-0.0)
    assert request.temperature == 0 and math.copysign(1.0, request.temperature) == 1.0
    assert json.loads(request.model_dump_json())["temperature"] == 0.0
    assert "--temperature 0" in resume_options(request) and "-0" not in resume_options(request)


def test_a_temperature_that_is_not_a_number_is_refused_in_one_line(prefect_api: str) -> None:
    env = {**os.environ, "PREFECT_API_URL": prefect_api}
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "eval", "bfcl-mt", "--agent", "llm",
                          "--temperature", "nan"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "must be a number from 0 to 2, got nan" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
