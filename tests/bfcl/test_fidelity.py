"""Spec: BFCL's API classes run in our sandbox exactly as in the package's own in-process executor.

For every ground-truth call of all 200 base tasks, the observation our sandbox returns equals the one
`execute_multi_turn_func_call` returns in this process, call by call; the episode's state is the
rendering of the very attributes `multi_turn_checker` compares; a killed episode comes back with the
same state (including private state such as the working directory) and goes on answering alike.
"""

from __future__ import annotations

import json
import os
import signal

from envscaler_core.bfcl.data import find_task, load_tasks
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.package import jail_imports
from envscaler_core.bfcl.reference import InProcessTask
from envscaler_core.config import SandboxSettings
from sandbox import JailImports, SandboxPool


def _render_reference(ref: InProcessTask) -> dict:
    """The reference instances rendered by the same code the jail runs (it is plain Python)."""
    namespace: dict = {}
    from envscaler_core.bfcl.package import jail_code

    exec(compile(jail_code(), "jail_env", "exec"), namespace)  # trusted source of this repository
    return json.loads(json.dumps({name: namespace["render_instance"](inst) for name, inst in ref.instances.items()}))


def test_every_base_ground_truth_call_observes_what_the_in_process_executor_observes(bfcl_pool: SandboxPool) -> None:
    tasks = load_tasks("base")
    assert len(tasks) == 200
    compared, mismatches = 0, []
    for task in tasks:
        ref = InProcessTask(task)
        with SandboxedTask(bfcl_pool, task) as sandboxed:
            for turn, calls in enumerate(task.ground_truth):
                for call in calls:
                    got, want = sandboxed.execute(call), ref.execute(call)
                    compared += 1
                    if got != want:
                        mismatches.append((task.id, turn, call, got[:200], want[:200]))
            assert sandboxed.state["classes"] == _render_reference(ref), task.id
        ref.close()
    assert not mismatches, mismatches[:3]
    assert compared > 1000  # every task has ground-truth calls; 200 tasks give well over a thousand


def test_state_diff_names_exactly_what_a_call_changed(bfcl_pool: SandboxPool) -> None:
    task = find_task("multi_turn_base_0")
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        listing = sandboxed.call("ls()")
        made = sandboxed.call("mkdir(dir_name='temp')")
    paths = [c["path"] for c in made.state_diff["changes"]]
    assert any(p.endswith("/contents/temp") for p in paths), paths
    assert [c["path"] for c in listing.state_diff["changes"]] == ["/executed/0"]  # a query changes no attribute


def test_a_killed_episode_is_rebuilt_with_its_private_state(bfcl_pool: SandboxPool) -> None:
    """The working directory (`_current_dir`) is private: only the replayed log can restore it."""
    task = find_task("multi_turn_base_0")
    ref = InProcessTask(task)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        for call in ("cd(folder='document')", "mkdir(dir_name='temp')"):
            assert sandboxed.execute(call) == ref.execute(call)
        before = sandboxed.state
        os.kill(sandboxed.episode.host_pid, signal.SIGKILL)  # a call string can no longer run such code
        crash = sandboxed.episode.call("execute", {"call": "pwd()"})
        assert not crash.ok and crash.error_kind == "crash"
        assert sandboxed.episode.state == before
        for call in ("mv(source='final_report.pdf', destination='temp')", "pwd()", "ls()"):
            assert sandboxed.execute(call) == ref.execute(call), call
        assert sandboxed.episode.restarts == 1
    ref.close()


def test_a_restore_that_does_not_reproduce_the_snapshot_is_refused() -> None:
    task = find_task("multi_turn_base_0")
    with SandboxPool(SandboxSettings(workers=1), imports=JailImports(**jail_imports())) as pool:
        sandboxed = SandboxedTask(pool, task)
        sandboxed.execute("cd(folder='document')")
        sandboxed.episode._state = {"classes": {"forged": {}}, "executed": []}  # what the host would send back
        os.kill(sandboxed.episode.host_pid, signal.SIGKILL)
        sandboxed.episode.call("execute", {"call": "pwd()"})
        after = sandboxed.call("pwd()")
        sandboxed.close()
    assert not after.ok and "could not rebuild" in after.error and "did not reproduce" in after.error


def test_a_step_whose_call_times_out_observes_what_running_the_calls_one_by_one_observes() -> None:
    """A step's calls go to the jail in one round trip; when that does not come back whole, the episode
    is back before the step and each call runs alone, so every call still gets its own outcome."""
    task = find_task("multi_turn_base_15")  # GorillaFileSystem and MathAPI
    slow = "logarithm(value=10.0, base=2.0, precision=100000)"  # a real method, legal arguments, ~4 s of CPU
    ref = InProcessTask(task)
    settings = SandboxSettings(workers=1, call_timeout_s=1.0)
    with SandboxPool(settings, imports=JailImports(**jail_imports())) as pool, SandboxedTask(pool, task) as sandboxed:
        got = sandboxed.execute_step(["pwd()", slow, "mean(numbers=[1.0, 2.0])"])
        assert got[0] == ref.execute("pwd()")
        assert got[1].startswith("Error during execution: sandbox timeout")
        assert got[2] == ref.execute("mean(numbers=[1.0, 2.0])")
        assert sandboxed.execute_step(["ls()", "pwd()"]) == [ref.execute("ls()"), ref.execute("pwd()")]
        assert sandboxed.state["executed"] == ["pwd()", "mean(numbers=[1.0, 2.0])", "ls()", "pwd()"]
    ref.close()
