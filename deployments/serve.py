"""Serve the factory as a scheduled Prefect deployment from this process (no work pool needed).

    python -m deployments.serve --cron "0 2 * * *" --source envscaler_core/data/api_bank_lv3_slice.json

Runs triggered from the UI or `prefect deployment run 'envscaler-factory/factory-served'` execute
here, one at a time (every scheduled run has the same run id, and a second process on a run id is
refused: a run due while one works waits); stopping the process pauses the schedule.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from envscaler_core.config import load_settings
from envscaler_core.secret_urls import mask_url


def deployment_parameters(config_path: str | Path | None, sources: list[str], run_id: str) -> dict[str, Any]:
    """The flow parameters baked into the deployment.

    Only what the config file sets goes in, never a full settings dump: the flow merges its `config`
    parameter OVER the environment, so baked-in defaults would shadow `ENVSCALER_DB_URL` /
    `OPENAI_BASE_URL` of the process that runs the flow, and parameters are shown on the dashboard
    and stored in Prefect's database, so the API key must not be among them. The file is still
    validated here so a typo fails at deploy time, not at 2 a.m."""
    config: dict[str, Any] = {}
    if config_path is not None:
        settings = load_settings(config_path, environ={})
        config = settings.model_dump(mode="json", by_alias=True, exclude_unset=True)
        config.get("llm", {}).pop("api_key", None)
        for section, field in (("store", "url"), ("llm", "base_url")):  # a password: the worker's environment has it
            if isinstance(url := config.get(section, {}).get(field), str):
                config[section][field] = mask_url(url)
    return {"run_id": run_id, "sources": list(sources), "config": config}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cron", default=None, help="Cron schedule (UTC); omit for manual runs only.")
    parser.add_argument("--interval", type=float, default=None,
                        help="Run every this many seconds instead of (or besides) --cron.")
    parser.add_argument("--source", action="append", default=[], help="Source task file; repeatable.")
    parser.add_argument("--config", default=None, help="Settings file baked into the deployment's parameters.")
    parser.add_argument("--run-id", default="scheduled", help="Run id (the same id resumes; vary it per schedule).")
    args = parser.parse_args(argv)
    parameters = deployment_parameters(args.config, args.source, args.run_id)
    from flows.factory import factory_flow  # imports Prefect: only when actually serving

    factory_flow.serve(name="factory-served", cron=args.cron, interval=args.interval, parameters=parameters,
                       limit=1)


if __name__ == "__main__":
    main()
