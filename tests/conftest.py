"""Shared fixtures live in plugins under tests/fixtures, one file per component, so that each
component's owner edits only its own file.

Each pytest process (the one of a plain run, or each xdist worker of `make test`) gets its own
PREFECT_HOME and ENVSCALER_DATA_DIR: no test writes into the developer's ~/.prefect or
~/.local/share/envscaler (runs on a server store publish their progress there), and two workers
never share such a file. CLI subprocess specs drop both through `tests.cli.helpers.clean_env`."""

import atexit
import os
import shutil
import tempfile

_OWN_DIRS = [tempfile.mkdtemp(prefix="envscaler-test-prefect-"), tempfile.mkdtemp(prefix="envscaler-test-data-")]
atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _OWN_DIRS])

# Never let a test (or a library it imports) write into the developer's ~/.prefect or reach a
# Prefect API configured on this machine: flow tests get a real server from `prefect_api`.
os.environ["PREFECT_HOME"], os.environ["ENVSCALER_DATA_DIR"] = _OWN_DIRS
os.environ.pop("PREFECT_API_URL", None)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

pytest_plugins = [
    "tests.fixtures.llm",
    "tests.fixtures.sandbox",
    "tests.fixtures.store",
    "tests.fixtures.prefect",
    "tests.fixtures.small_run",
    "tests.fixtures.xdist_schedule",
]
