"""Serve the factory as a scheduled Prefect deployment from this process (no work pool needed).

    python -m deployments.serve --cron "0 2 * * *" --source envscaler_core/data/api_bank_lv3_slice.json

Runs triggered from the UI or `prefect deployment run 'envscaler-factory/factory-served'` execute
here; stopping the process pauses the schedule.
"""

from __future__ import annotations

import argparse

from envscaler_core.config import load_settings
from flows.factory import factory_flow


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cron", default=None, help="Cron schedule (UTC); omit for manual runs only.")
    parser.add_argument("--source", action="append", default=[], help="Source task file; repeatable.")
    parser.add_argument("--config", default=None, help="Settings file baked into the deployment's parameters.")
    parser.add_argument("--run-id", default="scheduled", help="Run id (the same id resumes; vary it per schedule).")
    args = parser.parse_args(argv)
    config = load_settings(args.config).model_dump(mode="json", by_alias=True)
    factory_flow.serve(name="factory-served", cron=args.cron,
                       parameters={"run_id": args.run_id, "sources": args.source, "config": config})


if __name__ == "__main__":
    main()
