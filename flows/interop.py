"""The EnvScaler import as a Prefect flow: the same import, its audit published as an artifact.

`envscaler import envscaler --flow` runs it in process; a deployment can run it on a worker. The
audit artifact (`audit-<run_id>`) carries the same counts and reasons as `--json` and `status`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from envscaler_core.config import load_settings
from envscaler_core.interop.summary import audit_markdown
from envscaler_core.pipeline import termination


def _import(run_id: str, envs: str, scenarios: list[str], config: dict[str, Any], solve: bool, attempts: int,
            solutions: str | None) -> dict[str, Any]:
    from envscaler_core.interop.importer import import_envscaler
    from envscaler_core.store import Store
    from envscaler_core.store.claims import claimed_run
    from sandbox import SandboxPool

    settings = load_settings(overrides=config)  # environment first (API key, DB URL), explicit config wins
    runtime = SandboxPool(settings.sandbox)
    try:
        # an import another live process writes under this run id (PostgreSQL) is refused before it reads
        with Store.from_url(settings.store.url) as store, claimed_run(store, run_id):
            report = import_envscaler(Path(envs), [Path(s) for s in scenarios], store=store, runtime=runtime,
                                      settings=settings, run_id=run_id, solve=solve, attempts=attempts,
                                      solutions_path=Path(solutions) if solutions else None)
    finally:
        runtime.close()
    return report.model_dump(mode="json")


@flow(name="envscaler-import", log_prints=True, validate_parameters=False)
async def import_flow(run_id: str, envs: str, scenarios: list[str], config: dict[str, Any], solve: bool = False,
                      attempts: int = 2, solutions: str | None = None) -> dict[str, Any]:
    """Import EnvScaler's env metadata and scenario files as run `run_id` and publish the audit."""
    termination.reassert()  # a CLI's SIGTERM handler over Prefect's (envscaler_core/pipeline/termination.py)
    log = get_run_logger()
    report = await asyncio.to_thread(_import, run_id, envs, scenarios, config, solve, attempts, solutions)
    for problem in report["problems"][:20]:
        log.warning("skipped %s", problem)
    key = "audit-" + "".join(c if c.isalnum() else "-" for c in run_id.lower())
    await create_markdown_artifact(key=key[:100], markdown=audit_markdown(report["summary"]),
                                   description=f"EnvScaler import audit for run {run_id}")
    return report
