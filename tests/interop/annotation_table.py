"""A table of parameter annotations turned into one imported env, for the specs on how an annotation's
schema is fitted (`interop/tool_fit.py`): one tool per row (`set_v<i>(item_id, value: <annotation>)`, which
stores `value` on the item), its schema as EnvScaler's step6 wrote it, and one RL scenario per row whose
reference solution makes the call EnvScaler's runtime runs with the row's value (it passes the agent's JSON
arguments to the method unchecked: `getattr(env, name)(**arguments)`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq
import pytest

from envscaler_core.gym import ScenarioEnv
from tests.interop.conftest import import_one_env

Row = tuple[str, Any, dict[str, Any], dict[str, Any]]
"""An annotation (with its default, if any), a value EnvScaler's runtime passes for it, step6's schema for
it (unmodified EnvScaler output), the schema served here."""

SETTER = '''
    def _set(self, item_id: str, key: str, value: object) -> dict:
        if item_id not in self.items:
            return {"success": False, "error": "no such item"}
        value = getattr(value, "value", value)  # a default that is an Enum member: its value, as a call gives
        self.items[item_id][key] = list(value) if isinstance(value, (tuple, set, frozenset)) else value
        return {"success": True, "message": f"{key} set"}
'''


def _step6(i: int, schema: dict[str, Any]) -> dict[str, Any]:
    optional = "null" in (schema.get("type") or [])  # step6's `Optional[...]` marks it not required
    return {"type": "function", "function": {"name": f"set_v{i}", "description": f"Set value {i} of an item.",
            "parameters": {"type": "object", "properties": {"item_id": {"type": "string"}, "value": schema},
                           "required": ["item_id"] if optional else ["item_id", "value"]}}}


def board(head: str, rows: list[Row]) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The env record (class `Board`: `head` is the module up to its `__init__`), its scenarios and their plans."""
    code = head + SETTER + "".join(f'''
    def set_v{i}(self, item_id: str, value: {annotation}) -> dict:
        """Set value {i} of an item."""
        return self._set(item_id, "v{i}", value)
''' for i, (annotation, _, _, _) in enumerate(rows))
    env = {"env_id": "env_board", "environment_introduction": "A board of items.", "constraints_rules": [],
           "env_class_name": "Board", "env_class_code": code,
           "tools": [_step6(i, row[2]) for i, row in enumerate(rows)],
           "operation_list": [{"operation_name": f"set_v{i}", "operation_type": "state_change"} for i in range(len(rows))]}
    scenarios = [{"env_id": "env_board", "env_class_name": "Board", "task_id": f"t{i}",
                  "init_config": {"items": {"x1": {}, "x2": {}}}, "task": f"Set value {i} of x1 to {value!r}.",
                  "checklist": ["set"], "checklist_with_func": [{"check_item": "set", "check_func": (
                      f"def check_func(final_state):\n    return final_state['items']['x1'].get('v{i}', 'unset') == "
                      f"{value!r}")}]} for i, (_, value, _, _) in enumerate(rows)]
    plans = {f"t{i}": [{"name": f"set_v{i}", "arguments": {"item_id": "x1", "value": value}}]
             for i, (_, value, _, _) in enumerate(rows)}
    return env, scenarios, plans


def served(imported: dict[str, Any], i: int) -> Any:
    """The schema served for row `i`'s `value` parameter."""
    (env,) = imported["accepted"]
    return next(t.function.parameters for t in env.tools if t.function.name == f"set_v{i}")["properties"]["value"]


def audit(imported: dict[str, Any], i: int) -> tuple[str, bool, list[str]]:
    """Row `i`'s scenario: its audit class, whether it was promoted, and why not."""
    (scenario,) = [s for s in imported["scenarios"] if s.task_id == f"t{i}"]
    return scenario.audit, scenario.scenario_fp is not None, scenario.reasons


def play(imported: dict[str, Any], pool: Any, i: int, value: Any) -> tuple[str, float, bool]:
    """A gym episode on row `i`'s promoted scenario making its call: the call's observation, the reward, and
    whether `done` ended the episode."""
    (scenario,) = [s for s in imported["scenarios"] if s.task_id == f"t{i}"]
    index = [p.fingerprint for p in imported["promoted"]].index(scenario.scenario_fp)
    env = ScenarioEnv(imported["accepted"][0], imported["promoted"], pool)
    try:
        env.reset(options={"scenario_index": index})
        obs, _, _, _, _ = env.step({"tool": f"set_v{i}", "args": {"item_id": "x1", "value": value}})
        _, reward, terminated, _, _ = env.step({"done": True})
    finally:
        env.close()
    return obs, float(reward), bool(terminated)


def markers(value: Any, where: str = "") -> list[str]:
    """Where in `value` (a schema, a tool list, a record) a key starts with `_`; a `properties` map's keys
    are parameter names, not keywords, and are walked but not counted."""
    found: list[str] = []
    if isinstance(value, dict):
        names = where.endswith(".properties")
        for key, inner in value.items():
            if isinstance(key, str) and key.startswith("_") and not names:
                found.append(f"{where}.{key}")
            found += markers(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for n, inner in enumerate(value):
            found += markers(inner, f"{where}[{n}]")
    elif isinstance(value, str) and value[:1] in "[{":
        try:
            found += markers(json.loads(value), f"{where}(json)")
        except ValueError:
            pass
    return found


def exported(imported: dict[str, Any]) -> dict[str, list[Any]]:
    """The RL export's records, by file: `envs.jsonl`, `rl_scenarios.jsonl` and `rl_scenarios.parquet`."""
    out: Path = imported["rl"].parent
    return {"envs.jsonl": [json.loads(line) for line in (out / "envs.jsonl").read_text().splitlines()],
            "rl_scenarios.jsonl": [json.loads(line) for line in (out / "rl_scenarios.jsonl").read_text().splitlines()],
            "rl_scenarios.parquet": pq.read_table(imported["rl"]).to_pylist()}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each `AnnotationTable` test taking `i` runs once per row of its class's table, named by the annotation."""
    if "i" in metafunc.fixturenames and metafunc.cls is not None and issubclass(metafunc.cls, AnnotationTable):
        rows = metafunc.cls.ROWS
        metafunc.parametrize("i", range(len(rows)), ids=[row[0] for row in rows])


class AnnotationTable:
    """What every row of a table holds, once its env is imported: the env is accepted, the row's served schema
    is the one the table gives, and the call EnvScaler's runtime runs with the row's value verifies its
    scenario, which is promoted, and pays 1.0 in a gym episode; and no schema the RL export writes holds an
    internal marker (a key starting with `_`, such as step6's `_optional`). A spec module subclasses it with `HEAD`
    (the module up to `Board.__init__`) and `ROWS`, and imports `pytest_generate_tests`."""

    HEAD: ClassVar[str]
    ROWS: ClassVar[list[Row]]

    @pytest.fixture(scope="class")
    @classmethod
    def imported(cls, tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
        env, scenarios, plans = board(cls.HEAD, cls.ROWS)
        tmp: Path = tmp_path_factory.mktemp(cls.__name__.lower())
        return import_one_env(tmp, env, scenarios, plans, sandbox_pool, "table", rl_export=True)

    def test_the_env_is_accepted(self, imported: dict[str, Any]) -> None:
        assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]

    def test_the_served_schema_is_the_one_the_table_gives(self, imported: dict[str, Any], i: int) -> None:
        assert served(imported, i) == self.ROWS[i][3]

    def test_the_call_envscaler_runs_verifies_its_scenario_which_is_promoted(self, imported: dict[str, Any],
                                                                               i: int) -> None:
        assert audit(imported, i)[:2] == ("verified", True), audit(imported, i)[2]

    def test_a_gym_episode_making_that_call_earns_full_reward(self, imported: dict[str, Any], sandbox_pool: Any,
                                                              i: int) -> None:
        obs, reward, terminated = play(imported, sandbox_pool, i, self.ROWS[i][1])
        assert json.loads(obs).get("success") is True, obs
        assert terminated and reward == 1.0

    def test_no_exported_schema_holds_an_internal_marker(self, imported: dict[str, Any]) -> None:
        files = exported(imported)
        assert all(files.values()), {name: len(rows) for name, rows in files.items()}
        assert {name: markers(rows) for name, rows in files.items()} == {name: [] for name in files}
