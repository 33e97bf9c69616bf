"""Spec: `envscaler validate` on hand-written files, run as a user runs it (a real subprocess; the real
sandbox; for llm/both the real mock LLM over HTTP). Starts from the outside tester's to-do class: items
kept in a dict keyed by id, tools complete/delete/rename/add/list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ENVSCALER = Path(sys.executable).with_name("envscaler")

TODO = '''
class TodoList:
    """A small to-do list."""

    def __init__(self, init_config: dict = None):
        self.items = {}
        self.init_config = init_config

    def add(self, item_id: str, title: str) -> dict:
        """Add an item."""
        if item_id in self.items:
            return {"success": False, "error": "an item with that id exists"}
        self.items[item_id] = {"title": title, "done": False}
        return {"success": True, "message": "added"}

    def complete(self, item_id: str) -> dict:
        """Mark an item done."""
        if item_id not in self.items:
            return {"success": False, "error": "no such item"}
        self.items[item_id]["done"] = True
        return {"success": True, "message": "done"}

    def delete(self, item_id: str) -> dict:
        """Delete an item."""
        if item_id not in self.items:
            return {"success": False, "error": "no such item"}
        del self.items[item_id]
        return {"success": True, "message": "deleted"}

    def rename(self, item_id: str, title: str) -> dict:
        """Rename an item."""
        if item_id not in self.items:
            return {"success": False, "error": "no such item"}
        self.items[item_id]["title"] = title
        return {"success": True, "message": "renamed"}

    def list_items(self) -> dict:
        """List all items."""
        return {"success": True, "data": self.items}
'''
STATE = {"items": {"t1": {"title": "Buy milk", "done": False}}}
# each hides a state change on the failure path, or an exception, or a reply of the wrong type
DEFECTS = {
    "complete": ("""        if item_id not in self.items:
            return {"success": False, "error": "no such item"}
        self.items[item_id]["done"] = True""", """        item = self.items.setdefault(item_id, {"title": "", "done": False})
        if not item["title"]:
            return {"success": False, "error": "no such item"}
        item["done"] = True""", "complete reported failure but changed state"),
    "delete": ("""        if item_id not in self.items:
            return {"success": False, "error": "no such item"}
        del self.items[item_id]""", """        del self.items[item_id]""", "exception in delete: KeyError"),
    "rename": ("""        self.items[item_id]["title"] = title
        return {"success": True, "message": "renamed"}""", """        self.items[item_id]["title"] = title
        return self.items[item_id]["title"]""", "rename returned str, not a dict"),
}


def envscaler(tmp_path: Path, *args: str, base_url: str | None = None, **variables: str) -> subprocess.CompletedProcess[str]:
    """`envscaler validate` without the shell's OPENAI_* and ENVSCALER_* variables; `variables` set instead."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    if base_url:
        env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="mock")
    env.update(variables)
    return subprocess.run([str(ENVSCALER), "validate", *args], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)


def files(tmp_path: Path, code: str = TODO, state: dict[str, Any] = STATE) -> tuple[str, str]:
    (tmp_path / "todo.py").write_text(code)
    (tmp_path / "state.json").write_text(json.dumps(state))
    return str(tmp_path / "todo.py"), str(tmp_path / "state.json")


def full(out: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert "Traceback" not in out.stderr + out.stdout, out.stderr
    return json.loads(out.stdout)


def successes(outcome: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    return [r["args"] for r in outcome["rounds"] if r["tool"] == tool
            and isinstance(r["observation"], dict) and r["observation"].get("success") is True]


@pytest.mark.parametrize("mode", ["programmatic", "llm", "both"])
def test_the_todo_class_is_probed_with_the_ids_its_state_holds_in_every_mode(
        mode: str, tmp_path: Path, mock_server: Any) -> None:
    code, state = files(tmp_path)
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", mode, "--rounds", "10", "--full",
                    base_url=mock_server.base_url)
    outcome = full(out)
    assert out.returncode == 0, outcome["report"]
    assert outcome["test_state"] == STATE and outcome["loaded_state"]["items"] == STATE["items"]
    assert all(r["state_before"]["items"].get("t1") or r["mode"] == "llm" for r in outcome["rounds"])
    for tool in ("complete", "delete", "rename"):
        ids = [a["item_id"] for a in successes(outcome, tool)]
        # the probes use the id the state holds; the LLM pass may also succeed on items it added itself
        assert ("t1" in ids) if mode != "llm" else ids, (tool, ids)
    assert successes(outcome, "add") and not outcome["report"]["unreached"]


@pytest.mark.parametrize("tool", sorted(DEFECTS))
def test_a_planted_defect_in_complete_delete_or_rename_is_caught(tool: str, tmp_path: Path) -> None:
    old, new, expect = DEFECTS[tool]
    assert TODO.count(old) == 1
    code, state = files(tmp_path, TODO.replace(old, new))
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic")
    verdict = full(out)
    assert out.returncode == 1 and not verdict["accepted"]
    assert any(expect in line for line in verdict["critical"]), verdict["critical"]


def test_a_contract_breach_found_for_free_spends_no_llm_validation_call(tmp_path: Path, mock_server: Any) -> None:
    old, new, _ = DEFECTS["complete"]
    code, state = files(tmp_path, TODO.replace(old, new))
    mock_server.reset()
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "both", "--chains", "2",
                    base_url=mock_server.base_url)
    verdict = full(out)
    assert out.returncode == 1 and verdict["llm_pass_skipped"]
    assert mock_server.stats()["requests_total"] == 0


def test_the_verdict_shows_the_state_used_and_each_tools_label_with_its_source(tmp_path: Path) -> None:
    code, state = files(tmp_path)
    verdict = full(envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic"))
    assert verdict["test_state"] == STATE
    assert verdict["tool_kinds"]["list_items"]["kind"] == "query"
    assert verdict["tool_kinds"]["complete"] == {
        "kind": "state_change", "source": "name+docstring+code",
        "evidence": verdict["tool_kinds"]["complete"]["evidence"]}
    text = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", "--text").stdout
    assert text.startswith("ACCEPTED") and "state:    items: dict of 1 (t1)" in text
    assert "tool:     complete: state_change (from name+docstring+code)" in text


def test_a_tool_no_probe_can_get_to_succeed_blocks_acceptance_and_says_so(tmp_path: Path) -> None:
    """`complete` refuses every item, also one `add` made first: the verdict says which code never ran."""
    broken = TODO.replace("        if item_id not in self.items:\n            return {\"success\": False, \"error\": \"no such item\"}\n"
                          "        self.items[item_id][\"done\"] = True",
                          "        if item_id not in self.items or True:\n            return {\"success\": False, \"error\": \"no such item\"}\n"
                          "        self.items[item_id][\"done\"] = True")
    assert broken != TODO
    code, state = files(tmp_path, broken, state={"items": {}})
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", "--text")
    assert out.returncode == 1
    assert "blocking: coverage: state-changing code never executed: complete never succeeded" in out.stdout


def test_a_tool_reached_only_after_another_tools_state_change_is_covered(tmp_path: Path) -> None:
    """With no item in the state, `complete` can only succeed on an item `add` made in the same episode:
    the pass tries that, so the env an agent could use is not rejected for coverage."""
    code, state = files(tmp_path, state={"items": {}})
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", "--text")
    assert out.returncode == 0, out.stdout
    assert "complete: state_change" in out.stdout and "never succeeded" not in out.stdout


@pytest.mark.parametrize("mode", ["programmatic", "both"])
def test_a_state_that_does_not_load_is_a_rejection_with_its_reason_not_a_traceback(
        mode: str, tmp_path: Path, mock_server: Any) -> None:
    code, state = files(tmp_path, TODO.replace('    """A small to-do list."""', '''    """A small to-do list."""

    @property
    def items(self):
        return self.__dict__.setdefault("_items", {})

    @items.setter
    def items(self, value):
        pass'''))
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", mode, base_url=mock_server.base_url)
    verdict = full(out)
    assert out.returncode == 1 and verdict["critical"][0].startswith("initial state did not load: attribute 'items'")
    assert "no loadable test state" in verdict["failure"]


def test_the_text_verdict_tells_a_constructor_crash_in_one_line(tmp_path: Path) -> None:
    code, state = files(tmp_path, TODO.replace("self.init_config = init_config", 'self.owner = init_config["owner"]'))
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", "--text")
    assert out.returncode == 1 and "Traceback" not in out.stdout
    assert out.stdout.count("KeyError: 'owner'") == 1


def test_programmatic_mode_with_a_state_needs_no_llm_endpoint(tmp_path: Path) -> None:
    code, state = files(tmp_path)
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", base_url="http://127.0.0.1:9/v1")
    assert out.returncode == 0 and full(out)["accepted"]


def test_without_a_state_or_an_llm_the_error_points_at_state(tmp_path: Path) -> None:
    code, _ = files(tmp_path)
    out = envscaler(tmp_path, "--code", code, "--mode", "programmatic")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "no API key" in out.stderr and "needs no LLM at all when you pass --state FILE" in out.stderr


def test_an_envscaler_generated_file_needs_no_class_option(tmp_path: Path) -> None:
    """EnvScaler's files hold TypedDict records beside one base-less env class."""
    from tests.validation.envscaler_style_env import ENVSCALER_LIBRARY_CODE
    from tests.scenarios.helpers import STATE as LIBRARY_STATE

    code, state = files(tmp_path, ENVSCALER_LIBRARY_CODE, LIBRARY_STATE)
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic")
    assert out.returncode == 0 and full(out)["tool_kinds"]["lend_book"]["kind"] == "state_change"


def test_a_state_file_nested_past_the_stack_is_a_one_line_error(tmp_path: Path) -> None:
    code, _ = files(tmp_path)
    deep = tmp_path / "deep.json"
    deep.write_text('{"items": ' + "[" * 100_000 + "]" * 100_000 + "}")
    out = envscaler(tmp_path, "--code", code, "--state", str(deep), "--mode", "programmatic")
    assert out.returncode == 2 and "nested too deeply to read" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("options", [[], ["--class", "TodoList"]])
def test_a_class_nested_past_the_analysis_limit_is_a_static_problem_exit_2(options: list[str], tmp_path: Path) -> None:
    deep = TODO.replace('return {"success": True, "message": "added"}',
                        'return {"success": True, "n": ' + "1+" * 100_000 + "1}")
    code, state = files(tmp_path, code=deep)
    out = envscaler(tmp_path, "--code", code, *options, "--state", state, "--mode", "programmatic")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, (out.returncode, out.stderr[-2000:])
    assert "nested too deeply to read here, past the 400 levels" in lines[0] and "pyast.MAX_NESTING" in lines[0]
    assert "unexpected" not in lines[0]


def test_escape_sequences_in_the_state_are_printed_inert(tmp_path: Path) -> None:
    """State keys and env ids come from LLMs and imported files: a terminal must not execute them."""
    code, state = files(tmp_path, state={"items": {"t1\x1b]0;TITLE\x07\rforged line": {"title": "x", "done": False}}})
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", "--text")
    assert out.returncode in (0, 1), out.stderr[-2000:]
    assert "\x1b" not in out.stdout and "\r" not in out.stdout and "\x07" not in out.stdout
    assert "t1\\x1b]0;TITLE\\x07\\x0dforged line" in out.stdout


def test_a_class_defining_the_sandboxs_own_hook_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """Red team sandbox-3 F4b: `__sandbox_state__` in an env class let it show the host a frozen state while
    a query changed the books; such a class is a static problem (exit 2), never validated."""
    hooked = TODO.replace('''    def add(''', '''    def __sandbox_state__(self):
        return {"items": {}}

    def __sandbox_restore__(self, snapshot):
        self.items = snapshot["items"]

    def add(''')
    code, state = files(tmp_path, hooked)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])  # this tree's code, also from a worktree
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", code, "--state", state,
                          "--mode", "programmatic"], capture_output=True, text=True, env=env, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 2, out
    assert "static check failed: sandbox-hook: '__sandbox_state__' names one of the sandbox's own hooks" in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.parametrize("which", ["code", "state"])
def test_a_utf8_byte_order_mark_in_the_code_or_the_state_is_not_data(which: str, tmp_path: Path) -> None:
    """Windows editors write one; Python runs such a file, and sources and `import` accept it too."""
    code, state = files(tmp_path)
    path = Path(code if which == "code" else state)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic")
    assert out.returncode == 0, out.stderr
    assert full(out)["accepted"]


@pytest.mark.parametrize(("which", "option"), [("code", "cannot read"), ("state", "--state")])
def test_a_utf16_code_or_state_file_is_named_with_how_to_convert_it(which: str, option: str, tmp_path: Path) -> None:
    code, state = files(tmp_path)
    path = Path(code if which == "code" else state)
    path.write_bytes(path.read_text().encode("utf-16"))  # with its byte order mark, as Windows writes it
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option}"), out.stderr
    assert "UTF-16 (little-endian) text, not UTF-8" in lines[0] and f"iconv -f UTF-16 -t UTF-8 {path}" in lines[0]
