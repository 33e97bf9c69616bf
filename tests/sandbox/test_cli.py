"""`envscaler sandbox exec|check` through the real console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ENVSCALER = Path(sys.executable).with_name("envscaler")
COUNTER = '''
class Counter:
    def __init__(self, init_config=None):
        self.n = (init_config or {}).get("n", 0)

    def add(self, k: int) -> dict:
        self.n += k
        return {"success": True, "data": self.n}
'''


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ENVSCALER), "sandbox", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "env.py").write_text(COUNTER)
    (tmp_path / "state.json").write_text('{"n": 5}')
    (tmp_path / "calls.json").write_text(json.dumps([
        {"tool": "add", "args": {"k": 2}}, {"tool": "nope", "args": {}}, {"tool": "add", "args": {"k": "x"}}]))
    return tmp_path


def test_exec_prints_one_line_per_call_and_the_final_state(files: Path) -> None:
    proc = run("exec", "--code", str(files / "env.py"), "--class", "Counter",
               "--state", str(files / "state.json"), "--calls", str(files / "calls.json"))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 4
    first, unknown, bad, final = lines
    assert first["ok"] and first["result"] == {"success": True, "data": 7}
    assert first["state_diff"] == {"changes": [{"op": "replace", "path": "/n", "old": 5, "new": 7}]}
    assert set(first) >= {"tool", "ok", "result", "error", "state_diff", "elapsed_ms"}
    assert not unknown["ok"] and unknown["error_kind"] == "schema"
    assert not bad["ok"] and bad["error_kind"] == "exception" and "TypeError" in bad["error"]
    assert final == {"final_state": {"n": 7}}


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: ["--code", str(d / "missing.py"), "--class", "Counter", "--calls", str(d / "calls.json")], "cannot read"),
    (lambda d: ["--code", str(d / "env.py"), "--class", "Nope", "--calls", str(d / "calls.json")], "cannot load class 'Nope'"),
    (lambda d: ["--code", str(d / "env.py"), "--class", "Counter", "--calls", str(d / "state.json")], "JSON list"),
    (lambda d: ["--code", str(d / "env.py"), "--class", "Counter", "--calls", str(d / "env.py")], "not valid JSON"),
    (lambda d: ["--code", str(d / "env.py"), "--class", "Counter", "--calls", str(d / "calls.json"),
                "--state", str(d / "calls.json")], "must hold a JSON object"),
])
def test_unusable_input_exits_2_with_one_line(files: Path, mutate, needle: str) -> None:
    proc = run("exec", *mutate(files))
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["env.py", "state.json", "calls.json"])
def test_exec_drops_a_utf8_byte_order_mark_from_its_files(files: Path, name: str) -> None:
    (files / name).write_bytes(b"\xef\xbb\xbf" + (files / name).read_bytes())
    proc = run("exec", "--code", str(files / "env.py"), "--class", "Counter",
               "--state", str(files / "state.json"), "--calls", str(files / "calls.json"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {"final_state": {"n": 7}}


def test_exec_names_a_utf16_file_with_how_to_convert_it(files: Path) -> None:
    (files / "calls.json").write_bytes((files / "calls.json").read_text().encode("utf-16"))
    proc = run("exec", "--code", str(files / "env.py"), "--class", "Counter", "--calls", str(files / "calls.json"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "UTF-16 (little-endian) text, not UTF-8" in proc.stderr and "iconv -f UTF-16 -t UTF-8" in proc.stderr


def test_check_names_the_backend() -> None:
    proc = run("check")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("backend: bwrap")
    assert "network" in proc.stdout


def test_exec_runs_an_envscaler_style_class_on_the_given_state(tmp_path: Path) -> None:
    from tests.sandbox.envscaler_style import LIBRARY_CODE, LIBRARY_STATE

    (tmp_path / "env.py").write_text(LIBRARY_CODE)
    (tmp_path / "state.json").write_text(json.dumps(LIBRARY_STATE))
    (tmp_path / "calls.json").write_text(json.dumps([{"tool": "get_book", "args": {"book_id": "B1"}}]))
    proc = run("exec", "--code", str(tmp_path / "env.py"), "--class", "LibraryDesk",
               "--state", str(tmp_path / "state.json"), "--calls", str(tmp_path / "calls.json"))
    assert proc.returncode == 0, proc.stderr
    first = json.loads(proc.stdout.splitlines()[0])
    assert first["result"] == {"success": True, "data": LIBRARY_STATE["books"]["B1"]}


def test_exec_says_when_the_state_does_not_load(tmp_path: Path) -> None:
    (tmp_path / "env.py").write_text("class A:\n    __slots__ = ('__dict__',)\n    def __setattr__(self, k, v):\n        pass\n")
    (tmp_path / "state.json").write_text('{"items": {"x": 1}}')
    (tmp_path / "calls.json").write_text("[]")
    proc = run("exec", "--code", str(tmp_path / "env.py"), "--class", "A",
               "--state", str(tmp_path / "state.json"), "--calls", str(tmp_path / "calls.json"))
    assert proc.returncode == 2
    assert "initial state did not load: attribute 'items' is missing" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_exec_reports_a_forged_reply_as_an_error_line_without_a_traceback(tmp_path: Path) -> None:
    """The red team's host crash: a 5,000-deep reply made `sandbox exec` print a RecursionError traceback.
    (Every other forged reply is covered at the pool level in test_wire.py.)"""
    from tests.sandbox.helpers import attack_code

    frame, needle = "b'{\"ok\":true,\"result\":' + b'[' * 5000 + b']' * 5000 + b',\"output\":\"\"}'", "nesting deeper than"
    (tmp_path / "env.py").write_text(attack_code(f"forge({frame})"))
    (tmp_path / "calls.json").write_text(json.dumps([{"tool": "attack"}, {"tool": "ping"}]))
    proc = run("exec", "--code", str(tmp_path / "env.py"), "--class", "Attack",
               "--calls", str(tmp_path / "calls.json"))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    attack, ping, final = [json.loads(line) for line in proc.stdout.splitlines()]
    assert (attack["ok"], attack["error_kind"]) == (False, "crash") and needle in attack["error"]
    assert ping["ok"] and final == {"final_state": {"n": 1}}


def test_exec_escapes_characters_that_splitlines_takes_for_line_breaks(tmp_path: Path) -> None:
    """U+2028, U+2029 and U+0085 inside a result came out raw (ensure_ascii=False): a consumer splitting the
    output with str.splitlines() saw one JSON line as two. Other non-ASCII text stays readable."""
    text = "a\u2028b\u2029c\x85d é"
    (tmp_path / "env.py").write_text(f"class Echo:\n    def __init__(self, init_config=None):\n        pass\n\n"
                                     f"    def say(self) -> dict:\n        return {{'text': {text!r}}}\n")
    (tmp_path / "calls.json").write_text(json.dumps([{"tool": "say", "args": {}}]))
    proc = run("exec", "--code", str(tmp_path / "env.py"), "--class", "Echo", "--calls", str(tmp_path / "calls.json"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, lines
    assert json.loads(lines[0])["result"] == {"text": text}
    assert "é" in lines[0] and "\\u2028" in lines[0] and "\\u0085" in lines[0]


def test_check_lists_the_pool_caps_and_the_disk_limit() -> None:
    proc = run("check")
    assert proc.returncode == 0, proc.stderr
    assert "pool-wide caps on the pool's parent cgroup: pids.max" in proc.stdout
    assert "disk reads per unit" in proc.stdout or "NO per-unit disk I/O limit" in proc.stdout


def test_exec_reports_a_breach_instead_of_a_final_state_and_exits_3(tmp_path: Path) -> None:
    """Red team sandbox-4 F7: a forged refund printed as the final state, exit 0, breach not mentioned.
    (Run as `python -m` from this tree, so that the spec exercises this tree's code.)"""
    from tests.sandbox.test_wire import FORGE_STATE

    (tmp_path / "env.py").write_text(FORGE_STATE)
    (tmp_path / "state.json").write_text('{"orders": {"o1": {"status": "open"}, "o2": {"status": "open"}}}')
    (tmp_path / "calls.json").write_text(json.dumps([{"tool": "get_order", "args": {"order_id": "o1"}},
                                                     {"tool": "refund_order", "args": {"order_id": "o1"}}]))
    proc = subprocess.run([sys.executable, "-m", "envscaler.cli", "sandbox", "exec", "--code", str(tmp_path / "env.py"),
                           "--class", "Shop", "--state", str(tmp_path / "state.json"),
                           "--calls", str(tmp_path / "calls.json")],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 3 and "final_state" not in lines[-1]
    assert "did not ask for" in lines[-1]["breach"]
    assert "not to be believed" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "refunded" not in proc.stderr
