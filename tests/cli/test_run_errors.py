"""Spec: the operator's mistakes end in one line on stderr and exit 2, before any flow starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ENVSCALER = Path(sys.executable).with_name("envscaler")
SLICE = Path(__file__).resolve().parents[2] / "envscaler_core" / "data" / "api_bank_lv3_slice.json"


def envscaler(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_", "PREFECT_API"))}
    base.update(ENVSCALER_DB_URL=f"duckdb:///{tmp_path / 'cli.duckdb'}", **env)
    return subprocess.run([str(ENVSCALER), *args], capture_output=True, text=True, env=base, timeout=120)


def assert_one_line_error(out: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert out.returncode == 2, out
    assert "Traceback" not in out.stderr + out.stdout
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert all(n in lines[0] for n in needles), lines[0]


def test_missing_api_key(tmp_path: Path) -> None:
    out = envscaler("run", "-s", str(SLICE), tmp_path=tmp_path)
    assert_one_line_error(out, "no API key", "OPENAI_API_KEY")


def test_a_bad_source_is_reported_before_a_missing_key(tmp_path: Path) -> None:
    """Reading the sources is local and cheap: a user who fixes the key must not then learn the file was bad."""
    bad = tmp_path / "tasks.csv"
    bad.write_text("id,task\n1,Book a flight\n")
    out = envscaler("run", "-s", str(bad), tmp_path=tmp_path)
    assert_one_line_error(out, f"source {bad} yields no task")


def test_unreachable_endpoint(tmp_path: Path) -> None:
    out = envscaler("run", "-s", str(SLICE), tmp_path=tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    assert_one_line_error(out, "unreachable", "127.0.0.1:9")


def test_an_endpoint_that_serves_a_web_page_is_named_before_any_work(tmp_path: Path) -> None:
    """A base URL without /v1 on a server with a web front end answers 200 with HTML while its /v1/models
    lists models: every chat request would fail as an unusable answer, item by item, after its retries. (A web
    page alone is no verdict: envscaler/endpoint.py, tests/cli/test_endpoint_probe.py.)"""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            listed = self.path.startswith("/v1/models")
            body = (b'{"object": "list", "data": [{"id": "m", "object": "model"}]}' if listed
                    else b"<!DOCTYPE html><html><body>Welcome</body></html>")
            self.send_response(200)
            self.send_header("Content-Type", "application/json" if listed else "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        out = envscaler("run", "-s", str(SLICE), tmp_path=tmp_path, OPENAI_API_KEY="k",
                        OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
    assert_one_line_error(out, "with a web page", "/v1/models with its models", "/v1")
    assert not (tmp_path / "cli.duckdb").exists(), "refused before the store was made"


def test_missing_source_file(tmp_path: Path) -> None:
    out = envscaler("run", "-s", str(tmp_path / "nope.json"), tmp_path=tmp_path)
    assert_one_line_error(out, "not found", "nope.json")


def test_bad_config_value_names_the_field(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[validate]\nthreshold = 3\n")
    out = envscaler("run", "-s", str(SLICE), "-c", str(cfg), tmp_path=tmp_path)
    assert_one_line_error(out, "validate.threshold")


def test_a_setting_variable_with_one_underscore_is_refused_with_the_right_name(tmp_path: Path) -> None:
    """Ignored, it would leave the user believing scen.per_env is 3 for the whole run."""
    out = envscaler("run", "-s", str(SLICE), tmp_path=tmp_path, ENVSCALER_SCEN_PER_ENV="3")
    assert_one_line_error(out, "ENVSCALER_SCEN_PER_ENV", "did you mean ENVSCALER_SCEN__PER_ENV (scen.per_env)?")
    assert not (tmp_path / "cli.duckdb").exists()


@pytest.mark.parametrize("verb", ["status", "resume"])
def test_unknown_run(verb: str, tmp_path: Path) -> None:
    assert_one_line_error(envscaler(verb, "no-such-run", tmp_path=tmp_path), "no run 'no-such-run'")


def test_unknown_stage(tmp_path: Path) -> None:
    out = envscaler("run", "-s", str(SLICE), "--stages", "mine,bake", tmp_path=tmp_path)
    assert_one_line_error(out, "bake")


def test_a_misspelt_stage_gets_the_closest_one(tmp_path: Path) -> None:
    out = envscaler("run", "-s", str(SLICE), "--stages", "mien,synth", tmp_path=tmp_path)
    assert_one_line_error(out, "unknown stage(s) mien; did you mean mine? choose from mine, synth")


@pytest.mark.parametrize("verb", ["status", "resume", "report", "export"])
def test_an_unknown_run_names_the_store_as_a_path(verb: str, tmp_path: Path) -> None:
    """The path is what people can find and paste back into --db (not the internal duckdb:// URL)."""
    from envscaler_core.store import Store

    Store.from_url(str(tmp_path / "cli.duckdb")).close()
    out = envscaler(verb, "no-such-run", tmp_path=tmp_path)
    assert_one_line_error(out, "run 'no-such-run' in " + str(tmp_path / "cli.duckdb"))
    assert "duckdb:" not in out.stderr


@pytest.mark.parametrize("args", [["run", "-s", str(SLICE)], ["eval", "bfcl-mt", "--agent", "gold"],
                                  ["import", "envscaler", "--envs", str(SLICE), "--scenarios", str(SLICE)]],
                         ids=["run", "eval", "import"])
def test_a_run_id_that_would_leave_the_output_directory_is_a_usage_error(args: list[str], tmp_path: Path) -> None:
    """A run id names OUT/RUN_ID/: '..' would put the exports and report beside the store."""
    out = envscaler(*args, "--run-id", "..", tmp_path=tmp_path)
    assert_one_line_error(out, "run id '..' is not usable")
    assert not (tmp_path / "cli.duckdb").exists()


def test_a_run_refused_because_prefect_does_not_answer_leaves_no_run(tmp_path: Path, mock_server) -> None:  # type: ignore[no-untyped-def]
    """Like every other exit-2 refusal, a configured Prefect API that does not answer writes nothing: `status`
    used to list the run that never ran as `interrupted`. No resume hint either: there is nothing to resume."""
    out = envscaler("run", "-s", str(SLICE), "--run-id", "noprefect", tmp_path=tmp_path,
                    PREFECT_API_URL="http://127.0.0.1:9/api", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock")
    assert out.returncode == 2 and "PREFECT_API_URL=http://127.0.0.1:9/api does not answer" in out.stderr, out.stderr
    assert "resume noprefect" not in out.stderr
    assert_one_line_error(envscaler("status", "noprefect", tmp_path=tmp_path), "no run 'noprefect'")


def test_an_existing_run_refused_because_prefect_does_not_answer_is_left_as_it_was(tmp_path: Path, mock_server) -> None:  # type: ignore[no-untyped-def]
    import json

    from envscaler_core.models import Run
    from envscaler_core.store import Store

    with Store.from_url(str(tmp_path / "cli.duckdb")) as store:
        store.save_run(Run(run_id="stopped", status="stopped_budget", error="budget spent", sources=[str(SLICE)]))
    out = envscaler("run", "-s", str(SLICE), "--run-id", "stopped", tmp_path=tmp_path,
                    PREFECT_API_URL="http://127.0.0.1:9/api", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock")
    assert out.returncode == 2 and "does not answer" in out.stderr, out.stderr
    shown = json.loads(envscaler("status", "stopped", "--json", tmp_path=tmp_path).stdout)
    assert (shown["status"], shown["error"]) == ("stopped_budget", "budget spent")


def test_a_demo_workdir_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    """Prefect only warns when it cannot create its home; its temporary server then died at start-up."""
    (tmp_path / "a-file").write_text("")
    out = envscaler("demo", "--prefect", "ephemeral", "--workdir", str(tmp_path / "a-file" / "demo"),
                    tmp_path=tmp_path)
    assert_one_line_error(out, "--workdir", str(tmp_path / "a-file" / "demo" / "prefect"), "Not a directory")
