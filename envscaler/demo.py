"""`envscaler demo`: the whole factory on bundled real tasks, against the built-in MOCK LLM.

Everything is local and labelled: the mock LLM server on loopback (a deterministic script that
exercises the machinery, not a model), the default store (the one `status`, `export`, `serve-mcp`
and `report` read without flags), the exports and the HTML report beside it (`out/<run>/`), and a local
Prefect server (started in the background if none answers, so the dashboard outlives the demo; later
`run`, `resume` and `eval` commands report to it instead of starting a temporary one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler.cli_name import cli_command

SLICE = Path(__file__).resolve().parent.parent / "envscaler_core" / "data" / "api_bank_lv3_slice.json"

DEMO_OVERRIDES: dict[str, Any] = {
    "mine": {"max_tasks": 80, "select_n": 8},
    "validate": {"mode": "both", "rounds": 12},
    "scen": {"per_env": 2},
    "rollout": {"per_scenario": 1},
    "flow": {"batch_size": 10},
}


def where_to_look(summary: dict[str, Any], settings: Any, server: Any, requests: int) -> list[str]:
    from envscaler_core.config import outputs_root
    from envscaler_core.shell import shell_word
    from envscaler_core.store.urls import human_store

    cli, hint = cli_command()
    outputs = summary.get("outputs") or {}
    run_id = summary["run_id"]
    lines = ["where to look:",
             f"  report     {outputs.get('report', '(not written)')}   (open it in a browser)",
             f"  store      {human_store(settings.store.url)}   ({cli} status {shell_word(run_id)})",
             f"  exports    {outputs.get('exports', outputs_root(settings) / run_id)}"]
    if server is not None:
        started = f"; started by the demo, pid {server.pid}, stop it with `kill {server.pid}`" if server.pid else ""
        lines.append(f"  dashboard  {server.ui_url}/runs   (later run/resume/eval commands report to it too{started})")
    lines.append(f"  mock LLM   answered {requests} HTTP requests (all labelled mock; its costs are illustrative)")
    lines += ["next:",
              f"  {cli} status                 list runs (this one included)",
              f"  {cli} status {shell_word(run_id)}",
              f"  {cli} serve-mcp --run {shell_word(run_id)} ENV_ID   call an env's tools by hand (env ids: in the "
              "status above)"]
    if hint:
        lines.append(f"  ({hint})")
    return lines
