"""Shared fixtures live in plugins under tests/fixtures, one file per component, so that each
component's owner edits only its own file."""

import os
import tempfile

# Never let a test (or a library it imports) write into the developer's ~/.prefect or reach a
# Prefect API configured on this machine: flow tests get a real server from `prefect_api`.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="envscaler-test-prefect-")
os.environ.pop("PREFECT_API_URL", None)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

pytest_plugins = [
    "tests.fixtures.llm",
    "tests.fixtures.sandbox",
    "tests.fixtures.store",
    "tests.fixtures.prefect",
]
