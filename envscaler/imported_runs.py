"""Rolling out an EnvScaler import: `envscaler run --run-id IMP --stages rollout,export`, no -s.

An import's scenarios are already in the store; `run` plays and exports them like a factory run's. Its
other stages would read -s task files, and EnvScaler's files hold no task `run` can read, so they are
refused here with the command that works (outside check round 4, F4: the only way that worked was to
pass the import's own files as -s with `--stages rollout,export`, which then turned the import into a
factory run, and a re-import of the same files was refused).
"""

from __future__ import annotations

from typing import Any

from envscaler.cli_name import cli_call
from envscaler_core.interop.summary import is_import

ROLLOUT_STAGES = ("rollout", "export")


def rollout_call(run_id: str) -> str:
    return cli_call("run", "--run-id", run_id, "--stages", ",".join(ROLLOUT_STAGES))


def imported_run_problem(run: Any, run_id: str, sources: list[str], stages: list[str] | None) -> str | None:
    """Why `run` cannot work on the import `run` as asked (None when it can, or when it is no import)."""
    if not is_import(run):
        return None
    if sources:
        return (f"run {run_id} is an EnvScaler import: its scenarios come from the import, not from -s files; roll "
                f"it out with `{rollout_call(run_id)}` (no -s)")
    if not stages or set(stages) - set(ROLLOUT_STAGES):
        other = [s for s in (stages or ["mine", "synth", "validate", "scen"]) if s not in ROLLOUT_STAGES]
        return (f"run {run_id} is an EnvScaler import: only its rollout and export stages run on it "
                f"({', '.join(other)} would read task files); roll it out with `{rollout_call(run_id)}`")
    return None


def no_sources_problem(run: Any, run_id: str | None) -> str | None:
    """`run` without -s: allowed only to roll out an existing import."""
    if is_import(run):
        return None
    what = f"run {run_id} is no EnvScaler import" if run is not None else (
        f"there is no run {run_id}" if run_id else "no --run-id names an EnvScaler import")
    return (f"Missing option '--source' / '-s': the task file(s) to read ({what}; only an import is rolled out "
            "without -s, docs/interop.md)")
