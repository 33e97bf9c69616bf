"""`envscaler demo`: the whole factory on bundled real tasks, against the built-in MOCK LLM.

Everything is local and labelled: the mock LLM server on loopback (a deterministic script that
exercises the machinery, not a model), the default store (the one `status`, `export`, `serve-mcp`
and `report` read without flags), exports and the HTML report under `var/demo/out/`, and a local Prefect server
(started in the background if none answers, so the dashboard outlives the demo).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SLICE = Path(__file__).resolve().parent.parent / "envscaler_core" / "data" / "api_bank_lv3_slice.json"

DEMO_OVERRIDES: dict[str, Any] = {
    "mine": {"max_tasks": 80, "select_n": 8},
    "validate": {"mode": "both", "rounds": 12},
    "scen": {"per_env": 2},
    "rollout": {"per_scenario": 1},
    "flow": {"batch_size": 10},
}
