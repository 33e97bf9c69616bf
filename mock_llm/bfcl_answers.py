"""The mock's BFCL multi-turn player (`agent.bfcl`): it answers from the ground truth.

The request carries what a real model sees (the user turns, the tool calls and results so far, the
offered tools) and nothing else, so the task is found by its user turns and tool names. Base and
long-context tasks share their questions; where their answers differ, the conversation's own tool
results decide: the calls made so far are replayed on each candidate with the package's reference
executor (trusted parts only: names must be the task's functions, arguments are literals) and the
candidate that reproduces the observations wins.

Per turn it sends every ground-truth call of the turn in one message, then "Done." (which ends the
turn); while such candidates disagree on the turn, it sends their next common call alone, so the
next observation can tell them apart. Where none can (a long-context task whose extra files no
observation has shown yet), it plays the first candidate, the base task. Deliberate mistakes for tests, chosen by the requested model name: a name containing
`drop-last` leaves out the last call of every turn.
"""

from __future__ import annotations

import threading
from typing import Any

from mock_llm.protocol import MockCannotAnswer, MockReply, MockRequest, MockToolCall

Key = tuple[tuple[str, ...], frozenset[str]]
_INDEX: dict[Key, list[tuple[Any, int]]] | None = None
_INDEX_LOCK = threading.Lock()


def _index() -> dict[Key, list[tuple[Any, int]]]:
    """(user contents up to and including turn t, tool names at t) -> [(task, t)] over all subsets.

    Built once, under a lock: the server answers in worker threads, and an evaluation's first 16
    requests arrive together; with an unlocked cache each of them built the index (~1.7 s of CPU
    each), which made the first seconds of every mock's life CPU-bound."""
    global _INDEX
    if _INDEX is None:
        with _INDEX_LOCK:
            if _INDEX is None:
                _INDEX = _build_index()
    return _INDEX


def _build_index() -> dict[Key, list[tuple[Any, int]]]:
    from envscaler_core.bfcl.data import SUBSETS, load_tasks

    index: dict[Key, list[tuple[Any, int]]] = {}
    for subset in SUBSETS:
        for task in load_tasks(subset):
            users: list[str] = []
            for turn in range(len(task.turns)):
                users.extend(m["content"] for m in task.user_messages(turn))
                index.setdefault((tuple(users), frozenset(task.function_names(turn))), []).append((task, turn))
    return index


def _replay_score(task: Any, messages: list[dict[str, Any]]) -> int:
    """How many tool results of the conversation `task`'s reference executor reproduces (-1: cannot replay)."""
    from envscaler_core.bfcl.calls import UndecodableCalls, decode_tool_calls, method_parameters
    from envscaler_core.bfcl.reference import InProcessTask

    known = {name for cls in task.involved_classes for name in method_parameters().get(cls, {})}
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    executor, score = InProcessTask(task), 0
    try:
        for message in messages:
            calls = message.get("tool_calls") if message.get("role") == "assistant" else None
            if not calls:
                continue
            try:
                strings = decode_tool_calls(calls)
            except UndecodableCalls:
                continue
            for text, call in zip(strings, calls):
                if (call.get("function") or {}).get("name") not in known:
                    return -1
                score += executor.execute(text) == results.get(call.get("id"))
    finally:
        executor.close()
    return score


def _candidates(req: MockRequest) -> list[tuple[Any, int]]:
    users = tuple(str(m.get("content") or "") for m in req.messages if m.get("role") == "user")
    names = frozenset((t.get("function") or {}).get("name", "") for t in req.tools or [])
    candidates = _index().get((users, names), [])
    if not candidates:
        raise MockCannotAnswer("agent.bfcl: no BFCL multi-turn task has these user turns and tools")
    return candidates


def _plan(task: Any, turn: int, model: str) -> list[str]:
    plan = list(task.ground_truth[turn])
    return plan[:-1] if "drop-last" in model and plan else plan


def _calls_this_turn(messages: list[dict[str, Any]]) -> int:
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return sum(len(m.get("tool_calls") or []) for m in messages[last_user + 1:] if m.get("role") == "assistant")


def _next_calls(req: MockRequest) -> list[str]:
    """The calls to send now: the rest of the turn's plan, or, while candidate tasks that the
    observations cannot yet tell apart disagree on this turn, only their next common call."""
    made = _calls_this_turn(req.messages)
    candidates = _candidates(req)
    plans = [_plan(task, turn, req.model) for task, turn in candidates]
    if any(p != plans[0] for p in plans):
        scores = [_replay_score(task, req.messages) for task, _ in candidates]
        plans = [p for p, s in zip(plans, scores) if s == max(scores)]
    if all(p == plans[0] for p in plans):
        return plans[0][made:]
    upcoming = {tuple(p[made:made + 1]) for p in plans}
    return list(upcoming.pop()) if len(upcoming) == 1 else plans[0][made:]


def agent_bfcl(req: MockRequest) -> MockReply:
    from envscaler_core.bfcl.calls import parse_call

    calls = _next_calls(req)
    if not calls:
        return MockReply(content="Done.")
    task, _ = _candidates(req)[0]
    return MockReply(tool_calls=[MockToolCall(*parse_call(text, task.involved_classes)) for text in calls])
