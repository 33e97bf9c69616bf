"""The keys of a run's Prefect artifacts, known without Prefect: `status` prints them.

Prefect keys allow only lowercase letters, digits and dashes, so a run id is not always its own key:
`killA` publishes `funnel-killa-98c9b69a`, and a filter on `funnel-killA` finds nothing (an outside
check followed the docs' `funnel-<run id>` and got []). Printing the real keys makes them findable.
"""

from __future__ import annotations

import hashlib

FACTORY_PREFIXES = ("funnel", "progress")
EVAL_PREFIXES = ("bfcl",)


def artifact_key(prefix: str, run_id: str) -> str:
    """`<prefix>-<run id>` when the run id is already lowercase letters, digits and dashes; otherwise the
    id lowercased with every other character made a dash, plus 8 hex digits of the id's sha256, so
    `My_Run.1` and `my-run-1` never publish under one key. At most 100 characters."""
    key = "".join(c if c.isalnum() and c.isascii() else "-" for c in run_id.lower())
    if key != run_id:
        key = f"{key[:80]}-{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"
    return f"{prefix}-{key}"[:100]


def run_artifact_keys(run_id: str, evaluation: bool = False) -> list[str]:
    """Every artifact key a run publishes under (a factory run: funnel and progress; an evaluation: bfcl)."""
    return [artifact_key(p, run_id) for p in (EVAL_PREFIXES if evaluation else FACTORY_PREFIXES)]
