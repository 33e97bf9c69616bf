"""Spec: the checker's details stay readable JSON however long the states they show: cut inside their
values to at most 20,000 characters, with their keys, the checker's `differences` (whole where they
fit, else cut like the rest) and a count of what was left out (they were cut as one escaped text, mid-escape, as invalid JSON,
and non-ASCII text took six times its length). Real sandbox, the package's checker inside it."""

from __future__ import annotations

import json
import re
from typing import Any

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.executor import SandboxedTask
from sandbox import SandboxPool

CAP = 20000
KEYS = {"differences", "model_instance_state", "ground_truth_instance_state"}


def _verdict(pool: SandboxPool, task_id: str, decoded: list[list[list[str]]]) -> Any:
    with SandboxedTask(pool, find_task(task_id)) as sandboxed:
        return sandboxed.score(decoded)


def _gold_without_last(task_id: str) -> list[list[list[str]]]:
    task = find_task(task_id)
    return [[calls[:-1]] if calls[:-1] else [] for calls in task.ground_truth]


def test_long_states_are_cut_inside_their_values_and_keep_their_structure(bfcl_pool: SandboxPool) -> None:
    verdict = _verdict(bfcl_pool, "multi_turn_long_context_6", _gold_without_last("multi_turn_long_context_6"))
    assert verdict.error_type == "multi_turn:instance_state_mismatch"
    details = verdict.details
    details = details["details"]  # the checker's own "details" key
    assert KEYS <= set(details) and len(json.dumps(details, ensure_ascii=False)) <= CAP
    assert set(details["differences"]["root"]) == {"model", "ground_truth"}  # the structure stays
    cut = verdict.details["__cut__"]
    assert cut["characters"] + cut["items"] > 0


def test_a_long_non_ascii_value_is_cut_as_text_not_as_escapes(bfcl_pool: SandboxPool) -> None:
    task = find_task("multi_turn_base_0")
    tweet = "\u00e9" * 30000
    first = ["authenticate_twitter(username='analyst_pro', password='Kj8#mP9$vL2')", f"post_tweet(content={tweet!r})"]
    decoded = [[first + task.ground_truth[0]], *[[calls] for calls in task.ground_truth[1:]]]
    verdict = _verdict(bfcl_pool, task.id, decoded)
    assert verdict.error_type == "multi_turn:instance_state_mismatch"
    text = json.dumps(verdict.details, ensure_ascii=False)
    assert len(text) <= CAP and KEYS <= set(verdict.details["details"])
    assert re.search("\u00e9{20,}\\.\\.\\.\\[[0-9]+ more characters\\]", text)  # cut inside the text, not escaped
    assert verdict.details["__cut__"]["characters"] > 0
