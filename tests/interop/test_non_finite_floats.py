"""Spec: a class that keeps `float("inf")` (or -inf, nan) in its state, a common sentinel in EnvScaler
classes (`self.lowest_bid = float("inf")`), loads and is judged: JSON cannot hold the value, so it crosses
the sandbox wall as a marker of our own, `{"__type__": "float", "value": "inf"}`, restored before any
check sees the state, like EnvScaler's set and tuple markers. Before, the env was rejected as "does not
load the way EnvScaler's runtime loads it", which EnvScaler's runtime does (outside check 3, F5). A value
no marker carries (an object of the class's own) still rejects the env, with a reason that says what
cannot be carried, not that EnvScaler's runtime refuses the class."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

REPO = Path(__file__).resolve().parents[2]

CODE = '''from typing import Dict, List


class Auction:
    def __init__(self, init_config: dict):
        self.suppliers: Dict[str, dict] = {}
        self.bids: List[dict] = []
        self.lowest_bid: float = float("inf")
        self.highest_bid: float = float("-inf")
        self.spread: float = float("nan")
        self.winner: str = ""
        self.init_config = init_config

    def get_lowest_bid(self) -> dict:
        """Get the lowest bid so far."""
        if not self.bids:
            return {"success": False, "error": "No bids yet"}
        return {"success": True, "data": {"amount": self.lowest_bid, "supplier": self.winner}}

    def place_bid(self, supplier_id: str, amount: float) -> dict:
        """Place a bid for a registered supplier."""
        if supplier_id not in self.suppliers:
            return {"success": False, "error": "Supplier not found"}
        if amount <= 0:
            return {"success": False, "error": "Invalid amount"}
        self.bids.append({"supplier_id": supplier_id, "amount": amount})
        if amount < self.lowest_bid:
            self.lowest_bid, self.winner = amount, supplier_id
        self.highest_bid = max(self.highest_bid, amount)
        self.spread = self.highest_bid - self.lowest_bid
        return {"success": True, "message": "Bid placed"}
'''
OBJECT_CODE = CODE.replace('self.spread: float = float("nan")', 'self.spread = object()')
TOOLS = [{"type": "function", "function": {"name": "get_lowest_bid", "description": "Get the lowest bid so far.",
                                           "parameters": {"type": "object", "properties": {}, "required": []}}},
         {"type": "function", "function": {"name": "place_bid", "description": "Place a bid.", "parameters": {
             "type": "object", "properties": {"supplier_id": {"type": "string"}, "amount": {"type": "number"}},
             "required": ["supplier_id", "amount"]}}}]
OPS = [{"operation_name": "get_lowest_bid", "operation_description": "Get.", "operation_type": "query"},
       {"operation_name": "place_bid", "operation_description": "Bid.", "operation_type": "state_change"}]
CONFIG = {"suppliers": {"S1": {"name": "Acme"}, "S2": {"name": "Bolt"}}}
CHECK = ("def check_func(final_state):\n"
         "    return (initial_state['lowest_bid'] == float('inf') and initial_state['highest_bid'] == float('-inf')\n"
         "            and initial_state['spread'] != initial_state['spread']\n"
         "            and final_state['lowest_bid'] == 40.0 and final_state['winner'] == 'S1')")
PLAN = [{"name": "place_bid", "arguments": {"supplier_id": "S1", "amount": 40.0}}]


def _import(tmp: Path, code: str, sandbox_pool: Any) -> tuple[ImportedEnv, ImportedScenario]:
    env = {"env_id": "env_auction", "environment_summary": "Auction", "environment_introduction": "A reverse auction.",
           "state_space_definition": [], "constraints_rules": [], "env_class_name": "Auction", "env_class_code": code,
           "operation_list": OPS, "tools": TOOLS}
    scenario = {"env_id": "env_auction", "env_class_name": "Auction", "task_id": "a1", "init_config": CONFIG,
                "task": "Place a bid of 40 for S1.", "checklist": ["S1 leads at 40"],
                "checklist_with_func": [{"check_item": "S1 leads at 40", "check_func": CHECK}]}
    directory = write_one_scenario_dir(tmp / "envscaler", env, scenario, PLAN)
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="auction")
    with Store.from_url(settings.store.url) as store:
        [imported_env] = store.query(ImportedEnv, run_id="auction")
        [imported_scenario] = store.query(ImportedScenario, run_id="auction")
    return imported_env, imported_scenario


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> tuple[ImportedEnv, ImportedScenario]:
    return _import(tmp_path_factory.mktemp("inf"), CODE, sandbox_pool)


def test_a_class_with_inf_and_nan_sentinels_is_accepted(sentinel: tuple[ImportedEnv, ImportedScenario]) -> None:
    env, _ = sentinel
    assert (env.status, env.reasons) == ("accepted", [])


def test_checks_see_the_sentinels_as_floats_and_the_scenario_verifies(
        sentinel: tuple[ImportedEnv, ImportedScenario]) -> None:
    _, scenario = sentinel
    assert scenario.audit == "verified", (scenario.reasons, scenario.attempts)
    assert [(c.on_initial, c.on_solved) for c in scenario.checks] == [(False, True)]


def test_validate_on_a_state_reports_the_sentinel_as_a_float_marker(tmp_path: Path) -> None:
    (tmp_path / "auction.py").write_text(CODE)
    (tmp_path / "state.json").write_text(json.dumps(CONFIG))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(tmp_path / "auction.py"),
                          "--state", str(tmp_path / "state.json"), "--mode", "programmatic", "--full"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    report = json.loads(out.stdout)
    refused = next(r for r in report["rounds"] if r["tool"] == "get_lowest_bid")
    assert refused["state_after"]["lowest_bid"] == {"__type__": "float", "value": "inf"}
    assert refused["state_after"]["spread"] == {"__type__": "float", "value": "nan"}


def test_a_value_no_marker_carries_says_so_without_blaming_envscalers_runtime(
        tmp_path: Path, sandbox_pool: Any) -> None:
    env, _ = _import(tmp_path, OBJECT_CODE, sandbox_pool)
    assert env.status == "rejected"
    [reason] = env.reasons
    assert reason.startswith("loads, but its state holds a value JSON with EnvScaler's type markers cannot carry")
    assert "the way EnvScaler's runtime loads it" not in reason and "object" in reason
