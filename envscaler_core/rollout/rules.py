"""What one tool call does to an episode: an observation, or the end of the episode with reward 0.

A tool whose method raises, or whose env process dies or times out in the call, ends the episode with reward
0: EnvScaler's `step` catches the exception, ends the episode and never computes a reward, and a traceback
answered as an observation made episodes that went on to earn 1.0 (and become SFT data) out of an env that
broke (differential check 2026-11-26, F1). A refused call (unknown tool, arguments that do not fit the
schema) is an observation and the episode goes on: the policy must learn from it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from envscaler_core.llm.replies import ReplyProblem, parse_arguments
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.runtime import CallOutcome, Episode

RAISED_KINDS = frozenset({"exception", "timeout", "crash"})
"""Error kinds where the env's own code failed in the call (`runtime.ErrorKind`), not a refusal."""

ENDED = "the episode ended here with reward 0"


class Observed(BaseModel):
    """One call's tool message (`content`, JSON text), whether it is an error, and `ends`: why the episode
    ends at this call with reward 0 (None: it goes on)."""

    content: str
    is_error: bool
    ends: str | None = None


def raised_text(outcome: CallOutcome) -> str:
    """A short account of a failed call: the exception's last line (its type and message), never the
    traceback (whose frames and the sandbox's own messages are no business of the agent's or SFT data)."""
    if outcome.error_kind == "exception":
        lines = [ln.strip() for ln in (outcome.error or "").splitlines() if ln.strip()]
        last = lines[-1] if lines else "an exception"
        return f"{outcome.tool} raised {last[:200]}"
    if outcome.error_kind == "timeout":
        return f"{outcome.tool} did not finish within the sandbox's time limit"
    return f"the env's process died during {outcome.tool}"


class CallRules:
    """One env's rules for running calls; build once per episode."""

    def __init__(self, env: AcceptedEnv) -> None:
        self.env_id = env.env_id

    def run(self, ep: Episode, call: dict[str, Any]) -> Observed:
        """Run one OpenAI tool_call (not `chat_with_user`: `chat_call` takes that) under these rules."""
        fn = call.get("function") or {}
        name = fn.get("name") or ""
        try:
            args = parse_arguments(fn.get("arguments"))
        except ReplyProblem as exc:  # EnvScaler: a parse failure, the episode goes on
            return Observed(content=json.dumps({"error": str(exc), "error_kind": "schema"}), is_error=True)
        out = ep.call(name, args)
        if out.ok:
            return Observed(content=json.dumps(out.result, default=str), is_error=False)
        if out.error_kind in RAISED_KINDS:
            return _ending(raised_text(out), str(out.error_kind))
        return Observed(content=json.dumps({"error": out.error, "error_kind": out.error_kind}), is_error=True)


def _ending(why: str, kind: str) -> Observed:
    return Observed(content=json.dumps({"error": f"{why}; {ENDED}", "error_kind": kind}), is_error=True, ends=why)
