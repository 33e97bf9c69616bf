"""Spec: an imported env is checked for contract breaches on every initial state one of its scenarios
would be promoted with (verified, then served by the gym, MCP and the RL export), not only on the few
states it is validated on first; and a config key named like a method of the class (set over it, as
EnvScaler's loader does) neither hides a state from validation nor decides the env's verdict.

* rt10-B F2: ten decoy scenarios whose states sort first hid the one state (a lost book) on which the
  query `get_book` writes: the env was accepted and all eleven scenarios verified.
* rt10-B F4: a key named like a harmless tool (`"get_hours": "9-17"`) in every scenario made every
  state "shadowed", so the env was validated on an empty state only and accepted with the same defect.
* rt10-C F4: one scenario whose config sets `_find` (a private helper the tools call) got the whole env
  rejected ("exception in add_copies: TypeError: 'str' object is not callable"), its plain scenario too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.interop.envjob import MAX_TEST_STATES
from envscaler_core.models.base import fingerprint_of
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.fixtures.lending import library
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_a_breach_on_any_tested_state import ENV, LIBRARY, REAL, _scenario, _tool

LEND = [{"name": "lend_book", "arguments": {"book_id": "b1", "member": "Ana"}}]


def _import(tmp_path: Path, sandbox_pool: Any, env: dict[str, Any], records: list[dict[str, Any]]
            ) -> tuple[ImportedEnv, dict[str, ImportedScenario], int]:
    directory = write_scenarios_dir(tmp_path / "in", str(env["env_id"]), env, records,
                                    {str(r["task_id"]): LEND for r in records})
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="imp")
    with Store.from_url(settings.store.url) as store:
        [imported] = store.query(ImportedEnv, run_id="imp")
        scenarios = {s.task_id: s for s in store.query(ImportedScenario, run_id="imp")}
        promoted = len(store.query(Scenario, run_id="imp"))
    return imported, scenarios, promoted


def _decoys_sorting_first() -> list[dict[str, Any]]:
    """Sound states (no lost book) whose fingerprints sort before the real one's, as many as the states
    validated first: without the later check, the real state is never validated."""
    decoys: list[dict[str, Any]] = []
    k = 0
    while len(decoys) < MAX_TEST_STATES:
        config = {"books": {"b1": {"title": f"Dune {k}", "status": "ok"}}, "loans": {}, "lost_reports": []}
        if fingerprint_of(config) < fingerprint_of(REAL):
            decoys.append(config)
        k += 1
    return decoys


def test_decoys_sorting_first_do_not_hide_a_breach_on_a_promotable_scenarios_state(
        tmp_path: Path, sandbox_pool: Any) -> None:
    records = [_scenario(f"decoy-{k}", c) for k, c in enumerate(_decoys_sorting_first())] + [_scenario("real", REAL)]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, ENV, records)
    assert env.status == "rejected", {t: s.audit for t, s in scenarios.items()}
    assert any("query tool get_book changed state" in r for r in env.reasons), env.reasons
    assert {s.audit for s in scenarios.values()} == {"env_rejected"}
    assert promoted == 0


HOURS = '''
    def get_hours(self) -> dict:
        """Opening hours."""
        return {"success": True, "data": "9-17"}
'''
SHADOWING_ENV = {**ENV, "env_id": "env_hours",
                 "env_class_code": LIBRARY.replace("\n    def lend_book", HOURS + "\n    def lend_book", 1),
                 "operation_list": [*ENV["operation_list"], {"operation_name": "get_hours", "operation_type": "query"}],
                 "tools": [*ENV["tools"], _tool("get_hours", [])]}


def test_a_key_shadowing_a_tool_in_every_scenario_does_not_spare_its_states_from_validation(
        tmp_path: Path, sandbox_pool: Any) -> None:
    records = [{**_scenario("real", {**REAL, "get_hours": "9-17"}), "env_id": "env_hours"}]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, SHADOWING_ENV, records)
    assert env.status == "rejected", scenarios["real"].audit
    assert any("query tool get_book changed state" in r for r in env.reasons), env.reasons
    assert promoted == 0


FINDING = library('''
    def _find(self, book_id: str):
        return self.books.get(book_id)

    def get_book(self, book_id: str) -> dict:
        """Look a book up."""
        book = self._find(book_id)
        if book is None:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": book}''')
FINDING_ENV = {**ENV, "env_id": "env_find", "env_class_code": FINDING,
               "tools": [*ENV["tools"], _tool("_find", ["book_id"])]}
PLAIN = {"books": {"b1": {"title": "Dune", "status": "ok"}}, "loans": {}}


def test_a_key_shadowing_a_private_helper_in_one_scenario_does_not_reject_the_env(
        tmp_path: Path, sandbox_pool: Any) -> None:
    records = [{**_scenario(t, c), "env_id": "env_find"} for t, c in (("plain", PLAIN),
                                                                       ("shadow", {**PLAIN, "_find": "nope"}))]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, FINDING_ENV, records)
    assert env.status == "accepted", env.reasons
    assert scenarios["plain"].audit == "verified", scenarios["plain"].reasons
    assert scenarios["shadow"].audit != "env_rejected"
    assert promoted >= 1


SERVED = Path(__file__).parents[1] / "fixtures" / "envscaler" / "served_form"
ULYSSES_ONLY = ('        if not isinstance(self.vip, (set, frozenset)):',
                '        if not isinstance(self.vip, (set, frozenset)) and any(\n'
                '                b["title"] == "Ulysses" for b in self.books.values()):')


def test_decoys_do_not_hide_a_breach_in_the_served_form_of_a_promotable_scenarios_state(
        tmp_path: Path, sandbox_pool: Any) -> None:
    """The served form (markers flattened) is what the gym, MCP and the RL export play: a write only there,
    and only on the state holding "Ulysses", stays unpromoted behind decoys whose states sort first."""
    import json

    [env] = json.loads((SERVED / "env_metadata.json").read_text()).values()
    env["env_class_code"] = env["env_class_code"].replace(*ULYSSES_ONLY)
    [real] = json.loads((SERVED / "rl_scenario_metadata.json").read_text())
    decoys, k = [], 0
    while len(decoys) < MAX_TEST_STATES:
        config = json.loads(json.dumps(real["init_config"]))
        config["books"]["B3"]["title"] = f"Dune {k}"
        if fingerprint_of(config) < fingerprint_of(real["init_config"]):
            decoys.append({**real, "task_id": f"decoy-{k}", "init_config": config})
        k += 1
    plan = [{"name": "lend_book", "arguments": {"book_id": "B2", "member_id": "M1"}}]
    records = [*decoys, real]
    directory = write_scenarios_dir(tmp_path / "in", "env_1", env, records, {str(r["task_id"]): plan for r in records})
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="imp")
    with Store.from_url(settings.store.url) as store:
        scenarios = {s.task_id: s for s in store.query(ImportedScenario, run_id="imp")}
        promoted = store.query(Scenario, run_id="imp")
    assert scenarios[real["task_id"]].audit == "verified"  # EnvScaler's verdict (markers restored) stands
    assert promoted == [], [s.task for s in promoted]
    assert any("query tool get_book changed state" in r for r in scenarios[real["task_id"]].reasons)


def _armed_library() -> str:
    """`Library` whose constructor arms a defect (the query `get_book` lends the book) when the config
    holds `_audit`, a key named like one of its private helpers."""
    head, lend = library(""), "\n    def lend_book"
    return ('\nclass Library:\n    def __init__(self, init_config=None):\n        self.books = {}\n'
            '        self.loans = {}\n        self._leaky = "_audit" in (init_config or {})\n\n'
            '    def _audit(self):\n        return None\n\n'
            '    def get_book(self, book_id: str) -> dict:\n        """Get a book\'s record by id."""\n'
            '        if book_id not in self.books:\n            return {"success": False, "error": "no such book"}\n'
            '        if self._leaky:\n            self.loans[book_id] = "Ana"\n'
            '        return {"success": True, "data": self.books[book_id]}\n' + head[head.index(lend):])


ARMED_ENV = {**ENV, "env_id": "env_armed", "env_class_code": _armed_library()}
RAISING_ARMED_ENV = {**ENV, "env_id": "env_armed", "env_class_code": _armed_library().replace(
    '            self.loans[book_id] = "Ana"\n', '            self.loans[book_id] = "Ana"\n            raise KeyError(book_id)\n')}


def test_a_key_named_like_a_helper_that_arms_a_defect_in_the_constructor_rejects_the_env(
        tmp_path: Path, sandbox_pool: Any) -> None:
    """rt11-B F1: `_audit` was left out of every state the class was validated and swept on, so the defect it
    arms (get_book lends the book) was met only where it is served: the gym paid 1.0 for a lone get_book."""
    records = [{**_scenario(t, c), "env_id": "env_armed"} for t, c in (("clean", PLAIN),
                                                                        ("armed", {**PLAIN, "_audit": "x"}))]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, ARMED_ENV, records)
    assert env.status == "rejected", {t: s.audit for t, s in scenarios.items()}
    assert any("query tool get_book changed state" in r for r in env.reasons), env.reasons
    assert promoted == 0


POPPED_ARMED_ENV = {**ENV, "env_id": "env_armed", "env_class_code": _armed_library().replace(
    '"_audit" in (init_config or {})', '(init_config or {}).pop("get_book", None) is not None')}


def test_a_key_named_like_a_query_that_the_constructor_pops_to_arm_it_rejects_the_env(
        tmp_path: Path, sandbox_pool: Any) -> None:
    """rt12-B F2: the sweep skipped get_book as shadowed by the key `get_book`, which the constructor had
    popped (so nothing shadows it) to arm it: the gym paid 1.0 for a lone get_book."""
    records = [{**_scenario(t, c), "env_id": "env_armed"} for t, c in (("clean", PLAIN),
                                                                        ("armed", {**PLAIN, "get_book": 1}))]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, POPPED_ARMED_ENV, records)
    assert env.status == "rejected", {t: s.audit for t, s in scenarios.items()}
    assert promoted == 0


def test_an_armed_query_that_writes_then_raises_in_the_served_state_rejects_the_env(
        tmp_path: Path, sandbox_pool: Any) -> None:
    """A raise on a state with a key named like a method is forgiven only when the call changed nothing:
    EnvScaler's runtime keeps what a raising tool wrote, and the episode goes on."""
    records = [{**_scenario(t, c), "env_id": "env_armed"} for t, c in (("clean", PLAIN),
                                                                        ("armed", {**PLAIN, "_audit": "x"}))]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, RAISING_ARMED_ENV, records)
    assert env.status == "rejected", {t: s.audit for t, s in scenarios.items()}
    assert promoted == 0


def test_a_key_shadowing_a_tool_in_a_served_state_ends_that_tools_calls_without_rejecting_the_env(
        tmp_path: Path, sandbox_pool: Any) -> None:
    """A served state with `"get_hours": "9-17"` is swept as served: a call to get_hours there ends the
    episode (EnvScaler's runtime calls the string), as the gym plays it; that is the data's doing, no breach."""
    records = [{**_scenario(t, c), "env_id": "env_hours"} for t, c in (("plain", PLAIN),
                                                                        ("shadow", {**PLAIN, "get_hours": "9-17"}))]
    env, scenarios, promoted = _import(tmp_path, sandbox_pool, SHADOWING_ENV, records)
    assert env.status == "accepted", env.reasons
    assert scenarios["shadow"].audit == "verified", scenarios["shadow"].reasons
    assert promoted == 2
