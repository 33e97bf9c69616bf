"""Spec: reading EnvScaler's files checks each record against what its loaders read; whole-file
problems stop the import before anything is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.read import ReadError, env_execution_config, execution_form, read_envs, read_scenarios
from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.interop.conftest import FIXTURES, run_import, settings_for


def _env(**overrides: Any) -> dict[str, Any]:
    record = json.loads((FIXTURES / "env_metadata.json").read_text())["env_1"]
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not None}


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_env_metadata_that_is_neither_a_dict_nor_a_list_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="keyed by env id"):
        read_envs(_write(tmp_path / "e.json", "env_1"))


def test_invalid_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text('{"env_1": {"a": 1,}}')
    with pytest.raises(ReadError, match=r"e.json: invalid JSON: .* line 1 column"):
        read_envs(path)


def test_a_scenario_file_must_be_a_list(tmp_path: Path) -> None:
    envs, _, _ = read_envs(_write(tmp_path / "e.json", {"env_1": _env()}))
    with pytest.raises(ReadError, match="must be a JSON list"):
        read_scenarios([_write(tmp_path / "s.json", {"0": {}})], envs, set())


@pytest.mark.parametrize(("record", "reason"), [
    (["not", "a", "dict"], "env record is a list"),
    (_env(env_class_name="Bad Name"), "not a Python identifier"),
    (_env(environment_introduction=None), "'environment_introduction' is missing"),
    (_env(constraints_rules="be nice"), "'constraints_rules' is not a list of strings"),
    (_env(tools=[{"type": "function", "function": {"description": "no name"}}]), "tools[0] is not an OpenAI function schema"),
    (_env(tools=[{"type": "function", "function": {"name": "f", "parameters": "x"}}]), "'parameters' is not an object"),
    (_env(operation_list={"op": 1}), "'operation_list' is not a list"),
])
def test_malformed_env_records_name_what_is_wrong(tmp_path: Path, record: Any, reason: str) -> None:
    envs, problems, skipped = read_envs(_write(tmp_path / "e.json", {"env_1": record, "env_2": _env(env_id="env_2")}))
    assert [e.env_id for e in envs] == ["env_2"] and skipped == {"env_1"}
    assert problems[0].file == "e.json" and problems[0].index == "env_1" and reason in problems[0].reason


def test_list_env_metadata_needs_unique_env_ids(tmp_path: Path) -> None:
    envs, problems, _ = read_envs(_write(tmp_path / "e.json", [_env(), _env(), {**_env(), "env_id": None}]))
    assert [e.env_id for e in envs] == ["env_1"]
    assert [(p.index, p.reason) for p in problems] == [
        ("1", "duplicate env_id 'env_1' (first at [0])"), ("2", "list entry without a string 'env_id'")]


def test_operation_types_label_the_tools_and_odd_labels_are_noted(tmp_path: Path) -> None:
    ops = [{"operation_name": "get_book", "operation_type": "query"},
           {"operation_name": "lend_book", "operation_type": "modify"},
           {"operation_name": "return_book", "operation_type": "write-ish"}]
    envs, _, _ = read_envs(_write(tmp_path / "e.json", {"env_1": _env(operation_list=ops)}))
    assert envs[0].tool_kinds == {"get_book": "query", "lend_book": "state_change"}
    assert any("unknown operation_type 'write-ish'" in n for n in envs[0].notes)


def test_jsonpickle_tuples_and_sets_become_markers_and_objects_are_refused() -> None:
    assert execution_form({"a": {"py/tuple": [1, 2]}, "b": [{"py/set": ["x"]}]}) == {
        "a": {"__type__": "tuple", "items": [1, 2]}, "b": [{"__type__": "set", "items": ["x"]}]}
    with pytest.raises(Exception, match="py/reduce"):
        execution_form({"a": {"py/reduce": [{"py/function": "os.system"}]}})


def test_sandbox_episodes_get_plain_json_in_place_of_markers() -> None:
    config = {"t": {"__type__": "tuple", "items": [1, 2]}, "d": {"__type__": "datetime", "value": "2024-01-02T03:04:05"},
              "k": {"__type__": "dict", "items": [[{"__type__": "key", "value": 5}, "five"]]}}
    assert env_execution_config(config) == {"t": [1, 2], "d": "2024-01-02T03:04:05", "k": {"5": "five"}}


def test_a_file_error_writes_nothing(envscaler_dir: Path, tmp_path: Path, sandbox_pool: Any) -> None:
    (envscaler_dir / "sft_scenario_metadata.json").write_text('[{"env_id": "env_1",')
    settings = settings_for(tmp_path)
    with pytest.raises(ReadError, match="sft_scenario_metadata.json: invalid JSON"):
        run_import(envscaler_dir, settings, sandbox_pool, run_id="broken")
    with Store.from_url(settings.store.url) as store:
        assert store.get_run("broken") is None and store.list_runs() == []


def test_an_import_never_lands_in_a_factory_run(envscaler_dir: Path, tmp_path: Path, sandbox_pool: Any) -> None:
    from envscaler_core.interop.importer import ImportRefused

    settings = settings_for(tmp_path)
    with Store.from_url(settings.store.url) as store:
        store.save_run(Run(run_id="factory-1"))
    with pytest.raises(ImportRefused, match="already exists as a factory run"):
        run_import(envscaler_dir, settings, sandbox_pool, run_id="factory-1")


@pytest.mark.parametrize(("init_config", "reason"), [
    ({"x": float("nan")}, "NaN or Infinity"),
    ({"x": "\ud800"}, "not valid Unicode"),
    ({"x": json.loads("[" * 70 + "]" * 70)}, "nested more than 64 levels deep"),
])
def test_records_that_strict_json_cannot_carry_are_malformed(tmp_path: Path, init_config: Any, reason: str) -> None:
    envs, _, _ = read_envs(_write(tmp_path / "e.json", {"env_1": _env()}))
    record = {"env_id": "env_1", "env_class_name": "LibraryLoanSystem", "task_id": "t", "init_config": init_config,
              "task": "Lend B2."}
    path = tmp_path / "s.json"
    path.write_text(json.dumps([record], allow_nan=True))
    scenarios, problems = read_scenarios([path], envs, set())
    assert scenarios == [] and reason in problems[0].reason and problems[0].index == "0"


def test_a_class_name_in_any_script_python_accepts_is_read_and_a_keyword_is_not(tmp_path: Path) -> None:
    code = "class Bibliothèque:\n    def __init__(self, init_config):\n        self.books = {}\n"
    envs, problems, _ = read_envs(_write(tmp_path / "e.json", {
        "env_1": _env(env_class_name="Bibliothèque", env_class_code=code),
        "env_2": _env(env_id="env_2", env_class_name="class")}))
    assert [e.class_name for e in envs] == ["Bibliothèque"]
    assert "not a Python identifier" in problems[0].reason and problems[0].index == "env_2"
