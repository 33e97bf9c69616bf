"""Spec: whatever is odd about one record of EnvScaler's files is that record's problem, reported once
with file and record, never a whole-file refusal, a crash or a silent loss (red team 2, findings 04, 08, 11).

The files are written as text, the way an outside tool (or an attacker) would write them: JSON allows a
lone surrogate escape, a key named twice in one object and any nesting depth; Python's `json` reads
the first two without a word and gives up on the third."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.interop.read import read_envs, read_scenarios
from envscaler_core.interop.solutions import KEY_RULE, read_solutions, scenario_key, solution_entry, solutions_document
from envscaler_core.models import fingerprint_of
from envscaler_core.models.scenario import ToolCall
from tests.interop.conftest import FIXTURES


def _env_text() -> str:
    return json.dumps(json.loads((FIXTURES / "env_metadata.json").read_text())["env_1"])


def _scenario(task_id: str, init_config: Any = None) -> dict[str, Any]:
    return {"env_id": "env_1", "env_class_name": "LibraryLoanSystem", "task_id": task_id,
            "init_config": init_config if init_config is not None else {"books": {}}, "task": "Lend B2."}


def _envs(tmp_path: Path) -> list[Any]:
    path = tmp_path / "e.json"
    path.write_text(f'{{"env_1": {_env_text()}}}')
    return read_envs(path)[0]


def test_an_env_id_holding_a_lone_surrogate_is_that_records_problem_in_printable_text(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(f'{{"\\ud800": {_env_text()}, "env_1": {_env_text()}}}')
    envs, problems, _ = read_envs(path)
    assert [e.env_id for e in envs] == ["env_1"]
    line = str(problems[0])
    assert line == "e.json[\\ud800]: env id holds text that is not valid Unicode (a lone surrogate)"
    assert line.encode("utf-8") and fingerprint_of(line)  # printable and storable (it used to crash the import)


def test_an_env_id_named_twice_in_the_metadata_object_is_reported_not_silently_dropped(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    first = _env_text()
    second = json.dumps({**json.loads(first), "environment_introduction": "the second one"})
    path.write_text(f'{{"env_1": {first}, "env_1": {second}}}')
    envs, problems, _ = read_envs(path)
    assert [e.introduction for e in envs] == [json.loads(first)["environment_introduction"]]
    assert len(problems) == 1 and problems[0].file == "e.json" and problems[0].index == "env_1"
    assert "duplicate env id 'env_1': the object names it 2 times" in problems[0].reason


def test_a_key_named_twice_inside_a_record_makes_that_record_malformed(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    good = json.dumps(_scenario("ok"))
    twice = json.dumps(_scenario("twice")).replace('"books": {}', '"books": {}, "books": {"B1": {}}')
    path.write_text(f"[{twice}, {good}]")
    scenarios, problems = read_scenarios([path], _envs(tmp_path), set())
    assert [s.task_id for s in scenarios] == ["ok"]
    assert str(problems[0]) == ("s.json[0]: names the key 'books' 2 times in one object at init_config "
                                "(JSON readers keep only one)")


def test_a_record_nested_far_too_deep_is_skipped_and_its_siblings_are_read(tmp_path: Path) -> None:
    for depth in (500, 1000, 100_000):
        path = tmp_path / f"s{depth}.json"
        deep = json.dumps(_scenario("deep")).replace('{"books": {}}', "[" * depth + "]" * depth)
        path.write_text(f"[{json.dumps(_scenario('before'))}, {deep}, {json.dumps(_scenario('after'))}]")
        scenarios, problems = read_scenarios([path], _envs(tmp_path), set())
        assert [s.task_id for s in scenarios] == ["before", "after"]
        assert [str(p) for p in problems] == [f"s{depth}.json[1]: nested more than 64 levels deep"]


def test_an_integer_too_long_to_convert_is_that_records_problem(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    huge = json.dumps(_scenario("huge")).replace('{"books": {}}', '{"n": ' + "9" * 5001 + "}")
    path.write_text(f"[{huge}, {json.dumps(_scenario('ok'))}]")
    scenarios, problems = read_scenarios([path], _envs(tmp_path), set())
    assert [s.task_id for s in scenarios] == ["ok"]
    assert str(problems[0]).startswith("s.json[0]: holds an integer with 5001 digits at init_config.n")


def test_a_solution_key_given_twice_keeps_the_first_and_reports_the_second(tmp_path: Path) -> None:
    record = _scenario("t")
    works = solution_entry(record, [ToolCall(tool="lend_book", args={"book_id": "B2", "member_id": "M1"})])
    fails = solution_entry(record, [ToolCall(tool="no_such_tool", args={})])
    path = tmp_path / "sol.json"
    path.write_text(json.dumps(solutions_document([works, fails])))
    read = read_solutions(path)
    assert read.found == {works["key"]: [ToolCall(tool="lend_book", args={"book_id": "B2", "member_id": "M1"})]}
    assert [str(p) for p in read.problems] == [
        f"sol.json[1]: duplicate key {works['key']!r} (first at [0]): only the first entry is replayed, this one is skipped"]


def test_a_solution_matching_no_scenario_gets_a_note_naming_file_and_entry(tmp_path: Path) -> None:
    matched, stray = _scenario("t"), _scenario("gone")
    path = tmp_path / "sol.json"
    path.write_text(json.dumps(solutions_document([solution_entry(r, []) for r in (matched, stray)])))
    notes = read_solutions(path).unmatched(path, {scenario_key(matched)})
    assert notes == [f"sol.json[1]: key {scenario_key(stray)!r} matches no imported scenario (its env id, task id, "
                     f"init_config and task differ from every record read): not replayed; {KEY_RULE}"]


def test_agent_tool_calls_whose_arguments_no_store_can_hold_are_dropped_not_fatal() -> None:
    from envscaler_core.interop.solve import calls_of

    hostile = ['{"name": ' + "[" * 3000 + "]" * 3000 + "}", '{"n": ' + "9" * 5001 + "}", '{"name": "\\ud800"}']
    calls = [{"function": {"name": "get_book", "arguments": args}} for args in [*hostile, '{"book_id": "B2"}']]
    assert calls_of([{"role": "assistant", "tool_calls": calls}]) == [ToolCall(tool="get_book", args={"book_id": "B2"})]


def test_nan_or_infinity_in_a_scenario_record_makes_that_record_malformed(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    good = json.dumps(_scenario("ok"))
    nan = json.dumps(_scenario("nan")).replace('"books": {}', '"books": {}, "limit": NaN')
    path.write_text(f"[{nan}, {good}]")
    scenarios, problems = read_scenarios([path], _envs(tmp_path), set())
    assert [s.task_id for s in scenarios] == ["ok"]
    assert len(problems) == 1 and str(problems[0]).startswith("s.json[0]: ") and "NaN or Infinity" in problems[0].reason


def test_infinity_in_an_env_record_makes_that_env_malformed(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    bad = json.dumps({**json.loads(_env_text()), "score": 1}).replace('"score": 1', '"score": -Infinity')
    path.write_text(f'{{"env_0": {bad}, "env_1": {_env_text()}}}')
    envs, problems, skipped = read_envs(path)
    assert [e.env_id for e in envs] == ["env_1"] and skipped == {"env_0"}
    assert len(problems) == 1 and problems[0].index == "env_0" and "NaN or Infinity" in problems[0].reason


def test_metadata_written_with_a_byte_order_mark_reads_as_without_one(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_bytes(b"\xef\xbb\xbf" + f'{{"env_1": {_env_text()}}}'.encode())
    envs, problems, _ = read_envs(path)
    assert [e.env_id for e in envs] == ["env_1"] and problems == []
