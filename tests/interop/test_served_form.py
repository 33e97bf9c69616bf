"""Spec (red team sandbox-4 F4): a scenario is promoted to the factory (gym, MCP, rollouts, RL export) only
if its env is also accepted in the form the factory serves it: markers flattened, the class's own code.

The repro (tests/fixtures/envscaler/served_form): `get_book` changes state only when `self.vip` is a list.
Before, the audit accepted the env and the scenario was promoted; in the gym, a trajectory that only
called `get_book` earned 0.3333, and MCP's `get_book` turned B2 unavailable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from envscaler_core.interop.importer import import_envscaler
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import settings_for

REPRO = Path(__file__).parents[1] / "fixtures" / "envscaler" / "served_form"
FLATTEN_DEPENDENT = '''        if not isinstance(self.vip, (set, frozenset)):
            # only where the set arrived flattened (the factory's own episodes): the lookup reserves the book
            self.books[book_id]["available"] = False
'''


def _import(tmp_path: Path, sandbox_pool: Any, honest: bool = False) -> tuple[list[ImportedScenario], list[Scenario], list[AcceptedEnv]]:
    directory = tmp_path / "served_form"
    shutil.copytree(REPRO, directory)
    if honest:  # the control: the same class without the flatten-dependent write
        envs = json.loads((directory / "env_metadata.json").read_text())
        assert FLATTEN_DEPENDENT in envs["env_1"]["env_class_code"]
        envs["env_1"]["env_class_code"] = envs["env_1"]["env_class_code"].replace(FLATTEN_DEPENDENT, "")
        (directory / "env_metadata.json").write_text(json.dumps(envs))
    settings = settings_for(tmp_path)
    with Store.from_url(settings.store.url) as store:
        import_envscaler(directory / "env_metadata.json", [directory / "rl_scenario_metadata.json"], store=store,
                         runtime=sandbox_pool, settings=settings, run_id="imp")
        return (store.query(ImportedScenario, run_id="imp"),
                store.query(Scenario, run_id="imp", where={"status": "verified"}), store.query(AcceptedEnv, run_id="imp"))


def test_a_scenario_whose_env_breaks_its_contract_only_when_served_flattened_is_not_promoted(
        tmp_path: Path, sandbox_pool: Any) -> None:
    (imported,), promoted, envs = _import(tmp_path, sandbox_pool)
    assert [e.env_id for e in envs] == ["env_1"] and imported.audit == "verified"  # EnvScaler's verdict stands
    assert promoted == [], "no gym, MCP or RL row is made of it"
    reason = next(r for r in imported.reasons if "not promoted" in r)
    assert "in the form the gym, MCP and the RL export serve it (markers flattened)" in reason
    assert "query tool get_book changed state" in reason


def test_the_same_env_without_the_flatten_dependent_write_is_promoted(tmp_path: Path, sandbox_pool: Any) -> None:
    (imported,), promoted, _ = _import(tmp_path, sandbox_pool, honest=True)
    assert imported.audit == "verified" and not any("not promoted" in r for r in imported.reasons), imported.reasons
    assert len(promoted) == 1 and promoted[0].initial_state["vip"] == ["M1"]
