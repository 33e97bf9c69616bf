"""The zygote warm-up for BFCL pools: a few gold tasks, played and scored inside the zygote before it forks.

Why: a unit forked from a cold zygote runs BFCL's code for the first time in its life. CPython 3.11
rewrites a function's bytecode in place while it warms up (quickening, specialisation) and builds
caches lazily (compiled regular expressions, `inspect`'s, the package's own), so a cold unit redoes all
of that for every task and copies every page it writes. Run once in the zygote, that work is shared
by every unit (measured: a task's env, calls and checker cost 13 ms of CPU forked cold, 6 ms warm).

What runs: for one base task per API class (the first that involves it), the same episodes a gold task
runs in a unit (`BFCLEnvironment` with its ground truth, one `execute_all` per turn, and `BFCLScorer`
scoring it), through the worker's own episode code. Trusted code (the package, `jail_env.py`) on
trusted data (the package's dataset), never model output; `BFCLEnvironment` and `BFCLScorer` drop any
instance the package cached under their names before they build their own, so nothing of the warm-up
reaches a unit's results (the fidelity spec runs all 200 base tasks on a warmed pool).
"""

from __future__ import annotations

from typing import Any

from envscaler_core.bfcl.data import BFCLTask, load_tasks
from envscaler_core.bfcl.package import CLASS_MODULES, episode_code


def covering_tasks(tasks: list[BFCLTask]) -> list[BFCLTask]:
    """The first task involving each API class, without repeats, in dataset order."""
    chosen: list[BFCLTask] = []
    for class_name in CLASS_MODULES:
        task = next((t for t in tasks if class_name in t.involved_classes), None)
        if task is not None and task not in chosen:
            chosen.append(task)
    return sorted(chosen, key=tasks.index)


def warm_up_episodes(tasks: list[BFCLTask] | None = None) -> list[dict[str, Any]]:
    """`sandbox.JailImports.warm_up` for a BFCL pool: per covering base task, its gold play and its scoring."""
    episodes: list[dict[str, Any]] = []
    for task in covering_tasks(tasks if tasks is not None else load_tasks("base")):
        turns = [list(calls) for calls in task.ground_truth]
        calls = [{"tool": "execute_all", "args": {"calls": turns_calls}} for turns_calls in turns if turns_calls]
        episodes.append({"code": episode_code(), "class_name": "BFCLEnvironment", "init": task.sandbox_spec(),
                         "calls": calls})
        decoded = [[calls] if calls else [] for calls in turns]
        scoring = {**task.sandbox_spec(), "_score": {"decoded": decoded, "ground_truth": task.ground_truth}}
        episodes.append({"code": episode_code(), "class_name": "BFCLScorer", "init": scoring, "calls": []})
    return episodes
