"""Spec: every JSON file a user hands a verb (a `run -c` config, a `sandbox exec` calls or state file, a
`validate --state` file) that names a key twice in one object is refused in one line naming the key, where
it is and the file, exit 2, nothing run (rt22-R11 F1: `json` keeps the last value without a word)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import SLICE, assert_one_line_error, clean_env, envscaler
from tests.cli.test_validate import TODO


def test_run_refuses_a_json_config_naming_a_section_twice_before_writing(tmp_path: Path) -> None:
    config = tmp_path / "factory.json"
    config.write_text('{"mine": {"select_n": 3}, "mine": {"seed": 7}}')
    env = clean_env(tmp_path, ENVSCALER_DATA_DIR=str(tmp_path / "data"))
    out = envscaler("run", "-s", str(SLICE), "-c", str(config), "--run-id", "j1", "--stages", "mine", env=env)
    assert_one_line_error(out, str(config), "'mine' twice at the top level")
    assert not (tmp_path / "data").exists()


def test_sandbox_exec_refuses_a_call_whose_args_name_a_key_twice(tmp_path: Path) -> None:
    (tmp_path / "env.py").write_text(TODO)
    calls = tmp_path / "calls.json"
    calls.write_text('[{"tool": "list_items", "args": {}}, '
                     '{"tool": "complete", "args": {"item_id": "t1", "item_id": "t2"}}]')
    out = envscaler("sandbox", "exec", "--code", str(tmp_path / "env.py"), "--class", "TodoList",
                    "--calls", str(calls), env=clean_env(tmp_path))
    assert_one_line_error(out, str(calls), "'item_id' twice in [1].args")
    assert out.stdout == ""


def test_sandbox_exec_refuses_a_state_naming_a_key_twice(tmp_path: Path) -> None:
    (tmp_path / "env.py").write_text(TODO)
    (tmp_path / "calls.json").write_text('[{"tool": "list_items", "args": {}}]')
    state = tmp_path / "state.json"
    state.write_text('{"items": {}, "items": {"t1": {"title": "Buy milk", "done": false}}}')
    out = envscaler("sandbox", "exec", "--code", str(tmp_path / "env.py"), "--class", "TodoList", "--calls",
                    str(tmp_path / "calls.json"), "--state", str(state), env=clean_env(tmp_path))
    assert_one_line_error(out, str(state), "'items' twice at the top level")


def test_validate_refuses_a_state_naming_a_key_twice(tmp_path: Path) -> None:
    (tmp_path / "env.py").write_text(TODO)
    state = tmp_path / "state.json"
    state.write_text('{"items": {}, "items": {"t1": {"title": "Buy milk", "done": false}}}')
    out = envscaler("validate", "--code", str(tmp_path / "env.py"), "--state", str(state), "--mode", "programmatic",
                    env=clean_env(tmp_path))
    assert_one_line_error(out, str(state), "'items' twice at the top level")
