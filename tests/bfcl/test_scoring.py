"""Spec: a task scores in its unit's clean spare, and nothing the played calls did can change the verdict.

`SandboxedTask.score` runs `multi_turn_checker` in the spare process of the episode's unit (forked
before the episode loaded), not in the process that ran the model's calls, and falls back to a fresh
unit whenever the spare cannot answer. Whatever the play's process ran (here: code that replaces the
checker with one that says "valid", as a red team once reached through a crafted call), the verdict
must still be the one the package's own checker gives in this process.
"""

from __future__ import annotations

import os
import signal

import pytest

from envscaler_core.bfcl.data import find_task, load_tasks
from envscaler_core.bfcl.executor import SandboxedTask, _scoring_config
from envscaler_core.bfcl.package import episode_code, jail_code
from envscaler_core.bfcl.reference import score_in_process
from envscaler_core.bfcl.warm import covering_tasks
from sandbox import SandboxPool

TASK = "multi_turn_base_0"
UTILS = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"
PATCHER = """
import jail_env


class Patcher:
    def __init__(self, config=None):
        self.patched = False

    def patch(self):
        jail_env.multi_turn_checker = lambda *a, **k: {"valid": True}
        self.patched = True
        return repr(jail_env.multi_turn_checker)
"""
PEEK = f"""
import {UTILS} as utils


class Peek:
    def __init__(self, config=None):
        self.cached = sorted(k for k in vars(utils) if k.endswith("_instance"))
"""


def _dropping_last_call(ground_truth: list[list[str]]) -> list[list[list[str]]]:
    return [[turn[:-1]] if len(turn) > 1 else [list(turn)] for turn in ground_truth]


def test_the_gold_play_scores_valid_in_the_spare(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        decoded = [[list(turn)] for turn in task.ground_truth]
        for turn in decoded:
            sandboxed.execute_step(turn[0])
        assert sandboxed.episode._child is not None and sandboxed.episode._child.spare is not None
        assert sandboxed.score(decoded).valid


def test_whatever_the_play_process_ran_its_spare_scores_with_the_packages_checker(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = _dropping_last_call(task.ground_truth)
    expected = score_in_process(task, decoded)
    assert not expected.valid
    with bfcl_pool.open_episode(PATCHER, "Patcher", None, spare=True) as play:
        assert "lambda" in play.call("patch", {}).result, "the threat is real: the play's process is forged"
        with play.open_spare(episode_code(), "BFCLScorer", _scoring_config(task, decoded)) as scoring:
            verdict = scoring.state["verdict"]
    assert (verdict["valid"], verdict["error_type"]) == (expected.valid, expected.error_type)


def test_a_wrong_play_scores_what_the_checker_says(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = _dropping_last_call(task.ground_truth)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        for turn in decoded:
            sandboxed.execute_step(turn[0])
        verdict = sandboxed.score(decoded)
    expected = score_in_process(task, decoded)
    assert (verdict.valid, verdict.error_type, verdict.error_message) == (
        expected.valid, expected.error_type, expected.error_message)


def test_a_play_whose_unit_was_killed_still_scores_what_the_checker_says(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = [[list(turn)] for turn in task.ground_truth]
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        assert sandboxed.episode.host_pid is not None
        os.kill(sandboxed.episode.host_pid, signal.SIGKILL)  # the unit, its spare with it
        observation = sandboxed.execute("pwd()")
        assert observation.startswith("Error during execution: sandbox crash")
        for turn in decoded:
            sandboxed.execute_step(turn[0])
        verdict = sandboxed.score(decoded)
    assert verdict.valid == score_in_process(task, decoded).valid is True


def test_a_task_scored_after_its_episode_closed_scores_in_a_new_unit(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = _dropping_last_call(task.ground_truth)
    sandboxed = SandboxedTask(bfcl_pool, task)
    sandboxed.close()
    assert sandboxed.score(decoded).error_type == score_in_process(task, decoded).error_type


def test_a_task_the_zygote_warmed_up_with_left_cached_instances_behind(bfcl_pool: SandboxPool) -> None:
    """The zygote played and scored tasks before forking (envscaler_core/bfcl/warm.py), and the package
    caches instances in its module globals: every unit inherits the last ones (the threat is real)."""
    assert find_task(TASK) in covering_tasks(load_tasks("base"))
    with bfcl_pool.open_episode(PEEK, "Peek", None) as peek:
        cached = peek.state["cached"]
    assert any(name.startswith("envscaler_eval_multi_turn_base_") for name in cached), cached


def test_the_scorer_builds_its_own_instances_whatever_is_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """So `BFCLScorer` drops every instance cached under its model name before the checker runs (here in
    this process, with a stale instance planted where the checker would look it up)."""
    import importlib

    utils = importlib.import_module(UTILS)
    namespace: dict = {}
    exec(compile(jail_code(), "jail_env", "exec"), namespace)  # trusted source of this repository
    task = find_task(TASK)
    monkeypatch.setitem(vars(utils), f"envscaler_eval_{TASK}_GorillaFileSystem_instance", object())
    decoded = [[list(turn)] for turn in task.ground_truth]
    scorer = namespace["BFCLScorer"]({**task.sandbox_spec(), "_score": {"decoded": decoded,
                                                                        "ground_truth": task.ground_truth}})
    assert scorer.verdict["valid"] is True
    for name in [k for k in vars(utils) if k.startswith("envscaler_")]:
        monkeypatch.delitem(vars(utils), name)
