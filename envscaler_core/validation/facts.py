"""Contract facts about one executed tool call, decided from what the sandbox observed.

An LLM judge can be talked out of anything; these facts cannot. Whatever the judge says, a call that
escaped with an exception, timed out, crashed the worker, returned a non-dict, left unserialisable
state, or changed state while it was a query or while it reported failure breaks the environment
contract in ARCHITECTURE.md. Such a *critical* violation rejects the environment regardless of its
score, because every later stage (scenario checks, rewards) assumes the contract holds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.json_equal import same_json
from envscaler_core.runtime import CallOutcome

CRITICAL_KINDS = {"exception", "timeout", "crash", "unserializable", "oversize"}


class CallFacts(BaseModel):
    """What the contract says about one call: critical breaches, softer smells, and state change."""

    critical: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    changed: bool = False
    success: bool | None = Field(default=None, description="The tool's own `success` flag, if it gave one.")
    args: dict[str, Any] | None = Field(default=None, description="The arguments really sent, when some were "
                                        "fed from the setup's results (else the probe's own).")

    @property
    def verdict(self) -> str:
        return "fail" if self.critical else "warning" if self.warnings else "pass"

    @property
    def reason(self) -> str:
        return "; ".join(self.critical or self.warnings) or "ok"


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """JSON-pointer-like paths whose values differ; dicts are compared key by key, anything else whole,
    as JSON (`same_json`): 1 -> true, 0 -> false, 2 -> 2.0 and 0.0 -> -0.0 are changes."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}/{key}"
            if key not in before or key not in after:
                out.append(sub)
            else:
                out.extend(changed_paths(before[key], after[key], sub))
        return out
    return [] if same_json(before, after) else [path or "/"]


def query_changed(tool: str) -> str:
    """The one contract fact that depends on a tool's query/state_change label (and so on who labelled it)."""
    return f"query tool {tool} changed state"


def call_facts(
    outcome: CallOutcome, state_before: dict[str, Any], tool_kind: str | None, case_type: str | None = None,
    *, any_result: bool = False,
) -> CallFacts:
    """Classify one call. `tool_kind` is the spec's query/state_change label (None when unknown).
    `any_result`: EnvScaler's contract (an imported env), which has no dict-return rule: a result that is not
    a dict (`is_valid_isbn` answering `True`, a list of titles) is what the agent observes there, not a breach;
    its success is unknown, and a query that changed state still is one. The whole env was rejected for such a
    public helper, which EnvScaler lists as a tool and its runtime calls (outside check rt22-R13, F4)."""
    facts = CallFacts()
    if not outcome.ok:
        if outcome.error_kind in CRITICAL_KINDS:
            facts.critical.append(f"{outcome.error_kind} in {outcome.tool}: {_short(outcome.error)}")
        return facts  # a schema rejection happened before the code ran: no fact about the env
    result = outcome.result
    changed = bool(changed_paths(state_before, outcome.state))
    facts.changed = changed
    if not isinstance(result, dict) and any_result:  # it answered: the call succeeded as far as EnvScaler can tell
        facts.success = True
        if changed and tool_kind == "query":
            facts.critical.append(query_changed(outcome.tool))
        return facts
    if not isinstance(result, dict):
        facts.critical.append(f"{outcome.tool} returned {type(result).__name__}, not a dict")
        return facts
    success = result.get("success")
    if not isinstance(success, bool):
        facts.critical.append(f"{outcome.tool} returned a dict without a boolean 'success'")
        return facts
    facts.success = success
    if success is False and not isinstance(result.get("error"), str):
        facts.warnings.append(f"{outcome.tool} failed without an 'error' message")
    if changed and success is False:
        facts.critical.append(f"{outcome.tool} reported failure but changed state")
    if changed and tool_kind == "query":
        facts.critical.append(query_changed(outcome.tool))
    if success is True and case_type == "negative" and changed:
        facts.warnings.append(f"{outcome.tool} accepted invalid arguments and changed state (missing validation)")
    return facts


def succeeded(observation: Any, verdict: str) -> bool:
    """Whether a recorded call reached the code behind the tool's guards: `{"success": true}`, or a result that
    is no dict and no breach (EnvScaler's contract, `call_facts(any_result=True)`: `True` from `is_valid_isbn`;
    under the factory's a non-dict result is a breach, so never counted). A refusal or an error is a dict."""
    if isinstance(observation, dict):
        return observation.get("success") is True
    return verdict != "fail"


def _short(text: str | None, limit: int = 300) -> str:
    return exception_summary(text, limit) or "no detail"


TRACEBACK = "Traceback (most recent call last):"


def exception_summary(text: str | None, limit: int = 300) -> str:
    """`Type: message` of the exception a traceback ends with, on one printable line: the exception's type
    stays first whatever its message holds. The sandbox's tracebacks are Python's (`\\n` between lines);
    the message is the untrusted part, so lines are split on `\\n` only (a `\\r`, `\\u2028` or ANSI escape in
    the message once made the last "line" all that was kept, without the type), the exception is the first
    line after the last traceback's frames, and everything from there to the end is its message, with
    whitespace runs collapsed and other control or format characters escaped. A message that spells out
    a traceback of its own can still pose as another exception, as a class can name itself anything."""
    text = (text or "").strip()
    lines = text.split("\n")
    head = lines[0][:-len(TRACEBACK)].rstrip(": ") if lines[0].endswith(TRACEBACK) else ""  # "the result ...: "
    starts = [i for i, line in enumerate(lines) if line == TRACEBACK or (i == 0 and head)]
    if not starts:  # the head was cut off (the worker keeps a long traceback's tail): after the last frame
        starts = [i for i, line in enumerate(lines) if line.startswith('  File "')][-1:]
    if starts:
        i = starts[-1] + 1
        while i < len(lines) and (lines[i].startswith("  ") or not lines[i]):
            i += 1
        text = "\n".join(lines[i:]) if i < len(lines) else lines[-1]
    elif text.startswith("Traceback"):
        text = lines[-1]
    return printable(f"{head}: {text}" if head else text)[:limit]


def printable(text: str) -> str:
    """One line: whitespace runs (newlines, `\\r`, `\\u2028` included) become one space, and any other control
    or format character (ANSI escapes, bidi overrides) is shown escaped, never interpreted."""
    import unicodedata

    return "".join(ch if ch.isprintable() or unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp")
                   else ch.encode("unicode_escape").decode("ascii") for ch in " ".join(text.split()))
