"""Spec: a model step that builds a state hundreds of levels deep is played as BFCL plays it, and the
episode goes on. 300 x [`mkdir('d')`, `cd('d')`] (about 30 KB of model output) makes a directory 300
levels down: its state is rendered, folded and snapshotted in one pass per step, so the step is one
round trip with BFCL's observations, and a rebuild from that state (after the episode's process died)
answers the next calls as BFCL does. Before (outside check rt22-R12 F4) the rendering recursed past the
interpreter's limit: the step took 66-81 s, ended in RecursionError and every later call answered
"could not rebuild the episode". The reference is the package's own executor in this process."""

from __future__ import annotations

import os
import signal
from typing import Any

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.jail_render import TAG, canonical, fold, render
from envscaler_core.bfcl.reference import InProcessTask
from envscaler_core.gym import load_bfcl_set
from sandbox import SandboxPool

DEPTH = 300


def _nested(depth: int) -> list[str]:
    return [call for _ in range(depth) for call in ("mkdir(dir_name='d')", "cd(folder='d')")]


def test_a_step_300_directories_deep_observes_what_bfcl_observes_in_one_round_trip(bfcl_pool: SandboxPool) -> None:
    task = find_task("multi_turn_base_0")
    calls = [*_nested(DEPTH), "pwd()"]
    with InProcessTask(task) as reference:
        expected = reference.execute_step(calls)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        assert sandboxed.execute_step(calls) == expected
        assert len(sandboxed.outcomes) == 1  # not run again one call at a time
        assert sandboxed.state["executed"] == calls


def test_an_episode_killed_after_a_deep_step_is_rebuilt_and_goes_on_as_bfcl(bfcl_pool: SandboxPool) -> None:
    task = find_task("multi_turn_base_0")
    after = ["mkdir(dir_name='e')", "cd(folder='e')", "pwd()", "ls()"]
    with InProcessTask(task) as reference:
        reference.execute_step(_nested(DEPTH))
        expected = reference.execute_step(after)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        sandboxed.execute_step(_nested(DEPTH))
        before = sandboxed.state
        os.kill(sandboxed.episode.host_pid, signal.SIGKILL)
        crash = sandboxed.episode.call("execute", {"call": "pwd()"})
        assert not crash.ok and crash.error_kind == "crash"
        assert sandboxed.episode.state == before
        assert sandboxed.execute_step(after) == expected
        assert sandboxed.episode.restarts == 1


def test_the_gym_plays_a_deep_step_and_answers_the_next_call(bfcl_pool: SandboxPool) -> None:
    """The gym runs the same play code as `eval bfcl-mt` and `serve-mcp bfcl:`."""
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    env.reset(options={"task_index": 0})
    step = [{"tool": tool, "args": args} for _ in range(DEPTH)
            for tool, args in (("mkdir", {"dir_name": "d"}), ("cd", {"folder": "d"}))]
    observations = env.step(step)[0]
    pwd = env.step({"tool": "pwd", "args": {}})[0]
    env.close()
    assert not any("Error" in str(o) for o in observations)
    assert "/d" * DEPTH in str(pwd) and "Error" not in str(pwd)


class Node:
    def __init__(self, parent: Any = None) -> None:
        self.parent, self.children = parent, {}


def _levels(value: Any) -> int:
    """How deeply lists and dicts nest in a JSON value, counted without recursing."""
    deepest, work = 0, [(value, 1)]
    while work:
        node, level = work.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            work.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def test_render_fold_and_canonical_take_objects_thousands_of_levels_deep() -> None:
    root = node = Node()
    for _ in range(3000):
        child = Node(node)
        node.children["d"] = child
        node = child
    rendered = render(root)
    text = canonical(rendered)
    assert text.count('{"__py__": "ref", "class": "Node", "up": 2}') == 3000  # each parent: a marker, no cycle
    assert text.startswith('{"__py__": "object", "attrs": {"children": {"d": {"__py__": "object"')
    folded = fold(rendered, 10)
    assert _levels(folded) <= 10
    keys, part, whole = iter(["attrs", "children", "d"] * 10), folded, rendered
    while part.get(TAG) != "json":
        key = next(keys)
        part, whole = part[key], whole[key]
    assert part["text"] == canonical(whole)  # the deep part travels as its canonical text


def test_canonical_is_the_sorted_json_text_of_a_rendered_value() -> None:
    import json

    value = {"b": [1, 2.5, None, True, "é\n\""], "a": {"z": [], "y": {}}, "": [[{"x": "\ud800"}]]}
    assert canonical(value) == json.dumps(value, sort_keys=True, ensure_ascii=False)
