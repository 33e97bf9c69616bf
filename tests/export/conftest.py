from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from envscaler_core.gym import ScenarioEnv
from envscaler_core.store import Store
from tests.export.records import Populated, populate, verified
from tests.scenarios.helpers import library_env, scenario


@pytest.fixture
def runtime(sandbox_pool):
    """The real sandbox pool (the sandbox component's session fixture)."""
    return sandbox_pool


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"duckdb:///{tmp_path / 'store.duckdb'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store.from_url(db_url) as opened:
        yield opened


@pytest.fixture
def populated(store: Store, runtime) -> Populated:  # type: ignore[no-untyped-def]
    return populate(store, runtime)


@pytest.fixture
def gym(runtime) -> Iterator[ScenarioEnv]:  # type: ignore[no-untyped-def]
    """A gym on the library env's one verified scenario, reset and ready for steps (a spec file needing
    other scenarios defines its own `gym`)."""
    env = ScenarioEnv(library_env(), [verified(scenario())], runtime)
    env.reset(options={"scenario_index": 0})
    yield env
    env.close()
