"""Spec (red team round 5, F5): a terminal control sequence in text the CLI prints (an env's exception
message, a skipped record's id) is shown escaped, `\\x1b[2J` as those four visible characters,
never silently removed: click stripped CSI sequences from output to a pipe or file before our escaping
saw them, so an env id printed without its `\\x1b[2J` read as another id.

Run as `python -m envscaler.cli` from this tree (a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import ROOT, clean_env

RAISES = '''
class Lib:
    """A lib."""
    def __init__(self, init_config=None):
        self.books = {}

    def get_book(self, book_id: str) -> dict:
        """Get a book by id."""
        if book_id == "zz":
            return {"success": True, "data": None}
        raise ValueError("\\x1b[2J\\x1b[1;31mFAKE: ACCEPTED\\x1b[0m")
'''


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envscaler.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env=clean_env(tmp_path), timeout=300, stdin=subprocess.DEVNULL)


def test_an_import_summary_on_stdout_keeps_escape_sequences_visible(tmp_path: Path) -> None:
    env_id = "env_\x1b[2Jx"
    code = RAISES.replace("        self.books = {}", "        raise RuntimeError('\\x1b[1;32mALL GOOD\\x1b[0m')")
    env = {"env_id": env_id, "environment_summary": "lib", "environment_introduction": "A lib.",
           "state_space_definition": [], "constraints_rules": [], "operation_list": [], "env_class_name": "Lib",
           "env_class_code": code, "env_class_def": "", "env_structure": "",
           "tools": [{"type": "function", "function": {"name": "get_book", "description": "Get a book by id.",
                      "parameters": {"type": "object", "properties": {"book_id": {"type": "string"}},
                                     "required": ["book_id"]}}}]}
    scenario = {"env_id": env_id, "env_class_name": "Lib", "task_id": "t1", "task": "Find b1.", "init_config": {},
                "checklist": ["found"], "checklist_with_func": [
                    {"check_item": "found", "check_func": "def check_func(final_state):\n    return True\n"}]}
    envs, scenarios = tmp_path / "env_metadata.json", tmp_path / "rl.json"
    envs.write_text(json.dumps({env_id: env}))
    scenarios.write_text(json.dumps([scenario]))

    out = cli(tmp_path, "import", "envscaler", "--envs", str(envs), "--scenarios", str(scenarios),
              "--db", str(tmp_path / "store.duckdb"), "--run-id", "esc")

    assert "\x1b" not in out.stdout
    assert "RuntimeError: \\x1b[1;32mALL GOOD\\x1b[0m" in out.stdout, out.stdout
    assert "env env_\\x1b[2Jx rejected" in out.stdout, out.stdout


def test_a_skipped_records_id_on_stderr_keeps_its_escape_sequences_visible(tmp_path: Path) -> None:
    shop = {"env_id": "env_s", "environment_summary": "shop", "environment_introduction": "A shop.",
            "state_space_definition": [], "constraints_rules": [], "operation_list": [], "env_class_name": "Lib",
            "env_class_code": RAISES.replace("raise ValueError", "return {} or ValueError"), "env_class_def": "",
            "env_structure": "", "tools": []}
    bad = {**shop, "env_id": "bad\x1b[2Jx"}
    del bad["env_class_code"]
    envs, scenarios = tmp_path / "env_metadata.json", tmp_path / "rl.json"
    envs.write_text(json.dumps({"env_s": shop, "bad\x1b[2Jx": bad}))
    scenarios.write_text("[]")

    out = cli(tmp_path, "import", "envscaler", "--envs", str(envs), "--scenarios", str(scenarios),
              "--db", str(tmp_path / "store.duckdb"), "--run-id", "esc")

    assert "\x1b" not in out.stderr
    assert "skipped env_metadata.json[bad\\x1b[2Jx]" in out.stderr, out.stderr


LIB = '''
class Lib:
    def __init__(self, init_config=None):
        self.books = dict((init_config or {}).get("books", {}))

    def get_book(self, book_id: str) -> dict:
        """Get a book by id."""
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}
'''

# every character str.splitlines() takes for a line end but newline, and bidi marks and overrides
ODD = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\u061c\u200e\u200f\u202e\u2066"


def test_validate_text_shows_line_separators_and_bidi_marks_escaped(tmp_path: Path) -> None:
    """Red team round 6, F3: U+2028 was printed raw (ESC, NEL, U+202E were escaped)."""
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "state.json").write_text(json.dumps({"books": {f"b1{ODD}x": {"title": "A"}}}))
    out = cli(tmp_path, "validate", "--code", str(tmp_path / "lib.py"), "--state", str(tmp_path / "state.json"),
              "--mode", "programmatic", "--text")
    assert out.returncode in (0, 1), out.stderr
    assert not set(ODD) & set(out.stdout), out.stdout
    assert out.stdout.splitlines() == out.stdout.split("\n")[:-1]
    assert "b1\\x0d\\x0b\\x0c\\x1c\\x1d\\x1e\\u0085\\u2028\\u2029\\u061c\\u200e\\u200f\\u202e\\u2066x" in out.stdout


def test_json_printed_with_escaped_separators_stays_the_same_json(tmp_path: Path) -> None:
    """One escaper for all output: JSON (ensure_ascii=False leaves NEL and U+2028 raw) gets JSON's escapes."""
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "state.json").write_text(json.dumps({"books": {f"b1{ODD}x": {"title": "A"}}}))
    (tmp_path / "calls.json").write_text(json.dumps([{"tool": "get_book", "args": {"book_id": f"b1{ODD}x"}}]))
    out = cli(tmp_path, "sandbox", "exec", "--code", str(tmp_path / "lib.py"), "--class", "Lib", "--calls",
              str(tmp_path / "calls.json"), "--state", str(tmp_path / "state.json"))
    assert out.returncode == 0, out.stderr
    assert not set(ODD) & set(out.stdout)
    first = json.loads(out.stdout.splitlines()[0])
    assert first["ok"] and first["result"] == {"success": True, "data": {"title": "A"}}
    assert json.loads(out.stdout.splitlines()[-1])["final_state"]["books"] == {f"b1{ODD}x": {"title": "A"}}
