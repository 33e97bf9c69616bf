"""Spec: a task scores in its unit's clean spare, and nothing the played calls did can change the verdict.

`SandboxedTask.score` runs `multi_turn_checker` in the spare process of the episode's unit (forked
before the episode loaded), not in the process that ran the model's calls, and falls back to a fresh
unit whenever the spare cannot answer. A played call can rewrite anything in its own process (BFCL
`eval`s it), e.g. replace the checker with one that says "valid"; the verdict must still be the one
the package's own checker gives in this process.
"""

from __future__ import annotations

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.reference import score_in_process
from sandbox import SandboxPool

TASK = "multi_turn_base_0"
FORGE = "setattr(__import__('jail_env'), 'multi_turn_checker', lambda *a, **k: {'valid': True})"
SHOW = "str(getattr(__import__('jail_env'), 'multi_turn_checker'))"


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


def test_a_played_call_that_replaces_the_checker_does_not_change_the_verdict(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = _dropping_last_call(task.ground_truth)
    expected = score_in_process(task, decoded)
    assert not expected.valid
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        sandboxed.execute(FORGE)
        assert "lambda" in sandboxed.execute(SHOW), "the threat is real: the episode's own process is forged"
        for turn in decoded:
            sandboxed.execute_step(turn[0])
        verdict = sandboxed.score(decoded)
    assert (verdict.valid, verdict.error_type) == (expected.valid, expected.error_type)


def test_a_play_that_killed_its_process_still_scores_what_the_checker_says(bfcl_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = [[list(turn)] for turn in task.ground_truth]
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        observation = sandboxed.execute("__import__('os')._exit(9)")
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
